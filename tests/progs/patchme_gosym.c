/* patchme_gosym: stands for a cgo program (a Go program linked with the C
 * library, which fxt-run can trace) built by Go 1.17 or later, whose
 * runtime's assembly functions are named with their ABI:
 * runtime.morestack.abi0, not runtime.morestack.  Go's runtime walks its
 * goroutines' stacks by return address, and a patched function's return
 * trampoline there is fatal ("runtime: g 1: unknown pc", exit 2): fxt-run
 * --patch must leave the program alone (tests/e2e/patch-walkers.sh). */
#include <stdio.h>

int go_morestack(int x) __asm__("runtime.morestack.abi0");

__attribute__((noinline)) int go_morestack(int x)
{
	return x + 1;
}

__attribute__((noinline)) static int twice(int x)
{
	return 2 * x;
}

int main(void)
{
	printf("%d\n", twice(go_morestack(20)));
	return 0;
}
