/* A program that calls put(s) (a string argument fxt-run --args reads) and
 * has faults and SIGSEGV handlers of its own, for tests/e2e/args-faults.sh:
 * the agent's fast path for strings (agent/patch/probe.c) must leave them
 * as they are.  Built -O2 -g without -finstrument-functions: put() is
 * patched.
 *
 *   args_faults query     prints SIGSEGV's and SIGBUS's actions as
 *                         sigaction() reports them ("dfl" or "set"),
 *                         put() of a pointer that is not canonical
 *   args_faults sigaction put() calls, then a SIGSEGV handler of its own
 *   args_faults signal    (by sigaction() or signal()), a fault on purpose
 *                         that the handler recovers (siglongjmp), put() of
 *                         a PROT_NONE page; prints how many faults its
 *                         handler saw
 *   args_faults fault     put() calls, then a fault: dies by SIGSEGV
 *   args_faults kill      put() calls, then kill(getpid(), SIGSEGV)
 *   args_faults threads   4 threads call put() with strings on pages a
 *                         5th unmaps and maps again meanwhile
 *   args_faults giveback  3 threads call put() with a PROT_NONE page
 *                         while main sets SIGSEGV's and SIGBUS's actions
 *                         (a handler that exits 3)
 *   args_faults nested    put() of strings of 0, 1, ... 64 bytes in turn
 *                         while a timer's handler calls put("handler"),
 *                         until it did 200 times; prints the calls of
 *                         each ("calls N handler M")
 * Each prints "done" at the end when it does not die.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noipa, used))

static volatile long sink;

const char *put(const char *s);

KEEP const char *put(const char *s)
{
	sink++;
	return s;
}

static sigjmp_buf back;
static volatile sig_atomic_t faults;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(back, 1);
}

static const char *action(int sig)
{
	struct sigaction old;

	if (sigaction(sig, NULL, &old) != 0)
		return "error";
	return old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO) ? "dfl" : "set";
}

/* A page no access reaches (PROT_NONE: an unmapped page's address could
 * be mapped again meanwhile, by the agent's buffers or a thread's stack;
 * args_target tests the unmapped one). */
static char *out_of_reach(void)
{
	char *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	return p;
}

static int own_handler(bool by_signal)
{
	char *bad = out_of_reach();

	put("before");
	put(bad);
	if (by_signal) {
		if (signal(SIGSEGV, on_segv) == SIG_ERR)
			return 1;
	} else {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, NULL) != 0)
			return 1;
	}
	if (sigsetjmp(back, 1) == 0)
		sink += *(volatile char *)bad; /* recovered by on_segv */
	put("after");
	put(bad); /* the agent's reading must not reach on_segv */
	printf("faults %d\n", (int)faults);
	return 0;
}

#define NPAGES 4
static char *region;
static long page;
static volatile int stop;

static void *reader(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < 20000; i++)
		put(region + (size_t)((i + k) % NPAGES) * (size_t)page + page - 20);
	return NULL;
}

static void *unmapper(void *arg)
{
	(void)arg;
	while (!stop)
		for (int i = 0; i < NPAGES; i++) {
			char *p = region + (size_t)i * (size_t)page;

			munmap(p, (size_t)page);
			if (mmap(p, (size_t)page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				exit(1);
			memcpy(p + page - 20, "a string in a page", 19);
		}
	return NULL;
}

static int threads(void)
{
	pthread_t r[4], u;

	page = sysconf(_SC_PAGESIZE);
	region = mmap(NULL, NPAGES * (size_t)page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 1;
	for (int i = 0; i < NPAGES; i++)
		memcpy(region + (size_t)i * (size_t)page + page - 20, "a string in a page", 19);
	if (pthread_create(&u, NULL, unmapper, NULL) != 0)
		return 1;
	for (unsigned i = 0; i < 4; i++)
		if (pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)i) != 0)
			return 1;
	for (unsigned i = 0; i < 4; i++)
		pthread_join(r[i], NULL);
	stop = 1;
	pthread_join(u, NULL);
	return 0;
}

/* giveback: threads pass bad pointers while main sets SIGSEGV's action. */
static volatile long calls;

static void on_segv_exit(int sig)
{
	(void)sig;
	_exit(3); /* a fault of the agent's copies reached the program */
}

static void *bad_reader(void *arg)
{
	const char *bad = arg;

	for (int i = 0; i < 20000; i++) {
		put(bad);
		put("ok");
		__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int giveback(void)
{
	pthread_t r[3];
	struct sigaction sa;

	char *bad = out_of_reach();

	for (unsigned i = 0; i < 3; i++)
		if (pthread_create(&r[i], NULL, bad_reader, bad) != 0)
			return 1;
	while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000)
		sched_yield();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv_exit;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0)
		return 1;
	for (unsigned i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	return 0;
}

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	put("handler");
	handled++;
}

/* The handler's call lands, now and then, while the agent writes the
 * interrupted call's records (agent/patch/rt.c: in their reservation). */
static int nested(void)
{
	static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?";
	struct itimerval every = { { 0, 20 }, { 0, 20 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	unsigned long n = 0;
	char buf[sizeof(text)];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		return 1;
	while (handled < 200 && n < 100000000ul) {
		size_t len = n % sizeof(text);

		memcpy(buf, text, len);
		buf[len] = '\0';
		put(buf);
		/* After the first call, which gives the thread its buffer
		 * (a handler's calls during that are dropped, said so). */
		if (n++ == 0 && setitimer(ITIMER_REAL, &every, NULL) != 0)
			return 1;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("calls %lu handler %d\n", n, (int)handled);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int ret = 0;

	if (strcmp(mode, "query") == 0) {
		put("query");
		put((const char *)(uintptr_t)0x8000000000000000ull); /* not canonical */
		printf("%s %s\n", action(SIGSEGV), action(SIGBUS));
	} else if (strcmp(mode, "sigaction") == 0 || strcmp(mode, "signal") == 0) {
		ret = own_handler(strcmp(mode, "signal") == 0);
	} else if (strcmp(mode, "fault") == 0) {
		put("fault");
		fflush(stdout);
		sink += *(volatile char *)out_of_reach();
	} else if (strcmp(mode, "kill") == 0) {
		put("kill");
		fflush(stdout);
		kill(getpid(), SIGSEGV);
		pause();
	} else if (strcmp(mode, "threads") == 0) {
		ret = threads();
	} else if (strcmp(mode, "giveback") == 0) {
		ret = giveback();
	} else if (strcmp(mode, "nested") == 0) {
		ret = nested();
	} else {
		return 2;
	}
	if (ret == 0)
		puts("done");
	return ret;
}
