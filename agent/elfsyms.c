/* The function symbols of an ELF file (see elfsyms.h). */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "agent/elfsyms.h"
#include "agent/log.h"
#include "common/crc32.h"
#include "common/debugpath.h"
#include "common/hooksym.h"

/* A mapped file and its section headers, checked. */
struct elf {
	const unsigned char *base;
	uint64_t size;
	const Elf64_Shdr *sh;
	unsigned nsh;
};

/* Section i's bytes, or NULL when they lie outside the file. */
static const void *section(const struct elf *e, unsigned i, uint64_t *size)
{
	const Elf64_Shdr *s;

	if (i >= e->nsh)
		return NULL;
	s = &e->sh[i];
	if (s->sh_type == SHT_NOBITS || s->sh_offset > e->size ||
	    s->sh_size > e->size - s->sh_offset)
		return NULL;
	*size = s->sh_size;
	return e->base + s->sh_offset;
}

/* A symbol table and its strings. */
struct symtab {
	const Elf64_Sym *sym;
	uint64_t n;
	const char *str;
	uint64_t strsize;
};

static bool symtab_of(const struct elf *e, unsigned i, struct symtab *t)
{
	uint64_t size, strsize;
	const void *p = section(e, i, &size), *s;

	if (!p || e->sh[i].sh_entsize != sizeof(Elf64_Sym) || (uintptr_t)p % 8)
		return false;
	s = section(e, e->sh[i].sh_link, &strsize);
	if (!s)
		return false;
	t->sym = p;
	t->n = size / sizeof(Elf64_Sym);
	t->str = s;
	t->strsize = strsize;
	return true;
}

/* Symbol k's name, or NULL when it does not end inside the strings. */
static const char *name_of(const struct symtab *t, uint64_t k)
{
	uint64_t off = t->sym[k].st_name;

	if (off >= t->strsize || !memchr(t->str + off, '\0', t->strsize - off))
		return NULL;
	return t->str + off;
}

/* Whether the table has the hook as an undefined symbol: the module
 * calls it (the C library defines one of its own, which does nothing; so
 * does the agent). */
static bool refers_to_hook(const struct symtab *t)
{
	for (uint64_t k = 0; k < t->n; k++) {
		const char *name;

		if (t->sym[k].st_shndx != SHN_UNDEF)
			continue;
		name = name_of(t, k);
		if (fxt__hook_symbol(name))
			return true;
	}
	return false;
}

/* Maps the ELF64 file at path into *e, its section headers checked;
 * *st gets its stat.  0 or -errno (-ENOEXEC: not ELF64 little-endian). */
static int elf_map(const char *path, struct elf *e, struct stat *st)
{
	const Elf64_Ehdr *eh;
	void *map;
	int fd;

	memset(e, 0, sizeof(*e));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) ||
	    (uint64_t)st->st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	e->base = map;
	e->size = (uint64_t)st->st_size;
	eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff % 8 || eh->e_shoff > e->size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->size - eh->e_shoff) {
		munmap(map, e->size);
		e->base = NULL;
		return -ENOEXEC;
	}
	e->sh = (const Elf64_Shdr *)(e->base + eh->e_shoff);
	e->nsh = eh->e_shnum;
	return 0;
}

static void elf_unmap(struct elf *e)
{
	if (e->base)
		munmap((void *)e->base, e->size);
	e->base = NULL;
}

/* The file's first symbol table of `type` (SHT_SYMTAB, SHT_DYNSYM). */
static bool symtab_typed(const struct elf *e, uint32_t type, struct symtab *t)
{
	for (unsigned i = 0; i < e->nsh; i++)
		if (e->sh[i].sh_type == type)
			return symtab_of(e, i, t);
	return false;
}

