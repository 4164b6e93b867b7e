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

/* The general registers are saved in two steps: rax, rdi, rsi, rdx and
 * rcx, which the fast path uses (the common case of a call, done here:
 * rt.c says which), then the rest when the handlers in C must run.
 * Together they are SAVE_GPRS's layout, where the handlers read the
 * arguments and results. */
.macro SAVE_FAST
	pushq	%rax
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
.endm
.macro RESTORE_FAST
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	popq	%rax
.endm
.macro SAVE_REST
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
.endm

/* The fast path's record of the hook address in %rdi: agent_record_clk()
 * (agent/tbuf.h) step by step, %rcx the thread's struct tstate (TLS
 * offset), the timestamp read before the reservation.  Leaves the
 * timestamp in %rax and the slot in %rdx; goes to `late` when the slot is
 * outside the buffer (busy still counted, for agent_tbuf_slow()). */
.macro RECORD late
	movq	agent_tls@gottpoff(%rip), %rcx
	addb	$1, %fs:TSTATE_BUSY(%rcx)
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movl	$16, %edx
	xaddq	%rdx, %fs:TSTATE_POS(%rcx)	/* one instruction: a signal cannot split it */
	cmpq	%fs:TSTATE_END(%rcx), %rdx
	jae	\late
	movq	%rax, (%rdx)
	movq	%rdi, 8(%rdx)
	/* agent_busy_leave(): busy - (busy != 0) */
	movzbl	%fs:TSTATE_BUSY(%rcx), %eax
	cmpb	$1, %al
	adcb	$-1, %al
	movb	%al, %fs:TSTATE_BUSY(%rcx)
.endm

/* Called (call *slot) from a function's stub, which is
 *     .quad FN; call *slot(%rip); <its call of the relocated instructions>
 * (patch.c) so that no register carries FN (with -fipa-ra, any may be
 * live).  The stack then holds the stub's return address (14 bytes past
 * FN's quad) and, above it, the function's own return address, in its
 * slot.  Records the call and pushes its shadow entry (rt.c's enter()
 * and shadow_push(), their common case; the stub then hooks the slot),
 * or saves the other general registers (see above) and calls, on an
 * aligned stack (a compiler may call a function it knows with it 8
 * bytes off), fxt__patch_enter(FN, slot) or fxt__patch_enter_late(p, ts,
 * FN, slot); restores and returns into the stub (past its hook, into the
 * relocated instructions, when the call was not pushed). */
	.globl	fxt__patch_enter_tramp
	.hidden	fxt__patch_enter_tramp
	.type	fxt__patch_enter_tramp, @function
	.p2align 4
fxt__patch_enter_tramp:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	SAVE_FAST
	movq	8(%rbp), %rax		/* the stub's return address */
	movq	-14(%rax), %rdi		/* FN, before the call */
	movq	%rdi, %rax
	shrq	$47, %rax		/* more than an address: --args */
	jnz	2f
	cmpb	$0, agent_filter_on(%rip)
	jne	2f
	cmpb	$0, agent_clock_tsc(%rip)
	je	2f
	movq	fxt__patch_pstack@gottpoff(%rip), %rsi
	cmpq	$0, %fs:PSTACK_V(%rsi)	/* no shadow stack yet */
	je	2f
	movl	%fs:PSTACK_N(%rsi), %ecx
	cmpl	$(1 << PSTACK_MAX_LOG2), %ecx
	jae	2f
	testl	%ecx, %ecx
	jz	1f
	/* pop_gone()'s test: the innermost entry's slot above this one's */
	shlq	$SHADOW_SIZE_LOG2, %rcx
	addq	%fs:PSTACK_V(%rsi), %rcx
	leaq	16(%rbp), %rdx
	cmpq	%rdx, SHADOW_SLOT-SHADOW_SIZE(%rcx)
	jbe	2f
