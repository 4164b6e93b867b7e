/* Stack sampling of threads' CPU time (see sample.h): SIGPROF's action as
 * the program sees it, the mask view that keeps SIGPROF open in threads
 * the program starts with it blocked, and the handler with the per-thread
 * timers; attached to a process already running, the handler's start and
 * its end ("Attached"; the tasks and their timers are live.c's).  The walk
 * of the interrupted stack (libunwind, run-time patching's trampolines and
 * stubs) is walk.c.  One job, one file past 800 lines: the handler reads
 * the state every other part writes (the program's action, the views,
 * the attach's), which stays private to it. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/ticks.h"
#include "agent/events.h"
#include "agent/feature.h"
#include "agent/real.h"
#include "agent/log.h"
#include "agent/gates.h"
#include "agent/sample/live.h"
#include "run/attach.h"
#include "agent/sample/sample.h"
#include "agent/sample/walk.h"
#include "agent/cfg.h"
#include "agent/tbuf.h"

/* glibc before 2.35 does not name the field. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define TLS __thread __attribute__((tls_model("initial-exec")))

TLS unsigned char agent_in_dl;

/* The calling thread's timer.  `on` is what the handler checks: cleared
 * before the timer is deleted, since a signal the timer already queued is
 * still delivered after timer_delete(). */
struct sample_thread {
	timer_t timer;
	pid_t pid; /* the process that created the timer (fork: not ours) */
	volatile sig_atomic_t on;
	/* Periods of CPU time whose signals took no sample (skipped, or no
	 * frame): the next sample stands for them too. */
	uint64_t carry;
	/* The program's view of the thread's mask blocks SIGPROF, the real
	 * one does not (see "Masks" below). */
	volatile sig_atomic_t virt;
	uint64_t nvcsw; /* its voluntary context switches at its last sample */
	/* Why the thread is not sampled, once said (enum ev_unsampled). */
	unsigned char said;
};

static TLS struct sample_thread self;
/* Attached: the thread's timer is in live.c's table (a thread begun while
 * attached; `self` is not used then). */
static TLS bool live_added;
/* Set between our fork handlers (see fork_prepare). */
static TLS unsigned char forking;
/* Attached: the thread is past its end (AGENT_EV_THREAD_END), its buffer
 * being retired: the timers are live.c's until the detach, and a signal
 * of the thread's own may still come; the handler takes no sample then. */
static TLS volatile sig_atomic_t ended;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static bool setup_ok;
static const char timer_cookie; /* its address tags our timers' signals */
/* Samples taken and the ticks spent in taking them (FXT_DEBUG reports
 * them at the seal). */
static uint64_t nsamples, sample_ticks;
static pthread_key_t stop_key;
static struct timespec period;

/* Stores one sample of `n` pcs standing for `periods` of CPU time, taken
 * inside the agent's own code when `in_agent`, after the thread gave up the
 * CPU when `waited`: a SAMPLE slot, then the pcs
 * two per FRAME slot.  The reservation is the hooks' (signal-safe); when
 * the thread is inside agent code (busy), it counts as nested and never
 * refills. */
static void put_sample(struct tstate *t, uint64_t ts, const uint64_t *pcs, unsigned n,
		       uint64_t periods, bool in_agent, bool waited)
{
	unsigned nslots = 1 + (n + 1) / 2;
	uint64_t *p = agent_ev_begin(t, nslots, ts, false);

	if (p) {
		p[0] = ts;
		p[1] = ev_sample_w1_full(n, periods, in_agent, waited);
		for (unsigned i = 0; i < n; i += 2) {
			p += 2;
			p[0] = pcs[i];
			p[1] = ev_frame_w1(i + 1 < n ? pcs[i + 1] : 0);
		}
	}
	agent_ev_end(t);
}
/* ------------------------------------------------------------ SIGPROF's action
 *
 * Our handler stays installed: the action the program sets for SIGPROF is
 * kept here, returned to it by sigaction() and signal() (agent/sigact.c),
 * and applied by our handler to every SIGPROF that is not our timers'
 * (see sample.h).
 * Updates take a lock and publish a new slot; the handler reads the
 * published one (a ring: an update never rewrites the slot a handler may
 * still be reading, unless seven more come in between). */
