/* The sync group's wrappers: mutexes, rwlocks, condition variables,
 * semaphores and barriers.  See agent/libc/libc.h for the rules every wrapper
 * follows.
 *
 * The hot path only records what happened; the converter pairs the SYNC
 * records (spool/records.h) into flows:
 *  - an acquisition (mutex lock, rwlock rdlock/wrlock, their timed forms,
 *    sem_wait/sem_timedwait) first tries without blocking (trylock,
 *    tryrdlock, trywrlock, sem_trywait).  If that gives anything but
 *    "busy" (EBUSY; EAGAIN for a semaphore), it is the call's result,
 *    exactly what the blocking call would have returned (0, EOWNERDEAD,
 *    EDEADLK, ...), and the call did not wait.  Otherwise the blocking call
 *    runs, the argument "waited" is true, and when it acquired, a SYNC
 *    LOCK_WAITED (SEM_WAITED) record with the object ends the frame: the
 *    converter draws the flow from the release that let it through;
 *  - a release (mutex or rwlock unlock, sem_post) writes its SYNC UNLOCK
 *    (POST) record inside its frame, dated BEFORE the real call, so the
 *    releasing frame starts before the waiter can acquire;
 *  - pthread_cond_signal/broadcast write SIGNAL/BROADCAST the same way; a
 *    cond wait that returns 0 writes WOKEN;
 *  - calls that do not block (an acquisition whose try succeeded, trylocks,
 *    releases, signals, posts) take ONE timestamp, before the real call,
 *    and write their whole frame in one record after it (wrap_call_once):
 *    on this machine a timestamp costs more than an uncontended lock.
 *    Only calls that waited get a second timestamp (and waited=true);
 *  - pthread_barrier_wait writes BARRIER once it returns (no flow).
 * A thread cancelled inside a blocking call (a cancellation point) never
 * returns to its wrapper: its cleanup handlers' calls are not recorded.
 *
 * pthread_cond_* exist in two versions in glibc: the current one
 * (GLIBC_2.3.2) and an old one with another pthread_cond_t layout, which
 * plain dlsym may return.  They are resolved by version (falling back to
 * the default one on ABIs whose oldest version is newer). */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "agent/libc/libc.h"
#include "agent/sys.h"

REAL_DECL(pthread_mutex_lock);
REAL_DECL(pthread_mutex_trylock);
REAL_DECL(pthread_mutex_timedlock);
REAL_DECL(pthread_mutex_unlock);
REAL_DECL(pthread_rwlock_rdlock);
REAL_DECL(pthread_rwlock_wrlock);
REAL_DECL(pthread_rwlock_tryrdlock);
REAL_DECL(pthread_rwlock_trywrlock);
REAL_DECL(pthread_rwlock_timedrdlock);
REAL_DECL(pthread_rwlock_timedwrlock);
REAL_DECL(pthread_rwlock_unlock);
REAL_DECL(pthread_cond_wait);
REAL_DECL(pthread_cond_timedwait);
REAL_DECL(pthread_cond_signal);
REAL_DECL(pthread_cond_broadcast);
REAL_DECL(sem_wait);
REAL_DECL(sem_timedwait);
REAL_DECL(sem_trywait);
REAL_DECL(sem_post);
REAL_DECL(pthread_barrier_wait);

#define COND_VERSION "GLIBC_2.3.2"

static void *resolve_cond(const char *name)
{
	void *p = agent_resolve(name, COND_VERSION);

	return p ? p : agent_resolve(name, NULL);
}

