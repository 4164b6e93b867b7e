/* Where the x86-64 System V calling convention puts a value of a DWARF
 * type, and what kind of value it is (signature.h's fxt_vkind).
 *
 * Each eightbyte of a value is classed INTEGER, SSE (SSEUP: the upper half
 * of the same XMM register), X87 or MEMORY from the fields it holds; a
 * value whose eightbytes do not all find a register of their class goes to
 * memory whole, and takes none.  C++ classes that are not trivially
 * copyable (DW_AT_calling_convention DW_CC_pass_by_reference; gcc 12 does
 * not say it, so a user-provided copy or move constructor or destructor, a
 * virtual function or base, or such a base or member tell) travel by an
 * invisible reference.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#include "symbolizer/internal.h"
#include "symbolizer/signature.h"

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
		return fxt_sym__die_type(type, &t) && dwarf_peel_type(&t, &q) == 0 &&
			       dwarf_tag(&q) == DW_TAG_subroutine_type
			   ? 16
			   : 8;
	default:
		return 0;
	}
}

/* A 16-byte float: long double (_Float64x, __float80) is x87, _Float128
 * (__float128) SSE; DWARF tells them apart by name only. */
static bool is_x87_float(Dwarf_Die *base)
{
	const char *name = dwarf_diename(base);

	return !name || strstr(name, "long double") || strstr(name, "_Float64x") ||
	       strstr(name, "__float80");
}

static bool class_nontrivial(Dwarf_Die *cls, int depth);

/* A member's or base's type that makes its class not trivially
 * copyable. */
