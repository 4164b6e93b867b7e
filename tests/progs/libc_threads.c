/* libc_threads: a program built without hooks, for the thread and sync
 * groups' tests.  Each mode makes one thing happen for sure, waiting long
 * enough (50 ms after the other thread said it would block) that the
 * other thread is blocked by then:
 *
 *	mutex    a worker blocks on a mutex the main thread holds, then on an
 *	         rwlock it write-holds; trylocks that fail
 *	cond     a worker waits on a condition the main thread signals
 *	broadcast  two workers wait on a condition the main thread broadcasts
 *	sem      a worker waits on a semaphore the main thread posts
 *	barrier  two threads meet at a barrier
 *	create   a thread that returns, one that calls pthread_exit, a
 *	         detached one, try/timed joins
 *	many     1000 short threads (some exit with pthread_exit, some
 *	         detached), with malloc/free in each
 * Every mode first lets go and joins a thread started before the agent
 * was initialised (see early_start).
 *
 * Prints what it did and exits with status 3 (so that the tests see the
 * status pass through). */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static sem_t sem;
static int shared;

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The worker says it is about to block; the main thread waits for that,
 * then 50 ms more, before it lets the worker through: the worker is then
 * blocked for sure (short of a 50 ms descheduling). */
static int about_to_block;

static void blocking_next(void)
{
	__atomic_add_fetch(&about_to_block, 1, __ATOMIC_RELEASE);
}

/* Waits until `n` workers said so. */
static void wait_blocked_n(int n)
{
	while (__atomic_load_n(&about_to_block, __ATOMIC_ACQUIRE) < n)
		pause_ms(1);
	__atomic_sub_fetch(&about_to_block, n, __ATOMIC_RELAXED);
	pause_ms(50);
}

static void wait_blocked(void)
{
	wait_blocked_n(1);
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t th;

	CHECK(pthread_create(&th, NULL, fn, arg) == 0);
	return th;
}

static void join(pthread_t th, void *expect)
{
	void *ret;

	CHECK(pthread_join(th, &ret) == 0);
	CHECK(ret == expect);
}

/* ------------------------------------------------------------ early */

/* A thread started before any library's constructor (.preinit_array), so
 * before the agent's: it starts without the agent's trampoline, then, once
 * main lets it go, makes calls the agent records and ends in pthread_exit.
 * Every mode joins it first. */
static pthread_t early_thread;
static int early_go; /* a futex word, not a sem_t: see early_main() */
static int early_ok;

/* Through a volatile: the compiler may drop a malloc/free pair whose block
 * is never read. */
static void *volatile sink;

/* It waits on a futex of its own, through syscall(), which no libc group
 * records: a sem_wait() here was recorded when the thread started late on
 * a loaded machine (the agent up by then), and its flow from early_join()'s
 * post was one more in every mode's count (libc-sync.sh's sem check got 2
 * once in CI). */
