/* Symbols once per run: a cache of symbolized addresses shared by all the
 * processes whose traces one fxt-run converts.
 *
 * A run of a shell script or a build starts hundreds of processes from a
 * handful of files (bash, cat, libc ...).  A symbolizer per process opens
 * and maps each of its modules and indexes their symbols again; instead,
 * a result is kept under the file's identity (path, device, inode, size,
 * mtime) and the address relative to the file's load bias, which is the
 * same in every process whatever ASLR did.  A process's view
 * (fxt_symview_open()) knows where its modules were loaded; a lookup that
 * the cache cannot answer goes to a symbolizer of that process's own
 * (struct fxt_sym, made at the first such lookup), and its answer is kept
 * for the next processes.
 *
 * Single-threaded (but for a view's thread, fxt_symcache_set_ahead(),
 * which shares nothing with it but the kept files); no global state.
 */
#ifndef FXT_SYMBOLIZER_RUNCACHE_H
#define FXT_SYMBOLIZER_RUNCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/symbolizer.h"

struct fxt_symcache;
struct fxt_symview;

/* One module of a process: an ELF file loaded at `bias` (as for
 * fxt_sym_add_module()). */
struct fxt_symview_module {
	const char *path;
	uint64_t bias;
};

/* A new, empty cache; NULL on ENOMEM. */
struct fxt_symcache *fxt_symcache_new(void);

/* A new pass over the run's processes (fxt-run: a scan of the spools):
 * until the next call, a module's path stat'ed once is taken for the same
 * file (identity, size and mtime) without a stat for each process (200
 * pipelines: 800 stats of the same sed, tr, wc, libc ...).  Never called,
 * every view stats each of its modules.  A file replaced during a pass is
 * seen at the next (as a file replaced between a process's exit and its
 * conversion never was). */
void fxt_symcache_new_pass(struct fxt_symcache *c);

/* The flags (enum fxt_sym_flags) of the symbolizers the cache makes and
 * so what it keeps: FXT_SYM_FUNC_LOC unless set otherwise (0: names only,
 * what bench/srcline.sh compares with).  Before the first view. */
void fxt_symcache_set_flags(struct fxt_symcache *c, unsigned sym_flags);

/* Whether a view decodes the locations of its modules built with
 * -finstrument-functions in a thread of its own from when it opens, into
 * the files kept across runs (fxt_sym_loccache_fill()): the conversion's
 * wall time, on a core the traced program has left, when they are not
 * kept yet (a first run).  While that thread runs, the view's lookups do
 * not wait for it: a location they would look up (a module with DWARF)
 * says FXT_SYM_LOC_LATER, and fxt_symview_loc() gives it later.  Default
 * false (a conversion inside the traced program starts no thread).
 * Before the first view. */
void fxt_symcache_set_ahead(struct fxt_symcache *c, bool ahead);

/* Frees the cache; no view of it may remain.  NULL is accepted. */
void fxt_symcache_free(struct fxt_symcache *c);

/* Lookups answered by the cache, and those that needed a symbolizer. */
void fxt_symcache_counts(const struct fxt_symcache *c, uint64_t *hits, uint64_t *misses);

/* Of the views closed: the functions' locations read from the files kept
 * across runs (FXT_SRCLINE_CACHE), and those decoded and added there. */
void fxt_symcache_loc_counts(const struct fxt_symcache *c, uint64_t *kept, uint64_t *made);

/* A view of a process whose modules are `mods` (in the order the process
 * listed them; a module overlapping an earlier one is left out, as
 * fxt_sym_add_module() does).  `mods` and its paths must outlive the view.
 * 0 or -ENOMEM. */
int fxt_symview_open(struct fxt_symview **out, struct fxt_symcache *c,
		     const struct fxt_symview_module *mods, size_t n);

/* The symbol for a code address of that process, as fxt_sym_lookup()
 * gives it with FXT_SYM_FUNC_LOC: the function's location `loc` is kept
 * with the name and its parts, per file (file and line are not kept).  The result is valid until
 * the next lookup on the view; its strings until the cache is freed.  `view` is a struct
 * fxt_symview (void *, for callbacks). */
const struct fxt_sym_info *fxt_symview_lookup(void *view, uint64_t addr);

/* The location of the function at `addr` whose lookup said
 * FXT_SYM_LOC_LATER (fxt_symcache_set_ahead()), as fxt_symview_lookup()
 * would have said it: waits for the view's thread to end, then looks up
 * every location the view said so (the cache keeps them with their
 * names), its parts in *file and *line (fxt_sym_info.loc_file, loc_line;
 * 0: not said).  Valid until the cache is freed.  `view` is a struct
 * fxt_symview. */
const char *fxt_symview_loc(void *view, uint64_t addr, uint32_t *file, uint32_t *line);

/* The addresses of the view's module whose file is named `base`
 * ("libfxt-agent.so"): 0, or -ENOENT when it has none. */
int fxt_symview_range_of(const struct fxt_symview *v, const char *base, uint64_t *lo, uint64_t *hi);

/* The process's own symbolizer, made at its first need with the view's
 * modules, for what the cache does not keep (fxt_sym_signature()); it
 * lives as long as the view.  NULL on ENOMEM. */
struct fxt_sym *fxt_symview_sym(struct fxt_symview *v);

void fxt_symview_close(struct fxt_symview *v);

#endif /* FXT_SYMBOLIZER_RUNCACHE_H */
