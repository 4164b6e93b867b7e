/* The trampolines of run-time patching (agent/patch/patch.h): the register
 * shells around fxt__patch_enter() and fxt__patch_exit().  x86-64, SysV. */
#if defined(__x86_64__)
	.text

#include "agent/patch/tramp.h"

.macro SAVE_GPRS
	pushq	%rax
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
.endm
.macro RESTORE_GPRS
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	popq	%rax
.endm
/* xmm0-15 at 0(%rsp) .. 255(%rsp), the stack aligned. */
.macro SAVE_XMM
	movaps	%xmm0, 0(%rsp)
	movaps	%xmm1, 16(%rsp)
	movaps	%xmm2, 32(%rsp)
	movaps	%xmm3, 48(%rsp)
	movaps	%xmm4, 64(%rsp)
	movaps	%xmm5, 80(%rsp)
	movaps	%xmm6, 96(%rsp)
	movaps	%xmm7, 112(%rsp)
	movaps	%xmm8, 128(%rsp)
	movaps	%xmm9, 144(%rsp)
	movaps	%xmm10, 160(%rsp)
	movaps	%xmm11, 176(%rsp)
	movaps	%xmm12, 192(%rsp)
	movaps	%xmm13, 208(%rsp)
	movaps	%xmm14, 224(%rsp)
	movaps	%xmm15, 240(%rsp)
.endm
.macro RESTORE_XMM
	movaps	0(%rsp), %xmm0
	movaps	16(%rsp), %xmm1
	movaps	32(%rsp), %xmm2
	movaps	48(%rsp), %xmm3
	movaps	64(%rsp), %xmm4
	movaps	80(%rsp), %xmm5
	movaps	96(%rsp), %xmm6
	movaps	112(%rsp), %xmm7
	movaps	128(%rsp), %xmm8
	movaps	144(%rsp), %xmm9
	movaps	160(%rsp), %xmm10
	movaps	176(%rsp), %xmm11
	movaps	192(%rsp), %xmm12
	movaps	208(%rsp), %xmm13
	movaps	224(%rsp), %xmm14
	movaps	240(%rsp), %xmm15
.endm

/* The fast path (the common case of a call, done here: rt.c says which)
 * saves the four general registers it uses, in its own frame, with no
 * frame pointer; anything else restores them and goes the full way,
 * which saves them all (SAVE_GPRS, below the saved rbp: the layout where
 * the handlers read the arguments and results). */
.macro PUSH_FAST
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
.endm
.macro POP_FAST
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
.endm
/* Their bytes: the slot of the call's return address is FAST_REGS + 8
 * above the stack pointer in the enter trampoline (past the stub's return
 * address), FAST_REGS in the exit trampoline's. */
#define FAST_REGS 32

/* The record's slow path from the fast frame: the other general
 * registers saved (rdi first), a frame for an aligned stack (the fast frame's saved
 * registers at SLOW_FAST(%rbp) on), then the caller sets the arguments and
 * calls, and SLOW_LEAVE comes back to the fast frame. */
#define SLOW_FAST 48
.macro SLOW_ENTER
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%r8
	.cfi_adjust_cfa_offset 8
	pushq	%r9
	.cfi_adjust_cfa_offset 8
	pushq	%r10
	.cfi_adjust_cfa_offset 8
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq	$-16, %rsp
.endm
.macro SLOW_LEAVE
	movq	%rbp, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	popq	%r11
	.cfi_adjust_cfa_offset -8
	popq	%r10
	.cfi_adjust_cfa_offset -8
	popq	%r9
	.cfi_adjust_cfa_offset -8
	popq	%r8
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
.endm

/* The fast path's record: agent_record_clk() (agent/tbuf.h) step by
 * step, %rcx the thread's struct tstate (its TLS offset, agent_tls), the
 * timestamp read before the reservation.  RECORD_RESERVE leaves the
 * timestamp in %rax and the slot in %rdx, and goes to `late` when the
 * slot is outside the buffer (busy still counted, for agent_tbuf_slow());
 * the trampoline stores the timestamp and the hook address, then
 * RECORD_DONE. */
