/* The per-run symbol cache (see runcache.h).
 *
 * Files: one entry per file identity seen, with its load range from the
 * ELF program headers (read once).  Results: open addressing on (file,
 * address - bias), with names interned in the symbolizer's string set
 * (store.h).  A view's modules are the ones given, in their order, a module
 * overlapping an earlier one left out, as the symbolizer itself does (so
 * both attribute an address to the same module); a result is only kept
 * when the symbolizer named that very module. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "symbolizer/internal.h"
#include "symbolizer/runcache.h"
#include "symbolizer/store.h"

struct sc_file {
	char *path;
	const char *base; /* basename, inside path */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct fxt_sym_layout lay;
	bool ok;	  /* layout known */
	bool ahead_tried; /* its locations decoded ahead by a view (ahead_start()) */
	uint64_t pass;	  /* the cache's pass it was last stat'ed in (0: none) */
};

/* (48 bytes: a slot of the table, 32,768 of them for 10,000 functions,
 * each page of it touched.) */
struct sc_entry {
	uint64_t rel;	   /* address - bias */
	uint32_t file;	   /* index + 1; 0 = free slot */
	uint32_t start_to; /* rel - the function's start's (table_add(): one, within 4 GiB) */
	const char *name;
	const char *module;
	const char *loc;	     /* NULL, or in the arena (FXT_SYM_FUNC_LOC: made there) */
	uint32_t loc_file, loc_line; /* loc's parts (fxt_sym_info's) */
};

struct fxt_symcache {
	struct sc_file *files;
	size_t nfiles, capfiles;
	struct sc_entry *v;
	size_t cap, used;
	struct arena arena; /* interned names */
	struct strset names;
	uint64_t hits, misses;
	uint64_t loc_hits, loc_made; /* of the views' symbolizers closed */
	unsigned sym_flags;	     /* of the views' symbolizers */
	uint64_t pass;		     /* fxt_symcache_new_pass(); 0: a stat each time */
	bool ahead;		     /* fxt_symcache_set_ahead() */
};

struct sv_mod {
	uint64_t start, end, bias;
	uint32_t file; /* index into the cache's files */
};

/* A view's thread that decodes and keeps the locations of its modules
 * built with -finstrument-functions (fxt_sym_loccache_fill()), as
 * fxt-run's early thread does while the program runs, beside the
 * conversion until its first location: a first run of a program that ended
 * before the early thread got to it. */
struct sv_ahead {
	pthread_t thread;
	int stop;
	int done;     /* set by the thread as it ends */
	char **paths; /* the cache's files' (outlive the view) */
	size_t n;
};

struct fxt_symview {
	struct fxt_symcache *c;
	struct sv_ahead *ahead;		     /* NULL: none running */
	const struct fxt_symview_module *in; /* as given */
	size_t nin;
	struct sv_mod *mods; /* sorted by start, disjoint */
	size_t n;
	struct fxt_sym *sym; /* made at the first miss */
	bool sym_failed;
	struct fxt_sym_info out;
};

/* ------------------------------------------------------------ results */

static size_t slot_of(uint32_t file, uint64_t rel, size_t cap)
{
	return (size_t)fxt__hash_pair(file, rel) & (cap - 1);
}

static int table_grow(struct fxt_symcache *c)
{
	size_t ncap = c->cap ? c->cap * 2 : 4096;
	struct sc_entry *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		const struct sc_entry *e = &c->v[i];
		size_t j;

		if (!e->file)
			continue;
		for (j = slot_of(e->file, e->rel, ncap); nv[j].file; j = (j + 1) & (ncap - 1))
			;
		nv[j] = *e;
	}
	free(c->v);
	c->v = nv;
	c->cap = ncap;
	return 0;
}

static const struct sc_entry *table_find(const struct fxt_symcache *c, uint32_t file, uint64_t rel)
{
	if (!c->cap)
		return NULL;
	for (size_t j = slot_of(file, rel, c->cap); c->v[j].file; j = (j + 1) & (c->cap - 1))
		if (c->v[j].file == file && c->v[j].rel == rel)
			return &c->v[j];
	return NULL;
}

