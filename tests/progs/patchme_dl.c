/* patchme_dl: loads the plug-in libpatchdl (argv[1]) with dlopen() twice
 * (or argv[2] times),
 * each time with a thread of its own waiting to call it, calls it, unloads
 * it: fxt-run --patch-module patches it at each load (tests/e2e/patch.sh).
 * Built without -finstrument-functions.  Prints its results; the calls of
 * the plug-in's spinner thread (PATCHDL_SPIN) go to stderr ("spins N"),
 * then the mappings writable and executable ("wx: none"). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/progs/wx_maps.h"

#define NOINLINE __attribute__((noinline, noclone))

static int (*loaded_each)(int); /* set once the plug-in is loaded */

/* A thread that exists while the plug-in is loaded, and calls it after. */
static void *waiter(void *arg)
{
	int (*each)(int);

	(void)arg;
	while (!(each = __atomic_load_n(&loaded_each, __ATOMIC_ACQUIRE)))
		;
	return (void *)(long)each(10);
}

NOINLINE static int round_trip(const char *path, int round)
{
	pthread_t t;
	void *h, *ret;
	int (*each)(int);
	long (*stop)(long);

	__atomic_store_n(&loaded_each, NULL, __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, waiter, NULL) != 0)
		return 1;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "patchme_dl: %s\n", dlerror());
		exit(1);
	}
	*(void **)&each = dlsym(h, "dl_each");
	*(void **)&stop = dlsym(h, "dl_stop_spinner");
	__atomic_store_n(&loaded_each, each, __ATOMIC_RELEASE);
	printf("round %d: dl_each(100) = %d\n", round, each(100));
	pthread_join(t, &ret);
	printf("round %d: the waiter got %ld\n", round, (long)ret);
	fprintf(stderr, "spins %ld\n", stop(100000));
	return dlclose(h);
}

int main(int argc, char **argv)
{
	int rounds = argc == 3 ? atoi(argv[2]) : 2;

	if (argc < 2 || argc > 3 || rounds < 1) {
		fprintf(stderr, "usage: patchme_dl LIBPATCHDL.so [ROUNDS]\n");
		return 2;
	}
	for (int round = 1; round <= rounds; round++)
		if (round_trip(argv[1], round) != 0)
			return 1;
	print_wx_maps(); /* none is left writable and executable */
	return 0;
}
