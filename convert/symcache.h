/* Symbols once per run: a cache of symbolized addresses shared by every
 * spool that one fxt-run converts.
 *
 * A run of a shell script or a build starts hundreds of processes from a
 * handful of files (bash, cat, libc ...).  A symbolizer per process opens
 * and maps each of its modules and indexes their symbols again; instead,
 * a result is kept under the file's identity (path, device, inode, size,
 * mtime) and the address relative to the file's load bias, which is the
 * same in every process whatever ASLR did.  A process's view
 * (symview_open()) knows where its modules were loaded from its spool
 * header; a lookup that the cache cannot answer goes to a symbolizer of
 * that process's own, made at the first such lookup, and its answer is
 * kept for the next processes.
 *
 * Single-threaded; no global state.
 */
#ifndef FXT_CONVERT_SYMCACHE_H
#define FXT_CONVERT_SYMCACHE_H

#include <stdint.h>

#include "spool/format.h"
#include "symbolizer/symbolizer.h"

struct symcache;
struct symview;

/* A new, empty cache; NULL on ENOMEM. */
struct symcache *symcache_new(void);

/* Frees the cache; no view of it may remain.  NULL is accepted. */
void symcache_free(struct symcache *c);

/* Lookups answered by the cache, and those that needed a symbolizer. */
void symcache_counts(const struct symcache *c, uint64_t *hits, uint64_t *misses);

/* A view of the process whose spool header is `h` (which must outlive the
 * view): 0 or -ENOMEM. */
int symview_open(struct symview **out, struct symcache *c, const struct spool_header *h);

/* The symbol for a code address of that process, as fxt_sym_lookup()
 * gives it (file and line are not kept).  The result is valid until the
 * next lookup on the view; its strings until the cache is freed.  `view`
 * is a struct symview (void * for the flusher's callback). */
const struct fxt_sym_info *symview_lookup(void *view, uint64_t addr);

/* The addresses of the view's module whose file is named `base`
 * ("libfxt-agent.so"): 0, or -ENOENT when it has none. */
int symview_range_of(const struct symview *v, const char *base, uint64_t *lo, uint64_t *hi);

void symview_close(struct symview *v);

#endif /* FXT_CONVERT_SYMCACHE_H */
