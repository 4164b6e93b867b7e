/* Calling functions inside another running process (see inject.h): the
 * borrowed thread's life (inject_open(), inject_close()), the ptrace and
 * memory helpers, the process's modules, and the calls themselves.  The
 * way back from a call is wayback.c's, the choice of the thread
 * borrow.c's; what the three share is inject_int.h. */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/attach/inject.h"
#include "launcher/attach/why.h"
#include "run/settings.h"
#include "symbolizer/symbolizer.h"

#if defined(__x86_64__)

#include "launcher/attach/inject_int.h"

#define LIBC "libc.so.6"

pid_t inject_tid(const struct inject *in)
{
	return in->tid;
}

double inject_stopped_ms(const struct inject *in)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - in->stopped_at.tv_sec) * 1e3 +
	       (double)(now.tv_nsec - in->stopped_at.tv_nsec) / 1e6;
}

/* ------------------------------------------------------------ the process's modules */

/* Reads /proc/PID/maps into the symbolizer (modules already known are
 * kept). */
static int load_maps(struct inject *in)
{
	char path[64], *text = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)in->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (cap - len < 4096) {
			char *p = realloc(text, cap = cap ? 2 * cap : 65536);

			if (!p) {
				free(text);
				close(fd);
				return -ENOMEM;
			}
			text = p;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	err = n < 0 ? -errno : 0;
	close(fd);
	if (!err) {
		text[len] = '\0';
		err = fxt_sym_add_maps(in->sym, text);
	}
	free(text);
	return err;
}

int inject_symbol(struct inject *in, const char *module, const char *name, uint64_t *addr)
{
	if (fxt_sym_find(in->sym, module, name, addr) == 0)
		return 0;
	if (load_maps(in) < 0)
		return -ENOENT;
	return fxt_sym_find(in->sym, module, name, addr);
}

/* ------------------------------------------------------------ ptrace */

/* Waits for the thread's next stop: 0 with *status, or -ESRCH when the
 * process is gone.  Stops of other threads are not ours: only one is
 * traced. */
int inject__wait_stop(struct inject *in, int *status)
{
	for (;;) {
		pid_t r = waitpid(in->tid, status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno == -ECHILD ? -ESRCH : -errno;
		if (WIFSTOPPED(*status))
			return 0;
		in->seized = in->stopped = false; /* exited or killed */
		return -ESRCH;
	}
}

void inject__hold(struct inject *in, int sig)
{
	unsigned i;

	for (i = 0; i < in->nheld; i++)
		if (in->held[i] == sig && sig < SIGRTMIN)
			return; /* a standard signal is pending once */
	if (in->nheld < HELD_MAX) {
		siginfo_t *si = &in->held_si[in->nheld];

		/* At a signal-delivery stop, its siginfo; at a group stop,
		 * none (EINVAL). */
		if (ptrace(PTRACE_GETSIGINFO, in->tid, NULL, si) != 0 || si->si_signo != sig)
			memset(si, 0, sizeof(*si));
		in->held[in->nheld++] = sig;
	} else {
		in->lost++;
	}
}

/* Seizes the thread and stops it: 0 once it is stopped. */
int inject__seize(struct inject *in, pid_t tid, char *why, size_t cap)
{
	int status, err;

	in->tid = tid;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		err = -errno;
		if (err == -EPERM)
			return attach_fail(
			    why, cap, err,
			    "not permitted to trace process %d (it must run as your user, "
			    "or fxt-run needs CAP_SYS_PTRACE)",
			    (int)in->pid);
		return attach_fail(why, cap, err, "cannot trace thread %d of process %d: %s",
				   (int)tid, (int)in->pid, strerror(-err));
	}
	in->seized = true;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
		return attach_fail(why, cap, -errno, "cannot stop thread %d: %s", (int)tid,
				   strerror(errno));
	for (;;) {
		err = inject__wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended", (int)in->pid);
		if (status >> 16 == PTRACE_EVENT_STOP)
			break;
		/* A signal that was about to be delivered: held, delivered
		 * after; the interrupt's stop comes next. */
		inject__hold(in, WSTOPSIG(status));
		if (ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot stop thread %d: %s", (int)tid,
					   strerror(errno));
	}
	in->stopped = true;
	clock_gettime(CLOCK_MONOTONIC, &in->stopped_at);
	return 0;
}

