/* stripme: a program that tests/e2e/patch-debugfile.sh strips (objcopy
 * --only-keep-debug, strip --strip-all) and gives back its functions
 * through a separate debug file.  Built -O2 -g as a distribution builds;
 * one function is exported (-Wl,--export-dynamic-symbol: in .dynsym, so
 * the stripped program still has it), the others are not:
 *
 *   stripme_exported   7 calls (exported)
 *   square           100 calls (static)
 *   twice             50 calls (static)
 *   walk              11 calls (static, recursion: walk(10))
 *   stripme_global     3 calls (global, not exported)
 *
 * It prints the sum they make, which depends on every call running.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile long sink; /* keeps each body longer than a jump */
long stripme_global(long x);
long stripme_exported(long x);

NOINLINE static long square(long x)
{
	sink += x;
	return x * x;
}

NOINLINE static long twice(long x)
{
	sink -= x;
	return 2 * x;
}

NOINLINE static long walk(long n)
{
	long r;

	sink++;
	if (n == 0)
		return 0;
	r = walk(n - 1);
	__asm__ volatile("" : "+r"(r)); /* not a tail call, not a loop */
	return r + n;
}

NOINLINE long stripme_global(long x)
{
	sink ^= x;
	return x + 1;
}

NOINLINE long stripme_exported(long x)
{
	sink += 3;
	return x - 1;
}

int main(void)
{
	long sum = 0;

	for (long i = 0; i < 100; i++)
		sum += square(i);
	for (long i = 0; i < 50; i++)
		sum += twice(i);
	sum += walk(10);
	for (long i = 0; i < 3; i++)
		sum += stripme_global(i);
	for (long i = 0; i < 7; i++)
		sum += stripme_exported(i);
	printf("stripme: %ld\n", sum);
	return 0;
}
