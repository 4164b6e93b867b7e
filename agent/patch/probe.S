/* The copy of a string argument with plain loads (fxt-run --args; the
 * fast path of rtargs.c's read_string(), probe.c says when it is taken):
 * a fault inside it is recovered by the agent's SIGSEGV/SIGBUS handler,
 * which moves the pc to fxt__patch_probe_landing.  General registers
 * only, no stack.  x86-64, SysV. */
#if defined(__x86_64__)
	.text

/* long fxt__patch_probe_copy(char *dst, const char *src, size_t n):
 * copies src into dst up to its NUL or n bytes (n > 0); returns the
 * string's length if its NUL is among the first n bytes, else n.  Reads
 * 8-byte words, aligned: a word never crosses into another page, so a
 * string that ends right before an unmapped page is read whole.  Writes
 * whole words: dst must have room for n + 7 bytes.  A fault (src or
 * dst) lands at fxt__patch_probe_landing with rax the bytes copied so
 * far (none of them a NUL), and returns ~rax (negative). */
	.globl	fxt__patch_probe_copy
	.hidden	fxt__patch_probe_copy
	.type	fxt__patch_probe_copy, @function
	.p2align 4
fxt__patch_probe_copy:
	.cfi_startproc
	xorl	%eax, %eax		/* bytes copied */
	movabsq	$0x0101010101010101, %r10
	movabsq	$0x8080808080808080, %r11
	movl	%esi, %ecx
	andl	$7, %ecx
	andq	$-8, %rsi		/* the aligned word that holds src */
	shll	$3, %ecx
	movq	(%rsi), %r8		/* may fault: nothing copied */
	shrq	%cl, %r8		/* the bytes before src out */
	movq	$-1, %r9
	shrq	%cl, %r9
	notq	%r9
	orq	%r9, %r8		/* ... and 0xff (not a NUL) in their place */
	shrl	$3, %ecx
	negl	%ecx
	addl	$8, %ecx		/* the first word's bytes of the string */
	jmp	2f
1:	movq	(%rsi), %r8		/* may fault: rax bytes copied */
	movl	$8, %ecx
2:	movq	%r8, (%rdi,%rax)	/* may fault (dst): likewise */
	movq	%r8, %r9
	notq	%r9
	andq	%r11, %r9
	subq	%r10, %r8
	andq	%r9, %r8		/* a bit per NUL byte, exact up to the first */
	jnz	3f
	addq	%rcx, %rax
	addq	$8, %rsi
	cmpq	%rdx, %rax
	jb	1b
	movq	%rdx, %rax		/* no NUL in n bytes */
	ret
3:	bsfq	%r8, %r8
	shrl	$3, %r8d
	addq	%r8, %rax		/* the NUL's index */
	cmpq	%rdx, %rax
	cmovaq	%rdx, %rax
	ret
	.cfi_endproc
	.globl	fxt__patch_probe_end
	.hidden	fxt__patch_probe_end
fxt__patch_probe_end:
	.size	fxt__patch_probe_copy, .-fxt__patch_probe_copy

/* Where the handler sends a fault inside fxt__patch_probe_copy (before
 * fxt__patch_probe_end): rax bytes were copied. */
	.globl	fxt__patch_probe_landing
	.hidden	fxt__patch_probe_landing
	.type	fxt__patch_probe_landing, @function
	.p2align 4
fxt__patch_probe_landing:
	.cfi_startproc
	notq	%rax
	ret
	.cfi_endproc
	.size	fxt__patch_probe_landing, .-fxt__patch_probe_landing
#endif
	.section .note.GNU-stack,"",@progbits