/* The bytes of the section called `name`, or NULL. */
static const unsigned char *section_named(const struct elf *e, const char *name, uint64_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->base;
	uint64_t strsize, len = strlen(name);
	const char *str = section(e, eh->e_shstrndx, &strsize);

	for (unsigned i = 0; str && i < e->nsh; i++) {
		uint64_t off = e->sh[i].sh_name;
		if (off < strsize && strsize - off > len && memcmp(str + off, name, len + 1) == 0)
			return section(e, i, size);
	}
	return NULL;
}

/* The file's build ID (its NT_GNU_BUILD_ID note), *len bytes, or NULL. */
static const unsigned char *build_id_of(const struct elf *e, size_t *len)
{
	for (unsigned i = 0; i < e->nsh; i++) {
		uint64_t size, off = 0;
		const unsigned char *p;

		if (e->sh[i].sh_type != SHT_NOTE || !(p = section(e, i, &size)))
			continue;
		while (size - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p + off, sizeof(nh));
			uint64_t name = off + sizeof(nh),
				 desc = name + ((nh.n_namesz + 3ull) & ~3ull),
				 next = desc + ((nh.n_descsz + 3ull) & ~3ull);
			if (next > size)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(p + name, "GNU", 4) == 0 && nh.n_descsz) {
				*len = nh.n_descsz;
				return p + desc;
			}
			off = next;
		}
	}
	return NULL;
}

/* The file's .gnu_debuglink: the debug file's name, *crc its CRC-32. */
static const char *debuglink_of(const struct elf *e, uint32_t *crc)
{
	uint64_t size, len;
	const unsigned char *p = section_named(e, ".gnu_debuglink", &size);

	if (!p || !(len = strnlen((const char *)p, size)) || len == size)
		return NULL;
	len = (len + 4) & ~3ull; /* the name, its NUL, padded to 4 */
	if (len + 4 > size)
		return NULL;
	memcpy(crc, p + len, 4);
	return (const char *)p;
}

/* Maps the separate debug file of the module at `path` (mapped in e, its
 * stat st) into *d, with its symbol table in *t: the first of its places
 * (common/debugpath.h) that passes the checks; its path into `found`. */
static bool debug_file(const char *path, const struct stat *st, const struct elf *e, struct elf *d,
		       struct symtab *t, char *found, size_t size)
{
	char real[PATH_MAX];
	uint32_t crc = 0;
	struct fxt_debug_key key = { .root = agent_cfg.debug_root, .file = path };
	size_t idlen = 0;

	key.build_id = build_id_of(e, &idlen);
	key.build_id_len = idlen;
	key.link = debuglink_of(e, &crc);
	if (realpath(path, real))
		key.real = real;
	for (unsigned k = 0; k < FXT_DEBUG_CANDIDATES; k++) {
		enum fxt_debug_via via = fxt_debug_candidate(&key, k, found, size);
		const unsigned char *id;
		struct stat dst;
		size_t len = 0;

		if (via == FXT_DEBUG_SKIP || elf_map(found, d, &dst) < 0)
			continue;
		if (dst.st_dev == st->st_dev && dst.st_ino == st->st_ino)
			; /* the module itself */
		else if (via == FXT_DEBUG_BUILD_ID &&
			 (!(id = build_id_of(d, &len)) || len != idlen ||
			  memcmp(id, key.build_id, len) != 0))
			agent_dbg("%s: %s has another build ID", path, found);
		else if (via == FXT_DEBUG_LINK && crc && fxt__crc32(0, d->base, d->size) != crc)
			agent_dbg("%s: %s is not the file its .gnu_debuglink names (CRC)", path,
				  found);
		else if (symtab_typed(d, SHT_SYMTAB, t))
			return true;
		elf_unmap(d);
	}
	return false;
}

/* The sorted addresses of a table's functions (mapped: no malloc), to
 * leave out those of another. */
struct addrs {
	uint64_t *v;
	size_t n, bytes;
};

static bool is_function(const Elf64_Sym *s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_value;
}

