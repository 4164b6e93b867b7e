/* file:line of an address (FXT_SYM_LINES), where a function is
 * (FXT_SYM_FUNC_LOC), and the compilation unit of an address (for
 * signature.c).
 *
 * dwfl_module_getsrc finds the compilation unit through .debug_aranges,
 * which clang does not emit by default and which libdw 0.188 does not
 * rebuild from the units.  So when it finds nothing, the module's units are
 * indexed once by their address ranges (DW_AT_low_pc/high_pc or
 * DW_AT_ranges), and the unit's line table is asked directly.
 *
 * fxt_sym_loccache_fill() decodes every function's location of a module
 * ahead of its conversion (fxt-run's early thread, while the program
 * runs) into the files kept across runs (loccache.c), the same way a
 * lookup does.
 */
#include "config.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "symbolizer/internal.h"

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

static int cu_push(struct sym_module *m, size_t *cap, const Dwarf_Die *die, uint64_t lo,
		   uint64_t hi, size_t unit)
{
	if (m->ncus == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct cu_range *nv = realloc(m->cus, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->cus = nv;
		*cap = ncap;
	}
	m->cus[m->ncus].lo = lo;
	m->cus[m->ncus].hi = hi;
	m->cus[m->ncus].die = *die;
	m->cus[m->ncus].unit = unit;
	m->ncus++;
	return 0;
}

/* Collects every unit's ranges, as DWARF addresses (without the bias),
 * and numbers the units (sym_module.units). */
static int cu_index(struct sym_module *m)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0;

	m->cus_built = true;
	while ((cu = dwfl_module_nextcu(m->dwmod, cu, &bias)) != NULL) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
			if (lo < hi && cu_push(m, &cap, cu, lo, hi, m->nunits) < 0)
				return -ENOMEM;
		m->nunits++;
	}
	m->units = calloc(m->nunits ? m->nunits : 1, sizeof(*m->units));
	if (!m->units) {
		m->nunits = 0;
		return -ENOMEM;
	}
	if (m->ncus)
		qsort(m->cus, m->ncus, sizeof(*m->cus), cu_range_cmp);
	return 0;
}

/* The range of the unit whose ranges hold the DWARF address `a`.  Ranges
 * of distinct units do not overlap, but one unit may have many. */
static struct cu_range *cu_find(struct sym_module *m, uint64_t a)
{
	size_t lo = 0, hi = m->ncus;

	/* Functions come in address order: the last answer's range, when
	 * it is the last one starting at or below a (the search's). */
	if (m->cu_hint < m->ncus && m->cus[m->cu_hint].lo <= a && a < m->cus[m->cu_hint].hi &&
	    (m->cu_hint + 1 == m->ncus || m->cus[m->cu_hint + 1].lo > a))
		return &m->cus[m->cu_hint];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cus[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= m->cus[lo - 1].hi)
		return NULL;
	m->cu_hint = lo - 1;
	return &m->cus[lo - 1];
}

/* The unit of runtime address addr, by the index (not .debug_aranges). */
static int module_cu_indexed(struct sym_module *m, uint64_t addr, Dwarf_Die **cu, Dwarf_Addr *bias)
{
	struct cu_range *r;

	if (!dwfl_module_getdwarf(m->dwmod, bias))
		return -ENOENT; /* no DWARF at all */
	if (!m->cus_built && cu_index(m) < 0)
		return -ENOMEM;
	r = cu_find(m, addr - *bias);
	*cu = r ? &r->die : NULL;
	return r ? 0 : -ENOENT;
}

int fxt_sym__module_cu(struct sym_module *m, uint64_t addr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(m->dwmod, addr, bias);
	int err = 0;

	if (!d)
		err = module_cu_indexed(m, addr, &d, bias);
	if (err == 0)
		*cu = *d;
	return err;
}

int fxt_sym__module_line(struct sym_module *m, uint64_t addr, const char **file, int *line)
{
	Dwfl_Line *dl = dwfl_module_getsrc(m->dwmod, addr);
	Dwarf_Addr bias;
	Dwarf_Line *l;
	Dwarf_Die *cu = NULL;
	int err;

	*line = 0;
	if (dl) {
		*file = dwfl_lineinfo(dl, NULL, line, NULL, NULL, NULL);
		return *file ? 0 : -ENOENT;
	}
	err = module_cu_indexed(m, addr, &cu, &bias);
	if (err == -ENOMEM)
		return err;
	l = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
	*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!*file)
		return -ENOENT;
	dwarf_lineno(l, line);
	return 0;
}

/* ------------------------------------------------------------ functions */

struct inl_list {
	uint64_t *v;
	size_t n, cap;
};