static void table_add(struct fxt_symcache *c, uint32_t file, uint64_t rel,
		      const struct fxt_sym_info *info, uint64_t bias)
{
	const char *name, *module;
	size_t j;

	if (!info->start || rel - (info->start - bias) > UINT32_MAX ||
	    (c->used * 2 >= c->cap && table_grow(c) < 0))
		return; /* (no start, or one too far: not kept) */
	name = fxt_sym__intern(&c->names, &c->arena, info->name, strlen(info->name));
	module = fxt_sym__intern(&c->names, &c->arena, info->module, strlen(info->module));
	if (!name || !module)
		return;
	for (j = slot_of(file, rel, c->cap); c->v[j].file; j = (j + 1) & (c->cap - 1))
		;
	c->v[j].file = file;
	c->v[j].rel = rel;
	c->v[j].name = name;
	c->v[j].module = module;
	/* Nearly all distinct: not interned; and made in c->arena (or a
	 * constant): fxt_symview_sym(). */
	c->v[j].loc = info->loc;
	c->v[j].loc_file = info->loc_file;
	c->v[j].loc_line = info->loc_line;
	c->v[j].start_to = (uint32_t)(rel - (info->start - bias));
	c->used++;
}

/* ------------------------------------------------------------ files */

/* The index of the file at `path` as it is now, added if new; -errno when
 * it cannot be stat'ed (then it is never cached).  Within a pass
 * (fxt_symcache_new_pass()), a path stat'ed already is that file. */
static long file_of(struct fxt_symcache *c, const char *path)
{
	struct stat st;
	struct sc_file *f;

	for (size_t i = 0; c->pass != 0 && i < c->nfiles; i++)
		if (c->files[i].pass == c->pass && strcmp(c->files[i].path, path) == 0)
			return (long)i;
	if (stat(path, &st) != 0)
		return -errno;
	for (size_t i = 0; i < c->nfiles; i++) {
		f = &c->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec &&
		    f->mtime.tv_nsec == st.st_mtim.tv_nsec && strcmp(f->path, path) == 0) {
			f->pass = c->pass;
			return (long)i;
		}
	}
	if (c->nfiles == c->capfiles) {
		size_t ncap = c->capfiles ? c->capfiles * 2 : 32;
		struct sc_file *nv = realloc(c->files, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->files = nv;
		c->capfiles = ncap;
	}
	f = &c->files[c->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->base = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->pass = c->pass;
	f->ok = fxt_sym_elf_layout(path, &f->lay) == 0;
	return (long)c->nfiles++;
}

/* ------------------------------------------------------------ cache */

struct fxt_symcache *fxt_symcache_new(void)
{
	struct fxt_symcache *c = calloc(1, sizeof(struct fxt_symcache));

	if (c)
		c->sym_flags = FXT_SYM_FUNC_LOC;
	return c;
}

void fxt_symcache_set_flags(struct fxt_symcache *c, unsigned sym_flags)
{
	c->sym_flags = sym_flags;
}

void fxt_symcache_new_pass(struct fxt_symcache *c)
{
	if (c)
		c->pass++;
}

void fxt_symcache_set_ahead(struct fxt_symcache *c, bool ahead)
{
	c->ahead = ahead;
}

void fxt_symcache_free(struct fxt_symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	free(c->v);
	free(c->names.slots);
	fxt_sym__arena_free(&c->arena);
	free(c);
}

void fxt_symcache_counts(const struct fxt_symcache *c, uint64_t *hits, uint64_t *misses)
{
	*hits = c->hits;
	*misses = c->misses;
}

void fxt_symcache_loc_counts(const struct fxt_symcache *c, uint64_t *kept, uint64_t *made)
{
	*kept = c->loc_hits;
	*made = c->loc_made;
}

/* ------------------------------------------------------------ ahead */

static void *ahead_main(void *arg)
{
	struct sv_ahead *a = arg;

	for (size_t i = 0; i < a->n && !__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE); i++)
		(void)fxt_sym_loccache_fill(a->paths[i], &a->stop);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Starts v's thread for its files built with -finstrument-functions that
 * no view of the cache tried yet, when locations are kept across runs
 * (else there is nowhere to hand them over): what a lookup would decode
 * otherwise, decoded beside the conversion's own work until its first
 * location (ahead_wait()).  Without it (no thread, ENOMEM) the lookups
 * decode them, as before. */
static void ahead_start(struct fxt_symview *v)
{
	struct fxt_symcache *c = v->c;
	struct sv_ahead *a;

	if (!(c->sym_flags & FXT_SYM_FUNC_LOC) || !c->ahead || !fxt_sym__loccache_kept())
		return;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->paths = calloc(v->n ? v->n : 1, sizeof(*a->paths)))) {
		free(a);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		struct sc_file *f = &c->files[v->mods[i].file];

		if (f->lay.instrumented && !f->ahead_tried) {
			f->ahead_tried = true;
			a->paths[a->n++] = f->path;
		}
	}
	if (a->n && pthread_create(&a->thread, NULL, ahead_main, a) == 0) {
		v->ahead = a;
		return;
	}
	free(a->paths);
	free(a);
}

