/* named_threads: threads named every way a program names them, for the
 * tests of thread names in archives recovered from a killed process's
 * spool.
 *
 *	named_threads kill|hang|return
 *
 * Three threads besides main, each named after its first call was
 * recorded (so after it took its first spool chunk, which got the name it
 * had then):
 *  - "self-named": by itself with pthread_setname_np(pthread_self()),
 *    first "old-name", then, after more calls, "self-named";
 *  - "creator-named": by main with pthread_setname_np() on it;
 *  - "prctl-named": by itself with prctl(PR_SET_NAME).
 * Main keeps the program's name.  Once every thread is named and has
 * called work(), main prints "named_threads: ready" and, with the threads
 * still running, raises SIGKILL (kill), sleeps until killed (hang), or
 * lets them end and returns (return).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;
static pthread_barrier_t started, named, done;

EXAMPLE_NOINLINE static void work(unsigned long x)
{
	sink += x;
}

EXAMPLE_NOINLINE static void *self_named(void *arg)
{
	(void)arg;
	work(1);
	pthread_barrier_wait(&started);
	pthread_setname_np(pthread_self(), "old-name");
	work(2);
	pthread_setname_np(pthread_self(), "self-named");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&done);
	return NULL;
}

EXAMPLE_NOINLINE static void *creator_named(void *arg)
{
	(void)arg;
	work(3);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&named); /* main names it meanwhile */
	pthread_barrier_wait(&done);
	return NULL;
}

EXAMPLE_NOINLINE static void *prctl_named(void *arg)
{
	(void)arg;
	work(4);
	pthread_barrier_wait(&started);
	prctl(PR_SET_NAME, "prctl-named", 0, 0, 0);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&done);
	return NULL;
}

EXAMPLE_NOINLINE static void ready(const char *how)
{
	printf("named_threads: ready\n");
	fflush(stdout);
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	while (strcmp(how, "hang") == 0)
		pause();
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc != 2) {
		fprintf(stderr, "usage: named_threads kill|hang|return\n");
		return 2;
	}
	pthread_barrier_init(&started, NULL, 4);
	pthread_barrier_init(&named, NULL, 4);
	pthread_barrier_init(&done, NULL, 4);
	if (pthread_create(&t[0], NULL, self_named, NULL) != 0 ||
	    pthread_create(&t[1], NULL, creator_named, NULL) != 0 ||
	    pthread_create(&t[2], NULL, prctl_named, NULL) != 0)
		return 1;
	/* Every thread has recorded its first call once past `started`. */
	work(0);
	pthread_barrier_wait(&started);
	pthread_setname_np(t[1], "creator-named");
	pthread_barrier_wait(&named);
	ready(argv[1]);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