#define NACTS 8
static struct sigaction prog_acts[NACTS];
static unsigned prog_cur;
static bool virtual_on; /* our handler is installed: prog_acts is the program's view */
static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;

REAL_DECL(sigaction);
REAL_DECL(pthread_sigmask);
REAL_DECL(sigprocmask);

/* The thread's real mask, whatever the program's view (an error number). */
static int real_mask(int how, const sigset_t *set, sigset_t *old)
{
	return REAL(pthread_sigmask)(how, set, old);
}

/* Blocks or unblocks SIGPROF alone in the real mask. */
static void real_prof(int how)
{
	sigset_t prof;

	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	(void)real_mask(how, &prof, NULL);
}

static void on_sigprof(int sig, siginfo_t *si, void *ucv);

/* A SIGPROF that is not ours: what the program's action does with it. */
static void forward(int sig, siginfo_t *si, void *ucv)
{
	const struct sigaction *pa = &prog_acts[__atomic_load_n(&prog_cur, __ATOMIC_ACQUIRE)];

	if (pa->sa_flags & SA_SIGINFO) {
		if (pa->sa_sigaction)
			pa->sa_sigaction(sig, si, ucv);
	} else if (pa->sa_handler == SIG_DFL) {
		/* Terminate, as it would have: SIGPROF is blocked until we
		 * return, and then the default action happens. */
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		REAL(sigaction)(SIGPROF, &dfl, NULL);
		raise(SIGPROF);
	} else if (pa->sa_handler != SIG_IGN) {
		pa->sa_handler(sig);
	}
}

/* Sets the program's view of SIGPROF's action (and reads the old one),
 * with the real action ours, under the program's mask.  SA_RESTART always:
 * our samples must not interrupt system calls.  A program that ignores
 * SIGPROF gets SIG_IGN for real (our samples stop; exec keeps it). */