/* Lets the thread go as it was (registers restored by the caller), the
 * held signals pending again: each queued while the thread is still
 * stopped, with its own siginfo when another process may queue it (a
 * negative si_code other than SI_TKILL: a timer's, a sigqueue()'s), else
 * as a tgkill().  Before the detach: once no thread is traced, nothing of
 * ours is on its way (the agent's sampling waits for that at a detach). */
void inject__release(struct inject *in)
{
	unsigned i;

	if (!in->seized)
		return;
	for (i = 0; i < in->nheld; i++) {
		siginfo_t *si = &in->held_si[i];

		if (si->si_signo == in->held[i] && si->si_code < 0 && si->si_code != SI_TKILL &&
		    syscall(SYS_rt_tgsigqueueinfo, in->pid, in->tid, in->held[i], si) == 0)
			continue;
		(void)syscall(SYS_tgkill, in->pid, in->tid, in->held[i]);
	}
	(void)ptrace(PTRACE_DETACH, in->tid, NULL, NULL);
	in->seized = in->stopped = false;
	in->nheld = 0;
}

static int save_regs(struct inject *in)
{
	struct iovec iov = { in->xstate, XSTATE_MAX };

	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &in->saved) < 0)
		return -errno;
	if (ptrace(PTRACE_GETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	in->xlen = iov.iov_len;
	return 0;
}

static int restore_regs(struct inject *in)
{
	struct iovec iov = { in->xstate, in->xlen };

	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &in->saved) < 0)
		return -errno;
	if (ptrace(PTRACE_SETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	return 0;
}

int inject__write_mem(struct inject *in, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(in->pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

int inject__read_mem(struct inject *in, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(in->pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : (ssize_t)len == n ? 0 : -EFAULT;
}

/* ------------------------------------------------------------ calls */

/* Runs fn(args) with its stack below `top`; the return to address 0
 * stops it.  0 with *ret, -EFAULT, or -ESRCH. */
int inject__call_on(struct inject *in, uint64_t top, uint64_t fn, const uint64_t *a, unsigned n,
		    uint64_t *ret, char *why, size_t cap)
{
	struct user_regs_struct r = in->saved;
	uint64_t sp = (top & ~(uint64_t)15) - 8, zero = 0;
	unsigned long long *argreg[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	unsigned i;
	int status, err;

	if (n > 6)
		return attach_fail(why, cap, -EINVAL, "more than 6 arguments");
	/* At the call, (sp + 8) % 16 == 0 and [sp] is the return address. */
	err = inject__write_mem(in, sp, &zero, sizeof(zero));
	if (err)
		return attach_fail(why, cap, err, "cannot write the stack of thread %d: %s",
				   (int)in->tid, strerror(-err));
	for (i = 0; i < n; i++)
		*argreg[i] = a[i];
	r.rip = fn;
	r.rsp = sp;
	r.rax = 0;			     /* no vector arguments, for variadic callees */
	r.orig_rax = (unsigned long long)-1; /* not in a system call: nothing to restart */
	r.eflags &= ~0x500ull;		     /* TF and DF clear, as the ABI wants */
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r) < 0 ||
	    ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
		return attach_fail(why, cap, -errno, "cannot run thread %d: %s", (int)in->tid,
				   strerror(errno));
	for (;;) {
		siginfo_t si;
		int sig;

		err = inject__wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended during the call",
					   (int)in->pid);
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			/* A group stop (SIGSTOP ...) or a stray interrupt: the
			 * call goes on; the stop signal is delivered after. */
			if (sig != SIGTRAP)
				inject__hold(in, sig);
		} else if (ptrace(PTRACE_GETSIGINFO, in->tid, NULL, &si) == 0 && si.si_code > 0 &&
			   (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
			    sig == SIGTRAP)) {
			/* A fault of the thread itself: the return to 0, or
			 * the call crashed. */
			if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
				return attach_fail(why, cap, -errno, "thread %d: %s", (int)in->tid,
						   strerror(errno));
			if (sig == SIGSEGV && r.rip == 0 && r.rsp == sp + 8) {
				*ret = r.rax;
				return 0;
			}
			return attach_fail(why, cap, -EFAULT,
					   "the call faulted in process %d (signal %d at 0x%llx)",
					   (int)in->pid, sig, r.rip);
		} else {
			inject__hold(in, sig); /* delivered after, in the thread's own context */
		}
		if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot run thread %d: %s",
					   (int)in->tid, strerror(errno));
	}
}

/* Runs fn(args) on the scratch memory's stack, returning into the stub
 * (the way back): 0 with *ret, -EFAULT (the call faulted), -ESRCH. */
static int call_back(struct inject *in, uint64_t fn, const uint64_t *a, unsigned n, uint64_t *ret,
		     char *why, size_t cap)
{
	struct user_regs_struct r = in->saved;
	unsigned long long *argreg[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	uint64_t stub = in->scratch + CODE_PAGE, ctl = in->scratch + CTL_PAGE, result = 0;
	uint32_t done = 0;
	long wait_ns = 10000;
	int status, err;

	if (in->went_on)
		return attach_fail(why, cap, -EAGAIN,
				   "thread %d of process %d went back to its work by itself "
				   "(fxt-run was too slow to take it back)",
				   (int)in->tid, (int)in->pid);
	if (n > 6)
		return attach_fail(why, cap, -EINVAL, "more than 6 arguments");
	err = inject__write_mem(in, ctl + CTL_DONE, &done, sizeof(done));
	if (err)
		return attach_fail(why, cap, err, "cannot write into process %d: %s", (int)in->pid,
				   strerror(-err));
	for (unsigned i = 0; i < n; i++)
		*argreg[i] = a[i];
	r.rip = fn;
	r.rsp = in->frame; /* [rsp]: the stub, the return address */
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;
	r.eflags &= ~0x500ull;
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r) < 0 ||
	    ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
		return attach_fail(why, cap, -errno, "cannot run thread %d: %s", (int)in->tid,
				   strerror(errno));
	/* Until the stub says the call is done: stops of the thread
	 * meanwhile are signals (held) or a fault of the call. */
	for (;;) {
		pid_t w = waitpid(in->tid, &status, __WALL | WNOHANG);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || (w == in->tid && !WIFSTOPPED(status))) {
			in->seized = in->stopped = false;
			return attach_fail(why, cap, -ESRCH, "process %d ended during the call",
					   (int)in->pid);
		}
		if (w == in->tid) {
			siginfo_t si;
			int sig = WSTOPSIG(status);

			if (status >> 16 == PTRACE_EVENT_STOP) {
				if (sig != SIGTRAP)
					inject__hold(in, sig);
			} else if (ptrace(PTRACE_GETSIGINFO, in->tid, NULL, &si) == 0 &&
				   si.si_code > 0 &&
				   (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
				    sig == SIGFPE || sig == SIGTRAP)) {
				if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
					r.rip = 0;
				return attach_fail(
				    why, cap, -EFAULT,
				    "the call faulted in process %d (signal %d at 0x%llx)",
				    (int)in->pid, sig, r.rip);
			} else {
				inject__hold(in, sig);
			}
			if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
				return attach_fail(why, cap, -errno, "cannot run thread %d: %s",
						   (int)in->tid, strerror(errno));
			continue;
		}
		if (inject__read_mem(in, ctl + CTL_DONE, &done, sizeof(done)) == 0 && done)
			break;
		struct timespec ts = { 0, wait_ns };
		nanosleep(&ts, NULL);
		if (wait_ns < 1000000)
			wait_ns *= 2;
	}
	/* Done: the thread waits in the stub.  Stopped there, it is ours
	 * again, for the next call or to be put back by inject_close(). */
	if (ptrace(PTRACE_INTERRUPT, in->tid, NULL, NULL) < 0)
		return attach_fail(why, cap, -errno, "cannot stop thread %d: %s", (int)in->tid,
				   strerror(errno));
	for (;;) {
		err = inject__wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended", (int)in->pid);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) != SIGTRAP)
				inject__hold(in, WSTOPSIG(status));
			break;
		}
		inject__hold(in, WSTOPSIG(status));
		if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot stop thread %d: %s",
					   (int)in->tid, strerror(errno));
	}
	if (inject__read_mem(in, ctl + CTL_RESULT, &result, sizeof(result)) < 0 ||
	    ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
		return attach_fail(why, cap, -EFAULT, "cannot read thread %d: %s", (int)in->tid,
				   strerror(errno));
	/* Not in the stub any more: it gave up waiting for us and went on
	 * (rt_sigreturn); it must not be put back again. */
	if (r.rip < stub || r.rip >= stub + 4096)
		in->went_on = true;
	*ret = result;
	return 0;
}