.macro RECORD_RESERVE late
	addb	$1, %fs:TSTATE_BUSY(%rcx)
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movl	$16, %edx
	xaddq	%rdx, %fs:TSTATE_POS(%rcx)	/* one instruction: a signal cannot split it */
	cmpq	%fs:TSTATE_END(%rcx), %rdx
	jae	\late
.endm
/* agent_busy_leave(): busy - (busy != 0), the borrow of busy < 1 undoing
 * the decrement of a 0. */
.macro RECORD_DONE
	cmpb	$1, %fs:TSTATE_BUSY(%rcx)
	adcb	$-1, %fs:TSTATE_BUSY(%rcx)
.endm

/* Called (call *slot) from a function's stub, which is
 *     .quad FN; call *slot(%rip); <its call of the relocated instructions>
 * (patch.c) so that no register carries FN (with -fipa-ra, any may be
 * live).  The stack then holds the stub's return address (14 bytes past
 * FN's quad) and, above it, the function's own return address, in its
 * slot.  Pushes the call's shadow entry and records the call (rt.c's
 * shadow_push() and enter(), their common case; the stub then hooks the
 * slot), or saves the other general registers (see above) and calls, on
 * an aligned stack (a compiler may call a function it knows with it 8
 * bytes off), fxt__patch_enter(FN, slot) or, the entry pushed,
 * fxt__patch_enter_late(p, ts, FN); restores and returns into the stub
 * past the return address (`ret $8`: its call of the function's code
 * hooks the slot), or, when the call was not pushed, into the relocated
 * instructions, the slot left alone.  The stub of a function whose
 * arguments or return value are read calls the full way itself
 * (fxt__patch_enter_full). */
	.globl	fxt__patch_enter_tramp
	.hidden	fxt__patch_enter_tramp
	.type	fxt__patch_enter_tramp, @function
	.p2align 6		/* the fast path in as few 64-byte lines as may be */
fxt__patch_enter_tramp:
	.cfi_startproc
	PUSH_FAST
	cmpb	$0, agent_filter_on(%rip)
	jne	2f
	movq	FAST_REGS(%rsp), %rax	/* the stub's return address */
	movq	agent_tls@gottpoff(%rip), %rcx
	movq	%fs:PSTACK_TOP(%rcx), %rsi	/* the entry */
	cmpq	%fs:PSTACK_LIM(%rcx), %rsi	/* full, no shadow stack yet, or no TSC */
	jae	2f
	/* pop_gone()'s test: the innermost entry's slot (or the one before
	 * the first's) above this one's */
	leaq	FAST_REGS+8(%rsp), %rdx		/* the slot */
	cmpq	%rdx, SHADOW_SLOT-SHADOW_SIZE(%rsi)
	jbe	2f
	/* shadow_push(): marked live, counted, filled (a signal handler's
	 * calls push theirs above it, and pop them, from the count on), the
	 * slot last; before the record, so that the stub's return address
	 * and FN are read once */
	movq	$-1, SHADOW_SLOT(%rsi)
	addq	$SHADOW_SIZE, %fs:PSTACK_TOP(%rcx)
	addq	$STUB_EXIT_PAST_CALL, %rax	/* the stub's exit */
	movq	%rax, SHADOW_HOOK(%rsi)
	movq	-STUB_EXIT_PAST_CALL-14(%rax), %rax	/* FN, before the call */
	movq	%rax, SHADOW_FN(%rsi)
	movq	(%rdx), %rax			/* the real return address */
	movq	%rax, SHADOW_RETA(%rsi)
	movq	%rdx, SHADOW_SLOT(%rsi)
	RECORD_RESERVE 3f
	movq	%rax, (%rdx)
	movq	SHADOW_FN(%rsi), %rax
	movq	%rax, 8(%rdx)
	RECORD_DONE
	.cfi_remember_state
