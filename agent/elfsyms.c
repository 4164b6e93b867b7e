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
#include <unistd.h>

#include "agent/elfsyms.h"

#define HOOK_NAME "__cyg_profile_func_enter"

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
		if (name && name[0] == '_' && strcmp(name, HOOK_NAME) == 0)
			return true;
	}
	return false;
}

static long visit(const char *path, agent_elf_fn *fn, agent_elf_sized_fn *sfn,
		  agent_elf_other_fn *other, void *ctx, bool *instrumented);

long agent_elf_functions(const char *path, agent_elf_fn *fn, void *ctx, bool *instrumented)
{
	return visit(path, fn, NULL, NULL, ctx, instrumented);
}

long agent_elf_all_functions(const char *path, agent_elf_sized_fn *fn, agent_elf_other_fn *other,
			     void *ctx)
{
	bool instrumented;

	return visit(path, NULL, fn, other, ctx, &instrumented);
}

/* With fn: the functions of an instrumented file; with sfn: all of them
 * (and with other, the other symbols). */
static long visit(const char *path, agent_elf_fn *fn, agent_elf_sized_fn *sfn,
		  agent_elf_other_fn *other, void *ctx, bool *instrumented)
{
	struct symtab sym = { 0 }, dyn = { 0 }, *use = NULL;
	bool have_sym = false, have_dyn = false;
	const Elf64_Ehdr *eh;
	struct elf e = { 0 };
	struct stat st;
	long count = 0;
	void *map;
	int fd;

	*instrumented = false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	e.base = map;
	e.size = (uint64_t)st.st_size;
	eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff % 8 || eh->e_shoff > e.size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e.size - eh->e_shoff) {
		munmap(map, e.size);
		return -ENOEXEC;
	}
	e.sh = (const Elf64_Shdr *)(e.base + eh->e_shoff);
	e.nsh = eh->e_shnum;
	for (unsigned i = 0; i < e.nsh; i++) {
		if (e.sh[i].sh_type == SHT_SYMTAB && !have_sym)
			have_sym = symtab_of(&e, i, &sym);
		else if (e.sh[i].sh_type == SHT_DYNSYM && !have_dyn)
			have_dyn = symtab_of(&e, i, &dyn);
	}
	/* The hook is undefined in an instrumented module: its dynamic
	 * symbols say so (or, stripped of those, its symbol table). */
	*instrumented = (have_dyn && refers_to_hook(&dyn)) || (have_sym && refers_to_hook(&sym));
	use = have_sym ? &sym : have_dyn ? &dyn : NULL;
	const char *file = NULL; /* the STT_FILE the local symbols are under */
	for (uint64_t k = 0; ((fn && *instrumented) || sfn) && use && k < use->n; k++) {
		const Elf64_Sym *s = &use->sym[k];
		unsigned type = ELF64_ST_TYPE(s->st_info);
		const char *name;

		if (type == STT_FILE) {
			file = name_of(use, k);
			continue;
		}
		if (ELF64_ST_BIND(s->st_info) != STB_LOCAL)
			file = NULL;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    !s->st_value) {
			if (other && type != STT_SECTION && (name = name_of(use, k)) && name[0])
				other(ctx, name);
			continue;
		}
		name = name_of(use, k);
		if (!name || !name[0])
			continue;
		if (sfn)
			sfn(ctx, name, s->st_value, s->st_size, file);
		else
			fn(ctx, name, s->st_value);
		count++;
	}
	munmap(map, e.size);
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
 * high half of r_info, as for Elf64_Rel and Elf64_Rela) names HOOK_NAME. */
static bool relocs_name_hook(const unsigned char *rel, uint64_t size, uint64_t ent,
			     const Elf64_Sym *sym, const char *str, uint64_t strsize)
{
	if (!rel || !sym || !str || ent < sizeof(Elf64_Rel))
		return false;
	for (uint64_t off = 0; off + ent <= size; off += ent) {
		const Elf64_Rel *r = (const Elf64_Rel *)(rel + off);
		uint64_t name = sym[ELF64_R_SYM(r->r_info)].st_name;

		if (ELF64_R_SYM(r->r_info) && name < strsize && strcmp(str + name, HOOK_NAME) == 0)
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
