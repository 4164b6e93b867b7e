/* The program's sigaction() and signal() (and signal()'s other names:
 * bsd_signal, ssignal, sysv_signal, __sysv_signal, sigset), which the
 * preloaded agent defines: a signal a wing keeps goes to it (gates.h),
 * any other to the C library.
 *
 *   SIGPROF, while sampling: the program's view of its action is kept
 *   apart from the real one (agent/sample/sample.c, "SIGPROF's action");
 *   sigaction() and signal() only, as always.
 *
 *   SIGSEGV and SIGBUS, while run-time patching's handler recovers the
 *   faults of its string copies (agent/patch/probe.c): a query reports the
 *   default action (the program's view); setting either, by any of these
 *   names, gives both back first, for good.
 *
 * Attached (fxt-run -p) the program's calls go to the C library (none of
 * these is bound in its GOT: agent/libc/libc.c), and no wing keeps a
 * signal through them then. */
#include <config.h>

#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "agent/gates.h"
#include "agent/real.h"

REAL_DECL(sigaction);
REAL_DECL(signal);

/* bsd_signal and ssignal are signal() (glibc: the same function),
 * sysv_signal and __sysv_signal its System V flavour (the handler reset
 * at delivery: what signal() is under strict ISO C). */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);
__sighandler_t ssignal(int sig, __sighandler_t handler);
__sighandler_t sysv_signal(int sig, __sighandler_t handler);
__sighandler_t __sysv_signal(int sig, __sighandler_t handler);
REAL_DECL(bsd_signal);
REAL_DECL(ssignal);
REAL_DECL(sysv_signal);
REAL_DECL(__sysv_signal);

static bool fault_sig(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS;
}

/* Before the program sets sig's action by any name. */
static void before_set(int sig)
{
	if (fault_sig(sig) && agent_patch_faults_owned())
		agent_patch_faults_give_back();
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	if (sig == SIGPROF && agent_sample_prof_virtual())
		return agent_sample_prof_action(act, old);
	if (!act && fault_sig(sig) && agent_patch_faults_owned()) {
		if (old) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = SIG_DFL;
		}
		return 0;
	}
	if (act)
		before_set(sig);
	return REAL(sigaction)(sig, act, old);
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its
 * handler). */
__attribute__((visibility("default"))) __sighandler_t signal(int sig, __sighandler_t handler)
{
	struct sigaction sa, old;

	if (sig != SIGPROF || !agent_sample_prof_virtual()) {
		before_set(sig);
		return REAL(signal)(sig, handler);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (agent_sample_prof_action(&sa, &old) != 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (__sighandler_t)(void (*)(void))old.sa_sigaction
					   : old.sa_handler;
}

#define PASSED_ON(fn)                                                                            \
	__attribute__((visibility("default"))) __sighandler_t fn(int sig, __sighandler_t handler) \
	{                                                                                        \
		before_set(sig);                                                                 \
		return REAL(fn)(sig, handler);                                                   \
	}
PASSED_ON(bsd_signal)
PASSED_ON(ssignal)
PASSED_ON(sysv_signal)
PASSED_ON(__sysv_signal)
/* sigset() is obsolete: its declaration says so. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
REAL_DECL(sigset);
PASSED_ON(sigset)
#pragma GCC diagnostic pop
