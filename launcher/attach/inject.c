/* Calling functions inside another running process (see inject.h). */
#include <config.h>

#include <dirent.h>
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
#include "symbolizer/symbolizer.h"

#if defined(__x86_64__)

#define LIBC "libc.so.6"

/* The scratch memory: the data inject_push() copies from the bottom up,
 * the calls' stack from the top down. */
#define SCRATCH_BYTES (1u << 20)
#define STACK_BYTES   (768u << 10)

/* The red zone below a thread's stack pointer that leaf code may use
 * without moving it (the System V ABI's 128 bytes), and a margin. */
#define RED_ZONE 128
#define MARGIN	 512

/* The largest XSAVE area a kernel hands out (AMX tiles included). */
#define XSTATE_MAX (16u << 10)

/* A safe point is hunted for at most this long per thread, in tries this
 * far apart. */
#define HUNT_TRIES  20
#define HUNT_GAP_US 1000

/* Signals held while the thread runs our calls. */
#define HELD_MAX 16

struct inject {
	pid_t pid, tid;
	struct fxt_sym *sym; /* the process's modules */
	struct user_regs_struct saved;
	unsigned char *xstate; /* the vector registers, NT_X86_XSTATE */
	size_t xlen;
	bool seized, stopped;
	uint64_t fn_mmap, fn_munmap, fn_dlopen, fn_dlerror;
	uint64_t scratch, used;
	int held[HELD_MAX];
	/* Each one's siginfo (si_signo 0: not known), sent with it again: a
	 * timer's signal keeps its si_code and value (the agent's sampling
	 * timers are told from the program's by them). */
	siginfo_t held_si[HELD_MAX];
	unsigned nheld, lost;
};

pid_t inject_tid(const struct inject *in)
{
	return in->tid;
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

/* Whether a thread stopped at pc may hold a lock our calls would need:
 * when pc is in the C library, the dynamic loader or the unwinder (their
 * locks: malloc's arenas, stdio's, the loader's, the unwinder's). */
static bool locks_maybe_held(struct inject *in, uint64_t pc)
{
	static const char *const lockers[] = { "libc.so", "ld-linux", "libpthread.so", "libdl.so",
					       "libgcc_s.so" };
	const char *m = fxt_sym_lookup(in->sym, pc)->module;
	size_t i;

	for (i = 0; i < sizeof(lockers) / sizeof(*lockers); i++)
		if (strncmp(m, lockers[i], strlen(lockers[i])) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------ ptrace */

/* Waits for the thread's next stop: 0 with *status, or -ESRCH when the
 * process is gone.  Stops of other threads are not ours: only one is
 * traced. */
static int wait_stop(struct inject *in, int *status)
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

static void hold(struct inject *in, int sig)
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
static int seize(struct inject *in, pid_t tid, char *why, size_t cap)
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
		err = wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended", (int)in->pid);
		if (status >> 16 == PTRACE_EVENT_STOP)
			break;
		/* A signal that was about to be delivered: held, delivered
		 * after; the interrupt's stop comes next. */
		hold(in, WSTOPSIG(status));
		if (ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot stop thread %d: %s", (int)tid,
					   strerror(errno));
	}
	in->stopped = true;
	return 0;
}

/* Lets the thread go as it was (registers restored by the caller), the
 * held signals pending again: each queued while the thread is still
 * stopped, with its own siginfo when another process may queue it (a
 * negative si_code other than SI_TKILL: a timer's, a sigqueue()'s), else
 * as a tgkill().  Before the detach: once no thread is traced, nothing of
 * ours is on its way (the agent's sampling waits for that at a detach). */
static void release(struct inject *in)
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

static int write_mem(struct inject *in, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(in->pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

static int read_mem(struct inject *in, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(in->pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : (ssize_t)len == n ? 0 : -EFAULT;
}

/* ------------------------------------------------------------ calls */

/* Runs fn(args) with its stack below `top`; the return to address 0
 * stops it.  0 with *ret, -EFAULT, or -ESRCH. */
static int call_on(struct inject *in, uint64_t top, uint64_t fn, const uint64_t *a, unsigned n,
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
	err = write_mem(in, sp, &zero, sizeof(zero));
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

		err = wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended during the call",
					   (int)in->pid);
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			/* A group stop (SIGSTOP ...) or a stray interrupt: the
			 * call goes on; the stop signal is delivered after. */
			if (sig != SIGTRAP)
				hold(in, sig);
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
			hold(in, sig); /* delivered after, in the thread's own context */
		}
		if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot run thread %d: %s",
					   (int)in->tid, strerror(errno));
	}
}

