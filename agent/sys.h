/* The agent's own system calls, made directly: the agent exports wrappers
 * of syscall() and pthread_sigmask() (agent/libc/wrap_fd.c,
 * agent/sample/sample.c), so each of its own calls of them went through
 * its wrapper's code and then the C library's.  A forked child runs that
 * code for the first time in its address space (file mappings are not
 * copied at fork: each page of code faults in again), so every such call
 * cost the child two page faults of code for one instruction.  Private to
 * agent/. */
#ifndef FXT_AGENT_SYS_H
#define FXT_AGENT_SYS_H

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* System call `nr` with up to five arguments: its result, or -1 with
 * errno set (as syscall()). */
static inline long agent_sys(long nr, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	if ((unsigned long)ret > -4096ul) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
#else
	return syscall(nr, a, b, c, d, e);
#endif
}

/* Blocks every signal the C library lets a program block (all but its
 * two internal ones, as pthread_sigmask() does), the mask before in
 * *old; agent_signals_restore() puts it back.  The kernel's view of a
 * mask: its first 8 bytes. */
static inline void agent_signals_block(sigset_t *old)
{
	sigset_t all;

	memset(&all, 0xff, sizeof(all));
#if defined(__SIGRTMIN)
	((unsigned long *)&all)[0] &= ~((1ul << (__SIGRTMIN - 1)) | (1ul << __SIGRTMIN));
#endif
	(void)agent_sys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)old, 8, 0);
}

static inline void agent_signals_restore(const sigset_t *old)
{
	(void)agent_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, 8, 0);
}

#endif