/* real_pthread_cond_*, resolved by version: REAL_COND(fn)(args). */
#define REAL_COND_GETTER(fn)                                             \
	static inline __typeof__(fn) *real_cond_##fn(void)               \
	{                                                                \
		if (__builtin_expect(real_##fn == NULL, 0))              \
			real_##fn = (__typeof__(fn) *)resolve_cond(#fn); \
		return real_##fn;                                        \
	}
REAL_COND_GETTER(pthread_cond_wait)
REAL_COND_GETTER(pthread_cond_timedwait)
REAL_COND_GETTER(pthread_cond_signal)
REAL_COND_GETTER(pthread_cond_broadcast)
#define REAL_COND(fn) (real_cond_##fn())

/* ------------------------------------------------------------ common shapes */

/* The end of an acquisition: the "waited" argument, the SYNC record of an
 * acquisition that waited, the result (an error number). */
static inline __attribute__((always_inline)) void acquired(struct tstate *t, unsigned fn, bool rec,
							   const void *obj, int r, bool busy)
{
	if (rec) {
		struct wrap_arg a[] = { WARG(WAITED, BOOL, busy) };

		if (busy && (r == 0 || r == EOWNERDEAD))
			wrap_sync(t, EV_SYNC_LOCK_WAITED, obj);
		wrap_call_end(t, fn, ev_int_payload(r), r, 0, a, 1);
	}
	wrap_leave(t);
}

/* A pthread acquisition of `obj` (argument KEY): `try_call` first, then
 * `wait_call` if it was busy. */
#define ACQUIRE(fn, KEY, obj, try_call, wait_call)                                     \
	do {                                                                           \
		struct tstate *t_ = wrap_enter(AGENT_G_SYNC);                          \
		struct wrap_arg a_[] = { WARG(KEY, PTR, (obj)) };                      \
		uint64_t ts_;                                                          \
		bool rec_, busy_;                                                      \
		int r_;                                                                \
                                                                                       \
		if (!t_)                                                               \
			return wait_call;                                              \
		ts_ = agent_ticks();                                                   \
		r_ = try_call;                                                         \
		busy_ = r_ == EBUSY;                                                   \
		if (!busy_) {                                                          \
			/* No wait: one timestamp (wrap_call_once). */                 \
			struct wrap_arg o_[] = { WARG(KEY, PTR, (obj)) };              \
			wrap_call_once(t_, AGENT_FN_##fn, CALLER, ts_, o_, 1, 0, NULL, \
				       ev_int_payload(r_), r_, 0);                     \
			wrap_leave(t_);                                                \
			return r_;                                                     \
		}                                                                      \
		rec_ = wrap_call_begin_ts(t_, AGENT_FN_##fn, CALLER, a_, 1, ts_);      \
		r_ = wait_call;                                                        \
		acquired(t_, AGENT_FN_##fn, rec_, (obj), r_, busy_);                   \
		return r_;                                                             \
	} while (0)

/* A pthread call on `obj` that does not block (trylock, unlock, signal,
 * broadcast), returning an error number: one record after the call, with
 * the one timestamp read before it (wrap_call_once), so that a release
 * (`op`: its SYNC record) is dated before any waiter it lets through. */
#define SYNC_CALL(fn, real, KEY, obj, call, op)                                              \
	do {                                                                                 \
		struct tstate *t_ = wrap_enter(AGENT_G_SYNC);                                \
		struct wrap_arg a_[] = { WARG(KEY, PTR, (obj)) };                            \
		uint64_t ts_;                                                                \
		int r_;                                                                      \
                                                                                             \
		if (!t_)                                                                     \
			return real call;                                                    \
		ts_ = agent_ticks();                                                         \
		r_ = real call;                                                              \
		wrap_call_once(t_, AGENT_FN_##fn, CALLER, ts_, a_, 1, (enum ev_sync_op)(op), \
			       (obj), ev_int_payload(r_), r_, 0);                            \
		wrap_leave(t_);                                                              \
		return r_;                                                                   \
	} while (0)

/* ------------------------------------------------------------ mutex */

WRAP AGENT_FORK_CODE int pthread_mutex_lock(pthread_mutex_t *m)
{
	ACQUIRE(pthread_mutex_lock, MUTEX, m, REAL(pthread_mutex_trylock)(m),
		REAL(pthread_mutex_lock)(m));
}

WRAP int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	ACQUIRE(pthread_mutex_timedlock, MUTEX, m, REAL(pthread_mutex_trylock)(m),
		REAL(pthread_mutex_timedlock)(m, abstime));
}

WRAP AGENT_FORK_CODE int pthread_mutex_trylock(pthread_mutex_t *m)
{
	SYNC_CALL(pthread_mutex_trylock, REAL(pthread_mutex_trylock), MUTEX, m, (m), 0);
}

WRAP AGENT_FORK_CODE int pthread_mutex_unlock(pthread_mutex_t *m)
{
	SYNC_CALL(pthread_mutex_unlock, REAL(pthread_mutex_unlock), MUTEX, m, (m), EV_SYNC_UNLOCK);
}

/* ------------------------------------------------------------ rwlock */

WRAP int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_rdlock, RWLOCK, l, REAL(pthread_rwlock_tryrdlock)(l),
		REAL(pthread_rwlock_rdlock)(l));
}

WRAP int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_wrlock, RWLOCK, l, REAL(pthread_rwlock_trywrlock)(l),
		REAL(pthread_rwlock_wrlock)(l));
}