static int prof_action(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction next, real;
	sigset_t all, mask;
	int ret = 0;

	if (act)
		next = *act; /* act and old may be the same */
	/* A handler calling sigaction() must not find the lock taken. */
	sigfillset(&all);
	real_mask(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&prog_lock);
	if (old)
		*old = prog_acts[prog_cur];
	if (act) {
		unsigned i = (prog_cur + 1) % NACTS;

		memset(&real, 0, sizeof(real));
		if (!(next.sa_flags & SA_SIGINFO) && next.sa_handler == SIG_IGN) {
			real.sa_handler = SIG_IGN;
		} else {
			real.sa_sigaction = on_sigprof;
			real.sa_flags = SA_SIGINFO | SA_RESTART | (next.sa_flags & SA_ONSTACK);
		}
		real.sa_mask = next.sa_mask;
		prog_acts[i] = next;
		ret = REAL(sigaction)(SIGPROF, &real, NULL);
		if (ret == 0)
			__atomic_store_n(&prog_cur, i, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&prog_lock);
	real_mask(SIG_SETMASK, &mask, NULL);
	return ret;
}

/* The program's sigaction() of SIGPROF (agent/sigact.c, which builds
 * signal()'s action too) goes here while our handler is installed. */
bool agent_sample_prof_virtual(void)
{
	return __atomic_load_n(&virtual_on, __ATOMIC_ACQUIRE);
}

int agent_sample_prof_action(const struct sigaction *act, struct sigaction *old)
{
	return prof_action(act, old);
}

/* ------------------------------------------------------------ masks
 *
 * A thread that blocks SIGPROF would get no sample (its timer's signal
 * stays pending).  While the program does not use SIGPROF (its action is
 * the default one), a sampled thread's mask is kept in two: the real one,
 * where SIGPROF stays unblocked, and the program's view, where it is
 * blocked (`virt`).  pthread_sigmask() and sigprocmask() work on the view
 * and return it; a thread starts with its creator's view.  A SIGPROF of
 * anyone else's that comes to a thread whose view blocks it gets the
 * program's treatment (on_sigprof()): the thread's real mask blocks
 * SIGPROF again from the handler's return on, and the signal is sent
 * again, to the thread if it was sent to the thread (SI_TKILL), else to
 * the process, where it waits or goes to a thread that does not block it,
 * as it would have.  A program with a SIGPROF action of its own has its
 * masks as it sets them: its handler must not run where it blocked it. */

/* Whether the program has an action of its own for SIGPROF. */
static bool prog_uses_sigprof(void)
{
	const struct sigaction *pa = &prog_acts[__atomic_load_n(&prog_cur, __ATOMIC_ACQUIRE)];

	return (pa->sa_flags & SA_SIGINFO) ? pa->sa_sigaction != NULL : pa->sa_handler != SIG_DFL;
}

/* From now on the thread is not sampled, for `why`: a record the converter
 * turns into an instant (once per thread).  Signal-safe, errno kept. */
static void note_unsampled(enum ev_unsampled why)
{
	struct tstate *t = &agent_tls;
	int saved = errno;
	uint64_t ts, *p;

	if (self.said || agent.disabled)
		return;
	self.said = (unsigned char)why;
	ts = agent_ticks();
	p = agent_ev_begin(t, 1, ts, false);
	if (p) {
		p[0] = ts;
		p[1] = ev_unsampled_w1(why);
	}
	agent_ev_end(t);
	errno = saved;
}

/* Whether SIGPROF may stay unblocked in the real mask while the view
 * blocks it. */
static bool may_virtualize(void)
{
	return self.on && !agent_in_dl && !__atomic_load_n(&agent.sealed, __ATOMIC_RELAXED) &&
	       !prog_uses_sigprof();
}

/* The thread's view blocks SIGPROF (a new thread with its creator's view,
 * or whose real mask blocks it): virtualized, or blocked for real. */
static void view_blocks_prof(bool real_blocked)
{
	if (may_virtualize()) {
		/* Before: a SIGPROF the unblocking lets in finds the view. */
		self.virt = 1;
		if (real_blocked)
			real_prof(SIG_UNBLOCK);
		return;
	}
	self.virt = 0;
	if (!real_blocked)
		real_prof(SIG_BLOCK);
	if (self.on && prog_uses_sigprof())
		note_unsampled(EV_UNSAMPLED_SIGPROF_USED);
}

/* pthread_sigmask()'s and sigprocmask()'s work on the view.  `real` is the
 * function called; its own result is returned (an error number, or -1 and
 * errno), with SIGPROF added to `old` when the view blocked it. */
static int mask_call(int (*real)(int, const sigset_t *, sigset_t *), int how, const sigset_t *set,
		     sigset_t *old)
{
	bool was = self.virt, in, view;
	sigset_t s;
	int r;

	if (!__atomic_load_n(&virtual_on, __ATOMIC_RELAXED) || agent_tls.busy)
		return real(how, set, old); /* the agent's own */
	if (!set || (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)) {
		r = real(how, set, old);
		goto out;
	}
	in = sigismember(set, SIGPROF) == 1;
	/* The view's SIGPROF after the call.  Without `virt`, only a call
	 * that blocks SIGPROF is ours. */
	if (!was && (how == SIG_UNBLOCK || !in))
		return real(how, set, old);
	view = how == SIG_BLOCK ? true : how == SIG_UNBLOCK ? !in : in;
	/* `virt` changes before the real mask lets SIGPROF in: a SIGPROF of
	 * the program's that comes then finds the view it comes into. */
	if (view && may_virtualize()) {
		s = *set;
		sigdelset(&s, SIGPROF);
		self.virt = 1;
		r = real(how, &s, old);
		/* A thread that blocked SIGPROF for real before (when the
		 * program had an action of its own) unblocks it now. */
		if (r == 0 && !was && how == SIG_BLOCK)
			real_prof(SIG_UNBLOCK);
	} else if (!view) {
		self.virt = 0;
		r = real(how, set, old);
	} else {
		/* The program handles SIGPROF: its mask as it sets it. */
		r = real(how, set, old);
		if (r == 0) {
			real_prof(SIG_BLOCK);
			self.virt = 0;
			if (self.on)
				note_unsampled(EV_UNSAMPLED_SIGPROF_USED);
		}
	}
	if (r != 0)
		self.virt = was;
out:
	if (r == 0 && old && was)
		sigaddset(old, SIGPROF);
	return r;
}

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t *set,
							   sigset_t *old)
{
	return mask_call(REAL(pthread_sigmask), how, set, old);
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return mask_call(REAL(sigprocmask), how, set, old);
}

/* A SIGPROF not ours came to a thread whose view blocks it: the real mask
 * blocks it from the handler's return on, and it is sent again (see
 * "Masks").  The thread is no longer sampled. */