int inject_call(struct inject *in, uint64_t fn, const uint64_t *args, unsigned n, uint64_t *ret,
		char *why, size_t cap)
{
	return call_on(in, in->scratch + SCRATCH_BYTES, fn, args, n, ret, why, cap);
}

int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	size_t at = (in->used + 15) & ~(size_t)15;
	int err;

	if (len > SCRATCH_BYTES - STACK_BYTES - at)
		return -ENOSPC;
	err = write_mem(in, in->scratch + at, data, len);
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
		for (k = sizeof(text) - 1; k >= 16 && read_mem(in, msg, text, k) < 0; k /= 2)
			;
		text[k >= 16 ? k : 0] = '\0';
	}
	return attach_fail(why, cap, -ENOEXEC, "dlopen in process %d: %s", (int)in->pid,
			   *text ? text : "failed");
}

/* ------------------------------------------------------------ choosing the thread */

/* The system call a blocked thread is in (its /proc/PID/task/TID/syscall):
 * its number, -1 when blocked outside one, -2 when running or unknown. */
static long task_syscall(pid_t pid, pid_t tid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -2;
	buf[n] = '\0';
	if (buf[0] == '-')
		return -1;
	if (buf[0] < '0' || buf[0] > '9')
		return -2;
	return strtol(buf, NULL, 10);
}

/* Which threads to try first, from what /proc says each is doing: 0
 * blocked in a system call, 1 waiting on a futex (a lock or a condition:
 * it may hold another lock), 2 running. */
static unsigned preference(long nr)
{
	return nr < 0 ? 2 : nr == SYS_futex ? 1 : 0;
}

/* System calls the C library makes while it holds a lock our calls need:
 * malloc's (mmap, munmap, mprotect, madvise, brk ...) or the loader's
 * (openat, read, fstat, mmap, close ... of a library being loaded). */
static bool under_locks(long long nr)
{
	switch (nr) {
	case SYS_mmap:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_mremap:
	case SYS_madvise:
	case SYS_brk:
	case SYS_open:
	case SYS_openat:
	case SYS_read:
	case SYS_pread64:
	case SYS_close:
	case SYS_fstat:
	case SYS_newfstatat:
	case SYS_lseek:
	case SYS_futex:
#ifdef SYS_statx
	case SYS_statx:
#endif
		return true;
	default:
		return false;
	}
}

/* Whether a thread stopped with registers r is at a safe point: blocked
 * in a system call (interrupted by our stop: it was waiting for input,
 * time, a child or a condition, not in the middle of work under a lock),
 * just back from one the C library makes under no lock of ours, or
 * outside the code whose locks we need. */