/* Waits for v's thread to end (with stop set: at once, those decoded so
 * far kept). */
static void ahead_join(struct fxt_symview *v, bool stop)
{
	if (!v->ahead)
		return;
	if (stop)
		__atomic_store_n(&v->ahead->stop, 1, __ATOMIC_RELEASE);
	pthread_join(v->ahead->thread, NULL);
	free(v->ahead->paths);
	free(v->ahead);
	v->ahead = NULL;
}

static const struct sv_mod *mod_find(const struct fxt_symview *v, uint64_t addr);

/* Whether v's thread still runs (the symbolizer's locations then come
 * later, fxt_symview_loc()); once it has ended, joined. */
static bool ahead_busy(void *view)
{
	struct fxt_symview *v = view;

	if (v->ahead && !__atomic_load_n(&v->ahead->done, __ATOMIC_ACQUIRE))
		return true;
	ahead_join(v, false);
	return false;
}

/* A location the symbolizer said FXT_SYM_LOC_LATER, now looked up: kept
 * with the name for the next processes. */
static void later_done(void *view, uint64_t addr, const struct fxt_sym_info *info)
{
	struct fxt_symview *v = view;
	const struct sv_mod *m = mod_find(v, addr);
	struct sc_entry *e =
	    m ? (struct sc_entry *)table_find(v->c, m->file + 1, addr - m->bias) : NULL;

	if (e && e->loc == FXT_SYM_LOC_LATER) {
		e->loc = info->loc;
		e->loc_file = info->loc_file;
		e->loc_line = info->loc_line;
	}
}

/* The locations v's symbolizer said FXT_SYM_LOC_LATER, looked up once v's
 * thread has ended (waiting for it): in its results and the cache's. */
static int later_resolve(struct fxt_symview *v)
{
	if (!fxt_sym__later_pending(v->sym))
		return 0;
	ahead_join(v, false);
	fxt_sym__set_loc_busy(v->sym, NULL, NULL);
	return fxt_sym__resolve_later(v->sym, later_done, v);
}

/* ------------------------------------------------------------ views */

static int mod_cmp(const void *a, const void *b)
{
	const struct sv_mod *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int fxt_symview_open(struct fxt_symview **out, struct fxt_symcache *c,
		     const struct fxt_symview_module *mods, size_t n)
{
	struct fxt_symview *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->c = c;
	v->in = mods;
	v->nin = n;
	v->mods = calloc(n ? n : 1, sizeof(*v->mods));
	if (!v->mods) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		long f = file_of(c, mods[i].path);
		struct sv_mod m;
		bool overlaps = false;

		if (f < 0 || !c->files[f].ok)
			continue;
		m.bias = c->files[f].lay.fixed ? 0 : mods[i].bias;
		m.start = m.bias + c->files[f].lay.lo;
		m.end = m.bias + c->files[f].lay.hi;
		m.file = (uint32_t)f;
		for (size_t j = 0; j < v->n && !overlaps; j++)
			overlaps = m.start < v->mods[j].end && v->mods[j].start < m.end;
		if (!overlaps)
			v->mods[v->n++] = m;
	}
	qsort(v->mods, v->n, sizeof(*v->mods), mod_cmp);
	ahead_start(v);
	*out = v;
	return 0;
}

