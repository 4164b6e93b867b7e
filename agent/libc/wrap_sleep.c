/* libc wrappers, sleep group: sleep, usleep, nanosleep, clock_nanosleep,
 * sched_yield.  Each call is one slice with the requested duration; the
 * slice's own length is how long the thread really slept.  See libc.h for
 * the rules every wrapper follows. */
#include <config.h>

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "agent/libc/libc.h"

REAL_DECL(sleep);
REAL_DECL(usleep);
REAL_DECL(nanosleep);
REAL_DECL(clock_nanosleep);
REAL_DECL(sched_yield);

/* A requested duration in ns; -1 for none (a NULL pointer).  The pointer
 * is the program's, valid for the call it passes it to. */
static inline int64_t ts_ns(const struct timespec *ts)
{
	return ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
}

/* The end of an int-returning call: the exit record (with errno when it
 * failed), then errno as the call left it. */
static inline __attribute__((always_inline)) int end_int(struct tstate *t, bool rec, unsigned fn,
							 int r, int err, bool failed)
{
	if (rec)
		wrap_end_int(t, fn, r, failed ? err : 0);
	wrap_leave(t);
	errno = err;
	return r;
}

WRAP unsigned sleep(unsigned seconds)
{
	struct tstate *t = wrap_enter(AGENT_G_SLEEP);
	bool rec;
	unsigned r;

	if (!t)
		return REAL(sleep)(seconds);
	rec = wrap_call_begin(t, AGENT_FN_sleep, CALLER,
			      (struct wrap_arg[]){ WARG(SECONDS, U64, seconds) }, 1);
	r = REAL(sleep)(seconds);
	/* The result is the time left (not an error indicator). */
	return (unsigned)end_int(t, rec, AGENT_FN_sleep, (int)r, errno, false);
}

WRAP int usleep(useconds_t usec)
{
	struct tstate *t = wrap_enter(AGENT_G_SLEEP);
	bool rec;
	int r;

	if (!t)
		return REAL(usleep)(usec);
	rec = wrap_call_begin(t, AGENT_FN_usleep, CALLER,
			      (struct wrap_arg[]){ WARG(USECONDS, U64, usec) }, 1);
	r = REAL(usleep)(usec);
	return end_int(t, rec, AGENT_FN_usleep, r, errno, r < 0);
}

WRAP int nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct tstate *t = wrap_enter(AGENT_G_SLEEP);
	bool rec;
	int r;

	if (!t)
		return REAL(nanosleep)(req, rem);
	rec = wrap_call_begin(t, AGENT_FN_nanosleep, CALLER,
			      (struct wrap_arg[]){ WARG(NS, I64, ts_ns(req)) }, 1);
	r = REAL(nanosleep)(req, rem);
	return end_int(t, rec, AGENT_FN_nanosleep, r, errno, r < 0);
}

/* Returns 0 or an error number, errno untouched: an AGENT_RES_ERRNO
 * result, which carries the error itself. */
WRAP int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
			 struct timespec *rem)
{
	struct tstate *t = wrap_enter(AGENT_G_SLEEP);
	bool rec;
	int r, err;

	if (!t)
		return REAL(clock_nanosleep)(clock, flags, req, rem);
	rec = wrap_call_begin(t, AGENT_FN_clock_nanosleep, CALLER,
			      (struct wrap_arg[]){ WARG(CLOCK, I64, clock), WARG(FLAGS, I64, flags),
						   WARG(NS, I64, ts_ns(req)) },
			      3);
	r = REAL(clock_nanosleep)(clock, flags, req, rem);
	err = errno;
	if (rec)
		wrap_end_int(t, AGENT_FN_clock_nanosleep, r, 0);
	wrap_leave(t);
	errno = err;
	return r;
}

WRAP int sched_yield(void)
{
	struct tstate *t = wrap_enter(AGENT_G_SLEEP);
	bool rec;
	int r;

	if (!t)
		return REAL(sched_yield)();
	rec = wrap_call_begin(t, AGENT_FN_sched_yield, CALLER, NULL, 0);
	r = REAL(sched_yield)();
	return end_int(t, rec, AGENT_FN_sched_yield, r, errno, r < 0);
}
