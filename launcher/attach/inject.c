/* Calling functions inside another running process (see inject.h).
 *
 * One file past 800 lines: borrowing a thread, calling in it and giving
 * it back are one job on one borrowed thread's state (struct inject):
 * the modules, ptrace, the way back from a call (a signal frame of its
 * state, for a call fxt-run dies in), the calls, choosing the thread. */
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
#include "run/settings.h"
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

/* The way back from a call (below, "the way back"): the first page of the
 * scratch memory holds the code a call returns to, the second what that
 * code tells fxt-run; how long it waits for fxt-run before it puts the
 * thread back by itself, in 1 ms steps. */
#define CODE_PAGE     0u
#define CTL_PAGE      4096u
#define DATA_START    8192u
#define WAIT_STEPS_MS 1000u

struct inject {
	pid_t pid, tid;
	struct fxt_sym *sym; /* the process's modules */
	struct user_regs_struct saved;
	unsigned char *xstate; /* the vector registers, NT_X86_XSTATE */
	size_t xlen;
	bool seized, stopped;
	uint64_t fn_mmap, fn_munmap, fn_mprotect, fn_dlopen, fn_dlerror;
	uint64_t scratch, used;
	uint64_t sigblk; /* the thread's blocked signals, for the way back */
	uint64_t frame;	 /* its signal frame, 0 until it is ready (the way back) */
	bool went_on;	 /* it put itself back, fxt-run being too slow */
	int held[HELD_MAX];
	/* Each one's siginfo (si_signo 0: not known), sent with it again: a
	 * timer's signal keeps its si_code and value (the agent's sampling
	 * timers are told from the program's by them). */
	siginfo_t held_si[HELD_MAX];
	unsigned nheld, lost;
	struct timespec stopped_at; /* FXT_RUN_DEBUG's timings */
};

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
	clock_gettime(CLOCK_MONOTONIC, &in->stopped_at);
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

/* ------------------------------------------------------------ the way back */

/* A call's return to address 0 stops the thread, for fxt-run to put it
 * back: if fxt-run dies during the call (killed with SIGKILL, or a crash),
 * the thread, no longer traced, takes that fault itself, and the program
 * dies.  Once the scratch memory is there, a call returns instead into
 * code of ours (`stub`), on a signal frame that holds the thread's state
 * as it was borrowed: the code stores the result, says it is done, and
 * waits (select(), 1 ms at a time) for fxt-run, which stops the thread
 * there and puts it back itself, as before.  Should fxt-run not come (for
 * WAIT_STEPS_MS), the code calls rt_sigreturn: the kernel puts back the
 * registers, the vector state and the signal mask from the frame, as at
 * the end of a signal handler, and the thread goes on with its work.  What
 * stays then is the scratch memory (1 MiB, not unmapped).
 *
 * The few calls made before the frame is ready (mapping the scratch
 * memory, making its code page executable) and the last one (unmapping
 * it) still return to 0: microseconds, against the agent's start. */

static int call_on(struct inject *in, uint64_t top, uint64_t fn, const uint64_t *a, unsigned n,
		   uint64_t *ret, char *why, size_t cap);

/* The signal frame rt_sigreturn reads (the kernel's struct ucontext of
 * x86-64), just after the return address, where a handler's ret leaves
 * the stack pointer. */
struct uframe {
	uint64_t flags, link;
	struct {
		uint64_t sp;
		int32_t flags, pad;
		uint64_t size;
	} stack;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip,
	    eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
	uint64_t sigmask;
};
_Static_assert(sizeof(struct uframe) == 304, "the kernel's ucontext of x86-64");

#define UC_FP_XSTATE	     0x1
#define UC_SIGCONTEXT_SS     0x2
#define UC_STRICT_RESTORE_SS 0x4
#ifndef FP_XSTATE_MAGIC1 /* <asm/sigcontext.h>, through <signal.h> */
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#endif
#define SW_BYTES_OFF 464 /* fx_sw_bytes in the XSAVE area's reserved bytes */

/* What the stub tells fxt-run (the control page). */
#define CTL_DONE   0
#define CTL_RESULT 8
#define CTL_TV	   16

/* Appends an instruction with a 32-bit displacement to the control page
 * `target`, relative to its end (`imm` bytes of immediate after it). */
static size_t rip_rel(uint8_t *code, size_t at, const uint8_t *op, size_t oplen, uint64_t stub,
		      uint64_t target, const uint8_t *imm, size_t immlen)
{
	size_t end = at + oplen + 4 + immlen;
	int32_t rel = (int32_t)(target - (stub + end));

	memcpy(code + at, op, oplen);
	memcpy(code + at + oplen, &rel, 4);
	if (immlen)
		memcpy(code + at + oplen + 4, imm, immlen);
	return end;
}