static bool safe_stop(struct inject *in, const struct user_regs_struct *r)
{
	long long nr = (long long)r->orig_rax, rv = (long long)r->rax;

	if (nr >= 0) {
		/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND,
		 * -ERESTART_RESTARTBLOCK (the kernel's, not in errno.h),
		 * or -EINTR: the call was blocked when we stopped it. */
		if ((rv <= -512 && rv >= -516) || rv == -EINTR)
			return true;
		if (!under_locks(nr))
			return true;
	}
	return !locks_maybe_held(in, r->rip);
}

/* Whether the thread blocks SIGSEGV (its /proc/PID/task/TID/status).
 * Such a thread (the agent's watchdog blocks every signal) never runs a
 * call: the fault at 0 that ends it, taken while SIGSEGV is blocked,
 * makes the kernel reset the process's SIGSEGV action to the default,
 * and the program's handler would be gone. */
static bool blocks_segv(pid_t pid, pid_t tid)
{
	char path[64], text[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	p = strstr(text, "\nSigBlk:");
	return p && (strtoull(p + 8, NULL, 16) >> (SIGSEGV - 1) & 1);
}

struct cand {
	pid_t tid;
	unsigned fit;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->fit != y->fit)
		return x->fit < y->fit ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int list_threads(struct inject *in, struct cand **out, size_t *n)
{
	char path[64];
	struct cand *v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)in->pid);
	dir = opendir(path);
	if (!dir)
		return -errno == -ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0 || blocks_segv(in->pid, (pid_t)tid))
			continue;
		if (k == cap) {
			struct cand *p = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!p) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = p;
		}
		v[k].tid = (pid_t)tid;
		v[k].fit = preference(task_syscall(in->pid, (pid_t)tid));
		k++;
	}
	closedir(dir);
	qsort(v, k, sizeof(*v), cand_cmp);
	*out = v;
	*n = k;
	return 0;
}

/* Stops the thread and keeps it if it is at a safe point: 1 kept, 0 let
 * go, < 0 an error. */
static int try_thread(struct inject *in, pid_t tid, char *why, size_t cap)
{
	struct user_regs_struct r;
	int err = seize(in, tid, why, cap);

	if (err)
		return err;
	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
		return attach_fail(why, cap, -errno, "thread %d: %s", (int)in->tid,
				   strerror(errno));
	if (safe_stop(in, &r))
		return 1;
	release(in);
	return 0;
}

static int borrow_thread(struct inject *in, char *why, size_t cap)
{
	struct cand *v = NULL;
	size_t n = 0, i;
	unsigned t;
	int err = list_threads(in, &v, &n);

	if (err)
		return attach_fail(why, cap, err, "process %d: %s", (int)in->pid,
				   err == -ESRCH ? "no such process" : strerror(-err));
	for (t = 0; t < HUNT_TRIES; t++) {
		for (i = 0; i < n; i++) {
			err = try_thread(in, v[i].tid, why, cap);
			if (err == -ESRCH && kill(in->pid, 0) == 0)
				continue; /* the thread ended */
			if (err) {
				err = err > 0 ? 0 : err;
				goto out;
			}
		}
		usleep(HUNT_GAP_US);
	}
	err = attach_fail(
	    why, cap, -EBUSY,
	    "no thread of process %d was at a safe point (all were inside the C library "
	    "or the loader): try again",
	    (int)in->pid);
out:
	free(v);
	return err;
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
	    fxt_sym_find(in->sym, LIBC, "dlopen", &in->fn_dlopen) ||
	    fxt_sym_find(in->sym, LIBC, "dlerror", &in->fn_dlerror)) {
		err = attach_fail(why, cap, -ENOENT,
				  "process %d has no " LIBC
				  " with dlopen (a static program, or a C library "
				  "older than glibc 2.34): fxtrace cannot load into it",
				  (int)pid);
		goto fail;
	}
	err = borrow_thread(in, why, cap);
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
	err = call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_mmap, a, 6, &addr, why, cap);
	if (err)
		goto fail;
	if (addr == (uint64_t)MAP_FAILED || addr == 0) {
		err = attach_fail(why, cap, -ENOMEM,
				  "process %d: no memory for fxtrace's scratch area", (int)pid);
		goto fail;
	}
	in->scratch = addr;
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
	if (in->stopped && in->scratch) {
		a[0] = in->scratch;
		a[1] = SCRATCH_BYTES;
		err = call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_munmap, a, 2, &r, why,
			      sizeof(why));
	}
	if (in->stopped) {
		int e = restore_regs(in);

		if (!err)
			err = e;
	}
	release(in);
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
