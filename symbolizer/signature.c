/* Function signatures from DWARF, and where the x86-64 System V calling
 * convention puts each parameter and the return value (signature.h).
 *
 * The function is the DW_TAG_subprogram of the address's unit whose entry
 * (low_pc, or the first of its ranges) is the address: a concrete
 * out-of-line instance.  What it says through DW_AT_abstract_origin (gcc
 * -O2's copies of functions also inlined) or DW_AT_specification (C++
 * methods declared in their class) counts as its own.
 *
 * Locations follow the ABI's classification: each eightbyte of a value is
 * INTEGER, SSE (SSEUP: the upper half of the same XMM register), X87 or
 * MEMORY; a value whose eightbytes do not all find a register of their
 * class goes to memory whole, and takes none.  C++ classes that are not
 * trivially copyable (DW_AT_calling_convention DW_CC_pass_by_reference;
 * gcc 12 does not say it, so a user-provided copy or move constructor or
 * destructor, a virtual function or base, or such a base or member tell)
 * travel by an invisible reference.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/internal.h"
#include "symbolizer/signature.h"

/* Deeper type nesting than this is not followed (cycles, pathological
 * types). */
#define TYPE_DEPTH_MAX 12

/* --------------------------------------------------------- type names */

/* A type's text, cut at its capacity. */
struct tname {
	char buf[256];
	size_t len;
};

static void tn_put(struct tname *t, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof(t->buf) - 1 - t->len)
		n = sizeof(t->buf) - 1 - t->len;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static void tn_type(struct tname *t, Dwarf_Die *type, bool cxx, int depth);
static bool die_flag(Dwarf_Die *die, unsigned name);

/* "RET (*)(ARGS)" around `inner` ("*", "C::*", ""). */
static void tn_function(struct tname *t, Dwarf_Die *fn, const char *inner, bool cxx, int depth)
{
	Dwarf_Die ret, c;
	bool first = true;

	if (die_type(fn, &ret))
		tn_type(t, &ret, cxx, depth + 1);
	else
		tn_put(t, "void");
	if (*inner) {
		tn_put(t, " (");
		tn_put(t, inner);
		tn_put(t, ")");
	}
	tn_put(t, "(");
	if (dwarf_child(fn, &c) == 0)
		do {
			int tag = dwarf_tag(&c);
			Dwarf_Die pt;

			if ((tag != DW_TAG_formal_parameter &&
			     tag != DW_TAG_unspecified_parameters) ||
			    die_flag(&c, DW_AT_artificial))
				continue; /* a member function type's this */
			if (!first)
				tn_put(t, ", ");
			first = false;
			if (tag == DW_TAG_unspecified_parameters)
				tn_put(t, "...");
			else if (die_type(&c, &pt))
				tn_type(t, &pt, cxx, depth + 1);
		} while (dwarf_siblingof(&c, &c) == 0);
	if (first && !cxx && dwarf_hasattr(fn, DW_AT_prototyped))
		tn_put(t, "void");
	tn_put(t, ")");
}

/* The text of `type` as a C (or C++) programmer writes it. */
static void tn_type(struct tname *t, Dwarf_Die *type, bool cxx, int depth)
{
	const char *name = dwarf_diename(type), *tag_word = NULL, *qual = NULL;
	Dwarf_Die inner;
	bool has_inner = die_type(type, &inner);
	int tag = dwarf_tag(type);

	if (depth > TYPE_DEPTH_MAX) {
		tn_put(t, "...");
		return;
	}
	switch (tag) {
	case DW_TAG_structure_type:
		tag_word = "struct";
		break;
	case DW_TAG_union_type:
		tag_word = "union";
		break;
	case DW_TAG_class_type:
		tag_word = "class";
		break;
	case DW_TAG_enumeration_type:
		tag_word = "enum";
		break;
	case DW_TAG_const_type:
		qual = "const";
		break;
	case DW_TAG_volatile_type:
		qual = "volatile";
		break;
	case DW_TAG_restrict_type:
		qual = cxx ? "__restrict" : "restrict";
		break;
	case DW_TAG_atomic_type:
		qual = "_Atomic";
		break;
	default:
		break;
	}
	if (tag_word) {
		if (name && cxx) {
			tn_put(t, name);
		} else {
			tn_put(t, tag_word);
			tn_put(t, " ");
			tn_put(t, name ? name : "{...}");
		}
		return;
	}
	if (qual) {
		int itag = has_inner ? dwarf_tag(&inner) : 0;

		/* A qualified pointer: "char *const". */
		if (itag == DW_TAG_pointer_type || itag == DW_TAG_reference_type ||
		    itag == DW_TAG_rvalue_reference_type || itag == DW_TAG_ptr_to_member_type) {
			tn_type(t, &inner, cxx, depth + 1);
			if (t->len && t->buf[t->len - 1] != '*' && t->buf[t->len - 1] != '&')
				tn_put(t, " ");
			tn_put(t, qual);
			return;
		}
		tn_put(t, qual);
		tn_put(t, " ");
		if (has_inner)
			tn_type(t, &inner, cxx, depth + 1);
		else
			tn_put(t, "void");
		return;
	}
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *op = tag == DW_TAG_pointer_type	? "*"
				 : tag == DW_TAG_reference_type ? "&"
								: "&&";

		if (has_inner && dwarf_tag(&inner) == DW_TAG_subroutine_type) {
			tn_function(t, &inner, op, cxx, depth);
			return;
		}
		if (has_inner)
			tn_type(t, &inner, cxx, depth + 1);
		else
			tn_put(t, "void");
		/* "char **", "int *&" */
		if (t->len == 0 || (t->buf[t->len - 1] != '*' && t->buf[t->len - 1] != '&'))
			tn_put(t, " ");
		tn_put(t, op);
		return;
	}
	case DW_TAG_ptr_to_member_type: {
		Dwarf_Attribute a;
		Dwarf_Die cls;
		struct tname c = { .len = 0 };

		c.buf[0] = '\0';
		if (dwarf_attr(type, DW_AT_containing_type, &a) && dwarf_formref_die(&a, &cls))
			tn_type(&c, &cls, cxx, depth + 1);
		tn_put(&c, "::*");
		if (has_inner && dwarf_tag(&inner) == DW_TAG_subroutine_type) {
			tn_function(t, &inner, c.buf, cxx, depth);
			return;
		}
		if (has_inner)
			tn_type(t, &inner, cxx, depth + 1);
		tn_put(t, " ");
		tn_put(t, c.buf);
		return;
	}
	case DW_TAG_array_type:
		if (has_inner)
			tn_type(t, &inner, cxx, depth + 1);
		tn_put(t, " []");
		return;
	case DW_TAG_subroutine_type:
		tn_function(t, type, "", cxx, depth);
		return;
	default:
		/* base types, typedefs, unspecified (nullptr_t) */
		tn_put(t, name ? name : "?");
		return;
	}
}