9:	POP_FAST
	/* Past the return address, which the stub's call of the function's
	 * code puts its exit in place of. */
	ret	$8
	.cfi_restore_state
3:	SLOW_ENTER			/* the record's slow path (the call pushed) */
	movq	%rdx, %rdi		/* the slot reserved */
	movq	SHADOW_FN(%rsi), %rdx	/* FN */
	movq	%rax, %rsi		/* its timestamp */
	call	fxt__patch_enter_late
	SLOW_LEAVE
	jmp	9b
2:	POP_FAST			/* the full handler */
	/* Where the stubs of functions whose quad has PATCH_FN_ARGS (--args,
	 * --retval: patch.c) call: nothing pushed yet, as here. */
	.globl	fxt__patch_enter_full
	.hidden	fxt__patch_enter_full
fxt__patch_enter_full:
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	SAVE_GPRS
	andq	$-16, %rsp
	movq	8(%rbp), %rax
	movq	-14(%rax), %rdi		/* FN */
	leaq	16(%rbp), %rsi
	call	fxt__patch_enter
	testb	%al, %al
	leaq	-72(%rbp), %rsp
	RESTORE_GPRS			/* (no flags changed) */
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	jz	5f
	ret	$8
	/* Not pushed (no shadow stack): back into the function's code
	 * itself, past the stub's call of it, the slot left alone. */
5:	addq	$STUB_BODY_PAST_CALL, (%rsp)
	ret
	.cfi_endproc
	.globl	fxt__patch_enter_tramp_end
	.hidden	fxt__patch_enter_tramp_end
fxt__patch_enter_tramp_end:
	.size	fxt__patch_enter_tramp, .-fxt__patch_enter_tramp

/* A patched function returned to its stub's exit (which its stub's call
 * of its code put in the slot of its return address), which jumps here.
 * Keeps that slot for the real return address, records the exit and pops
 * the innermost shadow entry (rt.c's fxt__patch_exit(), its common case),
 * or saves the other general registers (see above) and calls, on an
 * aligned stack, fxt__patch_exit(the stack pointer the function returned
 * with) or fxt__patch_exit_late(p, ts).  The real
 * return address goes in the slot, and it returns there.  That slot
 * holds the stub's exit until then: the unwind information says the
 * return address is there throughout, so that a stack sampled in here or
 * in the handlers unwinds to the function's caller (the sampler takes
 * the stub's exit for the real one, agent_patch_sampled_ret()). */
	.globl	fxt__patch_exit_tramp
	.hidden	fxt__patch_exit_tramp
	.type	fxt__patch_exit_tramp, @function
	.p2align 6		/* the fast path in as few 64-byte lines as may be */