static void addrs_of(const struct symtab *t, struct addrs *a)
{
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	for (uint64_t k = 0; k < t->n; k++)
		n += is_function(&t->sym[k]);
	if (!n)
		return;
	a->bytes = n * sizeof(uint64_t);
	a->v = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->v == MAP_FAILED) {
		a->v = NULL;
		return;
	}
	for (uint64_t k = 0; k < t->n; k++)
		if (is_function(&t->sym[k]))
			a->v[a->n++] = t->sym[k].st_value;
	/* Shell sort (gaps n/2, n/4 ...): no allocation, n a few thousand. */
	for (size_t gap = a->n / 2; gap; gap /= 2)
		for (size_t i = gap; i < a->n; i++)
			for (size_t j = i; j >= gap && a->v[j - gap] > a->v[j]; j -= gap) {
				uint64_t x = a->v[j];
				a->v[j] = a->v[j - gap];
				a->v[j - gap] = x;
			}
}

static bool addrs_has(const struct addrs *a, uint64_t v)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->n && a->v[lo] == v;
}

/* Passes the functions of table t to fn or sfn (but those at an address
 * of `skip`), its other symbols to other: the number of functions. */
static long emit(const struct symtab *t, const struct addrs *skip, agent_elf_fn *fn,
		 agent_elf_sized_fn *sfn, agent_elf_other_fn *other, void *ctx)
{
	const char *file = NULL; /* the STT_FILE the local symbols are under */
	long count = 0;

	for (uint64_t k = 0; k < t->n; k++) {
		const Elf64_Sym *s = &t->sym[k];
		unsigned type = ELF64_ST_TYPE(s->st_info);
		const char *name;

		if (type == STT_FILE) {
			file = name_of(t, k);
			continue;
		}
		if (ELF64_ST_BIND(s->st_info) != STB_LOCAL)
			file = NULL;
		if (!is_function(s)) {
			if (other && type != STT_SECTION && (name = name_of(t, k)) && name[0])
				other(ctx, name);
			continue;
		}
		name = name_of(t, k);
		if (!name || !name[0] || (skip && addrs_has(skip, s->st_value)))
			continue;
		if (sfn)
			sfn(ctx, name, s->st_value, s->st_size, file);
		else
			fn(ctx, name, s->st_value);
		count++;
	}
	return count;
}

long agent_elf_functions(const char *path, agent_elf_fn *fn, void *ctx, bool *instrumented)
{
	struct symtab sym = { 0 }, dyn = { 0 };
	bool have_sym, have_dyn;
	struct elf e;
	struct stat st;
	long count = 0;
	int err;

	*instrumented = false;
	if ((err = elf_map(path, &e, &st)) < 0)
		return err;
	have_sym = symtab_typed(&e, SHT_SYMTAB, &sym);
	have_dyn = symtab_typed(&e, SHT_DYNSYM, &dyn);
	/* The hook is undefined in an instrumented module: its dynamic
	 * symbols say so (or, stripped of those, its symbol table). */
	*instrumented = (have_dyn && refers_to_hook(&dyn)) || (have_sym && refers_to_hook(&sym));
	if (fn && *instrumented && (have_sym || have_dyn))
		count = emit(have_sym ? &sym : &dyn, NULL, fn, NULL, NULL, ctx);
	elf_unmap(&e);
	return count;
}

