/* A program built with -finstrument-functions -g (at -O0 and -O2: two
 * programs of this source) whose functions take and return known values,
 * for fxt-run --args/--retval without --patch (tests/e2e/args-hooked.sh):
 * each call must have one slice, with its values.  Prints "done", exits 0.
 *
 *   parse("GET /a", 6)        returns 12
 *   parse("", 0)              returns -1 (for --snapshot-if parse@retval<0)
 *   fact(4)                   recursion: fact(4) .. fact(1), 24 6 2 1
 *   scale(1.5, 3)             returns 4.5
 *   a thread: parse("thread", 6), returns 12
 *   jump(3)                   recursion, longjmp() out of jump(1): no
 *                             return; then parse("after", 5), returns 10
 *   bare()                    returns 42; no size in the symbol table
 *                             (assembly): it cannot be patched
 *
 *   args_hooked_O2 sh         the same, then a shell runs (system())
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP __attribute__((noinline, noipa, used))

int parse(const char *buf, int len);
long fact(int n);
double scale(double x, int k);
int jump(int depth);
int bare(void);

__asm__(".text\n"
	".globl bare\n"
	".type bare, @function\n"
	"bare:\n"
	"\tmovl $42, %eax\n"
	"\tret\n");

static volatile long sink;
static jmp_buf env;

KEEP int parse(const char *buf, int len)
{
	sink += (long)strlen(buf);
	return len ? 2 * len : -1;
}

KEEP long fact(int n)
{
	return n <= 1 ? 1 : n * fact(n - 1);
}

KEEP double scale(double x, int k)
{
	sink += k;
	return x * k;
}

KEEP int jump(int depth)
{
	if (depth == 1)
		longjmp(env, 1);
	return depth > 1 ? jump(depth - 1) + 1 : 0;
}

static void *worker(void *arg)
{
	(void)arg;
	sink += parse("thread", 6);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	sink += parse("GET /a", 6);
	sink += parse("", 0);
	sink += fact(4);
	sink += (long)scale(1.5, 3);
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	if (!setjmp(env))
		sink += jump(3);
	sink += parse("after", 5);
	sink += bare();
	if (argc > 1 && strcmp(argv[1], "sh") == 0 && system("exit 0") != 0)
		return 1;
	puts("done");
	return 0;
}
