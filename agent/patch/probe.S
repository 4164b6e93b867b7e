/* The copy of a string argument with plain loads (fxt-run --args; the
 * fast path of rtargs.c's string reads, probe.c says when it is taken),
 * straight into its REG record: a fault inside it is recovered by the
 * agent's SIGSEGV/SIGBUS handler, which moves the pc to
 * fxt__patch_probe_landing.  General registers only, no stack.  x86-64,
 * SysV. */
#if defined(__x86_64__)
	.text

/* long fxt__patch_probe_reg(uint64_t *rec, const char *src, size_t n):
 * copies the string at src, up to its NUL or n bytes, into the REG record
 * at rec as spool/records.h lays a string out: out_0 (its bytes 0..7) in
 * rec[0], out_k (bytes 8k..) in rec[k + 1] (rec[1], the head, untouched).
 * Returns the string's length if its NUL is among the first n bytes,
 * else n.  Reads 8-byte words, aligned (w_k: the one at src's word + 8k):
 * a word never crosses into another page, and the next is read only when
 * this one holds no NUL, so a string that ends right before an unmapped
 * page is read whole.  Writes whole words, aligned, each once, up to the
 * one that holds the NUL (the bytes past it anything: ev_reg_str_seal()
 * zeroes them) or byte n - 1: rec must have room for 1 + the words of
 * n + 7 bytes.  A fault (src) lands at fxt__patch_probe_landing, which
 * stores what the last word read held and returns ~k (negative), k the
 * bytes copied (none of them a NUL).
 *
 * Registers: rdi rec, rsi w_k's address, rdx n + off - 8 (off: src's
 * place in its word; w_k's bytes reach n once 8k >= rdx), ecx 8 * off,
 * r8 w_k, rax 8k (the string's bytes before out_k; off - 8 before w_0 is
 * read), r10 0x0101..., r9 r11 scratch. */
/* \out: a bit per NUL byte of \x, exact up to the first (\x clobbered). */
.macro	NULS x, out
	movq	\x, \out
	subq	%r10, \out
	notq	\x
	andq	\x, \out
	movq	%r10, \x
	shlq	$7, \x
	andq	\x, \out
.endm

	.globl	fxt__patch_probe_reg
	.hidden	fxt__patch_probe_reg
	.type	fxt__patch_probe_reg, @function
	.p2align 4
fxt__patch_probe_reg:
	.cfi_startproc
	movl	%esi, %ecx
	andl	$7, %ecx		/* off */
	andq	$-8, %rsi
	leaq	-8(%rdx,%rcx), %rdx
	leaq	-8(%rcx), %rax		/* < 0: no word read */
	shll	$3, %ecx
	movabsq	$0x0101010101010101, %r10
	movq	(%rsi), %r8		/* may fault: nothing copied */
	xorl	%eax, %eax
	movq	$-1, %r9
	shlq	%cl, %r9
	notq	%r9			/* the bytes before src ... */
	orq	%r8, %r9		/* ... taken for no NUL */
	NULS	%r9, %r11
	jnz	.Lnul0
.Lloop:					/* no NUL among w_k's string bytes */
	cmpq	%rdx, %rax
	jge	.Lfull
	movq	8(%rsi), %r9		/* may fault: out_k's bytes from w_k not stored */
	addq	$8, %rsi
	shrdq	%cl, %r9, %r8		/* out_k (w_k itself when off is 0) */
	leaq	8(%rdi,%rax), %r11
	testq	%rax, %rax
	cmovzq	%rdi, %r11
	movq	%r8, (%r11)
	addq	$8, %rax
	movq	%r9, %r8		/* w_k+1 */
	NULS	%r9, %r11
	jz	.Lloop
	/* A NUL at byte j of w_k+1 (rax = 8k + 8): the string's byte
	 * rax - off + j, in out_k when j < off, else in out_k+1. */
	bsfq	%r11, %r11
	shrl	$3, %r11d
	movl	%ecx, %r9d
	shrl	$3, %r9d
	subq	%r9, %r11		/* j - off */
	jl	1f
	shrq	%cl, %r8
	movq	%r8, 8(%rdi,%rax)	/* out_k+1 */
1:	addq	%r11, %rax
	jmp	.Lclamp
.Lnul0:					/* a NUL at byte j >= off of w_0 */
	bsfq	%r11, %r11
	shrl	$3, %r11d
	movl	%ecx, %r9d
	shrl	$3, %r9d
	subq	%r9, %r11		/* the string's length */
	shrq	%cl, %r8
	movq	%r8, (%rdi)		/* out_0 */
	movq	%r11, %rax
.Lclamp:				/* the NUL's index, at most n */
	movl	%ecx, %r9d
	shrl	$3, %r9d
	leaq	8(%rdx), %r11
	subq	%r9, %r11		/* n */
	cmpq	%r11, %rax
	cmovaq	%r11, %rax
	ret
.Lfull:					/* w_k's bytes reach byte n - 1, no NUL */
	shrq	%cl, %r8
	leaq	8(%rdi,%rax), %r11
	testq	%rax, %rax
	cmovzq	%rdi, %r11
	movq	%r8, (%r11)		/* out_k, its bytes from w_k */
	movl	%ecx, %r9d
	shrl	$3, %r9d
	leaq	8(%rdx), %rax
	subq	%r9, %rax		/* n */
	ret
	.cfi_endproc
	.globl	fxt__patch_probe_end
	.hidden	fxt__patch_probe_end
fxt__patch_probe_end:
	.size	fxt__patch_probe_reg, .-fxt__patch_probe_reg

/* Where the handler sends a fault inside fxt__patch_probe_reg (before
 * fxt__patch_probe_end), at a load of w_k+1 (rax = 8k >= 0: out_k's bytes
 * from w_k are copied, stored here) or of w_0 (rax < 0: none). */
	.globl	fxt__patch_probe_landing
	.hidden	fxt__patch_probe_landing
	.type	fxt__patch_probe_landing, @function
	.p2align 4
fxt__patch_probe_landing:
	.cfi_startproc
	movl	%ecx, %r9d
	shrl	$3, %r9d		/* off */
	testq	%rax, %rax
	js	1f
	shrq	%cl, %r8
	leaq	8(%rdi,%rax), %r11
	testq	%rax, %rax
	cmovzq	%rdi, %r11
	movq	%r8, (%r11)
1:	addq	$8, %rax
	subq	%r9, %rax		/* 8k + 8 - off bytes copied */
	notq	%rax
	ret
	.cfi_endproc
	.size	fxt__patch_probe_landing, .-fxt__patch_probe_landing
#endif
	.section .note.GNU-stack,"",@progbits
