/* The thread group's wrappers: pthread_create (with a flow into the new
 * thread), join, detach, exit, and the frame of each thread's life.  See
 * agent/libc/libc.h for the rules every wrapper follows.
 *
 * pthread_create starts the thread on a trampoline that runs, in the new
 * thread, before and after the program's start routine:
 *  - the features' THREAD_START (agent/feature.h): stack sampling needs
 *    every thread, so the trampoline is used whenever the thread group is
 *    on OR a feature wants THREAD_START (sampling, FXT_SAMPLE), even if
 *    only the latter; the new thread starts
 *    with its creator's view of the signal mask (agent/sample/sample.h: the
 *    creator's real mask blocks SIGPROF during the real pthread_create
 *    when the view does);
 *  - a "thread" frame (AGENT_FN_THREAD_LIFE) around the start routine,
 *    whose enter payload (and argument start_routine) is the routine's
 *    address, holding the FLOW end of the flow begun in the creator's
 *    pthread_create frame: the arrow from the creating call to the
 *    thread's first slice;
 *  - at the routine's return: the thread's pending heap delta
 *    (agent_mem_flush_delta) and the frame's exit.
 * A thread that ends in pthread_exit (or is cancelled) never returns to
 * the trampoline: pthread_exit records its own enter and the heap delta,
 * and the converter closes the frames left open at the thread's end.
 *
 * Renames (pthread_setname_np, prctl(PR_SET_NAME)) are not recorded as
 * calls: they are followed, whatever the groups, into the renamed thread's
 * newest spool chunk (spool_chunk_rename()), so that the threads of a
 * process killed before its seal keep their names (spool/format.h,
 * "Thread names").
 *
 * The trampoline's arguments live in a small block from the real malloc
 * (not the program's heap: not recorded, not counted), freed by the new
 * thread as soon as it has read them, or by the creator if the thread
 * could not be created.  Threads created by agent code (t->busy), or
 * before the agent's settings are loaded, start as they are. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "agent/agent.h"
#include "agent/feature.h"
#include "agent/libc/libc.h"
#include "agent/cfg.h"

REAL_DECL(pthread_create);
REAL_DECL(pthread_join);
REAL_DECL(pthread_timedjoin_np);
REAL_DECL(pthread_tryjoin_np);
REAL_DECL(pthread_detach);
REAL_DECL(pthread_exit);
REAL_DECL(pthread_setname_np);
REAL_DECL(prctl);
REAL_DECL(malloc);
REAL_DECL(free);

typedef void *thread_fn(void *);

struct thread_start {
	thread_fn *fn;
	void *arg;
	uint64_t flow; /* the creator's FLOW begin, 0 if it recorded none */
	/* The creator's view of its mask blocked SIGPROF (sample.h), and
	 * the new thread starts with the creator's mask. */
	bool prof_blocked;
};

/* ------------------------------------------------------------ trampoline */

static void *thread_trampoline(void *p)
{
	struct thread_start st = *(struct thread_start *)p;
	struct tstate *t;
	bool rec = false;
	void *ret;

	REAL(free)(p);
	agent_features_emit(AGENT_EV_THREAD_START,
			    &(struct agent_event){ .thread = { st.prof_blocked } });
	t = wrap_enter(AGENT_G_THREAD);
	if (t) {
		const void *start = (const void *)(uintptr_t)st.fn;
		struct wrap_arg a[] = { WARG(START_ROUTINE, CODE, (uintptr_t)st.fn) };

		rec = wrap_call_begin(t, AGENT_FN_THREAD_LIFE, start, a, 1);
		if (rec && st.flow)
			wrap_flow(t, EV_FLOW_END, st.flow, false);
		/* The routine's own calls are the program's: recorded. */
		wrap_leave(t);
	}
	ret = st.fn(st.arg);
	t = &agent_tls;
	agent_mem_flush_delta(t);
	if (rec && (agent_libc_on & AGENT_G_THREAD) && !t->busy)
		wrap_call_end(t, AGENT_FN_THREAD_LIFE, 0, 0, 0, NULL, 0);
	return ret;
}

/* ------------------------------------------------------------ create */