WRAP int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	ACQUIRE(pthread_rwlock_timedrdlock, RWLOCK, l, REAL(pthread_rwlock_tryrdlock)(l),
		REAL(pthread_rwlock_timedrdlock)(l, abstime));
}

WRAP int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	ACQUIRE(pthread_rwlock_timedwrlock, RWLOCK, l, REAL(pthread_rwlock_trywrlock)(l),
		REAL(pthread_rwlock_timedwrlock)(l, abstime));
}

WRAP int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	SYNC_CALL(pthread_rwlock_tryrdlock, REAL(pthread_rwlock_tryrdlock), RWLOCK, l, (l), 0);
}

WRAP int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	SYNC_CALL(pthread_rwlock_trywrlock, REAL(pthread_rwlock_trywrlock), RWLOCK, l, (l), 0);
}

WRAP int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	SYNC_CALL(pthread_rwlock_unlock, REAL(pthread_rwlock_unlock), RWLOCK, l, (l),
		  EV_SYNC_UNLOCK);
}

/* ------------------------------------------------------------ cond */

/* A wait: the cond and the mutex; WOKEN when it returned 0. */
static inline __attribute__((always_inline)) bool cond_begin(struct tstate *t, unsigned fn,
							     const void *caller,
							     const pthread_cond_t *c,
							     const pthread_mutex_t *m)
{
	struct wrap_arg a[] = { WARG(COND, PTR, c), WARG(MUTEX, PTR, m) };

	return wrap_call_begin(t, fn, caller, a, 2);
}

static inline __attribute__((always_inline)) void cond_end(struct tstate *t, unsigned fn, bool rec,
							   const pthread_cond_t *c, int r)
{
	if (rec) {
		if (r == 0)
			wrap_sync(t, EV_SYNC_WOKEN, c);
		wrap_end_int(t, fn, r, 0);
	}
	wrap_leave(t);
}

WRAP int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct tstate *t = wrap_enter(AGENT_G_SYNC);
	bool rec;
	int r;

	if (!t)
		return REAL_COND(pthread_cond_wait)(c, m);
	rec = cond_begin(t, AGENT_FN_pthread_cond_wait, CALLER, c, m);
	r = REAL_COND(pthread_cond_wait)(c, m);
	cond_end(t, AGENT_FN_pthread_cond_wait, rec, c, r);
	return r;
}

WRAP int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				const struct timespec *abstime)
{
	struct tstate *t = wrap_enter(AGENT_G_SYNC);
	bool rec;
	int r;

	if (!t)
		return REAL_COND(pthread_cond_timedwait)(c, m, abstime);
	rec = cond_begin(t, AGENT_FN_pthread_cond_timedwait, CALLER, c, m);
	r = REAL_COND(pthread_cond_timedwait)(c, m, abstime);
	cond_end(t, AGENT_FN_pthread_cond_timedwait, rec, c, r);
	return r;
}

WRAP int pthread_cond_signal(pthread_cond_t *c)
{
	SYNC_CALL(pthread_cond_signal, REAL_COND(pthread_cond_signal), COND, c, (c),
		  EV_SYNC_SIGNAL);
}

WRAP int pthread_cond_broadcast(pthread_cond_t *c)
{
	SYNC_CALL(pthread_cond_broadcast, REAL_COND(pthread_cond_broadcast), COND, c, (c),
		  EV_SYNC_BROADCAST);
}

/* ------------------------------------------------------------ barrier */

WRAP int pthread_barrier_wait(pthread_barrier_t *b)
{
	/* PTHREAD_BARRIER_SERIAL_THREAD (-1) is a success too. */
	struct tstate *t = wrap_enter(AGENT_G_SYNC);
	struct wrap_arg a[] = { WARG(BARRIER, PTR, b) };
	bool rec;
	int r;

	if (!t)
		return REAL(pthread_barrier_wait)(b);
	rec = wrap_call_begin(t, AGENT_FN_pthread_barrier_wait, CALLER, a, 1);
	r = REAL(pthread_barrier_wait)(b);
	if (rec) {
		if (r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD)
			wrap_sync(t, EV_SYNC_BARRIER, b);
		wrap_end_int(t, AGENT_FN_pthread_barrier_wait, r, 0);
	}
	wrap_leave(t);
	return r;
}

