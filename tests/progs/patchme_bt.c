/* patchme_bt: a program that prints its own backtrace, as crash handlers,
 * loggers and assert macros do, built without -finstrument-functions
 * (-O2, -rdynamic for the names) for run-time patching
 * (tests/e2e/patch-walkers.sh).  Patching replaces return addresses on
 * the stack; the backtraces must be the ones the plain run prints.
 *
 *   outer -> middle -> inner(3) -> inner(2) ... -> inner(0) -> show()
 *
 * show() prints, each symbolized by backtrace_symbols_fd():
 *   glibc's backtrace() with room for every frame,
 *   backtrace() with room for 4 (the buffer full),
 *   the frames _Unwind_Backtrace() gives a callback of the program's,
 *   built as patchme_bt_unw (PATCHME_BT_UNW, linked with libunwind, whose
 *   _Unwind_Backtrace comes first then): libunwind's unw_backtrace() too,
 * each after a line "NAME: N frames".  Run 3 times, from 3 calls.
 *
 * With the argument "thread": once in a thread (its frames end in the C
 * library's start_thread and clone, which the agent starts on a start
 * routine of its own), then once in the main thread; backtrace() also
 * with room for exactly the frames it gave with room for all.
 *
 * With the argument "prof": calls leaf() in a loop while a SIGPROF
 * handler takes a backtrace (its timer set to 200 us of CPU time), 250
 * times, as a sampling profiler does; a signal may come in the middle of
 * any patched call's entry or return.
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <unwind.h>
#ifdef PATCHME_BT_UNW
#include <libunwind.h>
#endif

#define NOINLINE __attribute__((noinline, noclone))
#define MAXF	 64

static volatile int sink;
static int exact; /* "thread": backtrace() with room for all it gave too */

/* Global, so that -rdynamic names them. */
void show(void);
void inner(int d);
void middle(void);
void outer(void);
void leaf(long v);

static void print(const char *what, void **v, int n)
{
	printf("%s: %d frames\n", what, n);
	fflush(stdout);
	backtrace_symbols_fd(v, n, STDOUT_FILENO);
}

struct collected {
	void *v[MAXF];
	int n;
};

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
	struct collected *c = arg;

	if (c->n == MAXF)
		return _URC_END_OF_STACK;
	c->v[c->n++] = (void *)_Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

NOINLINE void show(void)
{
	void *v[MAXF];
	struct collected c = { .n = 0 };

	int n = backtrace(v, MAXF);

	print("backtrace", v, n);
	print("backtrace(4)", v, backtrace(v, 4));
	if (exact)
		print("backtrace(n)", v, backtrace(v, n));
	_Unwind_Backtrace(collect, &c);
	print("_Unwind_Backtrace", c.v, c.n);
#ifdef PATCHME_BT_UNW
	print("unw_backtrace", v, unw_backtrace(v, MAXF));
#endif
	sink++;
}

NOINLINE void inner(int d)
{
	if (d == 0)
		show();
	else
		inner(d - 1);
	sink++;
}

NOINLINE void middle(void)
{
	inner(3);
	sink++;
}

NOINLINE void outer(void)
{
	middle();
	sink++;
}

NOINLINE void leaf(long v)
{
	sink += (int)v;
}

static volatile int samples;

static void on_prof(int sig)
{
	void *v[MAXF];

	(void)sig;
	/* Counted up to 250: one may still come after the loop saw 250 and
	 * before the timer is off. */
	if (backtrace(v, MAXF) > 0 && samples < 250)
		samples++;
}

static int prof(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) != 0 || setitimer(ITIMER_PROF, &it, NULL) != 0)
		return 1;
	for (long i = 0; samples < 250; i++)
		leaf(i);
	setitimer(ITIMER_PROF, &off, NULL);
	printf("prof: %d backtraces\n", samples);
	return 0;
}

static void *thread_main(void *arg)
{
	(void)arg;
	outer();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "prof") == 0)
		return prof();
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		pthread_t th;

		exact = 1;
		printf("thread:\n");
		fflush(stdout);
		if (pthread_create(&th, NULL, thread_main, NULL) != 0 ||
		    pthread_join(th, NULL) != 0)
			return 1;
		printf("main:\n");
		outer();
		return 0;
	}
	for (int i = 0; i < 3; i++)
		outer();
	return 0;
}