WRAP int pthread_create(pthread_t *thread, const pthread_attr_t *attr, thread_fn *start, void *arg)
{
	struct tstate *t = &agent_tls;
	struct thread_start *st;
	bool rec = false, hold;
	int r;

	if (t->busy ||
	    (!(agent_libc_on & AGENT_G_THREAD) && !agent_features_want(AGENT_EV_THREAD_START)))
		return REAL(pthread_create)(thread, attr, start, arg);
	st = REAL(malloc)(sizeof(*st));
	if (!st) /* the thread still starts, untraced */
		return REAL(pthread_create)(thread, attr, start, arg);
	st->fn = start;
	st->arg = arg;
	st->flow = 0;
	t = wrap_enter(AGENT_G_THREAD);
	if (t) {
		struct wrap_arg a[] = { WARG(THREAD, PTR, thread),
					WARG(START_ROUTINE, CODE, (uintptr_t)start) };

		rec = wrap_call_begin(t, AGENT_FN_pthread_create, CALLER, a, 2);
		if (rec) {
			/* Before the thread exists, so that the begin comes
			 * before its end in the new thread's frame.  (If the
			 * creation fails, the flow has no end: none is shown.) */
			st->flow = agent_new_flow_id(EV_FLOWID_THREAD);
			wrap_flow(t, EV_FLOW_BEGIN, st->flow, false);
		}
	}
	hold = agent_sample_hold_prof();
	st->prof_blocked = hold;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	{
		sigset_t set;

		/* A mask of its own in the attributes: the new thread's real
		 * mask says it all. */
		if (attr && pthread_attr_getsigmask_np(attr, &set) == 0)
			st->prof_blocked = false;
	}
#endif
	r = REAL(pthread_create)(thread, attr, thread_trampoline, st);
	agent_sample_release_prof(hold);
	if (r != 0)
		REAL(free)(st);
	if (t) {
		if (rec)
			wrap_end_int(t, AGENT_FN_pthread_create, r, 0);
		wrap_leave(t);
	}
	return r;
}

/* ------------------------------------------------------------ join, detach */

/* A call on a thread (its pthread_t as the argument "thread") returning 0
 * or an error number. */
#define THREAD_CALL(fn, th, call)                                         \
	do {                                                              \
		struct tstate *t_ = wrap_enter(AGENT_G_THREAD);           \
		struct wrap_arg a_[] = { WARG(THREAD, U64, (th)) };       \
		bool rec_;                                                \
		int r_;                                                   \
                                                                          \
		if (!t_)                                                  \
			return REAL(fn) call;                             \
		rec_ = wrap_call_begin(t_, AGENT_FN_##fn, CALLER, a_, 1); \
		r_ = REAL(fn) call;                                       \
		if (rec_)                                                 \
			wrap_end_int(t_, AGENT_FN_##fn, r_, 0);           \
		wrap_leave(t_);                                           \
		return r_;                                                \
	} while (0)

WRAP int pthread_join(pthread_t th, void **retval)
{
	THREAD_CALL(pthread_join, th, (th, retval));
}

WRAP int pthread_timedjoin_np(pthread_t th, void **retval, const struct timespec *abstime)
{
	THREAD_CALL(pthread_timedjoin_np, th, (th, retval, abstime));
}

WRAP int pthread_tryjoin_np(pthread_t th, void **retval)
{
	THREAD_CALL(pthread_tryjoin_np, th, (th, retval));
}

WRAP int pthread_detach(pthread_t th)
{
	THREAD_CALL(pthread_detach, th, (th));
}

/* ------------------------------------------------------------ exit */

/* Its enter only: it does not return.  The converter closes the frame (and
 * the thread's life frame) at the thread's end. */
WRAP void pthread_exit(void *retval)
{
	struct tstate *t = wrap_enter(AGENT_G_THREAD);

	agent_mem_flush_delta(&agent_tls);
	if (t) {
		wrap_call_begin(t, AGENT_FN_pthread_exit, CALLER, NULL, 0);
		wrap_leave(t);
	}
	/* C library's unwinding (its own pointer into libgcc_s) must see
	 * the real return addresses of patched frames (patch.h). */
	agent_features_emit(AGENT_EV_THREAD_UNWIND, NULL);
	REAL(pthread_exit)(retval);
	__builtin_unreachable();
}

/* ------------------------------------------------------------ names */

/* Thread `th` of this process (NULL: the calling one) was renamed `name`:
 * into its newest chunk.  As agent code (busy): the locks taken here are
 * not the program's. */
static void renamed(const pthread_t *th, const char *name)
{
	struct tstate *t = &agent_tls;
	struct tbuf *tb = NULL;
	int saved = errno;

	if (agent.disabled || !name)
		return;
	t->busy++;
	if (!th || pthread_equal(*th, pthread_self())) {
		tb = t->tb;
	} else {
		pthread_mutex_lock(&agent.lock);
		for (tb = agent.threads; tb; tb = tb->next)
			if (pthread_equal(tb->self, *th) &&
			    __atomic_load_n(&tb->state, __ATOMIC_RELAXED) != TBUF_RETIRED)
				break;
		pthread_mutex_unlock(&agent.lock);
	}
	/* A thread without a chunk yet reads its name when it takes one. */
	if (tb)
		(void)spool_chunk_rename(&agent.spool, &tb->name_off, name);
	agent_busy_leave(t);
	errno = saved;
}

WRAP int pthread_setname_np(pthread_t th, const char *name)
{
	int r = REAL(pthread_setname_np)(th, name);

	if (r == 0)
		renamed(&th, name);
	return r;
}

/* prctl() takes up to four more arguments, unsigned longs: all are passed
 * on, as glibc's own wrapper does. */
WRAP int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;
	int r;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	r = REAL(prctl)(option, a2, a3, a4, a5);
	if (r == 0 && option == PR_SET_NAME)
		renamed(NULL, (const char *)a2);
	return r;
}