/* The stub's code, for the scratch memory at `scratch`: its length. */
static size_t stub_code(uint8_t *code, uint64_t scratch)
{
	static const uint8_t mov_rax[] = { 0x48, 0x89, 0x05 }, movl_imm[] = { 0xc7, 0x05 },
			     movq_imm[] = { 0x48, 0xc7, 0x05 }, lea_r8[] = { 0x4c, 0x8d, 0x05 };
	static const uint8_t one[] = { 1, 0, 0, 0 }, zero[] = { 0, 0, 0, 0 },
			     usec[] = { 0xe8, 0x03, 0, 0 }; /* 1000 */
	static const uint8_t select_args[] = {
		0xb8, 0x17, 0,	  0, 0, /* mov $23 (select), %eax */
		0x31, 0xff,		/* xor %edi, %edi: no descriptors */
		0x31, 0xf6,		/* xor %esi, %esi */
		0x31, 0xd2,		/* xor %edx, %edx */
		0x45, 0x31, 0xd2,	/* xor %r10d, %r10d */
	};
	uint64_t stub = scratch + CODE_PAGE, ctl = scratch + CTL_PAGE;
	uint32_t steps = WAIT_STEPS_MS;
	size_t at = 0, loop;

	at = rip_rel(code, at, mov_rax, 3, stub, ctl + CTL_RESULT, NULL, 0);
	at = rip_rel(code, at, movl_imm, 2, stub, ctl + CTL_DONE, one, 4);
	code[at++] = 0xbb; /* mov $steps, %ebx */
	memcpy(code + at, &steps, 4);
	at += 4;
	loop = at;
	/* select(0, NULL, NULL, NULL, {0, 1000}): 1 ms, the timeval set
	 * again each time (select changes it).  Its restart, should a signal
	 * interrupt it, needs nothing of the thread's restart block. */
	at = rip_rel(code, at, movq_imm, 3, stub, ctl + CTL_TV, zero, 4);
	at = rip_rel(code, at, movq_imm, 3, stub, ctl + CTL_TV + 8, usec, 4);
	memcpy(code + at, select_args, sizeof(select_args));
	at += sizeof(select_args);
	at = rip_rel(code, at, lea_r8, 3, stub, ctl + CTL_TV, NULL, 0);
	code[at++] = 0x0f; /* syscall */
	code[at++] = 0x05;
	code[at++] = 0xff; /* dec %ebx */
	code[at++] = 0xcb;
	code[at++] = 0x75; /* jnz loop */
	code[at] = (uint8_t)(int8_t)((int)loop - (int)(at + 1));
	at++;
	code[at++] = 0xb8; /* mov $15 (rt_sigreturn), %eax */
	code[at++] = 0x0f;
	code[at++] = 0;
	code[at++] = 0;
	code[at++] = 0;
	code[at++] = 0x0f; /* syscall */
	code[at++] = 0x05;
	code[at++] = 0x0f; /* ud2: never reached */
	code[at++] = 0x0b;
	return at;
}

/* The thread's blocked signals (SigBlk of its status): 0 or -errno. */
static int read_sigblk(struct inject *in)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)in->pid, (int)in->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "\nSigBlk:");
	if (!p)
		return -EINVAL;
	in->sigblk = strtoull(p + 8, NULL, 16);
	return 0;
}

/* The thread's state as borrowed, in a signal frame at the top of the
 * scratch memory: sets in->frame (where calls return from, the stub's
 * address in it).  0 or -errno (then calls return to 0, as before). */