1:	RECORD	3f
	/* shadow_push(): marked live, counted, filled */
	movl	%fs:PSTACK_N(%rsi), %eax
	movl	%eax, %ecx
	shlq	$SHADOW_SIZE_LOG2, %rcx
	addq	%fs:PSTACK_V(%rsi), %rcx	/* the entry */
	movq	$-1, SHADOW_SLOT(%rcx)
	addl	$1, %eax
	movl	%eax, %fs:PSTACK_N(%rsi)
	movq	%rdi, SHADOW_FN(%rcx)
	leaq	16(%rbp), %rdx		/* the slot */
	movq	(%rdx), %rax
	movq	%rax, SHADOW_RETA(%rcx)
	movq	8(%rbp), %rax
	addq	$STUB_EXIT_PAST_CALL, %rax	/* the stub's exit */
	movq	%rax, SHADOW_HOOK(%rcx)
	movq	%rdx, SHADOW_SLOT(%rcx)
	RESTORE_FAST
	popq	%rbp
	.cfi_remember_state
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_restore_state
3:	SAVE_REST			/* the record's slow path */
	andq	$-16, %rsp
	movq	%rdx, %r8
	movq	%rdi, %rdx		/* FN */
	movq	%r8, %rdi		/* the slot reserved */
	movq	%rax, %rsi		/* its timestamp */
	leaq	16(%rbp), %rcx
	call	fxt__patch_enter_late
	jmp	4f
2:	SAVE_REST			/* the full handler */
	andq	$-16, %rsp
	movq	8(%rbp), %rax
	movq	-14(%rax), %rdi		/* FN */
	leaq	16(%rbp), %rsi
	call	fxt__patch_enter
	testb	%al, %al
	jnz	4f
	/* Not pushed (no shadow stack): back into the function's code
	 * itself, past the stub's call of it, the slot left alone. */
	addq	$STUB_BODY_PAST_CALL, 8(%rbp)
4:	leaq	-72(%rbp), %rsp
	RESTORE_GPRS
	popq	%rbp
	.cfi_def_cfa %rsp, 8
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
	.p2align 4
fxt__patch_exit_tramp:
	.cfi_startproc
	.cfi_def_cfa_offset 0		/* the return address below the CFA, popped */
	subq	$8, %rsp		/* the real return address goes here */
	.cfi_adjust_cfa_offset 8
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	SAVE_FAST
	cmpb	$0, agent_filter_on(%rip)
	jne	2f
	cmpb	$0, agent_clock_tsc(%rip)
	je	2f
	movq	fxt__patch_pstack@gottpoff(%rip), %rsi
	movl	%fs:PSTACK_N(%rsi), %ecx
	testl	%ecx, %ecx
	jz	2f
	shlq	$SHADOW_SIZE_LOG2, %rcx
	addq	%fs:PSTACK_V(%rsi), %rcx	/* past the innermost entry */
	leaq	8(%rbp), %rax		/* the slot */
	cmpq	%rax, SHADOW_SLOT-SHADOW_SIZE(%rcx)
	jne	2f
	movq	SHADOW_FN-SHADOW_SIZE(%rcx), %rdi
	movq	%rdi, %rax
	shrq	$47, %rax		/* what to read at the return */
	jnz	2f
	btsq	$63, %rdi		/* SPOOL_EXIT_BIT */
	RECORD	3f
	/* popped, its return address back in the slot */
	movl	%fs:PSTACK_N(%rsi), %eax
	subl	$1, %eax
	movl	%eax, %ecx
	shlq	$SHADOW_SIZE_LOG2, %rcx
	addq	%fs:PSTACK_V(%rsi), %rcx
	movq	SHADOW_RETA(%rcx), %rdx
	movl	%eax, %fs:PSTACK_N(%rsi)
	movq	%rdx, 8(%rbp)
	RESTORE_FAST
5:	popq	%rbp
	.cfi_remember_state
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	/* The return stack predicts it: the function returned to where
	 * the stub called it from, the stub's exit (patch.c). */
	ret
	.cfi_restore_state
3:	SAVE_REST			/* the record's slow path */
	andq	$-16, %rsp
	movq	%rdx, %rdi		/* the slot reserved */
	movq	%rax, %rsi		/* its timestamp */
	call	fxt__patch_exit_late
	jmp	4f
2:	SAVE_REST			/* the full handler */
	andq	$-16, %rsp
	leaq	16(%rbp), %rdi
	call	fxt__patch_exit
4:	movq	%rax, 8(%rbp)
	leaq	-72(%rbp), %rsp
	RESTORE_GPRS
	jmp	5b
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