static void pend_for_program(siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	pid_t pid = getpid();

	sigaddset(&uc->uc_sigmask, SIGPROF);
	self.virt = 0;
	/* Only the main thread may queue a kill()'s information (si_code
	 * SI_USER) to the process: another one sends a kill() of its own. */
	if (si->si_code == SI_TKILL)
		syscall(SYS_rt_tgsigqueueinfo, pid, (pid_t)syscall(SYS_gettid), SIGPROF, si);
	else if (syscall(SYS_rt_sigqueueinfo, pid, SIGPROF, si) != 0)
		kill(pid, SIGPROF);
	note_unsampled(EV_UNSAMPLED_SIGPROF_PENDING);
}

/* ------------------------------------------------------------ the handler */

/* Attached (fxt-run -p, "Attached" below): the timers are the process's,
 * not each thread's (live.c), so the handler asks `live` rather than the
 * thread's `on`, and counts itself in `inflight` meanwhile: the detach
 * clears `live`, then waits for `inflight` to fall to 0, after which no
 * handler of ours writes a record.  Both seq_cst: either the handler sees
 * `live` cleared, or the detach sees it counted. */
static struct {
	bool on;	   /* attached: the timers are live.c's */
	int live;	   /* samples are taken */
	unsigned inflight; /* handlers past the check of `live` */
	unsigned sampled;  /* tasks given a timer at the attach */
} att;

/* Takes one sample of the interrupted thread (ucv) standing for `periods`
 * of its CPU time. */
static void take_sample(struct tstate *t, void *ucv, uint64_t periods)
{
	uint64_t pcs[EV_SAMPLE_MAX_DEPTH];
	uint64_t ts;
	/* Inside a hook, a refill, a wrapper's recording: the agent's time,
	 * whatever the innermost frames (a libc call of the agent's). */
	bool agent_work = t->busy != 0;
	unsigned n;
	int saved;

	/* Not while the loader's lists change (libunwind reads them through
	 * dl_iterate_phdr). */
	if (agent_in_dl || forking) {
		self.carry = periods;
		return;
	}
	saved = errno;
	ts = agent_ticks();
	/* libunwind's own libc calls are not the program's: busy keeps the
	 * wrappers from recording them, and refuses it the pipe it would
	 * check addresses through (io.h, the fake pipe).  It comes back down
	 * before the record, whose reservation counts as nested only if the
	 * thread was busy already. */
	t->busy++;
	n = agent_sample_walk(ucv, pcs, EV_SAMPLE_MAX_DEPTH);
	agent_busy_leave(t);
	self.carry = n ? 0 : periods;
	if (n) {
		/* Its voluntary context switches: did it wait since? */
		struct rusage ru;
		bool waited = true;

		if (getrusage(RUSAGE_THREAD, &ru) == 0) {
			waited = (uint64_t)ru.ru_nvcsw != self.nvcsw;
			self.nvcsw = (uint64_t)ru.ru_nvcsw;
		}
		put_sample(t, ts, pcs, n, periods, agent_work, waited);
	}
	__atomic_fetch_add(&nsamples, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sample_ticks, agent_ticks() - ts, __ATOMIC_RELAXED);
	errno = saved;
}

/* Attached: a thread interrupted in the loader's code may be inside a
 * dlopen() or dlclose() of the program's, which is not wrapped then to set
 * agent_in_dl. */
static bool in_loader(void *ucv)
{
#if defined(__x86_64__)
	return agent_sample_live_in_loader(
	    (uint64_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP]);
#else
	(void)ucv;
	return false;
#endif
}

