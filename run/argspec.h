/* What fxt-run --args/--retval asks the agent to read at a patched
 * function's entry and return: which registers, and which of them hold a
 * string.  fxt-run works it out before the run from the functions' DWARF
 * (symbolizer/signature.h), or from an explicit "NAME@arg1,arg2"; the
 * agent reads it when it patches the function (agent/patch/patch.c) and
 * the trampolines' handlers capture what it says (agent/patch/rt.c).  The
 * conversion names and types the values from the DWARF again.
 *
 * The file: "PATCH_REPORT/argspec" (fxt-run's report folder of the run,
 * FXT_PATCH_REPORT), one line a function:
 *
 *	MODULE<TAB>SYMBOL<TAB>CAPS[<TAB>RULE:REG:WIDTH:SIGNED][<TAB>iRULE:REG:WIDTH:SIGNED]
 *
 * MODULE the basename of its file ("app", "libssl.so.3"), SYMBOL its name
 * in the symbol table as it is (mangled for C++), CAPS the bits below in
 * hexadecimal ("0x103"; FXT_CAP_HOOKED with them, for a function of an
 * instrumented module that --patch does not name).  The optional last field is a snapshot value
 * rule's test of the call (FXT_SNAPSHOT_IF "NAME@retval<0",
 * run/recording.h): the rule's index among the rules, the register the
 * value is in (enum fxt_reg, read: CAPS has it), its width in bytes and
 * whether it is signed.  The one after, with an 'i', an --include
 * pattern's test of an argument ("lookup@arg1==42", FXT_INCLUDE): RULE
 * the pattern's index among FXT_INCLUDE's.  Lines that do not parse are
 * skipped.
 */
#ifndef FXT_RUN_ARGSPEC_H
#define FXT_RUN_ARGSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The argument registers at an entry, in the order the x86-64 System V
 * convention fills them: rdi, rsi, rdx, rcx, r8, r9; xmm0..7. */
#define FXT_ARG_GPRS 6u
#define FXT_ARG_XMMS 8u

#define FXT_CAP_GPR(i)	(1u << (i))	   /* integer register i (0..5) */
#define FXT_CAP_GPRS	0x3fu		   /* every FXT_CAP_GPR(i) */
#define FXT_CAP_STR(i)	(1u << (6 + (i)))  /* ... holds a char *: its string too */
#define FXT_CAP_STRS	0xfc0u		   /* every FXT_CAP_STR(i) */
#define FXT_CAP_XMM(i)	(1u << (12 + (i))) /* vector register i (0..7), low 64 bits */
#define FXT_CAP_RAX	(1u << 20)	   /* the return value's rax */
#define FXT_CAP_RDX	(1u << 21)	   /* ... and rdx (a 9..16-byte value) */
#define FXT_CAP_RET_STR (1u << 22)	   /* ... rax is a char *: its string too */
#define FXT_CAP_XMM0	(1u << 23)	   /* the return value's xmm0 */
#define FXT_CAP_XMM1	(1u << 24)	   /* ... and xmm1 */
#define FXT_CAP_ENTRY	0x000fffffu	   /* what is read at the entry */
#define FXT_CAP_RETURN	0x01f00000u	   /* what is read at the return */
#define FXT_CAP_ALL	(FXT_CAP_ENTRY | FXT_CAP_RETURN) /* what is read */
/* Not a register: the function is in a module built with
 * -finstrument-functions and --patch does not name it: it is patched for
 * its values all the same, and its hooks' records give way to the patched
 * entry's and return's (agent/patch/patch.h). */
#define FXT_CAP_HOOKED (1u << 25)

/* The register numbers a captured value is recorded with (spool/records.h,
 * EV_TAG_REG): 0..5 the integer argument registers, 8..15 xmm0..7 at the
 * entry; then the return's. */
enum fxt_reg {
	FXT_REG_GPR0 = 0,
	FXT_REG_XMM0 = 8,
	FXT_REG_RAX = 16,
	FXT_REG_RDX = 17,
	FXT_REG_RET_XMM0 = 18,
	FXT_REG_RET_XMM1 = 19,
	FXT_REG_COUNT = 20,
};

/* The most bytes of a string argument read (the rest: "truncated"). */
#define FXT_ARG_STR_MAX 64u

/* The file's name in the report folder. */
#define FXT_ARGSPEC_FILE "argspec"

/* A snapshot value rule's test of a function's calls, or an --include
 * pattern's. */
struct fxt_argspec_cond {
	unsigned rule;	/* its index in FXT_SNAPSHOT_IF, or FXT_INCLUDE; FXT_ARGSPEC_NO_RULE: none */
	unsigned reg;	/* enum fxt_reg */
	unsigned width; /* 1, 2, 4, 8 */
	bool is_signed;
};
#define FXT_ARGSPEC_NO_RULE 0xffu

/* One line of the file (without its newline) into its parts: the module
 * and symbol point into `line`, which is cut with NULs; cond->rule (the
 * snapshot rule's test) and incl->rule (the --include pattern's) are
 * FXT_ARGSPEC_NO_RULE without one.  0, or -EINVAL when it does not parse
 * (no register read, or bits outside FXT_CAP_ALL and FXT_CAP_HOOKED, included). */
int run_argspec_parse(char *line, const char **module, const char **symbol, uint32_t *caps,
		      struct fxt_argspec_cond *cond, struct fxt_argspec_cond *incl);

/* The line for one function, with its newline, into buf (cap bytes); cond
 * and incl NULL or their rule FXT_ARGSPEC_NO_RULE: no test.  Its length,
 * or -ENAMETOOLONG. */
int run_argspec_format(char *buf, size_t cap, const char *module, const char *symbol, uint32_t caps,
		       const struct fxt_argspec_cond *cond, const struct fxt_argspec_cond *incl);

#endif /* FXT_RUN_ARGSPEC_H */
