/* patchme_walk: a program that walks its own stack by return address and
 * checks each one against the bounds of its own text (the linker's
 * __executable_start and etext), as a runtime that knows its code does
 * (the Go runtime, gprof's mcount), and calls a library that does the
 * same (libwalkrt, standing for HotSpot's libjvm).  Built -O2 with frame
 * pointers, without -finstrument-functions, for tests/e2e/patch-walkers.sh:
 * under fxt-run --patch, the return trampoline would be where a return
 * address should be; the program must print what it prints without.
 *
 *   walk(5, 4)      calls itself 5 deep, then walks 4 frames up: each
 *                   return address must be in its text, or it aborts
 *   rt_run(5)       the same in libwalkrt
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/progs/walkrt.h"

#define NOINLINE __attribute__((noinline, noclone))

extern char __executable_start[], etext[];

static volatile int sink;

int walk(int d, int depth);

NOINLINE int walk(int d, int depth)
{
	if (d) {
		int n = walk(d - 1, depth);
		sink++;
		return n;
	}
	void **fp = __builtin_frame_address(0);
	int n = 0;
	for (; n < depth && fp; n++, fp = fp[0]) {
		uintptr_t ret = (uintptr_t)fp[1];
		if (ret < (uintptr_t)__executable_start || ret >= (uintptr_t)etext) {
			fprintf(stderr,
				"patchme_walk: frame %d: return address %#lx outside its text\n", n,
				(unsigned long)ret);
			abort();
		}
	}
	return n;
}

int main(void)
{
	int sum = 0;

	for (int i = 0; i < 10; i++)
		sum += walk(5, 4) + rt_run(5);
	printf("walked %d frames\n", sum);
	return 0;
}