static void on_sigprof(int sig, siginfo_t *si, void *ucv)
{
	uint64_t periods;
	int saved;

	(void)sig;
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != &timer_cookie) {
		/* Not ours (kill, the program's ITIMER_PROF or timers). */
		saved = errno;
		if (self.virt)
			pend_for_program(si, ucv);
		else
			forward(sig, si, ucv);
		errno = saved;
		return;
	}
	/* The periods of CPU time since the signal before: one, and those
	 * that passed while this one was pending (the kernel fires CPU-time
	 * timers at its tick, or the thread blocked signals). */
	periods = 1 + (si->si_overrun > 0 ? (uint64_t)si->si_overrun : 0) + self.carry;
	if (__atomic_load_n(&att.on, __ATOMIC_RELAXED)) {
		/* After the detach, never anything (the handler stays). */
		__atomic_add_fetch(&att.inflight, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&att.live, __ATOMIC_SEQ_CST) && !ended &&
		    !__atomic_load_n(&agent.sealed, __ATOMIC_RELAXED)) {
			if (in_loader(ucv))
				self.carry = periods;
			else
				take_sample(&agent_tls, ucv, periods);
		}
		__atomic_sub_fetch(&att.inflight, 1, __ATOMIC_SEQ_CST);
		return;
	}
	/* Not after the thread stopped (a signal queued before timer_delete()
	 * is still delivered). */
	if (!self.on || __atomic_load_n(&agent.sealed, __ATOMIC_RELAXED))
		return;
	take_sample(&agent_tls, ucv, periods);
}

/* Whether action `sa` is a handler (neither the default nor ignore). */
static bool is_handler(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction != NULL
					   : sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static bool handler_is_ours(void)
{
	struct sigaction sa;

	return REAL(sigaction)(SIGPROF, NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) &&
	       sa.sa_sigaction == on_sigprof;
}

/* Thread exit: pthread key destructors run for every thread that set a
 * value, whether or not it ever recorded anything. */
static void stop_key_destructor(void *arg)
{
	(void)arg;
	agent_sample_thread_stop();
}

/* fork: from before the agent's prepare handler takes its locks (handlers
 * registered later prepare first) to after its parent or child handler:
 * a sample that needed a new chunk there would take them again. */
static void fork_prepare(void)
{
	forking = 1;
}

static void fork_done(void)
{
	forking = 0;
}

/* Once per process image: the period, libunwind's set-up done outside any
 * signal handler (its first use initialises global state under a lock),
 * the key, and the handler. */
/* Our handler as SIGPROF's action, the program's `prog` kept as its view
 * in prog_acts[slot] (the current one from then on).  Whether it went in.
 * setup() at a launch or the first attach, reinstall() after a detach. */
static bool install_ours(unsigned slot, const struct sigaction *prog)
{
	struct sigaction sa;

	prog_acts[slot] = *prog;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (REAL(sigaction)(SIGPROF, &sa, NULL) != 0)
		return false;
	__atomic_store_n(&prog_cur, slot, __ATOMIC_RELEASE);
	__atomic_store_n(&virtual_on, true, __ATOMIC_RELEASE);
	return true;
}

static void setup(void)
{
	struct sigaction old;
	bool unwind_ok;
	uint64_t ns = 1000000000ull / agent_cfg.sample_hz;

	period.tv_sec = (time_t)(ns / 1000000000ull);
	period.tv_nsec = (long)(ns % 1000000000ull);
	agent_tls.busy++; /* libunwind's libc calls are ours (see io.h, the fake pipe) */
	unwind_ok = agent_sample_unwind_setup();
	agent_busy_leave(&agent_tls);
	if (!unwind_ok)
		return;
	if (pthread_key_create(&stop_key, stop_key_destructor) != 0 ||
	    pthread_atfork(fork_prepare, fork_done, fork_done) != 0)
		return;
	if (!REAL(sigaction) || !REAL(pthread_sigmask) || !REAL(sigprocmask) ||
	    REAL(sigaction)(SIGPROF, NULL, &old) != 0 || is_handler(&old)) {
		agent_dbg("SIGPROF has a handler already: no sampling");
		return;
	}
	if (!install_ours(0, &old))
		return;
	setup_ok = true;
	agent_dbg("sampling at %u Hz of each thread's CPU time", agent_cfg.sample_hz);
}

void agent_sample_thread_start(bool prof_blocked)
{
	struct sigevent sev;
	struct itimerspec its;
	pid_t pid = getpid();
	int saved = errno;
	sigset_t cur;

	if (!agent_cfg.sample_hz || agent.disabled) {
		if (prof_blocked)
			real_prof(SIG_BLOCK);
		return;
	}
	if (self.on && self.pid == pid)
		goto out; /* started already */
	/* Attached, the timers are live.c's ("Attached"): a thread begun
	 * since (through the pthread_create() bound in the GOTs) gets its
	 * own in their table. */
	if (__atomic_load_n(&att.on, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&att.live, __ATOMIC_SEQ_CST) && !live_added) {
			agent_tls.busy++; /* our libc calls are not the program's */
			live_added = agent_sample_live_add((long)syscall(SYS_gettid), &period,
							   &timer_cookie);
			agent_busy_leave(&agent_tls);
		}
		goto out;
	}
	/* In a fork child, the parent's timer is not ours to delete. */
	self.on = 0;
	agent_tls.busy++; /* our libc calls are not the program's */
	pthread_once(&setup_once, setup);
	/* The program may have installed a SIGPROF handler of its own since:
	 * then threads started from now on are not sampled. */
	if (!setup_ok || !handler_is_ours())
		goto out_busy;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = (void *)&timer_cookie;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &self.timer) != 0) {
		agent_dbg("timer_create: %s: thread not sampled", strerror(errno));
		note_unsampled(EV_UNSAMPLED_NO_TIMER);
		goto out_busy;
	}
	self.pid = pid;
	pthread_setspecific(stop_key, (void *)1);
	self.on = 1;
	its.it_interval = period;
	its.it_value = period;
	if (timer_settime(self.timer, 0, &its, NULL) != 0)
		agent_sample_thread_stop();
