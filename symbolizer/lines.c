/* file:line of an address (FXT_SYM_LINES), and the compilation unit of an
 * address (for signature.c).
 *
 * dwfl_module_getsrc finds the compilation unit through .debug_aranges,
 * which clang does not emit by default and which libdw 0.188 does not
 * rebuild from the units.  So when it finds nothing, the module's units are
 * indexed once by their address ranges (DW_AT_low_pc/high_pc or
 * DW_AT_ranges), and the unit's line table is asked directly.
 */
#include "config.h"

#include <errno.h>
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
		   uint64_t hi)
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
	m->ncus++;
	return 0;
}

/* Collects every unit's ranges, as DWARF addresses (without the bias). */
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
			if (lo < hi && cu_push(m, &cap, cu, lo, hi) < 0)
				return -ENOMEM;
	}
	if (m->ncus)
		qsort(m->cus, m->ncus, sizeof(*m->cus), cu_range_cmp);
	return 0;
}

/* The unit whose ranges hold the DWARF address `a`.  Ranges of distinct
 * units do not overlap, but one unit may have many. */
static Dwarf_Die *cu_find(struct sym_module *m, uint64_t a)
{
	size_t lo = 0, hi = m->ncus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cus[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= m->cus[lo - 1].hi)
		return NULL;
	return &m->cus[lo - 1].die;
}

/* The unit of runtime address addr, by the index (not .debug_aranges). */
static int module_cu_indexed(struct sym_module *m, uint64_t addr, Dwarf_Die **cu, Dwarf_Addr *bias)
{
	if (!dwfl_module_getdwarf(m->dwmod, bias))
		return -ENOENT; /* no DWARF at all */
	if (!m->cus_built && cu_index(m) < 0)
		return -ENOMEM;
	*cu = cu_find(m, addr - *bias);
	return *cu ? 0 : -ENOENT;
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
