/* kernel_states: threads that each spend their time in one known way, for
 * fxt-run --kernel's test (tests/e2e/kernel.sh):
 *
 *	sleeper  nap(): sleeps 100 ms            (blocked)
 *	spinner  spin(): burns 100 ms of CPU     (running, runnable)
 *	waiter   want(): blocks in pthread_mutex_lock on a mutex main holds;
 *	         main's release() unlocks it once the waiter said it is about
 *	         to block, and 100 ms more (main wakes the waiter)
 *
 * Prints "NAME TID" for each thread, and main's as "main TID"; exits 0. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #cond); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile int about_to_block;
static long tids[3];

/* No hooks: spin() calls it in a loop. */
static __attribute__((no_instrument_function)) long ms_of(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void __attribute__((noinline)) nap(void)
{
	struct timespec ts = { 0, 100 * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void __attribute__((noinline)) spin(void)
{
	long end = ms_of(CLOCK_THREAD_CPUTIME_ID) + 100;
	while (ms_of(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static void __attribute__((noinline)) want(void)
{
	about_to_block = 1;
	CHECK(pthread_mutex_lock(&mutex) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void __attribute__((noinline)) release(void)
{
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void *run(void *arg)
{
	long i = (long)arg;
	static const char *const names[] = { "sleeper", "spinner", "waiter" };

	tids[i] = syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), names[i]);
	if (i == 0)
		nap();
	else if (i == 1)
		spin();
	else
		want();
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	CHECK(pthread_mutex_lock(&mutex) == 0);
	for (long i = 0; i < 3; i++)
		CHECK(pthread_create(&t[i], NULL, run, (void *)i) == 0);
	while (!about_to_block)
		usleep(1000);
	usleep(100 * 1000);
	release();
	for (int i = 0; i < 3; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	printf("main %ld\nsleeper %ld\nspinner %ld\nwaiter %ld\n", (long)syscall(SYS_gettid),
	       tids[0], tids[1], tids[2]);
	return 0;
}
