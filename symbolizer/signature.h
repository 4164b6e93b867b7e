/* Function signatures from DWARF, and where the x86-64 System V calling
 * convention puts each parameter and the return value at a function's
 * entry and return: what `fxt-run --args/--retval` records (the registers
 * named here, read by the agent at a patched entry and return) and how
 * the conversion shows each value (by the parameter's name and type).
 *
 * Private to fxtrace.  Used outside the traced process only: by fxt-run
 * (which registers to capture, before the run) and by the conversion
 * (names and types of the values captured).
 */
#ifndef FXT_SYMBOLIZER_SIGNATURE_H
#define FXT_SYMBOLIZER_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/symbolizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a value is, from its DWARF type (typedefs and cv-qualifiers seen
 * through). */
enum fxt_vkind {
	FXT_VK_INT,	/* a signed integer of `size` bytes (1, 2, 4, 8, 16) */
	FXT_VK_UINT,	/* an unsigned integer */
	FXT_VK_BOOL,	/* _Bool / bool */
	FXT_VK_CHAR,	/* char, signed char, unsigned char, char8_t: shown as a
			   character; through a typedef (int8_t, uint8_t), signed and
			   unsigned char are numbers (FXT_VK_INT, FXT_VK_UINT) */
	FXT_VK_ENUM,	/* an enumeration: by its enumerator's name */
	FXT_VK_PTR,	/* a data or function pointer, a C++ reference; a C++ class
			   that is not trivially copyable, passed by value, is passed
			   by an invisible reference: a pointer, type "T &" */
	FXT_VK_STR,	/* a pointer to what FXT_VK_CHAR says is a character (char *,
			   const char *, unsigned char *; not uint8_t *): a string */
	FXT_VK_FLOAT,	/* float */
	FXT_VK_DOUBLE,	/* double */
	FXT_VK_STRUCT,	/* a struct, union or class passed or returned by value; a
			   pointer to member function (16 bytes, two registers) */
	FXT_VK_UNKNOWN, /* a type not shown (long double, vectors, _Complex ...),
			   located all the same (_Complex double: two XMMs) */
	FXT_VK_VOID,	/* the return "value" of a void function */
};

/* Where the value is at the entry (a parameter) or the return (the
 * return value). */
enum fxt_vloc {
	FXT_LOC_NONE,	/* nowhere to read it from (void; a long double returned
			   in st0; an empty C++ class) */
	FXT_LOC_GPR,	/* integer register `reg`: for a parameter 0..5 = rdi, rsi,
			   rdx, rcx, r8, r9; for the return value 0 = rax, 1 = rdx; a
			   value of 9..16 bytes also takes the next one (`reg2`) */
	FXT_LOC_XMM,	/* vector register `reg` (0..7; the return value: xmm0,
			   xmm1), low 64 bits; `reg2` likewise for a second eightbyte */
	FXT_LOC_MEMORY, /* on the stack, or in memory the caller gave: not read */
};

struct fxt_enumerator {
	const char *name;
	int64_t value;
};

/* One parameter, or the return value. */
struct fxt_value_desc {
	const char *name; /* the parameter's name ("this" for C++'s); NULL for the
			     return value; "argN" (N from 1) for an unnamed one */
	const char *type; /* the type as written ("const char *", "enum color"), for
			     messages and unknown kinds */
	enum fxt_vkind kind;
	unsigned size; /* bytes (a pointer: 8) */
	enum fxt_vloc loc;
	unsigned reg, reg2;		    /* see enum fxt_vloc; reg2 = reg when one register */
	bool two_regs;			    /* reg2 holds bytes 8..15 (a 9..16-byte value) */
	enum fxt_vloc loc2;		    /* reg2's kind (GPR or XMM): a struct {long; double}
					       mixes them; loc2 = loc when one register */
	bool is_signed;			    /* FXT_VK_INT, FXT_VK_ENUM (its underlying type) */
	const struct fxt_enumerator *enums; /* FXT_VK_ENUM: its enumerators */
	size_t nenums;
};

/* A function's signature. */
struct fxt_signature {
	const char *function; /* its name as DWARF has it (linkage name demangled:
				 "ns::Cls::add(int, double)"; C: "add") */
	struct fxt_value_desc ret;
	const struct fxt_value_desc *params;
	size_t nparams;
	bool variadic;	    /* `...` after the named parameters: not shown */
	bool ret_in_memory; /* the return value goes through memory the caller passes
			       in rdi (the parameters then start at rsi); ret.loc is
			       FXT_LOC_MEMORY */
};

/* The signature of the function whose entry is at `addr` (a runtime
 * address of a module reported to s), from the DWARF of its module or of
 * the module's separate debug file (as the symbolizer finds them).  The
 * result and its strings live until fxt_sym_free(s); cached per address.
 * 0; -ENOENT when the module has no DWARF for a function at addr (no
 * debug information, a stripped module: say so, "no DWARF"), also when
 * addr is in no module, is not a function's entry, or is a compiler clone
 * ("f.isra.0", "f.constprop.0", "f.part.0": their DWARF is their
 * original's, their parameters are not); -ENOMEM; -EINVAL without s.
 * Answers for addresses in a module, -ENOENT too, are kept. */
int fxt_sym_signature(struct fxt_sym *s, uint64_t addr, const struct fxt_signature **out);

/* A value captured at an entry or return, as the conversion shows it: an
 * FXT argument's type and value (include/fxt: int64, uint64, double, bool,
 * pointer, string). */
enum fxt_shown_type {
	FXT_SHOWN_I64,
	FXT_SHOWN_U64,
	FXT_SHOWN_DOUBLE,
	FXT_SHOWN_BOOL,
	FXT_SHOWN_PTR,
	FXT_SHOWN_STR, /* text in `str` (len bytes, not NUL-terminated) */
};

struct fxt_shown {
	enum fxt_shown_type type;
	union {
		int64_t i64;
		uint64_t u64;
		double d;
		bool b;
		uint64_t ptr;
	} v;
	const char *str;
	size_t len;
};

/* How `d` shows with the raw register contents `lo` (its register, or
 * the low 64 bits of its XMM register) and `hi` (reg2, for a two-register
 * value).  Integers are cut to their size and sign-extended as their type
 * says; an enum shows its enumerator's name ("RED"), its number in decimal
 * when none matches; a bool true/false; a char as the one character
 * ("'a'", or "'\x01'"); float and double from their bits; a struct by
 * value as "{...} (N bytes)"; an unknown kind as "(TYPE)"; void as
 * "(void)".  An enum is always text (FXT_SHOWN_STR), its number too; a
 * 16-byte integer is I64/U64 when its value fits, else decimal text.
 * Strings (FXT_VK_STR) are not for this: the agent read their bytes (given
 * one, it shows the pointer, FXT_SHOWN_PTR).  Text goes to buf (cap bytes;
 * 64 is enough for everything but enumerator names, which are cut; cap 0:
 * empty text). */
void fxt_sig_show(const struct fxt_value_desc *d, uint64_t lo, uint64_t hi, char *buf, size_t cap,
		  struct fxt_shown *out);

#ifdef __cplusplus
}
#endif

#endif /* FXT_SYMBOLIZER_SIGNATURE_H */
