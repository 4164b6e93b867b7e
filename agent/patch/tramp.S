/* The trampolines of run-time patching (agent/patch/patch.h): the register
 * shells around fxt__patch_enter() and fxt__patch_exit().  x86-64, SysV. */
#if defined(__x86_64__)
	.text

/* Every register the C handlers may change is saved around them, not only
 * the ones the ABI says a call may change: a compiler that sees a whole
 * program (gcc's -fipa-ra) keeps values in registers across calls of
 * functions it knows leave them alone, and a patched function's entry and
 * return must look as if nothing ran there.  The handlers (rt.c)
 * are compiled to use general registers only: the trampolines save
 * those, and fxt__patch_call_saving the vector registers, for what the
 * handlers call that may use them. */
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

/* Called (call *slot) from a function's stub, which is
 *     .quad FN; call *slot(%rip); <its relocated instructions>
 * so that no register carries FN (with -fipa-ra, any may be live).  The
 * stack then holds the stub's return address (14 bytes past FN's quad)
 * and, above it, the function's own return address.  Saves the general
 * registers (see above), calls fxt__patch_enter(FN, &return address),
 * restores and returns into the stub.  The stack is aligned here: a
 * compiler may call a function it knows with it 8 bytes off. */
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
	SAVE_GPRS
	andq	$-16, %rsp
	movq	8(%rbp), %rax		/* the stub's return address */
	movq	-14(%rax), %rdi		/* FN, before the call */
	leaq	16(%rbp), %rsi		/* above the saved rbp and the stub's return */
	call	fxt__patch_enter
	leaq	-72(%rbp), %rsp
	RESTORE_GPRS
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.globl	fxt__patch_enter_tramp_end
	.hidden	fxt__patch_enter_tramp_end
fxt__patch_enter_tramp_end:
	.size	fxt__patch_enter_tramp, .-fxt__patch_enter_tramp

/* A patched function returns here (its return address was replaced).
 * Keeps a slot for the real return address, saves the general registers
 * (see above), calls fxt__patch_exit(the stack pointer the
 * function returned with) on an aligned stack, puts the real return
 * address it gives in the slot, and returns there.  That slot is the one
 * the function returned through, which holds this trampoline's address
 * until then: the unwind information says the return address is there
 * throughout, so that a stack sampled in here or in fxt__patch_exit()
 * unwinds to the function's caller (the sampler takes this trampoline's
 * address for the real one, agent_patch_sampled_ret()). */
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
	/* Not `ret`: the return stack predicts the address this function
	 * was called from, never right here; an indirect jump is predicted
	 * by its target's history.  The slot it reads is in the red zone,
	 * which signal handlers leave alone. */
	leaq	8(%rsp), %rsp
	.cfi_def_cfa_offset 0
	jmp	*-8(%rsp)
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