static void *early_main(void *arg)
{
	while (!__atomic_load_n(&early_go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &early_go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	sink = malloc(100);
	free(sink);
	pthread_mutex_lock(&mutex);
	pthread_mutex_unlock(&mutex);
	pthread_exit(arg);
}

static void early_start(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	early_ok = pthread_create(&early_thread, NULL, early_main, &early_ok) == 0;
}

__attribute__((section(".preinit_array"),
	       used)) static void (*const preinit)(int, char **, char **) = early_start;

static void early_join(void)
{
	void *ret;

	CHECK(early_ok);
	__atomic_store_n(&early_go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &early_go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	CHECK(pthread_join(early_thread, &ret) == 0 && ret == &early_ok);
}

/* ------------------------------------------------------------ mutex */

static void *mutex_worker(void *arg)
{
	(void)arg;
	blocking_next();
	CHECK(pthread_mutex_lock(&mutex) == 0); /* waits for main */
	shared++;
	CHECK(pthread_mutex_unlock(&mutex) == 0);
	blocking_next();
	CHECK(pthread_rwlock_rdlock(&rwlock) == 0); /* waits for main */
	shared++;
	CHECK(pthread_rwlock_unlock(&rwlock) == 0);
	return NULL;
}

static void mutex_mode(void)
{
	pthread_t th;

	CHECK(pthread_mutex_lock(&mutex) == 0);
	CHECK(pthread_rwlock_wrlock(&rwlock) == 0);
	th = start(mutex_worker, NULL);
	wait_blocked();
	CHECK(pthread_mutex_trylock(&mutex) == EBUSY);
	CHECK(pthread_rwlock_tryrdlock(&rwlock) == EBUSY);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
	wait_blocked();
	CHECK(pthread_rwlock_unlock(&rwlock) == 0);
	join(th, NULL);
	CHECK(shared == 2);
	printf("mutex: shared=%d\n", shared);
}

/* ------------------------------------------------------------ cond */

static void *cond_worker(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&mutex) == 0);
	blocking_next();
	while (!shared)
		CHECK(pthread_cond_wait(&cond, &mutex) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
	return NULL;
}

static void cond_mode(void)
{
	pthread_t th = start(cond_worker, NULL);

	/* The worker holds the mutex from before it flags until its wait
	 * releases it: the lock below returns once the worker waits. */
	wait_blocked();
	CHECK(pthread_mutex_lock(&mutex) == 0);
	shared = 1;
	CHECK(pthread_cond_signal(&cond) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
	join(th, NULL);
	printf("cond: woken\n");
}

static void broadcast_mode(void)
{
	pthread_t a = start(cond_worker, NULL), b = start(cond_worker, NULL);

	wait_blocked_n(2); /* both wait once main has the mutex (see cond_mode) */
	CHECK(pthread_mutex_lock(&mutex) == 0);
	shared = 1;
	CHECK(pthread_cond_broadcast(&cond) == 0);
	CHECK(pthread_mutex_unlock(&mutex) == 0);
	join(a, NULL);
	join(b, NULL);
	printf("broadcast: both woken\n");
}

/* ------------------------------------------------------------ sem */

static void *sem_worker(void *arg)
{
	(void)arg;
	blocking_next();
	CHECK(sem_wait(&sem) == 0); /* waits for main */
	return NULL;
}

static void sem_mode(void)
{
	pthread_t th;

	CHECK(sem_init(&sem, 0, 0) == 0);
	th = start(sem_worker, NULL);
	wait_blocked();
	errno = 0;
	CHECK(sem_trywait(&sem) == -1 && errno == EAGAIN);
	CHECK(sem_post(&sem) == 0);
	join(th, NULL);
	printf("sem: posted\n");
}

/* ------------------------------------------------------------ barrier */

static void *barrier_worker(void *arg)
{
	int r = pthread_barrier_wait(&barrier);

	(void)arg;
	CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
	return NULL;
}

static void barrier_mode(void)
{
	pthread_t th;
	int r;

	CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
	th = start(barrier_worker, NULL);
	r = pthread_barrier_wait(&barrier);
	CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
	join(th, NULL);
	CHECK(pthread_barrier_destroy(&barrier) == 0);
	printf("barrier: met\n");
}

/* ------------------------------------------------------------ create */

static void *returns(void *arg)
{
	return arg;
}

static void *exits(void *arg)
{
	pthread_exit(arg);
}

static void *detached(void *arg)
{
	(void)arg;
	CHECK(sem_post(&sem) == 0);
	return NULL;
}

static void create_mode(void)
{
	pthread_t th;
	void *ret;

	join(start(returns, &shared), &shared);
	join(start(exits, &mutex), &mutex);
	CHECK(sem_init(&sem, 0, 0) == 0);
	th = start(detached, NULL);
	CHECK(pthread_detach(th) == 0);
	CHECK(sem_wait(&sem) == 0);
	th = start(returns, &cond);
	while (pthread_tryjoin_np(th, &ret) == EBUSY)
		pause_ms(1);
	CHECK(ret == &cond);
	printf("create: 4 threads\n");
}

/* ------------------------------------------------------------ many */

static void *short_thread(void *arg)
{
	long i = (long)arg;
	/* Its own pointer: through the shared `sink`, two threads could free
	 * one block (the plain run aborted with a double free, under load). */
	void *volatile block = malloc(64 + (size_t)i);

	CHECK(block != NULL);
	free(block);
	if (i % 10 == 3)
		pthread_exit(arg);
	if (i % 100 == 7)
		CHECK(sem_post(&sem) == 0);
	return arg;
}

static void many_mode(void)
{
	enum { N = 1000, BATCH = 50 };
	pthread_t th[BATCH];
	int ndetached = 0;

	CHECK(sem_init(&sem, 0, 0) == 0);
	for (long i = 0; i < N; i += BATCH) {
		for (long j = 0; j < BATCH; j++) {
			th[j] = start(short_thread, (void *)(i + j));
			if ((i + j) % 100 == 7) {
				CHECK(pthread_detach(th[j]) == 0);
				ndetached++;
			}
		}
		for (long j = 0; j < BATCH; j++)
			if ((i + j) % 100 != 7)
				join(th[j], (void *)(i + j));
	}
	for (int i = 0; i < ndetached; i++)
		CHECK(sem_wait(&sem) == 0);
	printf("many: %d threads, %d detached\n", N, ndetached);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {
		{ "mutex", mutex_mode },	 { "cond", cond_mode },
		{ "broadcast", broadcast_mode }, { "sem", sem_mode },
		{ "barrier", barrier_mode },	 { "create", create_mode },
		{ "many", many_mode },
	};

	for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(argv[1], modes[i].name)) {
			early_join();
			modes[i].fn();
			return 3;
		}
	}
	fprintf(stderr, "usage: libc_threads mutex|cond|broadcast|sem|barrier|create|many\n");
	return 2;
}
