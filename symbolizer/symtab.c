/* The symbol index of a module: its function symbols sorted by address.
 *
 * dwfl_module_addrinfo scans the whole symbol table on every call: for libc
 * (10^4 symbols) about a thousand lookups a second, and at exit a traced
 * C++ program may have 10^4 unique addresses in modules with 10^5 symbols.
 * So each module's table is read once, on its first lookup, through the
 * same dwfl_module_getsym_info (which has found .symtab in the file or its
 * separate debuginfo, else .dynsym), sorted, and binary-searched.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/internal.h"

/* The section of a symbol, if it holds code: its end as an offset from
 * the symbol (what a label without a size may cover), else 0. */
static uint64_t code_left(Elf *elf, GElf_Word shndx, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) ||
	    sym->st_value < shdr.sh_addr || sym->st_value >= shdr.sh_addr + shdr.sh_size)
		return 0;
	return shdr.sh_addr + shdr.sh_size - sym->st_value;
}

/* How far a name is from the one a programmer wrote: glibc's internal
 * aliases carry a "__GI_" prefix or a ".localalias" suffix, and public
 * names have fewer leading underscores than their implementations'. */
static unsigned name_penalty(const char *name)
{
	size_t len = fxt_sym__name_len(name);
	unsigned p = 0;

	if (memchr(name, '.', len))
		p += 1000;
	if (strncmp(name, "__GI_", 5) == 0)
		p += 100;
	while (*name++ == '_')
		p++;
	return p;
}

static int sym_entry_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	unsigned px, py;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	px = name_penalty(x->name);
	py = name_penalty(y->name);
	if (px != py)
		return px < py ? -1 : 1;
	lx = fxt_sym__name_len(x->name);
	ly = fxt_sym__name_len(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name); /* a stable choice among the rest */
}

/* Among aliases at one address: a sized symbol before a label, then
 * global, weak, local (as dwfl_module_addrinfo prefers them), then by
 * name_penalty, then the shorter name. */
static unsigned sym_rank(const GElf_Sym *sym)
{
	unsigned bind = GELF_ST_BIND(sym->st_info);
	unsigned r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;

	return (sym->st_size == 0 ? 4 : 0) + r;
}

/* Symbol i of the module's table when the index keeps it (functions, and
 * code labels without a type): its name, with *sym, its address *addr and
 * for a label or an untyped symbol, how much of its section is left from
 * it (*left); else NULL. */
static inline __attribute__((always_inline)) const char *
index_sym(struct sym_module *m, size_t i, GElf_Sym *sym, GElf_Addr *addr, uint64_t *left)
{
	GElf_Word shndx;
	Elf *elf = NULL;
	Dwarf_Addr bias;
	const char *name =
	    dwfl_module_getsym_info(m->dwmod, (int)i, sym, addr, &shndx, &elf, &bias);
	unsigned type;

	*left = 0;
	if (!name || !*name || shndx == SHN_UNDEF)
		return NULL;
	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return NULL;
	if (sym->st_size == 0 || type == STT_NOTYPE) {
		*left = code_left(elf, shndx, sym);
		if (!*left)
			return NULL; /* data labels, absolute symbols ... */
	}
	return name;
}

/* Sorts v[0 .. n) by 11 bits at a time of their distance from the least,
 * through tmp (n long): the table lists symbols in no order (hash order
 * for globals), and qsort() of 10,000 took as long as reading them. */
static void addrs_sort(uint64_t *v, uint64_t *tmp, size_t n)
{
	uint64_t lo = UINT64_MAX, span = 0;
	size_t count[1u << 11];

	for (size_t i = 0; i < n; i++)
		lo = v[i] < lo ? v[i] : lo;
	for (size_t i = 0; i < n; i++)
		span |= v[i] - lo;
	for (unsigned shift = 0; shift < 64 && span >> shift; shift += 11) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[((v[i] - lo) >> shift) & 0x7ff]++;
		for (size_t d = 0; d < 1u << 11; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[((v[i] - lo) >> shift) & 0x7ff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
}

int fxt_sym__module_addrs(struct sym_module *m, uint64_t **out, size_t *nout)
{
	int count = dwfl_module_getsymtab(m->dwmod);
	bool sorted = true;
	uint64_t *v;
	size_t n = 0, k;

	*out = NULL;
	*nout = 0;
	if (count <= 1)
		return 0;
	v = malloc((size_t)count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < (size_t)count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		uint64_t left;

		if (!index_sym(m, i, &sym, &addr, &left))
			continue;
		sorted = sorted && (n == 0 || v[n - 1] <= addr);
		v[n++] = addr;
	}
	if (!sorted) {
		uint64_t *tmp = malloc(n * sizeof(*tmp));

		if (tmp)
			addrs_sort(v, tmp, n);
		else
			qsort(v, n, sizeof(*v), fxt_sym__u64_cmp);
		free(tmp);
	}
	for (size_t i = k = 0; i < n; i++)
		if (k == 0 || v[i] != v[k - 1])
			v[k++] = v[i];
	*out = v;
	*nout = k;
	return 0;
}

/* Builds m->syms from the module's symbol table (.symtab when the file or
 * its debuginfo has one, else .dynsym): functions, and code labels without
 * a type (hand-written assembly). */
int fxt_sym__module_index(struct sym_module *m)
{
	struct sym_entry *v;
	size_t n = 0, k, i;
	int count;

	count = dwfl_module_getsymtab(m->dwmod);
	if (count <= 1) {
		m->indexed = true; /* no symbols: names will be module+0xOFFSET */
		return 0;
	}
	v = malloc((size_t)count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 1; i < (size_t)count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		uint64_t left;
		const char *name = index_sym(m, i, &sym, &addr, &left);

		if (!name)
			continue;
		v[n].addr = addr;
		v[n].label = sym.st_size == 0;
		v[n].end = addr + (v[n].label ? left : sym.st_size);
		v[n].name = name;
		v[n].rank = sym_rank(&sym);
		n++;
	}
	if (n == 0) {
		free(v);
		m->indexed = true;
		return 0;
	}
	qsort(v, n, sizeof(*v), sym_entry_cmp);
	/* Keep the best symbol at each address. */
	for (i = 1, k = 1; i < n; i++)
		if (v[i].addr != v[k - 1].addr)
			v[k++] = v[i];
	m->maxend = malloc(k * sizeof(*m->maxend));
	if (!m->maxend) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < k; i++) {
		uint64_t end = v[i].label ? 0 : v[i].end;

		m->maxend[i] = i && m->maxend[i - 1] > end ? m->maxend[i - 1] : end;
	}
	m->syms = v;
	m->nsyms = k;
	m->indexed = true;
	return 0;
}

/* The symbol covering addr: the closest sized symbol containing it, else
 * a label before it in its section that no sized symbol covers (as
 * dwfl_module_addrinfo chooses). */
const struct sym_entry *fxt_sym__module_symbol(const struct sym_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsyms, i, j;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	i = lo - 1;
	for (j = i + 1; j-- > 0 && m->maxend[j] > addr;)
		if (!m->syms[j].label && m->syms[j].end > addr)
			return &m->syms[j];
	if (m->syms[i].label && addr < m->syms[i].end &&
	    (i == 0 || m->maxend[i - 1] <= m->syms[i].addr))
		return &m->syms[i];
	return NULL;
}
