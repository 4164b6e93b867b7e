/* The agent's own system calls, made directly: the agent exports wrappers
 * of syscall() and pthread_sigmask() (agent/libc/wrap_fd.c,
 * agent/sample/sample.c), so each of its own calls of them went through
 * its wrapper's code and then the C library's.  A forked child runs that
 * code for the first time in its address space (file mappings are not
 * copied at fork: each page of code faults in again), so every such call
 * cost the child two page faults of code for one instruction.  Likewise
 * the C library's functions a fork child's spool set-up called (each
 * one's page of code, another of its data, faulted in for a system call
 * or a copy).  Private to agent/. */
#ifndef FXT_AGENT_SYS_H
#define FXT_AGENT_SYS_H

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Code a forked child runs from its fork handlers to its first record
 * (the spool made, the first chunk): gathered at the start of the agent's
 * text, next to its PLT, where the linker puts every .text.hot.* section
 * of every object together, so that the few 64 KiB windows of code a
 * child's page faults map in (each page of code faults in again after
 * fork) hold most of it, rather than one window in each file's code. */
#define AGENT_FORK_CODE __attribute__((section(".text.hot.fxt_fork")))

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

#if defined(__x86_64__)
/* System call `nr` with six arguments, its raw result: -errno on failure,
 * errno untouched (for code that runs inside the program's calls). */
static inline long agent_sys_raw6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#endif

/* mmap() made directly (its six arguments): the mapping, or MAP_FAILED
 * with errno set. */
static inline void *agent_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
#if defined(__x86_64__)
	long ret = agent_sys_raw6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);

	if ((unsigned long)ret > -4096ul) {
		errno = (int)-ret;
		return MAP_FAILED;
	}
	return (void *)ret;
#else
	return mmap(addr, len, prot, flags, fd, off);
#endif
}

/* fstat() made directly where the kernel's struct stat is the C
 * library's (and not through fstatat() with an empty path, a string in
 * the C library's read-only data: one more page for a child to fault). */
static inline int agent_sys_fstat(int fd, struct stat *st)
{
#if defined(__x86_64__)
	return (int)agent_sys(SYS_fstat, fd, (long)st, 0, 0, 0);
#else
	return fstat(fd, st);
#endif
}

/* memcpy() without the C library: in a fork child of a process that
 * never called the agent's memcpy(), the call bound it lazily, the
 * loader's lookup faulting in some eight pages of code and symbol
 * tables.  For the few copies such a child makes. */
static inline void agent_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
	memcpy(dst, src, n);
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
