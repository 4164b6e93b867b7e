/* Nesting depth of the duration slices of an archive, per thread, in one
 * streaming pass: the deepest nesting and how many slices lie deeper than
 * a limit, e.g. Perfetto's (FXT__SHOWN_DEPTH, fxt/depth.h: the slices it
 * does not show, as fxt-run's summary counts them too).
 *
 * Depths are Perfetto's: 0 for a slice with no parent on its thread, so a
 * chain of N nested slices reaches depth N - 1, and with the limit 512 the
 * slices of depth 513 and more are the ones not shown.
 *
 * Feed it, per (pid, tid), duration complete events in start order (parents
 * before their children: what the agent writes) and begin/end pairs, in
 * archive order, or whole records with nesting_record().  Memory is a few
 * words per open slice per thread, so bounded by the depth, whatever the
 * number of slices.  Complete events that come children first (an
 * exit-time flusher) cannot be nested in bounded memory: they are counted
 * in `unordered` and the depths of that thread are then a lower bound; a
 * caller that needs exact numbers sorts such a thread's slices by (start
 * ascending, end descending) and feeds them in that order.
 *
 * Linked into libfxttools.la (tools/local.mk); the launcher can use it as:
 *
 *	struct nesting *n;
 *	struct nesting_result res;
 *	nesting_new(&n, FXT__SHOWN_DEPTH);
 *	for each record rec read by reader r: nesting_record(n, r, &rec);
 *	nesting_result(n, &res);  // res.max_depth, res.deeper ...
 *	nesting_free(n);
 */
#ifndef FXT_TOOLS_NESTING_H
#define FXT_TOOLS_NESTING_H

#include <stdint.h>

#include "fxt/depth.h"

struct fxt_reader;
struct fxt_record;

struct nesting;

struct nesting_result {
	uint64_t slices;	   /* slices fed (complete events and begins) */
	uint64_t max_depth;	   /* deepest depth seen (0 without slices) */
	uint64_t max_pid, max_tid; /* the thread where it was first reached */
	uint64_t deeper;	   /* slices deeper than the limit */
	uint64_t deeper_threads;   /* threads with such slices */
	uint64_t unordered;	   /* complete events starting before the previous
				      one on their thread (end order): depths of
				      those threads are lower bounds */
};

/* A tracker counting the slices deeper than `limit`.  Returns 0 or
 * -ENOMEM. */
int nesting_new(struct nesting **n, unsigned limit);
void nesting_free(struct nesting *n);

/* A duration complete event [start, end] on (pid, tid).  Returns 0 or
 * -ENOMEM. */
int nesting_complete(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t start, uint64_t end);
/* A duration begin at ts; an end closes the innermost open begin on its
 * thread (an end with none is ignored).  Return 0 or -ENOMEM. */
int nesting_begin(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t ts);
int nesting_end(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t ts);

/* Feeds a record (duration events are used, times converted to ns with
 * r; anything else is ignored).  Returns 0 or -ENOMEM. */
int nesting_record(struct nesting *n, struct fxt_reader *r, const struct fxt_record *rec);

/* The numbers so far (slices still open count at the depth they have). */
void nesting_result(const struct nesting *n, struct nesting_result *out);

#endif /* FXT_TOOLS_NESTING_H */