/* ------------------------------------------------------ classification */

/* The ABI's classes of an eightbyte. */
enum abi_class {
	CL_NONE, /* NO_CLASS: padding, or nothing yet */
	CL_INTEGER,
	CL_SSE,
	CL_SSEUP,
	CL_X87,
	CL_X87UP,
	CL_COMPLEX_X87,
	CL_MEMORY,
};

static enum abi_class cl_merge(enum abi_class a, enum abi_class b)
{
	if (a == b)
		return a;
	if (a == CL_NONE)
		return b;
	if (b == CL_NONE)
		return a;
	if (a == CL_MEMORY || b == CL_MEMORY)
		return CL_MEMORY;
	if (a == CL_INTEGER || b == CL_INTEGER)
		return CL_INTEGER;
	if (a == CL_X87 || a == CL_X87UP || a == CL_COMPLEX_X87 || b == CL_X87 || b == CL_X87UP ||
	    b == CL_COMPLEX_X87)
		return CL_MEMORY;
	return CL_SSE;
}

/* A peeled type's size in bytes; pointers without DW_AT_byte_size
 * (clang's) are 8. */
static uint64_t die_size(Dwarf_Die *type)
{
	Dwarf_Word sz;
	Dwarf_Die t, q;

	if (dwarf_aggregate_size(type, &sz) == 0)
		return sz;
	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return 8;
	case DW_TAG_ptr_to_member_type:
		return die_type(type, &t) && dwarf_peel_type(&t, &q) == 0 &&
			       dwarf_tag(&q) == DW_TAG_subroutine_type
			   ? 16
			   : 8;
	default:
		return 0;
	}
}

static bool die_flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	bool f = false;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formflag(&a, &f) == 0 && f;
}

static Dwarf_Word die_udata(Dwarf_Die *die, unsigned name, Dwarf_Word dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, &w) == 0)
		return w;
	return dflt;
}

/* A long double or _Float128 (16-byte floats): x87 or SSE? */
static bool is_x87_float(Dwarf_Die *base)
{
	const char *name = dwarf_diename(base);

	return !name || strstr(name, "long double") != NULL;
}

static bool class_nontrivial(Dwarf_Die *cls, int depth);

/* A member's or base's type that makes its class not trivially
 * copyable. */
static bool member_nontrivial(Dwarf_Die *m, int depth)
{
	Dwarf_Die t, p;

	if (!die_type(m, &t) || !dwarf_peel_type(&t, &p))
		return false;
	while (dwarf_tag(&p) == DW_TAG_array_type) {
		if (!die_type(&p, &t) || dwarf_peel_type(&t, &p) != 0)
			return false;
	}
	return class_nontrivial(&p, depth + 1);
}

/* Whether C++ passes and returns a class through an invisible reference
 * (Itanium C++ ABI: not trivial for the purposes of calls). */