fxt__patch_exit_tramp:
	.cfi_startproc
	.cfi_def_cfa_offset 0		/* the return address below the CFA, popped */
	subq	$8, %rsp		/* the real return address goes here */
	.cfi_adjust_cfa_offset 8
	PUSH_FAST
	movq	agent_tls@gottpoff(%rip), %rcx
	/* Past the innermost entry, or the one before the first (its slot
	 * above every other) when none is left: the thread pushed the call
	 * that returns here, so its stack is there. */
	movq	%fs:PSTACK_TOP(%rcx), %rsi
	leaq	FAST_REGS(%rsp), %rax	/* the slot */
	cmpq	%rax, SHADOW_SLOT-SHADOW_SIZE(%rsi)
	jne	2f
	/* what to read at the return, or the full way for another reason
	 * (rt.h's SHADOW_APART: the filters, no TSC); else the filters were
	 * off and the clock is the TSC */
	testl	$0xffff8000, SHADOW_FN-SHADOW_SIZE+4(%rsi)
	jnz	2f
	/* agent_record_exit() (agent/tbuf.h) step by step: where the slot
	 * just before the next free one, in the chunk, is FN's enter and
	 * the call fits, that slot's w1 becomes the call's PAIR
	 * (spool/records.h) and no slot is taken; else the exit record. */
	movq	SHADOW_FN-SHADOW_SIZE(%rsi), %rsi	/* FN (the entry: top again, below) */
	addb	$1, %fs:TSTATE_BUSY(%rcx)
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%fs:TSTATE_POS(%rcx), %rdx	/* read once, plainly */
	testq	%rdx, %rdx
	jz	4f
	cmpq	%fs:TSTATE_END(%rcx), %rdx	/* 1 <= pos <= end */
	ja	4f
	cmpq	%rsi, -8(%rdx)			/* FN's enter */
	jne	4f
	subq	-16(%rdx), %rax			/* the duration */
	cmpq	$PAIR_DUR_MAX, %rax
	ja	5f
	cmpq	$PAIR_FN_MIN, %rsi
	jb	5f
	shlq	$PAIR_DUR_SHIFT, %rax
	leaq	-PAIR_FN_MIN(%rsi), %rsi
	orq	%rsi, %rax
	btsq	$PAIR_BIT, %rax
	movq	%rax, -8(%rdx)			/* one store: the enter or the PAIR */
	jmp	6f
5:	addq	-16(%rdx), %rax			/* the timestamp again */
4:	movl	$16, %edx
	xaddq	%rdx, %fs:TSTATE_POS(%rcx)
	cmpq	%fs:TSTATE_END(%rcx), %rdx
	jae	3f
	movq	%rax, (%rdx)
	btsq	$63, %rsi		/* SPOOL_EXIT_BIT */
	movq	%rsi, 8(%rdx)
6:	RECORD_DONE
	/* popped, its return address back in the slot (after: see
	 * fxt__patch_exit_late()); a signal handler's calls since left top
	 * where it was */
	movq	%fs:PSTACK_TOP(%rcx), %rsi
	movq	SHADOW_RETA-SHADOW_SIZE(%rsi), %rax
	subq	$SHADOW_SIZE, %fs:PSTACK_TOP(%rcx)
	movq	%rax, FAST_REGS(%rsp)
	.cfi_remember_state
9:	POP_FAST
	.cfi_def_cfa_offset 8
	/* The return stack predicts it: the function returned to where
	 * the stub called it from, the stub's exit (patch.c). */
	ret
	.cfi_restore_state
3:	SLOW_ENTER			/* the record's slow path */
	movq	%rdx, %rdi		/* the slot reserved */
	movq	%rax, %rsi		/* its timestamp */
	call	fxt__patch_exit_late
	movq	%rax, SLOW_FAST+FAST_REGS(%rbp)	/* the real return address */
	SLOW_LEAVE
	jmp	9b
2:	POP_FAST			/* the full handler */
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	SAVE_GPRS
	andq	$-16, %rsp
	leaq	16(%rbp), %rdi
	call	fxt__patch_exit
	movq	%rax, 8(%rbp)
	leaq	-72(%rbp), %rsp
	RESTORE_GPRS
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	fxt__patch_exit_tramp, .-fxt__patch_exit_tramp

/* fxt__patch_call_saving(fn, a, b, c, d): fn(a, b, c, d) with xmm0-15
 * saved around it; returns what fn returns. */
	.globl	fxt__patch_call_saving
	.hidden	fxt__patch_call_saving
	.type	fxt__patch_call_saving, @function
	.p2align 4
fxt__patch_call_saving:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq	$-16, %rsp
	subq	$256, %rsp
	SAVE_XMM
	movq	%rdi, %rax
	movq	%rsi, %rdi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	movq	%r8, %rcx
	call	*%rax
	RESTORE_XMM
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fxt__patch_call_saving, .-fxt__patch_call_saving
#endif
	.section .note.GNU-stack,"",@progbits
