/* Between the spool's two files: agent/spool.c (its life under the lock)
 * and agent/spool_make.c (the file made, at the first chunk).  Private to
 * them. */
#ifndef FXT_AGENT_SPOOL_MAKE_H
#define FXT_AGENT_SPOOL_MAKE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/spool.h"
#include "run/control.h"

/* spool_make.c */

/* Creates the spool's file and its header (a spare file of fxt-run's
 * taken if one is there); its descriptor in *keep if not NULL, else
 * closed.  With `first` (not 0), the first chunk's `first` bytes follow
 * the header, mapped with it: *chunk is then their mapping (else NULL).
 * Called with the lock held.  0 or -errno. */
int spool_make(struct spool *sp, int *keep, uint64_t first, void **chunk);
/* Extends the file at fd by `size` bytes of zeros at `off`.  0 or -errno. */
int spool_extend(int fd, uint64_t off, uint64_t size);
/* Pre-faults a mapping for writing. */
void spool_populate(void *p, uint64_t size);

/* spool.c */

/* The page size (asked once, by spool_init()). */
uint64_t spool_page_size(void);
/* `src` into dst[cap], cut to fit, without the C library. */
void spool_copy_str(char *dst, size_t cap, const char *src);
/* fxt-run's doorbell, mapped at the first use; NULL without one.  Called
 * with the lock held. */
struct run_bell *spool_bell(struct spool *sp);

#endif