int inject_call(struct inject *in, uint64_t fn, const uint64_t *args, unsigned n, uint64_t *ret,
		char *why, size_t cap)
{
	if (in->frame)
		return call_back(in, fn, args, n, ret, why, cap);
	return inject__call_on(in, in->scratch + SCRATCH_BYTES, fn, args, n, ret, why, cap);
}

int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	size_t at = (in->used + 15) & ~(size_t)15;
	int err;

	if (at < DATA_START)
		at = DATA_START;
	if (len > SCRATCH_BYTES - STACK_BYTES - at)
		return -ENOSPC;
	err = inject__write_mem(in, in->scratch + at, data, len);
	if (err)
		return err;
	in->used = at + len;
	*addr = in->scratch + at;
	return 0;
}

int inject_dlopen(struct inject *in, const char *path, uint64_t *handle, char *why, size_t cap)
{
	uint64_t a[2], msg;
	size_t mark = in->used;
	char text[512];
	int err;

	err = inject_push(in, path, strlen(path) + 1, &a[0]);
	if (err)
		return attach_fail(why, cap, err, "cannot write into process %d: %s", (int)in->pid,
				   strerror(-err));
	a[1] = RTLD_NOW;
	err = inject_call(in, in->fn_dlopen, a, 2, handle, why, cap);
	in->used = mark;
	if (err || *handle)
		return err;
	err = inject_call(in, in->fn_dlerror, NULL, 0, &msg, why, cap);
	if (err)
		return err;
	text[0] = '\0';
	if (msg) {
		size_t k;

		/* The text may end before the buffer does, where the next
		 * page may be unmapped: read what can be read. */
		for (k = sizeof(text) - 1; k >= 16 && inject__read_mem(in, msg, text, k) < 0;
		     k /= 2)
			;
		text[k >= 16 ? k : 0] = '\0';
	}
	return attach_fail(why, cap, -ENOEXEC, "dlopen in process %d: %s", (int)in->pid,
			   *text ? text : "failed");
}