/* Notes a function with code that is the out-of-line copy of one DWARF
 * says is also inlined: its own DIE refers to its abstract origin
 * (DW_AT_abstract_origin), which holds DW_AT_inline.  0 or -ENOMEM. */
static int inl_note(Dwarf_Die *die, struct inl_list *l)
{
	Dwarf_Attribute at;
	Dwarf_Die origin;
	Dwarf_Word how = 0;
	Dwarf_Addr lo;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &at) || !dwarf_formref_die(&at, &origin) ||
	    !dwarf_attr(&origin, DW_AT_inline, &at) || dwarf_formudata(&at, &how) != 0 ||
	    (how != DW_INL_inlined && how != DW_INL_declared_inlined) || dwarf_lowpc(die, &lo) != 0)
		return 0;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		uint64_t *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = lo;
	return 0;
}

/* The functions among the children of `parent`, and in the namespaces,
 * classes and structures there (C++), not inside function bodies: a
 * walk of every DIE (dwarf_getfuncs()) cost as much as the lines. */
static int inl_walk(Dwarf_Die *parent, struct inl_list *l, unsigned depth)
{
	Dwarf_Die child;
	int rc;

	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			rc = inl_note(&child, l);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			rc = inl_walk(&child, l, depth + 1);
			break;
		default:
			rc = 0;
			break;
		}
		if (rc < 0)
			return rc;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

int fxt_sym__u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether a subprogram of the unit may refer to an abstract origin: its
 * abbreviations say, without a walk of its DIEs (none at -O0, nor where
 * nothing is inlined).  Unreadable ones: it may. */
static bool unit_has_origins(Dwarf_Die *cu)
{
	Dwarf_Abbrev *a;
	Dwarf_Off off = 0;
	size_t len;

	while ((a = dwarf_getabbrev(cu, off, &len)) != NULL && a != (Dwarf_Abbrev *)-1l) {
		unsigned name, form;
		Dwarf_Off aoff;

		if (dwarf_getabbrevtag(a) == DW_TAG_subprogram)
			for (size_t i = 0; dwarf_getabbrevattr(a, i, &name, &form, &aoff) == 0; i++)
				if (name == DW_AT_abstract_origin)
					return true;
		off += len;
	}
	return a == NULL;
}

/* Collects, once per unit at its first function, the functions that are
 * also inlined: their out-of-line copies (the ones a hook or a patch
 * names) get " (inlined)". */
static int inl_index(struct sym_unit *u, Dwarf_Die *cu)
{
	struct inl_list l = { 0 };

	u->inl_built = true;
	if (!unit_has_origins(cu))
		return 0;
	if (inl_walk(cu, &l, 0) < 0) {
		free(l.v);
		return -ENOMEM;
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), fxt_sym__u64_cmp);
	u->inl = l.v;
	u->ninl = l.n;
	return 0;
}

static bool inl_has(const struct sym_unit *u, uint64_t a)
{
	return u->ninl && bsearch(&a, u->inl, u->ninl, sizeof(a), fxt_sym__u64_cmp) != NULL;
}

const char *fxt_sym__relative(const char *dir, const char *file)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n && file[0] == '/' && strncmp(file, dir, n) == 0 && file[n] == '/' && file[n + 1])
		return file + n + 1;
	return file;
}