static int write_frame(struct inject *in)
{
	const struct user_regs_struct *r = &in->saved;
	uint64_t top = in->scratch + SCRATCH_BYTES, fp, frame, stub = in->scratch + CODE_PAGE;
	uint32_t magic1 = FP_XSTATE_MAGIC1, magic2 = FP_XSTATE_MAGIC2, xsize, ext;
	uint64_t xcr0;
	struct uframe uc;
	uint8_t *xs;
	int err;

	memset(&uc, 0, sizeof(uc));
	/* The vector state (as ptrace gave it: an XSAVE area), 64-byte
	 * aligned, told apart from a bare FXSAVE one by the software bytes
	 * in its reserved part and a second magic after it: with every state
	 * component the processor has, so that those the call changed go
	 * back to their saved (or initial) values. */
	if (in->xlen < 576 || in->xlen > XSTATE_MAX)
		return -EINVAL;
	xsize = (uint32_t)in->xlen;
	{
		uint32_t lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = (uint64_t)hi << 32 | lo;
	}
	fp = (top - xsize - 4) & ~(uint64_t)63;
	frame = ((fp - sizeof(uc) - 8) & ~(uint64_t)15) - 8; /* a function's entry alignment */
	xs = malloc(xsize + 4);
	if (!xs)
		return -ENOMEM;
	memcpy(xs, in->xstate, xsize);
	memcpy(xs + SW_BYTES_OFF, &magic1, 4);
	ext = xsize + 4;
	memcpy(xs + SW_BYTES_OFF + 4, &ext, 4);
	memcpy(xs + SW_BYTES_OFF + 8, &xcr0, 8);
	memcpy(xs + SW_BYTES_OFF + 16, &xsize, 4);
	memcpy(xs + xsize, &magic2, 4);
	err = write_mem(in, fp, xs, xsize + 4);
	free(xs);
	if (err)
		return err;
	uc.flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* Not a valid mode: the kernel leaves the thread's alternate
	 * signal stack as it is (restore_altstack() ignores the error). */
	uc.stack.flags = 7;
	uc.r8 = r->r8, uc.r9 = r->r9, uc.r10 = r->r10, uc.r11 = r->r11;
	uc.r12 = r->r12, uc.r13 = r->r13, uc.r14 = r->r14, uc.r15 = r->r15;
	uc.rdi = r->rdi, uc.rsi = r->rsi, uc.rbp = r->rbp, uc.rbx = r->rbx;
	uc.rdx = r->rdx, uc.rax = r->rax, uc.rcx = r->rcx, uc.rsp = r->rsp, uc.rip = r->rip;
	uc.eflags = r->eflags;
	uc.cs = (uint16_t)r->cs;
	uc.ss = (uint16_t)r->ss;
	uc.fpstate = fp;
	uc.sigmask = in->sigblk;
	/* rt_sigreturn restarts no system call: the one the thread was
	 * stopped in is restarted here, as the kernel would have (no
	 * handler ran). */
	if ((long long)r->orig_rax >= 0) {
		long long rax = (long long)r->rax;

		if (rax == -512 || rax == -513 || rax == -514) { /* ERESTARTSYS, NOINTR, NOHAND */
			uc.rax = r->orig_rax;
			uc.rip -= 2;
		} else if (rax == -516) { /* ERESTART_RESTARTBLOCK */
			uc.rax = SYS_restart_syscall;
			uc.rip -= 2;
		}
	}
	if ((err = write_mem(in, frame + 8, &uc, sizeof(uc))) ||
	    (err = write_mem(in, frame, &stub, 8)))
		return err;
	in->frame = frame;
	return 0;
}

/* Makes the way back: the stub's code on the first page of the scratch
 * memory, made executable (a call that returns to 0), and the frame.
 * 0 or -errno: calls then return to 0. */
static int way_back(struct inject *in)
{
	uint8_t code[128];
	uint64_t a[3], r;
	size_t len = stub_code(code, in->scratch);
	char why[128];
	int err;

	if (!in->fn_mprotect || read_sigblk(in) < 0)
		return -ENOENT;
	if ((err = write_mem(in, in->scratch + CODE_PAGE, code, len)) < 0)
		return err;
	a[0] = in->scratch + CODE_PAGE;
	a[1] = 4096;
	a[2] = PROT_READ | PROT_EXEC;
	err = call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_mprotect, a, 3, &r, why,
		      sizeof(why));
	if (err || r != 0)
		return err ? err : -EACCES;
	return write_frame(in);
}

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
	err = write_mem(in, ctl + CTL_DONE, &done, sizeof(done));
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
					hold(in, sig);
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
				hold(in, sig);
			}
			if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
				return attach_fail(why, cap, -errno, "cannot run thread %d: %s",
						   (int)in->tid, strerror(errno));
			continue;
		}
		if (read_mem(in, ctl + CTL_DONE, &done, sizeof(done)) == 0 && done)
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
		err = wait_stop(in, &status);
		if (err)
			return attach_fail(why, cap, err, "process %d ended", (int)in->pid);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) != SIGTRAP)
				hold(in, WSTOPSIG(status));
			break;
		}
		hold(in, WSTOPSIG(status));
		if (ptrace(PTRACE_CONT, in->tid, NULL, NULL) < 0)
			return attach_fail(why, cap, -errno, "cannot stop thread %d: %s",
					   (int)in->tid, strerror(errno));
	}
	if (read_mem(in, ctl + CTL_RESULT, &result, sizeof(result)) < 0 ||
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
	return call_on(in, in->scratch + SCRATCH_BYTES, fn, args, n, ret, why, cap);
}

int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	size_t at = (in->used + 15) & ~(size_t)15;
	int err;

	if (at < DATA_START)
		at = DATA_START;
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
	/* SIGSEGV unblocked now that it cannot change (list_threads() read
	 * the mask while the thread ran: pthread_create() blocks every signal
	 * around clone(), a new thread until it starts). */
	if (safe_stop(in, &r) && !blocks_segv(in->pid, in->tid))
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
	in->used = DATA_START;
	/* Without it (no frame could be made), calls return to 0. */
	if ((err = way_back(in)) < 0) {
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
		release(in);
		fxt_sym_free(in->sym);
		free(in->xstate);
		free(in);
		return -EAGAIN;
	}
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
