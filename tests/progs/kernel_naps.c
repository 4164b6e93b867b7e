/* kernel_naps N: naps 1 ms N times on its main thread (default 3000):
 * each nap is a switch-out, a wake-up and a switch-in in the kernel's
 * record, a steady flow of events for fxt-run --kernel's tests of a
 * ring buffer smaller than the run (tests/e2e/kernel-stream.sh).
 * Exits 0. */
#include "config.h"

#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 3000;

	for (long i = 0; i < n; i++) {
		struct timespec ts = { 0, 1000 * 1000 };
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	return 0;
}
