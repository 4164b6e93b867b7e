/* waits: a program with hooks that makes one thread wait for another in a
 * known way, for fxt-waits' tests.  Each mode makes one wait happen, the
 * releaser waiting until the waiter said it is about to block, then 50 ms
 * more, so that the wait lasts about 50 ms (more on a loaded machine):
 *
 *	mutex  main's want() blocks in pthread_mutex_lock on a mutex the
 *	       worker's hold() holds for 50 ms
 *	cond   main's want() waits on a condition the worker's ring() signals
 *	pipe   the parent's want() reads a pipe the child process's feed()
 *	       writes to after 50 ms
 *	join   main's want() joins a worker whose work() runs 50 ms
 *
 * The functions have hooks and are kept out of line, so the archive names
 * them.  Prints what it did; exits 0. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #cond); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

#define HOLD_MS 50

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, about_to_block;

/* Not through the hooks (the test matches slices by name). */
__attribute__((no_instrument_function)) static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The waiter says it is about to block; the releaser waits for that, then
 * HOLD_MS more. */
__attribute__((no_instrument_function)) static void blocking_next(void)
{
	__atomic_store_n(&about_to_block, 1, __ATOMIC_RELEASE);
}

__attribute__((no_instrument_function)) static void wait_blocked(void)
{
	while (!__atomic_load_n(&about_to_block, __ATOMIC_ACQUIRE))
		pause_ms(1);
	pause_ms(HOLD_MS);
}

/* ------------------------------------------------------------ mutex */

__attribute__((noinline)) static void hold(void)
{
	CHECK(pthread_mutex_lock(&mutex) == 0);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_blocked();
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void *holder(void *arg)
{
	hold();
	return arg;
}

__attribute__((noinline)) static void want(void)
{
	blocking_next();
	CHECK(pthread_mutex_lock(&mutex) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void run_mutex(void)
{
	pthread_t th;

	CHECK(pthread_create(&th, NULL, holder, NULL) == 0);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		pause_ms(1);
	want();
	CHECK(pthread_join(th, NULL) == 0);
	printf("mutex: done\n");
}

/* ------------------------------------------------------------- cond */

static int rung;

__attribute__((noinline)) static void ring(void)
{
	wait_blocked();
	CHECK(pthread_mutex_lock(&mutex) == 0);
	rung = 1;
	CHECK(pthread_cond_signal(&cond) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void *ringer(void *arg)
{
	ring();
	return arg;
}

__attribute__((noinline)) static void want_signal(void)
{
	CHECK(pthread_mutex_lock(&mutex) == 0);
	blocking_next();
	while (!rung)
		CHECK(pthread_cond_wait(&cond, &mutex) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void run_cond(void)
{
	pthread_t th;

	CHECK(pthread_create(&th, NULL, ringer, NULL) == 0);
	want_signal();
	CHECK(pthread_join(th, NULL) == 0);
	printf("cond: done\n");
}

/* ------------------------------------------------------------- pipe */

__attribute__((noinline)) static void feed(int fd)
{
	pause_ms(HOLD_MS);
	CHECK(write(fd, "x", 1) == 1);
}

__attribute__((noinline)) static void want_byte(int fd)
{
	char c;

	CHECK(read(fd, &c, 1) == 1);
}

static void run_pipe(void)
{
	int fds[2], status;
	pid_t pid;

	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		feed(fds[1]);
		close(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	want_byte(fds[0]);
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("pipe: done\n");
}

/* ------------------------------------------------------------- join */

__attribute__((noinline)) static void work(void)
{
	pause_ms(HOLD_MS);
}

static void *worker(void *arg)
{
	work();
	return arg;
}

__attribute__((noinline)) static void want_end(pthread_t th)
{
	CHECK(pthread_join(th, NULL) == 0);
}

static void run_join(void)
{
	pthread_t th;

	CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
	want_end(th);
	printf("join: done\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "mutex") == 0)
		run_mutex();
	else if (strcmp(mode, "cond") == 0)
		run_cond();
	else if (strcmp(mode, "pipe") == 0)
		run_pipe();
	else if (strcmp(mode, "join") == 0)
		run_join();
	else {
		fprintf(stderr, "usage: waits mutex|cond|pipe|join\n");
		return 2;
	}
	return 0;
}
