/* The fast path of reading a string argument (fxt-run --args): when it is
 * on, and the SIGSEGV/SIGBUS handler that makes it safe.
 *
 * rt.h's put_string() copies a string the program passed with plain
 * loads (fxt__patch_probe_reg, probe.S) straight into its record instead
 * of asking the kernel (process_vm_readv(), ~1.7 us a string): a bad
 * pointer, or a page another thread unmaps meanwhile, faults inside the
 * copy, and our handler moves the pc to its landing, which returns the
 * bytes copied before.
 * The handler goes in (agent_patch_probe_setup()) only
 *   - when some function's string is read (the argspec file);
 *   - launched with the agent, not attached: the program's sigaction()
 *     and signal() are then the agent's (agent/sigact.c), so the agent
 *     sees the program set SIGSEGV or SIGBUS;
 *   - when both signals have their default action then (a handler of the
 *     program's, a sanitizer's, a runtime's: not ours to share).
 * The program's view stays the default action: a fault of its own (the
 * pc not in the copy) gets the default action back and returns, so the
 * instruction faults again and the process dies by the signal as it
 * would have (its core, its exit status); a SIGSEGV or SIGBUS sent by
 * kill() gets the default action and is sent again.  The program setting
 * either signal's action gives both back first, for good
 * (agent_patch_faults_give_back()): the fast path off, every copy under
 * way waited for (each thread counts its own in its tbuf; membarrier()
 * makes the counts and the fast path's flag seen in order without a
 * barrier in each copy), then the default actions put back; strings are
 * read by the kernel from then on.  fork: the child keeps the handler; exec: the
 * new image's agent decides again.
 *
 * SA_ONSTACK: a thread with an alternate signal stack takes the fault
 * there; one whose stack overflowed (the program's own fault) cannot take
 * it on that stack, and dies by SIGSEGV, as it would have.
 *
 * Not covered: a thread that blocks SIGSEGV or SIGBUS (its mask, or a
 * handler's sa_mask) and passes a bad pointer to a function whose string
 * is read: the kernel kills the process for a fault with the signal
 * blocked, whatever the handler (telling costs a system call a string,
 * the price of the kernel's read).  A handler the program installs with
 * a raw rt_sigaction system call (not through the C library: Go's
 * runtime does) is not seen either.  And a signal handler that sets
 * SIGSEGV or SIGBUS while its thread was inside a copy: that copy goes on
 * after the give-back (which waits only for other threads' copies: this
 * one cannot end before the handler does), and a fault in it is the
 * program's action's.  README.md says so under fxt-run --args.
 */
#include <config.h>

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/patch/patch.h"
#include "agent/real.h"

unsigned char agent_patch_probe_on;

static bool owned; /* our handler holds SIGSEGV and SIGBUS (the program's view: SIG_DFL) */
static pthread_mutex_t give_lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolved by agent_patch_probe_setup() before the handler goes in:
 * what runs after (the handler included) calls real_sigaction itself. */
REAL_DECL(sigaction);
REAL_DECL(pthread_sigmask);

static void set_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)real_sigaction(sig, &dfl, NULL);
}

/* A fault inside the copy (si_code > 0: the kernel's, not kill()'s)
 * resumes at its landing; any other is the program's. */
static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	int saved = errno;

#if defined(__x86_64__)
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	if (si->si_code > 0 && pc >= (uintptr_t)fxt__patch_probe_reg &&
	    pc < (uintptr_t)fxt__patch_probe_end) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fxt__patch_probe_landing;
		return;
	}
#else
	(void)uc;
#endif
	/* The program's own: as without us, whatever comes next. */
	__atomic_store_n(&agent_patch_probe_on, 0, __ATOMIC_SEQ_CST);
	set_default(sig);
	if (si->si_code <= 0)
		raise(sig); /* blocked until we return */
	errno = saved;
}

static bool ours(int sig)
{
	struct sigaction sa;

	return real_sigaction(sig, NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) &&
	       sa.sa_sigaction == on_fault;
}

void agent_patch_probe_setup(void)
{
	struct sigaction segv, bus, sa;
	unsigned char on;

#if !defined(__x86_64__)
	return; /* no copy routine (probe.S) */
#endif
	if (!agent_patch_args_strings())
		return;
	if (!REAL(sigaction) || !REAL(pthread_sigmask) || real_sigaction(SIGSEGV, NULL, &segv) ||
	    real_sigaction(SIGBUS, NULL, &bus) || segv.sa_handler != SIG_DFL ||
	    bus.sa_handler != SIG_DFL) {
		agent_dbg("FXT_PATCH: SIGSEGV or SIGBUS has a handler: strings read by the kernel");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (real_sigaction(SIGSEGV, &sa, NULL) != 0)
		return;
	if (real_sigaction(SIGBUS, &sa, NULL) != 0) {
		set_default(SIGSEGV);
		return;
	}
	/* Registered once (the give-back's membarrier() needs it), or each
	 * copy takes a full barrier. */
	on = PATCH_PROBE_ON;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		on |= PATCH_PROBE_FENCED;
	__atomic_store_n(&owned, true, __ATOMIC_RELEASE);
	__atomic_store_n(&agent_patch_probe_on, on, __ATOMIC_RELEASE);
	agent_dbg("FXT_PATCH: strings read with plain loads (SIGSEGV and SIGBUS handled%s)",
		  on & PATCH_PROBE_FENCED ? ", no membarrier()" : "");
}

bool agent_patch_faults_owned(void)
{
	return __atomic_load_n(&owned, __ATOMIC_ACQUIRE);
}

/* Whether a copy that started with the fast path on is under way in
 * another thread (this one's own may be, under the signal handler that
 * calls us: it cannot end before we do; a thread that ended has none).
 * The list of tbufs, unlocked: they are never freed, and each is on it
 * before its thread copies. */
static bool copies_under_way(void)
{
	const struct tbuf *mine = agent_tls.tb;

	for (const struct tbuf *tb = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE); tb;
	     tb = tb->next)
		if (tb != mine && __atomic_load_n(&tb->probing, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&tb->state, __ATOMIC_RELAXED) != TBUF_RETIRED)
			return true;
	return false;
}

/* Every thread of the process through a full barrier: one that counted a
 * copy before it is seen counting it, one that reads the fast path's flag
 * after it reads it off.  (Registered at the setup; a child that a fork
 * did not keep registered registers now.) */
static void barrier_all(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		agent_dbg("FXT_PATCH: membarrier(): %s", strerror(errno));
}

void agent_patch_faults_give_back(void)
{
	sigset_t all, mask;

	/* A handler of this thread calling sigaction() must not find the
	 * lock taken. */
	sigfillset(&all);
	REAL(pthread_sigmask)(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&give_lock);
	if (owned) {
		unsigned char on = agent_patch_probe_on;

		/* After this store (and the barrier), a copy that counts
		 * itself sees the fast path off and does not start
		 * (rtargs.c). */
		__atomic_store_n(&agent_patch_probe_on, 0, __ATOMIC_SEQ_CST);
		if (!(on & PATCH_PROBE_FENCED))
			barrier_all();
		while (copies_under_way())
			sched_yield();
		if (ours(SIGSEGV))
			set_default(SIGSEGV);
		if (ours(SIGBUS))
			set_default(SIGBUS);
		__atomic_store_n(&owned, false, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&give_lock);
	REAL(pthread_sigmask)(SIG_SETMASK, &mask, NULL);
}

void agent_patch_probe_fork_child(void)
{
	pthread_mutex_init(&give_lock, NULL); /* another thread may have held it */
}
