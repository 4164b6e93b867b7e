/* signals: a signal handler that runs instrumented code, entered
 * thousands of times while the interrupted thread is itself inside
 * instrumented code (and so, now and then, inside a hook).
 *
 * A second thread sends SIGUSR1 to the main thread NSIGNALS times, each
 * time waiting until the handler has run, so that no signal is merged
 * with another: on_signal runs exactly NSIGNALS times and handler_work
 * twice as often.  Meanwhile the main thread calls spin() in a loop (a
 * count that varies from run to run).  It prints the number of signals
 * handled and exits 0 if that is NSIGNALS.
 */
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/example.h"

static volatile sig_atomic_t handled;
static volatile int sending_done;
static volatile unsigned long sink;
static unsigned long nsignals = 3000;

EXAMPLE_NOINLINE static void handler_work(unsigned long x)
{
	sink += x;
}

EXAMPLE_NOINLINE static void on_signal(int sig)
{
	handler_work((unsigned long)sig);
	handler_work(1);
	__atomic_add_fetch(&handled, 1, __ATOMIC_RELEASE);
}

/* A short busy stretch (well under a microsecond): most signals land in
 * its body, some in its hooks, and the trace stays small. */
EXAMPLE_NOINLINE static void spin(void)
{
	for (int i = 0; i < 100; i++)
		sink++;
}

static void *sender(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	for (unsigned long i = 0; i < nsignals; i++) {
		int before = __atomic_load_n(&handled, __ATOMIC_ACQUIRE);
		pthread_kill(target, SIGUSR1);
		while (__atomic_load_n(&handled, __ATOMIC_ACQUIRE) == before)
			sched_yield();
	}
	__atomic_store_n(&sending_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t self = pthread_self(), tid;
	int err;

	if (argc > 1)
		nsignals = strtoul(argv[1], NULL, 10);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("signals: sigaction");
		return 1;
	}
	err = pthread_create(&tid, NULL, sender, &self);
	if (err != 0) {
		fprintf(stderr, "signals: pthread_create: %s\n", strerror(err));
		return 1;
	}
	/* Now and then the main thread lets the sender run: on a loaded
	 * machine (make -j2 check) it would otherwise spin, recording, until
	 * the trace's size bound, waiting for a sender that gets no CPU. */
	for (unsigned long n = 1; !__atomic_load_n(&sending_done, __ATOMIC_ACQUIRE); n++) {
		spin();
		if (n % 256 == 0)
			sched_yield();
	}
	pthread_join(tid, NULL);
	printf("signals: handled %d\n", (int)handled);
	return (unsigned long)handled == nsignals ? 0 : 1;
}
