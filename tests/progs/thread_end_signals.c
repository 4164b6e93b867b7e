/* thread_end_signals: threads that end while a SIGPROF handler runs
 * instrumented code (ITIMER_PROF every 20 us of the process's CPU time):
 * some signals land while an ending thread's buffer is released
 * (agent_tbuf_retire()), whose chunk the handler's records must not be
 * written into.  argv[1] threads (2000), four at a time; prints "ok" and
 * exits 0 when the handler ran. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include "examples/example.h"

static volatile unsigned long ticks, sink;

EXAMPLE_NOINLINE static void tick(void)
{
	ticks++;
}

static void on_prof(int sig)
{
	(void)sig;
	tick();
}

EXAMPLE_NOINLINE static unsigned long spin(unsigned long n)
{
	unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i * i;
	return x;
}

static void *worker(void *arg)
{
	(void)arg;
	sink += spin(20000);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	struct sigaction sa = { .sa_handler = on_prof, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 20 }, { 0, 20 } }, off = { { 0, 0 }, { 0, 0 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0 || setitimer(ITIMER_PROF, &it, NULL) != 0)
		return 2;
	for (int i = 0; i < n; i += 4) {
		pthread_t t[4];
		for (int k = 0; k < 4; k++)
			if (pthread_create(&t[k], NULL, worker, NULL) != 0)
				return 2;
		for (int k = 0; k < 4; k++)
			pthread_join(t[k], NULL);
	}
	setitimer(ITIMER_PROF, &off, NULL);
	puts(ticks > 0 ? "ok" : "no tick");
	return 0;
}