static bool member_nontrivial(Dwarf_Die *m, int depth)
{
	Dwarf_Die t, p;

	if (!fxt_sym__die_type(m, &t) || dwarf_peel_type(&t, &p) != 0)
		return false;
	while (dwarf_tag(&p) == DW_TAG_array_type) {
		if (!fxt_sym__die_type(&p, &t) || dwarf_peel_type(&t, &p) != 0)
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
	if (depth > SIG_DEPTH_MAX)
		return false;
	switch (fxt_sym__die_udata(cls, DW_AT_calling_convention, 0)) {
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
			if (fxt_sym__die_udata(&c, DW_AT_virtuality, 0) != DW_VIRTUALITY_none)
				return true;
			if (member_nontrivial(&c, depth))
				return true;
			break;
		case DW_TAG_member:
			if (!dwarf_hasattr(&c, DW_AT_declaration) &&
			    !fxt_sym__die_flag(&c, DW_AT_external) && member_nontrivial(&c, depth))
				return true;
			break;
		case DW_TAG_subprogram: {
			const char *n = dwarf_diename(&c);
			Dwarf_Die p, pt, pp;
			int nargs = 0;
			bool self_ref = false;

			if (fxt_sym__die_udata(&c, DW_AT_virtuality, 0) != DW_VIRTUALITY_none)
				return true;
			if (!n || fxt_sym__die_flag(&c, DW_AT_artificial) ||
			    fxt_sym__die_udata(&c, DW_AT_defaulted, DW_DEFAULTED_no) ==
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
				    fxt_sym__die_flag(&p, DW_AT_artificial))
					continue;
				nargs++;
				self_ref = fxt_sym__die_type(&p, &pt) &&
					   (dwarf_tag(&pt) == DW_TAG_reference_type ||
					    dwarf_tag(&pt) == DW_TAG_rvalue_reference_type) &&
					   fxt_sym__die_type(&pt, &pp) &&
					   dwarf_peel_type(&pp, &pp) == 0 &&
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

	if (depth > SIG_DEPTH_MAX)
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
				    !fxt_sym__die_type(&c, &t) || dwarf_peel_type(&t, &q) != 0)
					continue;
				ma = type_align(&q, depth + 1);
				if (ma > a)
					a = ma;
			} while (dwarf_siblingof(&c, &c) == 0);
		return a;
	case DW_TAG_array_type:
		if (fxt_sym__die_type(p, &t) && dwarf_peel_type(&t, &q) == 0)
			return type_align(&q, depth + 1);
		return 1;
	default:
		sz = die_size(p);
		if (dwarf_tag(p) == DW_TAG_base_type &&
		    fxt_sym__die_udata(p, DW_AT_encoding, 0) == DW_ATE_complex_float)
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

	if (depth > SIG_DEPTH_MAX)
		return false;
	switch (dwarf_tag(p)) {
	case DW_TAG_base_type:
		switch (fxt_sym__die_udata(p, DW_AT_encoding, 0)) {
		case DW_ATE_float:
		case DW_ATE_decimal_float:
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
	case DW_TAG_unspecified_type:
		cls[e] = cl_merge(cls[e], CL_INTEGER);
		return true;
	case DW_TAG_ptr_to_member_type:
		cls[e] = cl_merge(cls[e], CL_INTEGER);
		if (fxt_sym__die_type(p, &t) && dwarf_peel_type(&t, &q) == 0 &&
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
		if (!fxt_sym__die_type(p, &t) || dwarf_peel_type(&t, &q) != 0)
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
			if (dwarf_hasattr(&c, DW_AT_declaration) ||
			    fxt_sym__die_flag(&c, DW_AT_external))
				continue; /* a static member */
			if (!fxt_sym__die_type(&c, &t) || dwarf_peel_type(&t, &q) != 0)
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
				uint64_t bits = fxt_sym__die_udata(&c, DW_AT_bit_size, 0);
				bool dbo = dwarf_hasattr(&c, DW_AT_data_bit_offset);
				uint64_t first =
				    dbo ? fxt_sym__die_udata(&c, DW_AT_data_bit_offset, 0)
					: moff * 8;
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
	enc = fxt_sym__die_udata(&p, DW_AT_encoding, 0);
	name = dwarf_diename(&p);
	if (enc == DW_ATE_UTF || (name && strcmp(name, "char") == 0))
		return true;
	if (enc != DW_ATE_signed_char && enc != DW_ATE_unsigned_char)
		return false;
	for (i = 0; i < SIG_DEPTH_MAX && dwarf_tag(&cur) != DW_TAG_base_type; i++) {
		typedef_seen |= dwarf_tag(&cur) == DW_TAG_typedef;
		if (!fxt_sym__die_type(&cur, &cur))
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
		switch (fxt_sym__die_udata(p, DW_AT_encoding, 0)) {
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
		if (fxt_sym__die_type(p, &t) && is_char(&t))
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
		if (fxt_sym__die_type(p, &t) && dwarf_peel_type(&t, &q) == 0 &&
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
	case DW_TAG_unspecified_type: /* decltype(nullptr): no size said */
		vi->kind = FXT_VK_PTR;
		vi->size = 8;
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
static void place_param(const struct value_info *vi, struct sig_regs *r, struct fxt_value_desc *d)
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

void fxt_sym__sig_place(Dwarf_Die *type, bool cxx, struct sig_regs *r, struct fxt_value_desc *d,
			bool *by_ref, bool *ret_in_memory)
{
	struct value_info vi;
	Dwarf_Die p;
	bool has = type && dwarf_peel_type(type, &p) == 0;

	value_kind(type, &p, has, cxx, &vi);
	if (type && !has) {
		vi.kind = FXT_VK_UNKNOWN;
		vi.in_mem = true;
	}
	d->kind = vi.kind;
	d->size = vi.kind == FXT_VK_VOID ? 0 : (unsigned)vi.size;
	d->is_signed = vi.is_signed;
	d->two_regs = false;
	*by_ref = vi.by_ref;
	*ret_in_memory = false;
	if (r) {
		if (vi.by_ref) {
			/* What the callee gets: the address of the caller's copy. */
			d->kind = FXT_VK_PTR;
			d->size = 8;
		}
		place_param(&vi, r, d);
	} else {
		*ret_in_memory = !place_ret(&vi, d);
	}
	if (!d->two_regs) {
		d->loc2 = d->loc;
		d->reg2 = d->reg;
	}
}