/* ------------------------------------------------------------ semaphores */

/* sem_wait and sem_timedwait: sem_trywait first; EAGAIN means the real
 * call will wait.  The trywait's EAGAIN is not left in errno: the caller
 * sees errno as the blocking call alone would have left it. */
#define SEM_ACQUIRE(fn, sem, wait_call)                                                        \
	do {                                                                                   \
		struct tstate *t_ = wrap_enter(AGENT_G_SYNC);                                  \
		struct wrap_arg a_[] = { WARG(SEM, PTR, (sem)) };                              \
		bool rec_, busy_ = false;                                                      \
		uint64_t ts_;                                                                  \
		int r_, err_, saved_ = errno;                                                  \
                                                                                               \
		if (!t_)                                                                       \
			return wait_call;                                                      \
		ts_ = agent_ticks();                                                           \
		r_ = REAL(sem_trywait)(sem);                                                   \
		if (!(r_ < 0 && errno == EAGAIN)) {                                            \
			/* No wait: one timestamp (wrap_call_once). */                         \
			struct wrap_arg o_[] = { WARG(SEM, PTR, (sem)) };                      \
			err_ = r_ < 0 ? errno : 0;                                             \
			wrap_call_once(t_, AGENT_FN_##fn, CALLER, ts_, o_, 1, 0, NULL,         \
				       ev_int_payload(r_), r_, err_);                          \
			wrap_leave(t_);                                                        \
			if (r_ < 0)                                                            \
				errno = err_;                                                  \
			return r_;                                                             \
		}                                                                              \
		rec_ = wrap_call_begin_ts(t_, AGENT_FN_##fn, CALLER, a_, 1, ts_);              \
		busy_ = true;                                                                  \
		errno = saved_;                                                                \
		r_ = wait_call;                                                                \
		err_ = r_ < 0 ? errno : 0;                                                     \
		if (rec_) {                                                                    \
			struct wrap_arg w_[] = { WARG(WAITED, BOOL, busy_) };                  \
                                                                                               \
			if (busy_ && r_ == 0)                                                  \
				wrap_sync(t_, EV_SYNC_SEM_WAITED, (sem));                      \
			wrap_call_end(t_, AGENT_FN_##fn, ev_int_payload(r_), r_, err_, w_, 1); \
		}                                                                              \
		wrap_leave(t_);                                                                \
		if (r_ < 0)                                                                    \
			errno = err_;                                                          \
		return r_;                                                                     \
	} while (0)

WRAP int sem_wait(sem_t *sem)
{
	SEM_ACQUIRE(sem_wait, sem, REAL(sem_wait)(sem));
}

WRAP int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	SEM_ACQUIRE(sem_timedwait, sem, REAL(sem_timedwait)(sem, abstime));
}

/* A semaphore call that does not block (trywait, post), returning 0 or
 * -1 with errno: one record, one timestamp, as SYNC_CALL. */
static inline __attribute__((always_inline)) int
sem_call(unsigned fn, int (*real)(sem_t *), sem_t *sem, const void *caller, enum ev_sync_op op)
{
	struct tstate *t = wrap_enter(AGENT_G_SYNC);
	struct wrap_arg a[] = { WARG(SEM, PTR, sem) };
	uint64_t ts;
	int r, err;

	if (!t)
		return real(sem);
	ts = agent_ticks();
	r = real(sem);
	err = r < 0 ? errno : 0;
	wrap_call_once(t, fn, caller, ts, a, 1, op, sem, ev_int_payload(r), r, err);
	wrap_leave(t);
	if (r < 0)
		errno = err;
	return r;
}

WRAP int sem_trywait(sem_t *sem)
{
	return sem_call(AGENT_FN_sem_trywait, REAL(sem_trywait), sem, CALLER, 0);
}

WRAP int sem_post(sem_t *sem)
{
	return sem_call(AGENT_FN_sem_post, REAL(sem_post), sem, CALLER, EV_SYNC_POST);
}