/* ------------------------------------------------------------ life */

int inject_open(pid_t pid, struct inject **out, char *why, size_t cap)
{
	struct inject *in = calloc(1, sizeof(*in));
	uint64_t a[6], addr;
	int err;

	*out = NULL;
	if (!in)
		return attach_fail(why, cap, -ENOMEM, "out of memory");
	in->pid = pid;
	in->xstate = malloc(XSTATE_MAX);
	in->sym = fxt_sym_new(0);
	if (!in->xstate || !in->sym) {
		err = attach_fail(why, cap, -ENOMEM, "out of memory");
		goto fail;
	}
	err = load_maps(in);
	if (err) {
		err = attach_fail(
		    why, cap, err == -ENOENT ? -ESRCH : err, "process %d: %s", (int)pid,
		    err == -ENOENT   ? "no such process"
		    : err == -EACCES ? "not permitted to read its memory map (it must run as "
				       "your user, or fxt-run needs CAP_SYS_PTRACE)"
				     : strerror(-err));
		goto fail;
	}
	if (fxt_sym_find(in->sym, LIBC, "mmap", &in->fn_mmap) ||
	    fxt_sym_find(in->sym, LIBC, "munmap", &in->fn_munmap) ||
	    fxt_sym_find(in->sym, LIBC, "mprotect", &in->fn_mprotect) ||
	    fxt_sym_find(in->sym, LIBC, "dlopen", &in->fn_dlopen) ||
	    fxt_sym_find(in->sym, LIBC, "dlerror", &in->fn_dlerror)) {
		err = attach_fail(why, cap, -ENOENT,
				  "process %d has no " LIBC
				  " with dlopen (a static program, or a C library "
				  "older than glibc 2.34): fxtrace cannot load into it",
				  (int)pid);
		goto fail;
	}
	err = inject__borrow_thread(in, why, cap);
	if (err)
		goto fail;
	err = save_regs(in);
	if (err) {
		err = attach_fail(why, cap, err, "thread %d: cannot read its registers: %s",
				  (int)in->tid, strerror(-err));
		goto fail;
	}
	/* The scratch memory, mapped by a call on the thread's own stack,
	 * below its red zone. */
	a[0] = 0;
	a[1] = SCRATCH_BYTES;
	a[2] = PROT_READ | PROT_WRITE;
	a[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK;
	a[4] = (uint64_t)-1;
	a[5] = 0;
	err = inject__call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_mmap, a, 6, &addr, why,
			      cap);
	if (err)
		goto fail;
	if (addr == (uint64_t)MAP_FAILED || addr == 0) {
		err = attach_fail(why, cap, -ENOMEM,
				  "process %d: no memory for fxtrace's scratch area", (int)pid);
		goto fail;
	}
	in->scratch = addr;
	in->used = DATA_START;
	/* Without it (no frame could be made), calls return to 0. */
	if ((err = inject__way_back(in)) < 0) {
		if (getenv(FXT_ENV(RUN_DEBUG)))
			fprintf(stderr, "fxt-run: calls in process %d return to 0: %s\n", (int)pid,
				strerror(-err));
		in->frame = 0;
	}

	*out = in;
	return 0;
fail:
	inject_close(in);
	return err;
}