long agent_elf_all_functions(const char *path, agent_elf_sized_fn *fn, agent_elf_other_fn *other,
			     void *ctx, struct agent_elf_from *from)
{
	struct symtab sym = { 0 }, dyn = { 0 }, dbg = { 0 };
	struct elf e, d = { 0 };
	struct addrs exported = { 0 };
	char found[PATH_MAX];
	bool have_dyn;
	struct stat st;
	long count;
	int err;

	if ((err = elf_map(path, &e, &st)) < 0)
		return err;
	if (from)
		*from = (struct agent_elf_from){ .table = AGENT_ELF_SYMTAB };
	if (symtab_typed(&e, SHT_SYMTAB, &sym)) {
		count = emit(&sym, NULL, NULL, fn, other, ctx);
		elf_unmap(&e);
		return count;
	}
	/* Stripped: its exports, under the names the loader knows them by,
	 * then the functions only its debug file names. */
	have_dyn = symtab_typed(&e, SHT_DYNSYM, &dyn);
	count = have_dyn ? emit(&dyn, NULL, NULL, fn, other, ctx) : 0;
	if (debug_file(path, &st, &e, &d, &dbg, found, sizeof(found))) {
		if (have_dyn)
			addrs_of(&dyn, &exported);
		count += emit(&dbg, &exported, NULL, fn, other, ctx);
		if (exported.v)
			munmap(exported.v, exported.bytes);
		elf_unmap(&d);
		if (from) {
			from->table = AGENT_ELF_DEBUG_FILE;
			snprintf(from->debug, sizeof(from->debug), "%s", found);
		}
		agent_dbg("%s: the symbols of %s", path, found);
	} else if (from)
		from->table = AGENT_ELF_EXPORTS;
	elf_unmap(&e);
	return count;
}

/* ------------------------------------------------ loaded modules */

/* A dynamic entry's address: the loader relocates most of them in place,
 * but not a read-only dynamic section's (the vDSO's). */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return (const void *)(v < info->dlpi_addr ? v + info->dlpi_addr : v);
}

/* Whether one of n relocations (each `ent` bytes, the symbol index in the
 * high half of r_info, as for Elf64_Rel and Elf64_Rela) names FXT_HOOK_SYMBOL. */
static bool relocs_name_hook(const unsigned char *rel, uint64_t size, uint64_t ent,
			     const Elf64_Sym *sym, const char *str, uint64_t strsize)
{
	if (!rel || !sym || !str || ent < sizeof(Elf64_Rel))
		return false;
	for (uint64_t off = 0; off + ent <= size; off += ent) {
		const Elf64_Rel *r = (const Elf64_Rel *)(rel + off);
		uint64_t name = sym[ELF64_R_SYM(r->r_info)].st_name;

		if (ELF64_R_SYM(r->r_info) && name < strsize && strcmp(str + name, FXT_HOOK_SYMBOL) == 0)
			return true;
	}
	return false;
}

static int module_instrumented(struct dl_phdr_info *info, size_t size, void *self)
{
	const ElfW(Dyn) *dyn = NULL;
	const unsigned char *jmprel = NULL, *rela = NULL, *rel = NULL;
	uint64_t pltsz = 0, relasz = 0, relsz = 0, relaent = sizeof(Elf64_Rela),
		 relent = sizeof(Elf64_Rel), strsize = 0, pltrel = DT_RELA;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_offset == 0 &&
		    info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == (uintptr_t)self)
			return 0; /* the agent */
	}
	if (!dyn)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			sym = dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			str = dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsize = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = dyn->d_un.d_val;
			break;
		case DT_RELAENT:
			relaent = dyn->d_un.d_val;
			break;
		case DT_REL:
			rel = dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_RELSZ:
			relsz = dyn->d_un.d_val;
			break;
		case DT_RELENT:
			relent = dyn->d_un.d_val;
			break;
		}
	}
	/* Calls go through the PLT; with -fno-plt or -z now they may be
	 * GLOB_DAT relocations among the others. */
	return relocs_name_hook(jmprel, pltsz, pltrel == DT_REL ? relent : relaent, sym, str,
				strsize) ||
	       relocs_name_hook(rela, relasz, relaent, sym, str, strsize) ||
	       relocs_name_hook(rel, relsz, relent, sym, str, strsize);
}

bool agent_elf_loaded_instrumented(void)
{
	Dl_info self;

	if (!dladdr((void *)agent_elf_loaded_instrumented, &self))
		self.dli_fbase = NULL;
	return dl_iterate_phdr(module_instrumented, self.dli_fbase) != 0;
}
