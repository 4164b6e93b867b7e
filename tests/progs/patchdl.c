/* libpatchdl: a plug-in built without -finstrument-functions (-O2), which
 * tests/progs/patchme_dl loads with dlopen() while other threads run, for
 * fxt-run --patch-module (tests/e2e/patch.sh).  With PATCHDL_SPIN set, its
 * constructor starts a thread that calls dl_spin() in a loop: the library
 * is then patched while one of its functions is being called.  With
 * PATCHDL_UNLINK=FILE, its constructor removes FILE (its own), before
 * fxt-run --patch-module looks for it as dlopen() returns. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

/* What patchme_dl finds with dlsym(), and dl_spin(). */
long dl_spin(long x);
long dl_stop_spinner(long more);
int dl_square(int x);
int dl_each(int n);

static volatile long dl_sink;
static pthread_t spinner;
static int spinning, stop;
static long spins;

NOINLINE long dl_spin(long x)
{
	dl_sink += x;
	return (x * 7 + 3) % 1009;
}

static void *spin_main(void *arg)
{
	long x = 1;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		x = dl_spin(x);
		__atomic_add_fetch(&spins, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

__attribute__((constructor)) static void start_spinner(void)
{
	const char *gone = getenv("PATCHDL_UNLINK");

	if (gone)
		unlink(gone);
	if (getenv("PATCHDL_SPIN") && pthread_create(&spinner, NULL, spin_main, NULL) == 0)
		spinning = 1;
}

/* Lets the spinner make `more` calls more, stops it; the number of calls. */
long dl_stop_spinner(long more)
{
	long at = __atomic_load_n(&spins, __ATOMIC_ACQUIRE);

	if (!spinning)
		return 0;
	while (__atomic_load_n(&spins, __ATOMIC_ACQUIRE) < at + more)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(spinner, NULL);
	spinning = 0;
	return spins;
}

NOINLINE int dl_square(int x)
{
	dl_sink += x;
	return x * x;
}

int dl_each(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dl_square(i);
	return sum;
}