static bool class_nontrivial(Dwarf_Die *cls, int depth)
{
	int tag = dwarf_tag(cls);
	const char *cname = dwarf_diename(cls);
	Dwarf_Die c;

	if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
		return false;
	if (depth > TYPE_DEPTH_MAX)
		return false;
	switch (die_udata(cls, DW_AT_calling_convention, 0)) {
	case DW_CC_pass_by_reference:
		return true;
	case DW_CC_pass_by_value:
		return false;
	default:
		break;
	}
	if (dwarf_child(cls, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_inheritance:
			if (die_udata(&c, DW_AT_virtuality, 0) != DW_VIRTUALITY_none)
				return true;
			if (member_nontrivial(&c, depth))
				return true;
			break;
		case DW_TAG_member:
			if (!dwarf_hasattr(&c, DW_AT_declaration) &&
			    !die_flag(&c, DW_AT_external) && member_nontrivial(&c, depth))
				return true;
			break;
		case DW_TAG_subprogram: {
			const char *n = dwarf_diename(&c);
			Dwarf_Die p, pt, pp;
			int nargs = 0;
			bool self_ref = false;

			if (die_udata(&c, DW_AT_virtuality, 0) != DW_VIRTUALITY_none)
				return true;
			if (!n || die_flag(&c, DW_AT_artificial) ||
			    die_udata(&c, DW_AT_defaulted, DW_DEFAULTED_no) ==
				DW_DEFAULTED_in_class)
				break;
			if (n[0] == '~')
				return true; /* a user-provided destructor */
			if (!cname || strcmp(n, cname) != 0 || dwarf_child(&c, &p) != 0)
				break;
			/* A constructor: a copy or move one takes one reference to
			 * the class itself (after the artificial this). */
			do {
				if (dwarf_tag(&p) != DW_TAG_formal_parameter ||
				    die_flag(&p, DW_AT_artificial))
					continue;
				nargs++;
				self_ref = die_type(&p, &pt) &&
					   (dwarf_tag(&pt) == DW_TAG_reference_type ||
					    dwarf_tag(&pt) == DW_TAG_rvalue_reference_type) &&
					   die_type(&pt, &pp) && dwarf_peel_type(&pp, &pp) == 0 &&
					   dwarf_dieoffset(&pp) == dwarf_dieoffset(cls);
			} while (dwarf_siblingof(&p, &p) == 0);
			if (nargs == 1 && self_ref && !dwarf_hasattr(&c, DW_AT_deleted))
				return true;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Natural alignment of a peeled type, for the "unaligned field" rule. */
static uint64_t type_align(Dwarf_Die *p, int depth)
{
	Dwarf_Die c, t, q;
	uint64_t a = 1, sz;

	if (depth > TYPE_DEPTH_MAX)
		return 1;
	switch (dwarf_tag(p)) {
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_child(p, &c) == 0)
			do {
				uint64_t ma;

				if ((dwarf_tag(&c) != DW_TAG_member &&
				     dwarf_tag(&c) != DW_TAG_inheritance) ||
				    !die_type(&c, &t) || dwarf_peel_type(&t, &q) != 0)
					continue;
				ma = type_align(&q, depth + 1);
				if (ma > a)
					a = ma;
			} while (dwarf_siblingof(&c, &c) == 0);
		return a;
	case DW_TAG_array_type:
		if (die_type(p, &t) && dwarf_peel_type(&t, &q) == 0)
			return type_align(&q, depth + 1);
		return 1;
	default:
		sz = die_size(p);
		if (dwarf_tag(p) == DW_TAG_base_type &&
		    die_udata(p, DW_AT_encoding, 0) == DW_ATE_complex_float)
			sz /= 2;
		if (dwarf_tag(p) == DW_TAG_ptr_to_member_type)
			sz = 8;
		return sz >= 16 ? 16 : sz ? sz : 1;
	}
}

/* Marks the eightbytes a field of peeled type p at byte `off` of a value of
 * at most 16 bytes covers.  false: the value goes to memory. */
static bool classify(Dwarf_Die *p, uint64_t off, enum abi_class cls[2], int depth)
{
	uint64_t size = die_size(p), e = off / 8;
	Dwarf_Die c, t, q;

	if (depth > TYPE_DEPTH_MAX)
		return false;
	switch (dwarf_tag(p)) {
	case DW_TAG_base_type:
		switch (die_udata(p, DW_AT_encoding, 0)) {
		case DW_ATE_float:
			if (size == 16 && is_x87_float(p)) {
				if (e != 0)
					return false;
				cls[0] = cl_merge(cls[0], CL_X87);
				cls[1] = cl_merge(cls[1], CL_X87UP);
			} else if (size == 16) {
				if (e != 0)
					return false;
				cls[0] = cl_merge(cls[0], CL_SSE);
				cls[1] = cl_merge(cls[1], CL_SSEUP);
			} else if (size == 4 || size == 8) {
				cls[e] = cl_merge(cls[e], CL_SSE);
			} else {
				return false;
			}
			return true;
		case DW_ATE_complex_float:
			if (size == 8) {
				cls[e] = cl_merge(cls[e], CL_SSE);
			} else if (size == 16 && e == 0) {
				cls[0] = cl_merge(cls[0], CL_SSE);
				cls[1] = cl_merge(cls[1], CL_SSE);
			} else {
				return false; /* _Complex long double: COMPLEX_X87 */
			}
			return true;
		default:
			if (size == 16 && e == 0) {
				cls[0] = cl_merge(cls[0], CL_INTEGER);
				cls[1] = cl_merge(cls[1], CL_INTEGER);
			} else if (size && size <= 8) {
				cls[e] = cl_merge(cls[e], CL_INTEGER);
			} else {
				return false;
			}
			return true;
		}
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_enumeration_type:
		cls[e] = cl_merge(cls[e], CL_INTEGER);
		return true;
	case DW_TAG_ptr_to_member_type:
		cls[e] = cl_merge(cls[e], CL_INTEGER);
		if (die_type(p, &t) && dwarf_peel_type(&t, &q) == 0 &&
		    dwarf_tag(&q) == DW_TAG_subroutine_type) {
			if (e != 0)
				return false;
			cls[1] = cl_merge(cls[1], CL_INTEGER);
		}
		return true;
	case DW_TAG_array_type: {
		uint64_t es, i;

		if (dwarf_hasattr(p, DW_AT_GNU_vector)) {
			if (size == 8)
				cls[e] = cl_merge(cls[e], CL_SSE);
			else if (size == 16 && e == 0) {
				cls[0] = cl_merge(cls[0], CL_SSE);
				cls[1] = cl_merge(cls[1], CL_SSEUP);
			} else
				return false;
			return true;
		}
		if (!die_type(p, &t) || dwarf_peel_type(&t, &q) != 0)
			return false;
		es = die_size(&q);
		if (es == 0)
			return true;
		for (i = 0; i < size / es; i++)
			if (!classify(&q, off + i * es, cls, depth + 1))
				return false;
		return true;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_child(p, &c) != 0)
			return true;
		do {
			int tag = dwarf_tag(&c);
			Dwarf_Attribute a;
			Dwarf_Word moff = 0, bitoff;

			if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
				continue;
			if (dwarf_hasattr(&c, DW_AT_declaration) || die_flag(&c, DW_AT_external))
				continue; /* a static member */
			if (!die_type(&c, &t) || dwarf_peel_type(&t, &q) != 0)
				return false;
			if (dwarf_attr(&c, DW_AT_data_member_location, &a)) {
				if (dwarf_formudata(&a, &moff) != 0)
					return false; /* a location expression: a virtual base */
			} else if (dwarf_attr(&c, DW_AT_data_bit_offset, &a)) {
				if (dwarf_formudata(&a, &bitoff) != 0)
					return false;
				moff = bitoff / 8;
			}
			if (dwarf_hasattr(&c, DW_AT_bit_size)) {
				/* A bit-field: integer bits wherever they are. */
				uint64_t bits = die_udata(&c, DW_AT_bit_size, 0);
				bool dbo = dwarf_hasattr(&c, DW_AT_data_bit_offset);
				uint64_t first =
				    dbo ? die_udata(&c, DW_AT_data_bit_offset, 0) : moff * 8;
				/* DWARF 4's DW_AT_bit_offset: somewhere in the storage
				 * unit at moff. */
				uint64_t last = dbo ? first + (bits ? bits - 1 : 0)
						    : first + die_size(&q) * 8 - 1;

				first += off * 8;
				last += off * 8;
				if (last >= 128)
					return false;
				cls[first / 64] = cl_merge(cls[first / 64], CL_INTEGER);
				cls[last / 64] = cl_merge(cls[last / 64], CL_INTEGER);
				continue;
			}
			if (moff % type_align(&q, depth + 1) != 0)
				return false; /* an unaligned field */
			if (off + moff + die_size(&q) > 16)
				return false;
			if (!classify(&q, off + moff, cls, depth + 1))
				return false;
		} while (dwarf_siblingof(&c, &c) == 0);
		return true;
	default:
		return false;
	}
}

/* ------------------------------------------------------------- values */

/* Registers left for the parameters. */
struct regs {
	unsigned gpr, xmm; /* the next free ones */
};

#define NGPR 6
#define NXMM 8

/* What a value is and what eightbytes it has, from its (unpeeled) type. */
struct value_info {
	enum fxt_vkind kind;
	uint64_t size;
	bool by_ref; /* a C++ class through an invisible reference */
	bool in_mem; /* MEMORY class */
	bool x87;    /* long double, _Complex long double: st0 when returned */
	int neight;  /* eightbytes in registers: 0, 1 or 2 */
	enum abi_class cls[2];
	bool is_signed;
};

/* Whether a (written) type is a character: char, char8_t, or signed or
 * unsigned char as such; a typedef of signed or unsigned char (int8_t,
 * uint8_t) is a number. */
static bool is_char(Dwarf_Die *written)
{
	Dwarf_Die cur = *written, p;
	bool typedef_seen = false;
	Dwarf_Word enc;
	const char *name;
	int i;

	if (dwarf_peel_type(written, &p) != 0 || dwarf_tag(&p) != DW_TAG_base_type ||
	    die_size(&p) != 1)
		return false;
	enc = die_udata(&p, DW_AT_encoding, 0);
	name = dwarf_diename(&p);
	if (enc == DW_ATE_UTF || (name && strcmp(name, "char") == 0))
		return true;
	if (enc != DW_ATE_signed_char && enc != DW_ATE_unsigned_char)
		return false;
	for (i = 0; i < TYPE_DEPTH_MAX && dwarf_tag(&cur) != DW_TAG_base_type; i++) {
		typedef_seen |= dwarf_tag(&cur) == DW_TAG_typedef;
		if (!die_type(&cur, &cur))
			break;
	}
	return !typedef_seen;
}

static void value_kind(Dwarf_Die *written, Dwarf_Die *p, bool has_type, bool cxx,
		       struct value_info *vi)
{
	Dwarf_Die t, q;
	int tag = has_type ? dwarf_tag(p) : -1;

	memset(vi, 0, sizeof(*vi));
	vi->kind = FXT_VK_UNKNOWN;
	if (!has_type) {
		vi->kind = FXT_VK_VOID;
		return;
	}
	vi->size = die_size(p);
	switch (tag) {
	case DW_TAG_base_type:
		switch (die_udata(p, DW_AT_encoding, 0)) {
		case DW_ATE_boolean:
			vi->kind = FXT_VK_BOOL;
			break;
		case DW_ATE_signed_char:
			vi->kind = is_char(written) ? FXT_VK_CHAR : FXT_VK_INT;
			vi->is_signed = true;
			break;
		case DW_ATE_unsigned_char:
			vi->kind = is_char(written) ? FXT_VK_CHAR : FXT_VK_UINT;
			break;
		case DW_ATE_UTF:
			vi->kind = vi->size == 1 ? FXT_VK_CHAR : FXT_VK_UINT;
			break;
		case DW_ATE_signed:
			vi->kind = FXT_VK_INT;
			vi->is_signed = true;
			break;
		case DW_ATE_unsigned:
			vi->kind = FXT_VK_UINT;
			break;
		case DW_ATE_float:
			vi->kind = vi->size == 4   ? FXT_VK_FLOAT
				   : vi->size == 8 ? FXT_VK_DOUBLE
						   : FXT_VK_UNKNOWN;
			break;
		default:
			break;
		}
		if ((vi->kind == FXT_VK_INT || vi->kind == FXT_VK_UINT) && vi->size != 1 &&
		    vi->size != 2 && vi->size != 4 && vi->size != 8 && vi->size != 16)
			vi->kind = FXT_VK_UNKNOWN; /* _BitInt(N) */
		break;
	case DW_TAG_pointer_type:
		vi->kind = FXT_VK_PTR;
		if (die_type(p, &t) && is_char(&t))
			vi->kind = FXT_VK_STR;
		vi->size = 8;
		break;
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		vi->kind = FXT_VK_PTR;
		vi->size = 8;
		break;
	case DW_TAG_ptr_to_member_type:
		/* A data member's: an offset; a member function's: two
		 * words (the function or vtable offset, and this's
		 * adjustment). */
		if (die_type(p, &t) && dwarf_peel_type(&t, &q) == 0 &&
		    dwarf_tag(&q) == DW_TAG_subroutine_type) {
			vi->kind = FXT_VK_STRUCT;
			vi->size = 16;
		} else {
			vi->kind = FXT_VK_INT;
			vi->size = 8;
			vi->is_signed = true;
		}
		break;
	case DW_TAG_enumeration_type:
		vi->kind = FXT_VK_ENUM;
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		vi->kind = FXT_VK_STRUCT;
		if (cxx && class_nontrivial(p, 0)) {
			vi->by_ref = true;
			return;
		}
		break;
	default:
		break;
	}

	/* Its eightbytes. */
	vi->cls[0] = vi->cls[1] = CL_NONE;
	if (vi->size > 16 || (vi->size && !classify(p, 0, vi->cls, 0))) {
		vi->in_mem = true;
		return;
	}
	vi->neight = vi->size == 0 ? 0 : vi->size <= 8 ? 1 : 2;
	if (vi->neight == 0 || (vi->cls[0] == CL_NONE && vi->cls[1] == CL_NONE)) {
		vi->neight = 0; /* an empty class: passed nowhere */
		return;
	}
	/* Post-merger. */
	if (vi->cls[0] == CL_MEMORY || vi->cls[1] == CL_MEMORY ||
	    (vi->cls[1] == CL_X87UP && vi->cls[0] != CL_X87)) {
		vi->in_mem = true;
		return;
	}
	if (vi->cls[0] == CL_X87 || vi->cls[0] == CL_COMPLEX_X87) {
		vi->x87 = true;
		return;
	}
	if (vi->cls[1] == CL_SSEUP && vi->cls[0] != CL_SSE)
		vi->cls[1] = CL_SSE;
	if (vi->neight == 2 && vi->cls[1] == CL_SSEUP)
		vi->neight = 1; /* one XMM register, its upper half unread */
	if (vi->neight == 1 && vi->cls[0] == CL_NONE)
		vi->cls[0] = CL_INTEGER;
}

/* A parameter's registers, or memory (then it takes none). */
static void place_param(const struct value_info *vi, struct regs *r, struct fxt_value_desc *d)
{
	unsigned ng = 0, nx = 0;
	int i;

	d->loc = FXT_LOC_MEMORY;
	if (vi->by_ref) {
		if (r->gpr < NGPR) {
			d->loc = d->loc2 = FXT_LOC_GPR;
			d->reg = d->reg2 = r->gpr++;
		}
		return;
	}
	if (vi->in_mem || vi->x87)
		return;
	if (vi->neight == 0) {
		d->loc = FXT_LOC_NONE;
		return;
	}
	for (i = 0; i < vi->neight; i++) {
		if (vi->cls[i] == CL_SSE)
			nx++;
		else
			ng++;
	}
	if (r->gpr + ng > NGPR || r->xmm + nx > NXMM)
		return;
	for (i = 0; i < vi->neight; i++) {
		enum fxt_vloc loc = vi->cls[i] == CL_SSE ? FXT_LOC_XMM : FXT_LOC_GPR;
		unsigned reg = loc == FXT_LOC_XMM ? r->xmm++ : r->gpr++;

		if (i == 0) {
			d->loc = d->loc2 = loc;
			d->reg = d->reg2 = reg;
		} else {
			d->loc2 = loc;
			d->reg2 = reg;
			d->two_regs = true;
		}
	}
}

/* The return value's registers: rax then rdx, xmm0 then xmm1.  false: in
 * memory the caller passes. */
static bool place_ret(const struct value_info *vi, struct fxt_value_desc *d)
{
	unsigned ng = 0, nx = 0;
	int i;

	d->loc = FXT_LOC_NONE;
	if (vi->kind == FXT_VK_VOID || vi->x87 || (vi->neight == 0 && !vi->in_mem && !vi->by_ref))
		return true; /* void, st0 (not read), an empty class */
	if (vi->by_ref || vi->in_mem) {
		d->loc = FXT_LOC_MEMORY;
		return false;
	}
	for (i = 0; i < vi->neight; i++) {
		enum fxt_vloc loc = vi->cls[i] == CL_SSE ? FXT_LOC_XMM : FXT_LOC_GPR;
		unsigned reg = loc == FXT_LOC_XMM ? nx++ : ng++;

		if (i == 0) {
			d->loc = d->loc2 = loc;
			d->reg = d->reg2 = reg;
		} else {
			d->loc2 = loc;
			d->reg2 = reg;
			d->two_regs = true;
		}
	}
	return true;
}

/* An enumerator's value: DW_FORM_dataN says nothing of its sign, the
 * enumeration's underlying type does. */
static int64_t enumerator_value(Dwarf_Attribute *a, bool is_signed)
{
	Dwarf_Sword sv;
	Dwarf_Word uv;
	unsigned bits;

	switch (dwarf_whatform(a)) {
	case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		return dwarf_formsdata(a, &sv) == 0 ? sv : 0;
	case DW_FORM_data1:
		bits = 8;
		break;
	case DW_FORM_data2:
		bits = 16;
		break;
	case DW_FORM_data4:
		bits = 32;
		break;
	default:
		bits = 64;
		break;
	}
	if (dwarf_formudata(a, &uv) != 0)
		return 0;
	if (is_signed && bits < 64 && (uv >> (bits - 1)) & 1)
		uv |= ~0ull << bits;
	return (int64_t)uv;
}

struct sig_build {
	struct fxt_sym *s;
	bool cxx;
};

static const char *intern(struct sig_build *b, const char *str)
{
	return fxt_sym__intern(&b->s->names, &b->s->arena, str, strlen(str));
}

/* The enumeration's signedness and enumerators. */
static int enum_fill(struct sig_build *b, Dwarf_Die *p, struct fxt_value_desc *d)
{
	Dwarf_Die c, ut, uq;
	struct fxt_enumerator *v;
	size_t n = 0, i = 0;

	if (die_type(p, &ut) && dwarf_peel_type(&ut, &uq) == 0) {
		Dwarf_Word enc = die_udata(&uq, DW_AT_encoding, 0);

		d->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	} else {
		/* No underlying type (gcc's C): signed if a value needs it,
		 * which only DW_FORM_sdata can say. */
		d->is_signed = false;
		if (dwarf_child(p, &c) == 0)
			do {
				Dwarf_Attribute a;
				Dwarf_Sword sv;

				if (dwarf_tag(&c) == DW_TAG_enumerator &&
				    dwarf_attr(&c, DW_AT_const_value, &a) &&
				    dwarf_whatform(&a) == DW_FORM_sdata &&
				    dwarf_formsdata(&a, &sv) == 0 && sv < 0)
					d->is_signed = true;
			} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (dwarf_child(p, &c) != 0)
		return 0;
	do
		n += dwarf_tag(&c) == DW_TAG_enumerator;
	while (dwarf_siblingof(&c, &c) == 0);
	if (n == 0)
		return 0;
	v = fxt_sym__arena_alloc(&b->s->arena, n * sizeof(*v), _Alignof(struct fxt_enumerator));
	if (!v || dwarf_child(p, &c) != 0)
		return -ENOMEM;
	do {
		Dwarf_Attribute a;
		const char *name = dwarf_diename(&c);

		if (dwarf_tag(&c) != DW_TAG_enumerator || i == n)
			continue;
		v[i].name = intern(b, name ? name : "?");
		if (!v[i].name)
			return -ENOMEM;
		v[i].value =
		    dwarf_attr(&c, DW_AT_const_value, &a) ? enumerator_value(&a, d->is_signed) : 0;
		i++;
	} while (dwarf_siblingof(&c, &c) == 0);
	d->enums = v;
	d->nenums = i;
	return 0;
}

/* Describes a value of DWARF type `type` (NULL: void). */
static int describe(struct sig_build *b, Dwarf_Die *type, bool param, struct value_info *vi,
		    struct fxt_value_desc *d)
{
	struct tname tn = { .len = 0 };
	Dwarf_Die p;
	bool has = type && dwarf_peel_type(type, &p) == 0;

	tn.buf[0] = '\0';
	if (type)
		tn_type(&tn, type, b->cxx, 0);
	else
		tn_put(&tn, "void");
	value_kind(type, &p, has, b->cxx, vi);
	if (type && !has)
		vi->kind = FXT_VK_UNKNOWN, vi->in_mem = true;
	d->kind = vi->kind;
	d->size = (unsigned)vi->size;
	d->is_signed = vi->is_signed;
	if (vi->by_ref && param) {
		/* What the callee gets: the address of the caller's copy. */
		tn_put(&tn, " &");
		d->kind = FXT_VK_PTR;
		d->size = 8;
	}
	if (d->kind == FXT_VK_VOID)
		d->size = 0;
	d->type = intern(b, tn.buf);
	if (!d->type)
		return -ENOMEM;
	if (d->kind == FXT_VK_ENUM)
		return enum_fill(b, &p, d);
	return 0;
}

/* ----------------------------------------------------- the function DIE */

static bool starts_at(Dwarf_Die *die, Dwarf_Addr a)
{
	Dwarf_Addr lo, base, start, end;

	if (dwarf_lowpc(die, &lo) == 0)
		return lo == a;
	/* Hot and cold parts: the entry is in the first range. */
	return dwarf_ranges(die, 0, &base, &start, &end) > 0 && start == a;
}

/* The subprogram entered at DWARF address a, in `scope` and the
 * namespaces and classes in it. */
static bool find_function(Dwarf_Die *scope, Dwarf_Addr a, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (depth > TYPE_DEPTH_MAX || dwarf_child(scope, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			if (starts_at(&c, a)) {
				*out = c;
				return true;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			if (find_function(&c, a, out, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static bool has_params(Dwarf_Die *fn)
{
	Dwarf_Die c;

	if (dwarf_child(fn, &c) != 0)
		return false;
	do
		if (dwarf_tag(&c) == DW_TAG_formal_parameter ||
		    dwarf_tag(&c) == DW_TAG_unspecified_parameters)
			return true;
	while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The DIE whose children list the parameters: the concrete instance's
 * own, else its abstract origin's, else its declaration's. */
static void params_die(Dwarf_Die *fn, Dwarf_Die *out)
{
	static const unsigned links[] = { DW_AT_abstract_origin, DW_AT_specification };
	Dwarf_Die cur = *fn;
	int hops;

	*out = *fn;
	for (hops = 0; hops < 4 && !has_params(&cur); hops++) {
		Dwarf_Attribute a;
		size_t i;
		bool moved = false;

		for (i = 0; i < sizeof(links) / sizeof(links[0]) && !moved; i++)
			moved = dwarf_attr(&cur, links[i], &a) && dwarf_formref_die(&a, &cur);
		if (!moved)
			return;
	}
	*out = cur;
}

static int build(struct sig_build *b, Dwarf_Die *fn, struct fxt_signature *sig)
{
	Dwarf_Attribute a;
	Dwarf_Die pd, c, rt;
	struct value_info vi;
	struct regs r = { 0, 0 };
	struct fxt_value_desc *params = NULL;
	const char *name = NULL;
	size_t n = 0, i = 0;
	int err;

	memset(sig, 0, sizeof(*sig));
	/* The name: the linkage name demangled, else DW_AT_name. */
	name = dwarf_formstring(dwarf_attr_integrate(fn, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(fn, DW_AT_MIPS_linkage_name, &a));
	if (name) {
		const char *dm = fxt_sym__demangle(&b->s->demangler, name);

		if (dm)
			name = dm;
	} else {
		name = die_name(fn);
	}
	sig->function = intern(b, name ? name : "?");
	if (!sig->function)
		return -ENOMEM;

	/* The return value first: through memory, it takes rdi. */
	err = describe(b, die_type(fn, &rt) ? &rt : NULL, false, &vi, &sig->ret);
	if (err < 0)
		return err;
	sig->ret.name = NULL;
	sig->ret_in_memory = !place_ret(&vi, &sig->ret);
	if (!sig->ret.two_regs) {
		sig->ret.loc2 = sig->ret.loc;
		sig->ret.reg2 = sig->ret.reg;
	}
	if (sig->ret_in_memory)
		r.gpr = 1;

	params_die(fn, &pd);
	if (dwarf_child(&pd, &c) == 0) {
		do
			n += dwarf_tag(&c) == DW_TAG_formal_parameter;
		while (dwarf_siblingof(&c, &c) == 0);
	}
	if (n) {
		params = fxt_sym__arena_alloc(&b->s->arena, n * sizeof(*params),
					      _Alignof(struct fxt_value_desc));
		if (!params)
			return -ENOMEM;
		memset(params, 0, n * sizeof(*params));
	}
	if (dwarf_child(&pd, &c) == 0) {
		do {
			struct fxt_value_desc *d = &params[i];
			Dwarf_Die pt;
			const char *pn;
			char argn[32];

			if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
				sig->variadic = true;
			if (dwarf_tag(&c) != DW_TAG_formal_parameter || i == n)
				continue;
			err = describe(b, die_type(&c, &pt) ? &pt : NULL, true, &vi, d);
			if (err < 0)
				return err;
			pn = die_name(&c);
			if (!pn && die_flag(&c, DW_AT_artificial))
				pn = "this";
			if (!pn) {
				snprintf(argn, sizeof(argn), "arg%zu", i + 1);
				pn = argn;
			}
			d->name = intern(b, pn);
			if (!d->name)
				return -ENOMEM;
			place_param(&vi, &r, d);
			if (!d->two_regs) {
				d->loc2 = d->loc;
				d->reg2 = d->reg;
			}
			i++;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	/* gcc's concrete instances may leave `...` to the abstract one. */
	if (!sig->variadic) {
		Dwarf_Die o = *fn;
		int hops;

		for (hops = 0; hops < 4 && !sig->variadic; hops++) {
			if (dwarf_child(&o, &c) == 0)
				do
					sig->variadic |=
					    dwarf_tag(&c) == DW_TAG_unspecified_parameters;
				while (dwarf_siblingof(&c, &c) == 0);
			if (!((dwarf_attr(&o, DW_AT_abstract_origin, &a) ||
			       dwarf_attr(&o, DW_AT_specification, &a)) &&
			      dwarf_formref_die(&a, &o)))
				break;
		}
	}
	sig->params = params;
	sig->nparams = i;
	return 0;
}

/* ---------------------------------------------------------- the cache */

static size_t sig_slot_find(const struct fxt_sym *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nsigs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->sigs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int sig_cache_put(struct fxt_sym *s, size_t pos, uint64_t addr,
			 const struct fxt_signature *sig)
{
	if (s->nsigs == s->capsigs) {
		size_t ncap = s->capsigs ? s->capsigs * 2 : 16;
		struct sym_sig *nv = realloc(s->sigs, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->sigs = nv;
		s->capsigs = ncap;
	}
	memmove(&s->sigs[pos + 1], &s->sigs[pos], (s->nsigs - pos) * sizeof(*s->sigs));
	s->sigs[pos].addr = addr;
	s->sigs[pos].sig = sig;
	s->nsigs++;
	return 0;
}

/* Compiler clones ("f.isra.0", "f.constprop.0", "f.part.0") share their
 * original's DWARF but not its parameters. */
static bool is_clone(struct sym_module *m, uint64_t addr)
{
	const struct sym_entry *e;

	if (!m->indexed && fxt_sym__module_index(m) < 0)
		return false;
	e = fxt_sym__module_symbol(m, addr);
	return e && e->addr == addr &&
	       (strstr(e->name, ".isra.") || strstr(e->name, ".constprop.") ||
		strstr(e->name, ".part.") || strstr(e->name, ".cold"));
}

static int signature_of(struct fxt_sym *s, struct sym_module *m, uint64_t addr,
			const struct fxt_signature **out)
{
	struct sig_build b = { .s = s };
	struct fxt_signature *sig;
	Dwarf_Die cu, fn;
	Dwarf_Addr bias;
	int err = fxt_sym__module_cu(m, addr, &cu, &bias);

	if (err < 0)
		return err;
	if (!find_function(&cu, addr - bias, &fn, 0) || is_clone(m, addr))
		return -ENOENT;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		b.cxx = true;
		break;
	default:
		break;
	}
	sig = fxt_sym__arena_alloc(&s->arena, sizeof(*sig), _Alignof(struct fxt_signature));
	if (!sig)
		return -ENOMEM;
	err = build(&b, &fn, sig);
	if (err < 0)
		return err;
	*out = sig;
	return 0;
}

int fxt_sym_signature(struct fxt_sym *s, uint64_t addr, const struct fxt_signature **out)
{
	const struct fxt_signature *sig = NULL;
	struct sym_module *m;
	size_t pos;
	int err;

	*out = NULL;
	if (!s)
		return -EINVAL;
	pos = sig_slot_find(s, addr);
	if (pos < s->nsigs && s->sigs[pos].addr == addr) {
		*out = s->sigs[pos].sig;
		return *out ? 0 : -ENOENT;
	}
	m = fxt_sym__module_find(s, addr);
	if (!m || !m->dwmod)
		return -ENOENT; /* not cached: a module may be added later */
	err = signature_of(s, m, addr, &sig);
	if (err == -ENOMEM)
		return err;
	/* The module's DWARF does not change: its answer is kept, "no" too. */
	if (sig_cache_put(s, pos, addr, sig) < 0)
		return -ENOMEM;
	*out = sig;
	return sig ? 0 : -ENOENT;
}

/* ------------------------------------------------------------ showing */

static void show_text(char *buf, size_t cap, struct fxt_shown *out, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void show_text(char *buf, size_t cap, struct fxt_shown *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	out->type = FXT_SHOWN_STR;
	out->str = buf;
	out->len = 0;
	if (!cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	out->len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* An unsigned 128-bit number in decimal. */
static void u128_text(unsigned __int128 v, char *dst, size_t cap)
{
	char tmp[48];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	if (cap == 0)
		return;
	{
		size_t i, k = n < cap - 1 ? n : cap - 1;

		for (i = 0; i < k; i++)
			dst[i] = tmp[n - 1 - i];
		dst[k] = '\0';
	}
}

static uint64_t cut(uint64_t v, unsigned size, bool is_signed)
{
	unsigned bits = size * 8;

	if (size == 0 || size >= 8)
		return v;
	v &= (1ull << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

void fxt_sig_show(const struct fxt_value_desc *d, uint64_t lo, uint64_t hi, char *buf, size_t cap,
		  struct fxt_shown *out)
{
	memset(out, 0, sizeof(*out));
	switch (d->kind) {
	case FXT_VK_INT:
	case FXT_VK_UINT: {
		bool sgn = d->kind == FXT_VK_INT;

		if (d->size == 16) {
			unsigned __int128 v = ((unsigned __int128)hi << 64) | lo;
			bool neg = sgn && (int64_t)hi < 0;

			/* The 64-bit type when it holds the value. */
			if (sgn && hi == ((int64_t)lo < 0 ? ~0ull : 0)) {
				out->type = FXT_SHOWN_I64;
				out->v.i64 = (int64_t)lo;
				return;
			}
			if (!sgn && hi == 0) {
				out->type = FXT_SHOWN_U64;
				out->v.u64 = lo;
				return;
			}
			if (neg)
				v = -v;
			show_text(buf, cap, out, "%s", neg ? "-" : "");
			if (cap > out->len)
				u128_text(v, buf + out->len, cap - out->len);
			out->len = cap ? strlen(buf) : 0;
			return;
		}
		if (sgn) {
			out->type = FXT_SHOWN_I64;
			out->v.i64 = (int64_t)cut(lo, d->size, true);
		} else {
			out->type = FXT_SHOWN_U64;
			out->v.u64 = cut(lo, d->size, false);
		}
		return;
	}
	case FXT_VK_BOOL:
		out->type = FXT_SHOWN_BOOL;
		out->v.b = (lo & 0xff) != 0;
		return;
	case FXT_VK_CHAR: {
		unsigned ch = (unsigned)(lo & 0xff);

		if (ch == '\'' || ch == '\\')
			show_text(buf, cap, out, "'\\%c'", (char)ch);
		else if (ch >= 0x20 && ch < 0x7f)
			show_text(buf, cap, out, "'%c'", (char)ch);
		else
			show_text(buf, cap, out, "'\\x%02x'", ch);
		return;
	}
	case FXT_VK_ENUM: {
		uint64_t v = cut(lo, d->size, d->is_signed);
		size_t i;

		for (i = 0; i < d->nenums; i++)
			if ((uint64_t)d->enums[i].value == v) {
				show_text(buf, cap, out, "%s", d->enums[i].name);
				return;
			}
		if (d->is_signed)
			show_text(buf, cap, out, "%" PRId64, (int64_t)v);
		else
			show_text(buf, cap, out, "%" PRIu64, v);
		return;
	}
	case FXT_VK_PTR:
	case FXT_VK_STR: /* the agent reads a string's bytes: this is its address */
		out->type = FXT_SHOWN_PTR;
		out->v.ptr = lo;
		return;
	case FXT_VK_FLOAT: {
		uint32_t bits = (uint32_t)lo;
		float f;

		memcpy(&f, &bits, sizeof(f));
		out->type = FXT_SHOWN_DOUBLE;
		out->v.d = f;
		return;
	}
	case FXT_VK_DOUBLE:
		out->type = FXT_SHOWN_DOUBLE;
		memcpy(&out->v.d, &lo, sizeof(out->v.d));
		return;
	case FXT_VK_STRUCT:
		show_text(buf, cap, out, "{...} (%u bytes)", d->size);
		return;
	case FXT_VK_VOID:
		show_text(buf, cap, out, "(void)");
		return;
	case FXT_VK_UNKNOWN:
	default:
		show_text(buf, cap, out, "(%s)", d->type ? d->type : "?");
		return;
	}
}