int inject_close(struct inject *in)
{
	char why[128];
	uint64_t a[2], r;
	int err = 0;

	if (!in)
		return 0;
	if (in->stopped && in->went_on) {
		/* It put itself back and ran on: left as it is, its scratch
		 * memory mapped (a call now could find a lock taken). */
		inject__release(in);
		fxt_sym_free(in->sym);
		free(in->xstate);
		free(in);
		return -EAGAIN;
	}
	if (in->stopped && in->scratch) {
		a[0] = in->scratch;
		a[1] = SCRATCH_BYTES;
		err = inject__call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_munmap, a, 2,
				      &r, why, sizeof(why));
	}
	if (in->stopped) {
		int e = restore_regs(in);

		if (!err)
			err = e;
	}
	inject__release(in);
	fxt_sym_free(in->sym);
	free(in->xstate);
	free(in);
	return err;
}

#else /* !__x86_64__ */

int inject_open(pid_t pid, struct inject **out, char *why, size_t cap)
{
	*out = NULL;
	snprintf(why, cap, "process %d: attaching is for x86-64 only", (int)pid);
	return -ENOSYS;
}

pid_t inject_tid(const struct inject *in)
{
	(void)in;
	return 0;
}

double inject_stopped_ms(const struct inject *in)
{
	(void)in;
	return 0;
}

int inject_call(struct inject *in, uint64_t fn, const uint64_t *args, unsigned n, uint64_t *ret,
		char *why, size_t cap)
{
	(void)in, (void)fn, (void)args, (void)n, (void)ret, (void)why, (void)cap;
	return -ENOSYS;
}

int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	(void)in, (void)data, (void)len, (void)addr;
	return -ENOSYS;
}

int inject_dlopen(struct inject *in, const char *path, uint64_t *handle, char *why, size_t cap)
{
	(void)in, (void)path, (void)handle, (void)why, (void)cap;
	return -ENOSYS;
}

int inject_symbol(struct inject *in, const char *module, const char *name, uint64_t *addr)
{
	(void)in, (void)module, (void)name, (void)addr;
	return -ENOENT;
}

int inject_close(struct inject *in)
{
	(void)in;
	return 0;
}

#endif /* __x86_64__ */