static const struct sv_mod *mod_find(const struct fxt_symview *v, uint64_t addr)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < v->mods[lo - 1].end ? &v->mods[lo - 1] : NULL;
}

/* The process's own symbolizer, with its modules as given (a module
 * refused for overlapping an earlier one is no error). */
struct fxt_sym *fxt_symview_sym(struct fxt_symview *v)
{
	if (!v->sym && !v->sym_failed) {
		v->sym = fxt_sym_new(v->c->sym_flags);
		v->sym_failed = !v->sym;
		if (v->sym) /* kept as they are (table_add()) */
			fxt_sym__set_loc_arena(v->sym, &v->c->arena);
		if (v->sym && v->ahead)
			fxt_sym__set_loc_busy(v->sym, ahead_busy, v);
		for (size_t i = 0; v->sym && i < v->nin; i++)
			fxt_sym_add_module(v->sym, v->in[i].path, v->in[i].bias);
	}
	return v->sym;
}

static const struct fxt_sym_info *direct(struct fxt_symview *v, uint64_t addr)
{
	struct fxt_sym *sym = fxt_symview_sym(v);

	return sym ? fxt_sym_lookup(sym, addr) : NULL;
}

const struct fxt_sym_info *fxt_symview_lookup(void *view, uint64_t addr)
{
	struct fxt_symview *v = view;
	const struct sv_mod *m = mod_find(v, addr);
	const struct fxt_sym_info *info;
	const struct sc_entry *e;

	if (m && (e = table_find(v->c, m->file + 1, addr - m->bias))) {
		v->c->hits++;
		v->out.name = e->name;
		v->out.module = e->module;
		v->out.file = NULL;
		v->out.line = 0;
		v->out.loc = e->loc;
		v->out.loc_file = e->loc_file;
		v->out.loc_line = e->loc_line;
		v->out.start = e->rel - e->start_to + m->bias;
		return &v->out;
	}
	v->c->misses++;
	info = direct(v, addr);
	/* Kept only when the symbolizer put it in the same module. */
	if (m && info && info->start && info->module &&
	    strcmp(info->module, v->c->files[m->file].base) == 0)
		table_add(v->c, m->file + 1, addr - m->bias, info, m->bias);
	return info;
}

const char *fxt_symview_loc(void *view, uint64_t addr, uint32_t *file, uint32_t *line)
{
	struct fxt_symview *v = view;
	const struct sv_mod *m;
	const struct sc_entry *e;
	const struct fxt_sym_info *info;

	(void)later_resolve(v); /* on ENOMEM, FXT_SYM_NO_DEBUG_INFO */
	m = mod_find(v, addr);
	if (m && (e = table_find(v->c, m->file + 1, addr - m->bias))) {
		*file = e->loc_file;
		*line = e->loc_line;
		return e->loc;
	}
	info = direct(v, addr);
	*file = info ? info->loc_file : 0;
	*line = info ? info->loc_line : 0;
	return info ? info->loc : NULL;
}

int fxt_symview_range_of(const struct fxt_symview *v, const char *base, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < v->n; i++) {
		if (strcmp(v->c->files[v->mods[i].file].base, base) == 0) {
			*lo = v->mods[i].start;
			*hi = v->mods[i].end;
			return 0;
		}
	}
	return -ENOENT;
}

void fxt_symview_close(struct fxt_symview *v)
{
	if (!v)
		return;
	/* None left saying FXT_SYM_LOC_LATER in the cache. */
	(void)later_resolve(v);
	ahead_join(v, true);
	fxt_sym__free_counted(v->sym, &v->c->loc_hits, &v->c->loc_made);
	free(v->mods);
	free(v);
}
