/* The per-thread timeline of fxt-view: each thread's slices as bars, one
 * list per depth, built in the same pass as the call tree (it is fed the
 * slices calltree_opts.also hands over) and drawn by columns.  Private to
 * tools/view/; no terminal code (tests and the bench query it directly).
 *
 * Bounded memory, whatever the archive: bars are exact (one per slice)
 * until all threads together hold TIMELINE_MAX_BARS; then the thread
 * holding the most gets a coarser resolution, until it holds half as
 * many (the same again whenever the bound is reached): a slice that starts less than `res_ns` after the
 * start of the bar before it at its depth is merged into that bar (its
 * end extended, `n` counting the slices it stands for, `row` the longest
 * one's function).  So memory is about TIMELINE_MAX_BARS * 24 bytes at
 * most, and zooming in past a thread's resolution shows merged bars (n >
 * 1), not the slices in them.  Depths past TIMELINE_MAX_DEPTH are counted
 * and not drawn.
 *
 * Slices at one depth of a thread do not overlap and come in time order
 * (the profile hands each over when it ends; a slice's siblings end
 * before it starts), so each list is sorted by start and by end, and a
 * column finds its bar by binary search: drawing costs columns * depths *
 * log(bars), never the number of slices. */
#ifndef FXT_TOOLS_VIEW_TIMELINE_H
#define FXT_TOOLS_VIEW_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/profile/profile.h"

#define TIMELINE_MAX_DEPTH 64
#define TIMELINE_MAX_BARS  (UINT64_C(2) << 20) /* 48 MiB of bars (96 with the arrays' slack) */

struct timeline_bar {
	uint64_t start, end; /* ns */
	uint32_t row;	     /* profile row of the (longest) slice */
	uint32_t n;	     /* slices merged into it: 1 = exact */
};

struct timeline_thread {
	uint64_t pid, tid;
	uint64_t slices;     /* every slice of the thread, merged or not */
	uint64_t busy_ns;    /* the sum of its top-level slices' durations */
	uint64_t first_ns, last_ns;
	uint64_t res_ns;     /* 0: exact; else the merge resolution */
	uint64_t too_deep;   /* slices deeper than TIMELINE_MAX_DEPTH */
	unsigned ndepth;     /* levels with bars */
	struct timeline_level {
		struct timeline_bar *b;
		size_t n, cap;
	} lv[TIMELINE_MAX_DEPTH];
	size_t nbars;
};

struct timeline;

int timeline_new(struct timeline **tl);
void timeline_free(struct timeline *tl);

/* A profile_slice_fn: adds the slice (ctx is the timeline).  An error
 * (-ENOMEM) is kept for timeline_error(). */
void timeline_on_slice(void *ctx, const struct profile_slice *s);
int timeline_error(const struct timeline *tl);

/* Caps the bars held (for tests; default TIMELINE_MAX_BARS). */
void timeline_set_max_bars(struct timeline *tl, uint64_t max);

/* The threads, in the order they were first seen. */
size_t timeline_nthreads(const struct timeline *tl);
const struct timeline_thread *timeline_thread(const struct timeline *tl, size_t i);
uint64_t timeline_nbars(const struct timeline *tl);

/* The bar of thread th at `depth` (0: top level) that overlaps [a, b),
 * the first one; NULL when none. */
const struct timeline_bar *timeline_find(const struct timeline_thread *th, unsigned depth,
					 uint64_t a, uint64_t b);

/* The first bar of thread th, at any depth, that starts at `from` or after
 * (the last that starts before it, with backward) and whose function satisfies
 * match(ctx, row); in *depth its depth.  NULL when none. */
const struct timeline_bar *timeline_search(const struct timeline_thread *th, uint64_t from,
					   bool backward, bool (*match)(void *ctx, uint32_t row),
					   void *ctx, unsigned *depth);

#endif /* FXT_TOOLS_VIEW_TIMELINE_H */
