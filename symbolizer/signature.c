/* Function signatures from DWARF (signature.h): the function at an
 * address, its name, its parameters' and return value's names and types
 * as C (or C++) writes them, and a cache per address.  Where each value
 * goes is sigabi.c's; how a captured value shows, sigshow.c's.
 *
 * The function is the DW_TAG_subprogram of the address's unit whose entry
 * (low_pc, or the first of its ranges) is the address: a concrete
 * out-of-line instance.  What it says through DW_AT_abstract_origin (gcc
 * -O2's copies of functions also inlined) or DW_AT_specification (C++
 * methods declared in their class) counts as its own.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/internal.h"
#include "symbolizer/signature.h"

/* Deeper type nesting than this is not followed (cycles, pathological
 * types). */

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

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static void tn_type(struct tname *t, Dwarf_Die *type, bool cxx, int depth);

/* "RET (*)(ARGS)" around `inner` ("*", "C::*", ""). */
static void tn_function(struct tname *t, Dwarf_Die *fn, const char *inner, bool cxx, int depth)
{
	Dwarf_Die ret, c;
	bool first = true;

	if (fxt_sym__die_type(fn, &ret))
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
			    fxt_sym__die_flag(&c, DW_AT_artificial))
				continue; /* a member function type's this */
			if (!first)
				tn_put(t, ", ");
			first = false;
			if (tag == DW_TAG_unspecified_parameters)
				tn_put(t, "...");
			else if (fxt_sym__die_type(&c, &pt))
				tn_type(t, &pt, cxx, depth + 1);
		} while (dwarf_siblingof(&c, &c) == 0);
	if (first && !cxx && dwarf_hasattr(fn, DW_AT_prototyped))
		tn_put(t, "void");
	tn_put(t, ")");
}

/* C++: the namespaces and classes around a named type ("std::", "ns::Cls::").
 * libdw knows no DIE's parent: dwarf_getscopes_die walks the unit. */
static void tn_scope(struct tname *t, Dwarf_Die *type)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(type, &scopes), i;

	/* scopes[0] is the type, scopes[n - 1] its unit. */
	for (i = n - 2; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name = dwarf_diename(&scopes[i]);

		if (tag != DW_TAG_namespace && tag != DW_TAG_structure_type &&
		    tag != DW_TAG_class_type && tag != DW_TAG_union_type)
			continue; /* a type local to a function: its name alone */
		tn_put(t, name ? name : "(anonymous namespace)");
		tn_put(t, "::");
	}
	free(scopes);
}

/* The text of `type` as a C (or C++) programmer writes it. */
static void tn_type(struct tname *t, Dwarf_Die *type, bool cxx, int depth)
{
	const char *name = dwarf_diename(type), *tag_word = NULL, *qual = NULL;
	Dwarf_Die inner;
	bool has_inner = fxt_sym__die_type(type, &inner);
	int tag = dwarf_tag(type);

	if (depth > SIG_DEPTH_MAX) {
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
			tn_scope(t, type);
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
		if (cxx && tag == DW_TAG_typedef)
			tn_scope(t, type);
		tn_put(t, name ? name : "?");
		return;
	}
}

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

	if (fxt_sym__die_type(p, &ut) && dwarf_peel_type(&ut, &uq) == 0) {
		Dwarf_Word enc = fxt_sym__die_udata(&uq, DW_AT_encoding, 0);

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
	if (!v)
		return -ENOMEM;
	if (dwarf_child(p, &c) != 0)
		return 0;
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

/* Describes a value of DWARF type `type` (NULL: void): a parameter taking
 * registers from r, or (r NULL) the return value.  *ret_in_memory: the
 * return value goes to memory the caller passes. */
static int describe(struct sig_build *b, Dwarf_Die *type, struct sig_regs *r,
		    struct fxt_value_desc *d, bool *ret_in_memory)
{
	struct tname tn = { .len = 0 };
	bool by_ref;
	Dwarf_Die p;

	tn.buf[0] = '\0';
	if (type)
		tn_type(&tn, type, b->cxx, 0);
	else
		tn_put(&tn, "void");
	fxt_sym__sig_place(type, b->cxx, r, d, &by_ref, ret_in_memory);
	if (by_ref && r)
		tn_put(&tn, " &");
	d->type = intern(b, tn.buf);
	if (!d->type)
		return -ENOMEM;
	if (d->kind == FXT_VK_ENUM && dwarf_peel_type(type, &p) == 0)
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

	if (depth > SIG_DEPTH_MAX || dwarf_child(scope, &c) != 0)
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
	struct sig_regs r = { 0, 0 };
	bool unused;
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
	err = describe(b, fxt_sym__die_type(fn, &rt) ? &rt : NULL, NULL, &sig->ret,
		       &sig->ret_in_memory);
	if (err < 0)
		return err;
	sig->ret.name = NULL;
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
			err = describe(b, fxt_sym__die_type(&c, &pt) ? &pt : NULL, &r, d, &unused);
			if (err < 0)
				return err;
			pn = die_name(&c);
			if (!pn && fxt_sym__die_flag(&c, DW_AT_artificial))
				pn = "this";
			if (!pn) {
				snprintf(argn, sizeof(argn), "arg%zu", i + 1);
				pn = argn;
			}
			d->name = intern(b, pn);
			if (!d->name)
				return -ENOMEM;
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
