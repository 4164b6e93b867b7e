/* The fast path of reading a string argument (fxt-run --args): when it is
 * on, and the SIGSEGV/SIGBUS handler that makes it safe.
 *
 * rtargs.c's read_string() copies a string the program passed with plain
 * loads (fxt__patch_probe_copy, probe.S) instead of asking the kernel
 * (process_vm_readv(), ~1.7 us a string): a bad pointer, or a page
 * another thread unmaps meanwhile, faults inside the copy, and our handler
 * moves the pc to its landing, which returns the bytes copied before.
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
 * way waited for, then the default actions put back; strings are read by
 * the kernel from then on.  fork: the child keeps the handler; exec: the
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
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "agent/log.h"
#include "agent/patch/patch.h"
#include "agent/real.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

unsigned char agent_patch_probe_on;
struct agent_patch_probe_count agent_patch_probe_inflight[PATCH_PROBE_SLOTS]
    __attribute__((aligned(64)));
TLS unsigned char agent_patch_probing;
TLS unsigned char agent_patch_probe_slot;

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

	if (si->si_code > 0 && pc >= (uintptr_t)fxt__patch_probe_copy &&
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
	__atomic_store_n(&owned, true, __ATOMIC_RELEASE);
	__atomic_store_n(&agent_patch_probe_on, 1, __ATOMIC_RELEASE);
	agent_dbg("FXT_PATCH: strings read with plain loads (SIGSEGV and SIGBUS handled)");
}

bool agent_patch_faults_owned(void)
{
	return __atomic_load_n(&owned, __ATOMIC_ACQUIRE);
}

/* Whether a copy that started with the fast path on is under way in
 * another thread (this one's own may be, under the signal handler that
 * calls us: it cannot end before we do). */
static bool copies_under_way(void)
{
	unsigned mine = agent_patch_probe_slot;

	for (unsigned i = 0; i < PATCH_PROBE_SLOTS; i++) {
		unsigned long n = __atomic_load_n(&agent_patch_probe_inflight[i].n, __ATOMIC_SEQ_CST);

		if (mine == i + 1)
			n -= agent_patch_probing;
		if (n)
			return true;
	}
	return false;
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
		/* After this store, a copy that counts itself sees the fast
		 * path off and does not start (rtargs.c). */
		__atomic_store_n(&agent_patch_probe_on, 0, __ATOMIC_SEQ_CST);
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
	for (unsigned i = 0; i < PATCH_PROBE_SLOTS; i++)
		agent_patch_probe_inflight[i].n = 0;
	if (agent_patch_probe_slot)
		agent_patch_probe_inflight[agent_patch_probe_slot - 1].n = agent_patch_probing;
}
