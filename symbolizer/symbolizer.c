/* Symbolizer: code addresses -> function names, with elfutils libdwfl.
 *
 * Modules are kept twice: in a Dwfl (which opens the ELF files and finds
 * separate debuginfo) and in our own table sorted by address, which holds
 * what libdwfl does not give us: overlap checks before anything is reported
 * (libdwfl has no way to take a module back), a name and load bias for
 * modules whose file is gone, and a symbol index (symtab.c).
 *
 * Results (struct fxt_sym_info) and their strings live in an arena freed at
 * fxt_sym_free; names are interned, so that the many return addresses inside
 * one function share one string.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hooksym.h"
#include "symbolizer/internal.h"

/* ------------------------------------------------------------- the modules */

/* Read-only callbacks: every module is reported with an open ELF, so
 * find_elf is only a formality; debuginfo comes from the debug root's
 * .build-id tree and .gnu_debuglink, never from debuginfod (debuginfo.c).
 * debuginfo_path, the debug root, is where libdwfl looks for a dwz "alt"
 * file by its build ID. */
static char *debuginfo_path;
static pthread_once_t debuginfo_path_once = PTHREAD_ONCE_INIT;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = fxt_sym__find_elf,
	.find_debuginfo = fxt_sym__find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The index of the first module whose start is > addr. */
static size_t module_upper_bound(const struct fxt_sym *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct sym_module *fxt_sym__module_find(struct fxt_sym *s, uint64_t addr)
{
	size_t i = module_upper_bound(s, addr);

	if (i == 0 || addr >= s->mods[i - 1].end)
		return NULL;
	return &s->mods[i - 1];
}

static bool same_module(const struct sym_module *a, const struct sym_module *b)
{
	if (a->start != b->start || a->end != b->end)
		return false;
	if (a->dev || a->ino)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->path, b->path) == 0;
}

/* Checks `m` against the table: 1 if the very same module is there already,
 * -EEXIST if it overlaps another one, else 0 with *pos its sorted index. */
static int module_slot(const struct fxt_sym *s, const struct sym_module *m, size_t *pos)
{
	size_t i = module_upper_bound(s, m->start);

	if (i > 0 && same_module(&s->mods[i - 1], m))
		return 1;
	if (i > 0 && s->mods[i - 1].end > m->start)
		return -EEXIST;
	if (i < s->nmods && s->mods[i].start < m->end)
		return -EEXIST;
	*pos = i;
	return 0;
}

static int module_insert(struct fxt_sym *s, const struct sym_module *m, size_t pos)
{
	if (s->nmods == s->capmods) {
		size_t ncap = s->capmods ? s->capmods * 2 : 32;
		struct sym_module *nm = realloc(s->mods, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		s->mods = nm;
		s->capmods = ncap;
	}
	memmove(&s->mods[pos + 1], &s->mods[pos], (s->nmods - pos) * sizeof(*m));
	s->mods[pos] = *m;
	s->nmods++;
	if (s->cache.len)
		fxt_sym__cache_drop_range(&s->cache, m->start, m->end);
	return 0;
}

int fxt_sym__elf_open(struct elf_file *ef, const char *path)
{
	GElf_Ehdr ehdr;

	ef->elf = NULL;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	if (fstat(ef->fd, &ef->st) < 0 || !S_ISREG(ef->st.st_mode))
		goto fail_not_elf;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &ehdr))
		goto fail_not_elf;
	ef->type = ehdr.e_type;
	if (ef->type != ET_EXEC && ef->type != ET_DYN)
		goto fail_not_elf;
	return 0;

fail_not_elf:
	elf_end(ef->elf);
	ef->elf = NULL;
	close(ef->fd);
	ef->fd = -1;
	return -ENOEXEC;
}

void fxt_sym__elf_close(struct elf_file *ef)
{
	elf_end(ef->elf);
	ef->elf = NULL;
	if (ef->fd >= 0)
		close(ef->fd);
	ef->fd = -1;
}

/* The addresses the PT_LOAD segments cover once loaded at `bias`: from the
 * page-aligned start of the first to the end of the last, as libdwfl
 * computes them. */
int fxt_sym__elf_load_range(Elf *elf, uint64_t bias, uint64_t *start, uint64_t *end)
{
	size_t phnum, i;
	bool found = false;
	uint64_t lo = 0, hi = 0;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t align;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		align = ph.p_align > 1 ? ph.p_align : 1;
		if (!found)
			lo = ph.p_vaddr & ~(align - 1);
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
		found = true;
	}
	if (!found || hi <= lo)
		return -ENOEXEC;
	*start = bias + lo;
	*end = bias + hi;
	return 0;
}