/* `file` relative to the unit's compilation folder (fxt_sym__relative()). */
static const char *relative(Dwarf_Die *unit, const char *file)
{
	Dwarf_Attribute at;

	return fxt_sym__relative(
	    unit && dwarf_attr(unit, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL, file);
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324"
			      "25262728293031323334353637383940414243444546474849"
			      "50515253545556575859606162636465666768697071727374"
			      "75767778798081828384858687888990919293949596979899";

/* The number of decimal digits of v: from its bits (log10(2) is about
 * 1233 / 4096), less one below the power of ten it comes to; v | 1 has
 * the digits of v, and 0 one. */
static size_t digits_of(unsigned v)
{
	static const unsigned pow10[10] = { 1,	    10,	     100,      1000,	  10000,
					    100000, 1000000, 10000000, 100000000, 1000000000 };
	unsigned t;

	v |= 1;
	t = ((unsigned)(32 - __builtin_clz(v)) * 1233) >> 12;
	return t + (v >= pow10[t]);
}

/* "FILE:LINE[ (inlined)]" (file: n bytes), made in arena `a`: snprintf(),
 * a copy through a buffer and measuring the file again were a measurable
 * part of what a location costs. */
static const char *put_loc(struct arena *a, const char *file, size_t n, unsigned line, bool inlined)
{
	size_t k = digits_of(line), i;
	char *buf, *p;

	buf =
	    fxt_sym__arena_alloc(a, n + 1 + k + (inlined ? sizeof(FXT_SYM_INLINED) - 1 : 0) + 1, 1);
	if (!buf)
		return NULL;
	memcpy(buf, file, n);
	buf[n] = ':';
	i = n + 1 + k;
	for (p = buf + i; line >= 100; line /= 100) { /* two digits a division */
		p -= 2;
		memcpy(p, digits2 + 2 * (line % 100), 2);
	}
	if (line >= 10)
		memcpy(p - 2, digits2 + 2 * line, 2);
	else
		p[-1] = (char)('0' + line);
	if (inlined) {
		memcpy(buf + i, FXT_SYM_INLINED, sizeof(FXT_SYM_INLINED) - 1);
		i += sizeof(FXT_SYM_INLINED) - 1;
	}
	buf[i] = '\0';
	return buf;
}

/* The DWARF addresses of the module's symbols, sorted: what its line
 * tables must answer for (linetab.c leaves the other rows out); from
 * m->addrs when the symbols are not indexed (fxt_sym_loccache_fill()).
 * 0 or -ENOMEM. */
static int module_starts(struct sym_module *m, Dwarf_Addr bias)
{
	size_t n = m->indexed ? m->nsyms : m->naddrs;
	bool sorted = true;

	m->starts = malloc((n ? n : 1) * sizeof(*m->starts));
	if (!m->starts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		m->starts[i] = (m->indexed ? m->syms[i].addr : m->addrs[i]) - bias;
		sorted = sorted && (i == 0 || m->starts[i - 1] <= m->starts[i]);
	}
	m->nstarts = n;
	if (!sorted)
		qsort(m->starts, m->nstarts, sizeof(*m->starts), fxt_sym__u64_cmp);
	return 0;
}

/* The line-table row at the DWARF address `a` of unit range r, by
 * linetab.c when `a` is a symbol's address, or by libdw (when not, or
 * when linetab.c declines the table): 0 with *file (as relative() makes
 * it), its length *n, and *line, -ENOENT, -ENOMEM. */
static int unit_row(struct sym_module *m, Dwarf *dw, Dwarf_Addr bias, struct cu_range *r,
		    uint64_t a, bool is_start, const char **file, size_t *n, unsigned *line)
{
	struct sym_unit *u = &m->units[r->unit];
	Dwarf_Line *l;
	int err, ln = 0;

	if (!m->lsec_built) {
		m->lsec_built = true;
		m->lsec_ok = fxt_sym__linetab_sections(dw, &m->lsec) == 0;
		if (m->lsec_ok && module_starts(m, bias) < 0)
			return -ENOMEM;
	}
	if (!u->tried && m->lsec_ok) {
		/* Declined (-EOPNOTSUPP, or -ENOENT: no table), libdw answers. */
		err = fxt_sym__linetab_build(&m->lsec, &r->die, m->starts, m->nstarts, &u->lines);
		if (err == -ENOMEM)
			return err;
		u->tried = true;
	}
	if (u->lines && is_start)
		return fxt_sym__linetab_find(u->lines, a, file, n, line);
	l = dwarf_getsrc_die(&r->die, a);
	*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!*file)
		return -ENOENT;
	*file = relative(&r->die, *file);
	*n = strlen(*file);
	dwarf_lineno(l, &ln);
	*line = ln > 0 ? (unsigned)ln : 0;
	return 0;
}

/* The location kept across runs for the function at runtime address
 * `start` (loccache.c): 0 with *loc made in `a`, -ENOENT when it has
 * none, 1 when not kept, -ENOMEM. */
static int kept_loc(struct sym_module *m, uint64_t start, struct arena *a, struct fxt_sym_info *out)
{
	size_t n;
	int got;

	if (!m->lc_tried) {
		m->lc_tried = true;
		m->lc = fxt_sym__loccache_open(m->dwmod, &m->st);
	}
	if (!m->lc || (got = fxt_sym__loccache_get(m->lc, start - m->bias, a, &out->loc, &n,
						   &out->loc_file, &out->loc_line)) == 0)
		return 1;
	return got < 0 ? got : n ? 0 : -ENOENT;
}

/* Where m's lines come from, for its kept locations: the separate debug
 * file libdwfl found, or the module itself. */
static void kept_source(struct sym_module *m)
{
	const char *mainfile = NULL, *debugfile = NULL;

	dwfl_module_info(m->dwmod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	fxt_sym__loccache_dwarf(
	    m->lc, debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0) ? debugfile : NULL);
}

/* (Not inlined: a later run's look-up, in the kept file, does not pay
 * its frame.) */
__attribute__((noinline)) static int module_func_loc(struct sym_module *m, uint64_t start,
						     bool is_start, struct arena *a,
						     struct fxt_sym_info *out);

int fxt_sym__module_func_loc(struct sym_module *m, uint64_t start, bool is_start, struct arena *a,
			     struct fxt_sym_info *out)
{
	int err;

	out->loc_file = out->loc_line = 0;
	err = kept_loc(m, start, a, out);
	if (err <= 0)
		return err;
	err = module_func_loc(m, start, is_start, a, out);
	/* Kept when the module has DWARF (m->dw): a debug file installed
	 * later is found then. */
	if (m->lc && m->dw && (err == 0 || err == -ENOENT))
		fxt_sym__loccache_put(m->lc, start - m->bias, err == 0 ? out->loc : NULL,
				      err == 0 ? strlen(out->loc) : 0, out->loc_file,
				      out->loc_line);
	return err;
}

static int module_func_loc(struct sym_module *m, uint64_t start, bool is_start, struct arena *a,
			   struct fxt_sym_info *out)
{
	bool inl;
	Dwarf_Addr bias;
	struct cu_range *r;
	const char *file;
	unsigned line = 0;
	size_t n;
	Dwarf *dw;
	int err;

	/* libdw directly, through the module's unit index: libdwfl's
	 * dwfl_module_getsrc() wraps every line of a unit in a Dwfl_Line
	 * first, which doubled what source lines cost a conversion; and
	 * the unit's table decoded by linetab.c, which libdw's
	 * dwarf_getsrclines() took three times as long as the rest. */
	if (!m->dw_got) {
		m->dw = dwfl_module_getdwarf(m->dwmod, &m->dw_bias);
		m->dw_got = true;
		if (m->dw && m->lc)
			kept_source(m);
	}
	dw = m->dw;
	bias = m->dw_bias;
	if (!dw)
		return -ENOENT; /* no DWARF at all */
	if (!m->cus_built && cu_index(m) < 0)
		return -ENOMEM;
	r = cu_find(m, start - bias);
	if (!r)
		return -ENOENT;
	err = unit_row(m, dw, bias, r, start - bias, is_start, &file, &n, &line);
	if (err < 0)
		return err;
	if (!m->units[r->unit].inl_built && inl_index(&m->units[r->unit], &r->die) < 0)
		return -ENOMEM;
	inl = inl_has(&m->units[r->unit], start - bias);
	out->loc = put_loc(a, file, n, line, inl);
	if (!out->loc)
		return -ENOMEM;
	/* (FILE empty: ":LINE", which the text says as it is.) */
	if (n && n < FXT_SYM_LOC_INL) {
		out->loc_file = (uint32_t)n | (inl ? FXT_SYM_LOC_INL : 0);
		out->loc_line = line;
	}
	return 0;
}

int fxt_sym_loccache_fill(const char *path, const int *stop)
{
	struct fxt_sym *s;
	struct sym_module *m;
	struct fxt_sym_info li;
	Dwarf_Addr bias;
	bool stopped = false;
	size_t made = 0;
	Elf *elf;
	int err;

	if (!fxt_sym__loccache_kept())
		return 0;
	s = fxt_sym_new(FXT_SYM_FUNC_LOC);
	if (!s)
		return -ENOMEM;
	err = fxt_sym_add_module(s, path, 0);
	if (err < 0 || s->nmods != 1 || !s->mods[0].dwmod)
		goto out;
	m = &s->mods[0];
	elf = dwfl_module_getelf(m->dwmod, &bias);
	if (!elf || !fxt_sym__refers_to_hooks(elf))
		goto out; /* no function of it makes a slice of its own */
	m->lc_tried = true;
	m->lc = fxt_sym__loccache_open(m->dwmod, &m->st);
	if (!m->lc || fxt_sym__loccache_served(m->lc))
		goto out; /* not kept (no build ID), or kept already */
	/* The symbols' addresses alone: their names, sorted as the index
	 * sorts them, cost as much as the lines (bench/srcline.sh). */
	if ((err = fxt_sym__module_addrs(m, &m->addrs, &m->naddrs)) < 0)
		goto out;
	/* As symbolize() asks for them: each symbol's address once (its
	 * aliases share it), the locations in the symbolizer's arena until
	 * fxt_sym_free() writes them. */
	for (size_t i = 0; i < m->naddrs; i++) {
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
			stopped = true;
			break;
		}
		err = fxt_sym__module_func_loc(m, m->addrs[i], true, &s->arena, &li);
		if (err == -ENOMEM)
			goto out;
		if (!m->dw)
			break; /* no DWARF: nothing is kept */
		made++;
	}
	err = made > 0 && !stopped;
out:
	fxt_sym_free(s);
	return err;
}