out_busy:
	agent_busy_leave(&agent_tls);
	/* The program's view of the new thread's mask: its creator's, or the
	 * real one (see "Masks"). */
	if (setup_ok && real_mask(SIG_BLOCK, NULL, &cur) == 0) {
		bool real_blocked = sigismember(&cur, SIGPROF) == 1;

		if (prof_blocked || real_blocked)
			view_blocks_prof(real_blocked);
	} else if (prof_blocked) {
		real_prof(SIG_BLOCK);
	}
out:
	errno = saved;
}

bool agent_sample_hold_prof(void)
{
	if (!self.virt)
		return false;
	real_prof(SIG_BLOCK);
	return true;
}

void agent_sample_release_prof(bool prof_blocked)
{
	if (prof_blocked)
		real_prof(SIG_UNBLOCK);
}

void agent_sample_dlclosed(void)
{
	/* Unwind information libunwind cached for the library's addresses
	 * would describe whatever is loaded there next. */
	if (setup_ok)
		agent_sample_unwind_forget();
}

void agent_sample_thread_stop(void)
{
	int saved = errno;

	if (!self.on)
		return;
	self.on = 0;
	if (agent.sealed && nsamples) {
		uint64_t n = __atomic_load_n(&nsamples, __ATOMIC_RELAXED);
		uint64_t ticks = __atomic_load_n(&sample_ticks, __ATOMIC_RELAXED);

		agent_dbg("%llu samples, %llu ns each on average", (unsigned long long)n,
			  (unsigned long long)(ticks * 1000000000.0 / agent_clock_rate() / n));
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (self.pid == getpid())
		timer_delete(self.timer);
	/* Not sampled any more: the real mask is the program's view (an exec
	 * keeps it). */
	if (self.virt) {
		self.virt = 0;
		real_prof(SIG_BLOCK);
	}
	errno = saved;
}

/* ------------------------------------------------------------ attached
 *
 * fxt-run -p: the agent is loaded into a process whose threads run
 * already, and the program's calls of sigaction(), signal() and the mask
 * functions go to the C library, not to our wrappers: its view of SIGPROF
 * cannot be kept apart from ours ("SIGPROF's action", "Masks").  So the
 * attach does not sample a program that has a SIGPROF handler of its own,
 * or a thread of which blocks SIGPROF (our timers' signals would wait
 * there, and kill it once the detach puts the default action back); it
 * says so in one line under FXT_DEBUG (fxt-run checks the same before it
 * attaches, and says when no timer was started).  Otherwise our handler
 * goes in (setup(), as at a launch) and each task listed in
 * /proc/self/task gets a timer on its CPU-time clock (live.c).
 *
 * The detach (STOP): `live` cleared, so that no handler takes a sample
 * from then on; the timers deleted; the handlers under way waited for
 * (`inflight`).  SIGPROF's default action terminates, and a signal of our
 * timers may still come: one queued before their deletion (delivered
 * anyway by kernels before 6.13), or one that came to the thread fxt-run
 * borrowed for its call while it ran it, which fxt-run holds and sends
 * again, with its siginfo, before it lets the thread go.  So the action
 * the program had is put back later, by a thread of ours (`restorer`),
 * once no task is traced (fxt-run is done) and none has a SIGPROF
 * pending; until then our handler drops our timers' signals.  If that
 * does not come within RESTORE_MS (or the thread cannot start), our
 * handler stays: it drops our timers' signals forever and gives any other
 * the program's action, as the kernel would have.  What stays in any
 * case: the handler's code (the agent is never unloaded), libunwind
 * loaded, the thread key and the fork handlers (which do nothing once
 * detached).
 *
 * Not seen while attached: threads the program starts (no
 * pthread_create() of ours: not sampled, and fxt-run counts them), and a
 * program changing SIGPROF's action or blocking it (a handler of its own
 * would get our timers' signals, a thread that blocks it keeps them
 * pending, and the restorer then leaves our handler in place). */

/* How long the detach waits for the handlers under way, and the restorer
 * for fxt-run to be done and the signals already queued to come, in
 * milliseconds; how often the restorer looks. */
#define INFLIGHT_MS	1000
#define RESTORE_MS	5000
#define RESTORE_STEP_MS 10

/* A new window after a detach: setup() installed our handler once, and the
 * last window's restorer gave SIGPROF's action back to the program; ours
 * again now, the program's (not a handler: sample_attach() checked) kept
 * as its view, as setup() does.  Without it the window's timers' signals
 * met the program's default action, which ends the process (a second
 * fxt-run -p --sample: 'Profiling timer expired', status 155).  Whether
 * the handler is ours. */
static bool reinstall(void)
{
	struct sigaction cur;
	sigset_t all, mask;
	bool ok = false;

	sigfillset(&all);
	real_mask(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&prog_lock);
	if (handler_is_ours()) {
		ok = true;
	} else if (REAL(sigaction)(SIGPROF, NULL, &cur) == 0 && !is_handler(&cur)) {
		ok = install_ours((prog_cur + 1) % NACTS, &cur);
	}
	pthread_mutex_unlock(&prog_lock);
	real_mask(SIG_SETMASK, &mask, NULL);
	return ok;
}

static void sample_attach(void)
{
	struct sigaction old;
	long blocker;

	if (!REAL(sigaction) || REAL(sigaction)(SIGPROF, NULL, &old) != 0)
		return;
	if (is_handler(&old)) {
		agent_dbg("not sampling: the program has a SIGPROF handler of its own");
		return;
	}
	blocker = agent_sample_live_blocker();
	if (blocker) {
		agent_dbg("not sampling: thread %ld blocks SIGPROF", blocker);
		return;
	}
	__atomic_store_n(&att.on, true, __ATOMIC_SEQ_CST);
	agent_tls.busy++; /* our libc calls are not the program's */
	pthread_once(&setup_once, setup);
	if (setup_ok) {
		/* Live before the handler is ours again: a restorer of the last
		 * window that has not run yet leaves it then. */
		__atomic_store_n(&att.live, 1, __ATOMIC_SEQ_CST);
		if (!reinstall()) {
			__atomic_store_n(&att.live, 0, __ATOMIC_SEQ_CST);
			__atomic_store_n(&att.on, false, __ATOMIC_SEQ_CST);
			agent_dbg("not sampling: SIGPROF's action cannot be ours again");
			agent_busy_leave(&agent_tls);
			return;
		}
		att.sampled = agent_sample_live_start(&period, &timer_cookie);
		agent_dbg("attached: %u threads sampled", att.sampled);
	} else {
		__atomic_store_n(&att.on, false, __ATOMIC_SEQ_CST);
	}
	agent_busy_leave(&agent_tls);
}

/* Waits (`step` ms at a time, `ms` at most) until done(); whether it is. */
static bool wait_ms(bool (*done)(void), unsigned ms, unsigned step)
{
	struct timespec t = { 0, (long)step * 1000000L };

	for (unsigned i = 0; i < ms && !done(); i += step)
		nanosleep(&t, NULL);
	return done();
}

static bool no_handler_under_way(void)
{
	return __atomic_load_n(&att.inflight, __ATOMIC_SEQ_CST) == 0;
}

static bool quiet(void)
{
	return !agent_sample_live_traced() && !agent_sample_live_prof_pending();
}

/* Puts the program's action for SIGPROF back (see "Attached"). */
static void *restorer(void *arg)
{
	sigset_t all, mask;
	bool done = false;

	(void)arg;
	agent_tls.busy++; /* nothing of this thread is the program's */
	if (!wait_ms(quiet, RESTORE_MS, RESTORE_STEP_MS)) {
		agent_dbg("the process is still traced or a SIGPROF pending after %d ms: our "
			  "SIGPROF handler stays",
			  RESTORE_MS);
		return NULL;
	}
	/* As prof_action() does: the wrappers (were they called) see the
	 * program's action from now on. */
	sigfillset(&all);
	real_mask(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&prog_lock);
	/* Not while a new window samples (reinstall()). */
	if (!__atomic_load_n(&att.live, __ATOMIC_SEQ_CST) && handler_is_ours() &&
	    REAL(sigaction)(SIGPROF, &prog_acts[prog_cur], NULL) == 0) {
		__atomic_store_n(&virtual_on, false, __ATOMIC_RELEASE);
		done = true;
	}
	pthread_mutex_unlock(&prog_lock);
	real_mask(SIG_SETMASK, &mask, NULL);
	agent_dbg(done ? "SIGPROF's action is the program's again"
		       : "SIGPROF's action was changed meanwhile: left as it is");
	return NULL;
}

static void sample_detach(void)
{
	unsigned timers;

	if (!__atomic_load_n(&att.on, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&att.live, 0, __ATOMIC_SEQ_CST);
	timers = agent_sample_live_delete();
	if (!wait_ms(no_handler_under_way, INFLIGHT_MS, 1))
		agent_dbg("a sample still under way after %d ms", INFLIGHT_MS);
	if (nsamples)
		agent_dbg("%llu samples, %llu ns each on average", (unsigned long long)nsamples,
			  (unsigned long long)(sample_ticks * 1000000000.0 / agent_clock_rate() /
					       nsamples));
	agent_dbg("%u timers deleted", timers);
	if (!agent_thread_start(restorer, NULL, 64 << 10, FXT_ATTACH_RESTORER_NAME))
		agent_dbg("no thread to give SIGPROF's action back: our handler stays");
}

/* ------------------------------------------------------------ feature */

/* Stack sampling (agent/feature.h), when FXT_SAMPLE is set. */
static bool sample_wanted(void)
{
	return agent_cfg.sample_hz != 0;
}

/* ev NULL: the main thread's start. */
static void sample_thread_start(const struct agent_event *ev)
{
	agent_sample_thread_start(ev && ev->thread.prof_blocked);
}

/* Attached to a process already running: its threads get their timers
 * now. */
static void sample_start(const struct agent_event *ev)
{
	if (ev && ev->start.attached && !agent.disabled)
		sample_attach();
}

/* The detach. */
static void sample_stop(const struct agent_event *ev)
{
	(void)ev;
	sample_detach();
}

/* Timers are not inherited: the forking thread gets its own. */
static void sample_fork_child(const struct agent_event *ev)
{
	(void)ev;
	if (!agent.disabled)
		agent_sample_thread_start(false);
}

/* Before the seal: other threads' samples stop then too (the handler sees
 * agent.sealed). */
static void sample_thread_stop(const struct agent_event *ev)
{
	(void)ev;
	agent_sample_thread_stop();
}

/* At a thread's end.  Attached, its timer (live.c's) runs on until the
 * detach or the thread's exit: its signals are dropped from here on,
 * before its buffer is unmapped. */
static void sample_thread_end(const struct agent_event *ev)
{
	(void)ev;
	ended = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	agent_sample_thread_stop();
}

static void sample_dlclosed(const struct agent_event *ev)
{
	(void)ev;
	agent_sample_dlclosed();
}

const struct agent_feature agent_feature_sample = {
	.name = "sample",
	.on = sample_wanted,
	.at = {
		[AGENT_EV_START] = sample_start,
		[AGENT_EV_THREAD_START] = sample_thread_start,
		[AGENT_EV_FORK_CHILD] = sample_fork_child,
		[AGENT_EV_THREAD_END] = sample_thread_end,
		[AGENT_EV_DLCLOSED] = sample_dlclosed,
		[AGENT_EV_STOP] = sample_stop,
		[AGENT_EV_BEFORE_SEAL] = sample_thread_stop,
	},
};