/* Reports one opened ELF file loaded at `bias` to libdwfl and the table.
 * Consumes ef (the fd goes to libdwfl on success). */
int fxt_sym__report_elf(struct fxt_sym *s, const char *path, struct elf_file *ef, uint64_t bias)
{
	struct sym_module m = { 0 };
	size_t pos = 0;
	int err;

	if (ef->type == ET_EXEC)
		bias = 0; /* fixed addresses: a load bias is meaningless */
	err = fxt_sym__elf_load_range(ef->elf, bias, &m.start, &m.end);
	if (err < 0)
		goto out_close;
	m.bias = bias;
	m.dev = ef->st.st_dev;
	m.ino = ef->st.st_ino;
	m.st = ef->st;
	m.path = path;
	err = module_slot(s, &m, &pos);
	if (err != 0) {
		err = err > 0 ? 0 : err; /* already known: nothing to do */
		goto out_close;
	}
	m.path = fxt_sym__arena_strdup(&s->arena, path);
	if (!m.path) {
		err = -ENOMEM;
		goto out_close;
	}
	m.base = path_basename(m.path);

	/* libdwfl reads the headers again through its own Elf handle. */
	elf_end(ef->elf);
	ef->elf = NULL;
	dwfl_report_begin_add(s->dwfl);
	m.dwmod = dwfl_report_elf(s->dwfl, m.path, m.path, ef->fd, bias, true);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (m.dwmod)
		ef->fd = -1; /* the module owns it now */
	/* Without a Dwfl module the file still names its addresses. */
	err = module_insert(s, &m, pos);
out_close:
	fxt_sym__elf_close(ef);
	return err;
}

/* Records addresses [start, end) as a module without a readable ELF file:
 * lookups there give "base+0xOFFSET". */
int fxt_sym__report_bare(struct fxt_sym *s, const char *path, uint64_t start, uint64_t end,
			 uint64_t bias)
{
	struct sym_module m = { 0 };
	size_t pos = 0;
	int err;

	if (start >= end)
		return -EINVAL;
	m.start = start;
	m.end = end;
	m.bias = bias;
	m.path = path;
	err = module_slot(s, &m, &pos);
	if (err != 0)
		return err > 0 ? 0 : err;
	m.path = fxt_sym__arena_strdup(&s->arena, path);
	if (!m.path)
		return -ENOMEM;
	m.base = path_basename(m.path);
	return module_insert(s, &m, pos);
}

int fxt_sym_add_module(struct fxt_sym *s, const char *path, uint64_t bias)
{
	struct elf_file ef;
	int err;

	if (!s || !path || !*path)
		return -EINVAL;
	err = fxt_sym__elf_open(&ef, path);
	if (err < 0)
		return err;
	return fxt_sym__report_elf(s, path, &ef, bias);
}

/* ------------------------------------------------------ modules: this process */

struct self_module {
	char *name; /* malloc'd; "" for the main program */
	uint64_t bias, start, end;
};

struct self_list {
	struct self_module *v;
	size_t n, cap;
	int err;
};

/* The module's name (malloc'd), made absolute when the loader gives it
 * relative (dlopen("./libplug.so"), a relative LD_LIBRARY_PATH): the
 * kernel names the file of the first mapping, whatever the working
 * directory is now; realpath() is the fallback.  The vDSO keeps its name. */
static char *self_name(const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char link[80], buf[PATH_MAX];
	char *real;
	ssize_t n;
	int i;

	if (!name[0] || name[0] == '/')
		return strdup(name);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_filesz;

		if (ph->p_type != PT_LOAD)
			continue;
		snprintf(link, sizeof(link), "/proc/self/map_files/%" PRIx64 "-%" PRIx64,
			 start & ~(page - 1), (end + page - 1) & ~(page - 1));
		n = readlink(link, buf, sizeof(buf) - 1);
		if (n > 0 && (size_t)n < sizeof(buf) - 1 && buf[0] == '/') {
			buf[n] = '\0';
			return strdup(buf);
		}
		break;
	}
	real = strchr(name, '/') ? realpath(name, NULL) : NULL;
	return real ? real : strdup(name);
}

