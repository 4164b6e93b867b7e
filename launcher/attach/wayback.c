/* The way back from a call made in another process (inject.h): the code
 * a call returns into, in the scratch memory, and the signal frame of the
 * borrowed thread's state it stands on, so that a thread whose fxt-run
 * dies during a call puts itself back (rt_sigreturn).  How it works is
 * below. */
#include <config.h>

#if defined(__x86_64__)

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "launcher/attach/inject_int.h"

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
	err = inject__write_mem(in, fp, xs, xsize + 4);
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
	if ((err = inject__write_mem(in, frame + 8, &uc, sizeof(uc))) ||
	    (err = inject__write_mem(in, frame, &stub, 8)))
		return err;
	in->frame = frame;
	return 0;
}

/* Makes the way back: the stub's code on the first page of the scratch
 * memory, made executable (a call that returns to 0), and the frame.
 * 0 or -errno: calls then return to 0. */
int inject__way_back(struct inject *in)
{
	uint8_t code[128];
	uint64_t a[3], r;
	size_t len = stub_code(code, in->scratch);
	char why[128];
	int err;

	if (!in->fn_mprotect || inject__sigblk(in->pid, in->tid, &in->sigblk) < 0)
		return -ENOENT;
	if ((err = inject__write_mem(in, in->scratch + CODE_PAGE, code, len)) < 0)
		return err;
	a[0] = in->scratch + CODE_PAGE;
	a[1] = 4096;
	a[2] = PROT_READ | PROT_EXEC;
	err = inject__call_on(in, in->saved.rsp - RED_ZONE - MARGIN, in->fn_mprotect, a, 3, &r, why,
			      sizeof(why));
	if (err || r != 0)
		return err ? err : -EACCES;
	return write_frame(in);
}

#endif /* __x86_64__ */