/* Only copies: reporting opens files and allocates, better not done while
 * the dynamic loader's lock is held. */
static int self_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_list *l = arg;
	struct self_module *m;
	uint64_t lo = UINT64_MAX, hi = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0; /* nothing mapped */
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 32;
		struct self_module *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			goto fail_nomem;
		l->v = nv;
		l->cap = ncap;
	}
	m = &l->v[l->n];
	m->name = self_name(info);
	if (!m->name)
		goto fail_nomem;
	m->bias = info->dlpi_addr;
	m->start = info->dlpi_addr + lo;
	m->end = info->dlpi_addr + hi;
	l->n++;
	return 0;

fail_nomem:
	l->err = -ENOMEM;
	return 1; /* stops the iteration */
}

/* The main program's file: dl_iterate_phdr names it "". */
static int self_exe_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0 || (size_t)n >= size - 1)
		return -ENOENT;
	buf[n] = '\0';
	return 0;
}

int fxt_sym_add_self(struct fxt_sym *s)
{
	struct self_list l = { 0 };
	char exe[PATH_MAX];
	size_t i;
	int err = 0;

	if (!s)
		return -EINVAL;
	dl_iterate_phdr(self_collect, &l);
	err = l.err;
	for (i = 0; i < l.n && err == 0; i++) {
		const struct self_module *m = &l.v[i];
		const char *path = m->name;
		struct elf_file ef;
		int r;

		if (!*path)
			path = self_exe_path(exe, sizeof(exe)) == 0 ? exe : "[exe]";
		/* The vDSO ("linux-vdso.so.1") and files deleted since they were
		 * loaded have no file to read. */
		r = path[0] == '/' ? fxt_sym__elf_open(&ef, path) : -ENOENT;
		if (r == 0)
			r = fxt_sym__report_elf(s, path, &ef, m->bias);
		else
			r = fxt_sym__report_bare(s, path, m->start, m->end, m->bias);
		/* A module that overlaps one reported before (a library
		 * dlclose'd and replaced at its address) keeps the first. */
		if (r == -ENOMEM)
			err = r;
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	return err;
}

/* ------------------------------------------------------------------ lookups */

const char fxt_sym_loc_later[] = "(later)";

/* info's location said FXT_SYM_LOC_LATER, noted for
 * fxt_sym__resolve_later(). */
static int later_add(struct fxt_sym *s, uint64_t addr, struct fxt_sym_info *info,
		     struct sym_module *m, bool is_start)
{
	if (s->nlater == s->caplater) {
		size_t ncap = s->caplater ? 2 * s->caplater : 1024;
		struct sym_later *nv = realloc(s->later, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->later = nv;
		s->caplater = ncap;
	}
	s->later[s->nlater++] = (struct sym_later){ addr, info, m, is_start };
	info->loc = FXT_SYM_LOC_LATER;
	return 0;
}

static struct fxt_sym_info *symbolize(struct fxt_sym *s, uint64_t addr)
{
	struct fxt_sym_info *info =
	    fxt_sym__arena_alloc(&s->arena, sizeof(*info), _Alignof(struct fxt_sym_info));
	struct sym_module *m = fxt_sym__module_find(s, addr);
	const struct sym_entry *e = NULL;
	char buf[NAME_MAX + 32];
	const char *name;
	size_t len = 0;

	if (!info)
		return NULL;
	info->module = "";
	info->file = NULL;
	info->line = 0;
	info->start = addr;
	info->loc = NULL;
	info->loc_file = info->loc_line = 0;
	if (m && m->dwmod && !m->indexed && fxt_sym__module_index(m) < 0)
		return NULL;
	if (m && m->syms)
		e = fxt_sym__module_symbol(m, addr);

	if (e) {
		const char *demangled;

		info->start = e->addr;
		/* Without its version ("@GLIBC_2.2.5"): the demangler would
		 * refuse it, and it is not part of the function's name. */
		name = e->name;
		len = fxt_sym__name_len(name);
		if (name[len] != '\0') {
			if (len >= s->scratch_size) {
				char *p = realloc(s->scratch, len + 1);

				if (!p)
					return NULL;
				s->scratch = p;
				s->scratch_size = len + 1;
			}
			memcpy(s->scratch, name, len);
			s->scratch[len] = '\0';
			name = s->scratch;
		}
		demangled = fxt_sym__demangle(&s->demangler, name);
		if (demangled) {
			name = demangled;
			len = strlen(name);
		}
	} else if (m) {
		/* The offset is an ELF virtual address: what nm shows and
		 * addr2line -e takes. */
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->base, addr - m->bias);
		name = buf;
	} else {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		name = buf;
	}
	if (!e)
		len = strlen(name);
	info->name = fxt_sym__intern(&s->names, &s->arena, name, len);
	if (!info->name)
		return NULL;
	if (m)
		info->module = m->base;

	if ((s->flags & FXT_SYM_LINES) && m && m->dwmod) {
		const char *src = NULL;
		int lineno = 0, err = fxt_sym__module_line(m, addr, &src, &lineno);

		if (err == -ENOMEM)
			return NULL;
		if (err == 0) {
			info->file = fxt_sym__intern(&s->names, &s->arena, src, strlen(src));
			if (!info->file)
				return NULL;
			info->line = lineno > 0 ? (unsigned)lineno : 0;
		}
	}
	if ((s->flags & FXT_SYM_FUNC_LOC) && m) {
		/* In the arena, not interned: one a function, nearly all
		 * distinct. */
		int err;

		if (__builtin_expect(s->loc_busy != NULL, 0) && m->dwmod) {
			if (s->loc_busy(s->loc_busy_arg))
				return later_add(s, addr, info, m, e != NULL) < 0 ? NULL : info;
			s->loc_busy = NULL;
		}
		err = m->dwmod
			  ? fxt_sym__module_func_loc(m, info->start, e != NULL,
						     s->loc_arena ? s->loc_arena : &s->arena, info)
			  : -ENOENT;
		if (err == -ENOMEM)
			return NULL;
		if (err < 0) {
			info->loc = FXT_SYM_NO_DEBUG_INFO;
			info->loc_file = 0;
		}
	}
	return info;
}

const struct fxt_sym_info *fxt_sym_lookup(struct fxt_sym *s, uint64_t addr)
{
	static const struct fxt_sym_info nomem = { "?", "", NULL, 0, 0 };
	struct fxt_sym_info *info;

	if (!s)
		return &nomem;
	info = fxt_sym__cache_get(&s->cache, addr);
	if (info)
		return info;
	info = symbolize(s, addr);
	if (!info || fxt_sym__cache_put(&s->cache, addr, info) < 0)
		return &nomem;
	return info;
}

int fxt_sym_find(struct fxt_sym *s, const char *module, const char *name, uint64_t *addr)
{
	size_t want = strlen(name), i;

	for (i = 0; i < s->nmods; i++) {
		struct sym_module *m = &s->mods[i];
		int n, k;

		if (!m->dwmod || strcmp(m->base, module) != 0)
			continue;
		n = dwfl_module_getsymtab(m->dwmod);
		for (k = 1; k < n; k++) {
			GElf_Sym sym;
			GElf_Addr a;
			GElf_Word shndx;
			const char *sn =
			    dwfl_module_getsym_info(m->dwmod, k, &sym, &a, &shndx, NULL, NULL);
			unsigned type = GELF_ST_TYPE(sym.st_info);

			if (sn && shndx != SHN_UNDEF && type == STT_FUNC &&
			    fxt_sym__name_len(sn) == want && memcmp(sn, name, want) == 0) {
				*addr = a;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int fxt_sym_functions(struct fxt_sym *s, fxt_sym_function_fn *fn, void *ctx)
{
	char *name = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < s->nmods && !rc; i++) {
		struct sym_module *m = &s->mods[i];
		int n;

		if (!m->dwmod)
			continue;
		n = dwfl_module_getsymtab(m->dwmod);
		for (int k = 1; k < n && !rc; k++) {
			GElf_Sym sym;
			GElf_Addr a;
			GElf_Word shndx;
			const char *sn =
			    dwfl_module_getsym_info(m->dwmod, k, &sym, &a, &shndx, NULL, NULL);
			size_t len;

			if (!sn || !*sn || shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			len = fxt_sym__name_len(sn);
			if (len + 1 > cap) {
				char *p = realloc(name, len + 64);
				if (!p) {
					rc = -ENOMEM;
					break;
				}
				name = p;
				cap = len + 64;
			}
			memcpy(name, sn, len);
			name[len] = '\0';
			const char *dm = fxt_sym__demangle(&s->demangler, name);
			rc = fn(ctx, m->path, name, dm ? dm : name, a);
		}
	}
	free(name);
	return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- lifetime */

static void set_debuginfo_path(void)
{
	debuginfo_path = (char *)fxt_sym__debug_root();
}

struct fxt_sym *fxt_sym_new(unsigned flags)
{
	struct fxt_sym *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* libdwfl does this too; our own libelf calls must not depend on it. */
	(void)elf_version(EV_CURRENT);
	s->flags = flags;
	/* Set once: fxt-run's early thread and its conversion each make a
	 * symbolizer, and the environment does not change meanwhile. */
	pthread_once(&debuginfo_path_once, set_debuginfo_path);
	s->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!s->dwfl) {
		free(s);
		return NULL;
	}
	return s;
}

void fxt_sym__set_loc_arena(struct fxt_sym *s, struct arena *a)
{
	s->loc_arena = a;
}

void fxt_sym__set_loc_busy(struct fxt_sym *s, bool (*busy)(void *), void *arg)
{
	s->loc_busy = busy;
	s->loc_busy_arg = arg;
}

bool fxt_sym__later_pending(const struct fxt_sym *s)
{
	return s && s->nlater != 0;
}

int fxt_sym__resolve_later(struct fxt_sym *s,
			   void (*done)(void *, uint64_t, const struct fxt_sym_info *), void *arg)
{
	int rc = 0;

	for (size_t i = 0; i < s->nlater; i++) {
		struct sym_later *l = &s->later[i];
		int err =
		    rc ? -ENOMEM
		       : fxt_sym__module_func_loc(l->m, l->info->start, l->is_start,
						  s->loc_arena ? s->loc_arena : &s->arena, l->info);

		if (err == -ENOMEM)
			rc = err;
		if (err < 0) {
			l->info->loc = FXT_SYM_NO_DEBUG_INFO;
			l->info->loc_file = 0;
		}
		if (done)
			done(arg, l->addr, l->info);
	}
	free(s->later);
	s->later = NULL;
	s->nlater = s->caplater = 0;
	return rc;
}

/* Whether the file's symbol tables have __cyg_profile_func_enter
 * undefined: it calls the -finstrument-functions hooks. */
int fxt_sym__refers_to_hooks(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (fxt__hook_symbol(name))
				return 1;
		}
	}
	return 0;
}

int fxt_sym_elf_layout(const char *path, struct fxt_sym_layout *out)
{
	struct elf_file ef;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t phnum, i;
	int err;

	elf_version(EV_CURRENT); /* libelf refuses to work before it */
	err = fxt_sym__elf_open(&ef, path);
	if (err < 0)
		return err;
	out->fixed = ef.type == ET_EXEC;
	out->bits = gelf_getclass(ef.elf) == ELFCLASS64 ? 64 : 32;
	out->machine = gelf_getehdr(ef.elf, &eh) ? eh.e_machine : EM_NONE;
	out->interp = 0;
	if (elf_getphdrnum(ef.elf, &phnum) == 0)
		for (i = 0; i < phnum && !out->interp; i++)
			out->interp = gelf_getphdr(ef.elf, (int)i, &ph) && ph.p_type == PT_INTERP;
	out->instrumented = fxt_sym__refers_to_hooks(ef.elf);
	err = fxt_sym__elf_load_range(ef.elf, 0, &out->lo, &out->hi);
	fxt_sym__elf_close(&ef);
	return err;
}

void fxt_sym__free_counted(struct fxt_sym *s, uint64_t *loc_hits, uint64_t *loc_made)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++) {
		free(s->mods[i].syms);
		free(s->mods[i].maxend);
		free(s->mods[i].cus);
		for (size_t k = 0; k < s->mods[i].nunits; k++) {
			fxt_sym__linetab_free(s->mods[i].units[k].lines);
			free(s->mods[i].units[k].inl);
		}
		free(s->mods[i].units);
		free(s->mods[i].starts);
		free(s->mods[i].addrs);
		fxt_sym__loccache_close(s->mods[i].lc, loc_hits, loc_made);
	}
	free(s->mods);
	free(s->later);
	dwfl_end(s->dwfl);
	free(s->cache.slots);
	free(s->names.slots);
	fxt_sym__arena_free(&s->arena);
	fxt_sym__demangler_fini(&s->demangler);
	free(s->scratch);
	free(s->sigs);
	free(s);
}

void fxt_sym_free(struct fxt_sym *s)
{
	fxt_sym__free_counted(s, NULL, NULL);
}
