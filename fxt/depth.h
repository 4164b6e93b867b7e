/* Slices nested too deep for Perfetto: the one definition that fxt-run's
 * summary (counted by the converter's recon, convert/recon.h, as it
 * rebuilds the slices) and `fxt-dump --check` (tools/dump/nesting.c, reading
 * them back) both count by and both say, so that the two agree.
 * Internal to fxtrace (not installed); names carry the fxt__ prefix.
 *
 * A slice's depth is Perfetto's: 0 for a slice with no parent on its
 * thread (complete events and begin/end pairs nest in one stack), so a
 * chain of N nested slices reaches depth N - 1.  Perfetto shows depths
 * 0 .. FXT__SHOWN_DEPTH (its kMaxDepth) and counts the slices deeper in
 * its stat slice_max_depth_exceeded.
 */
#ifndef FXT_DEPTH_H
#define FXT_DEPTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXT__SHOWN_DEPTH 512u

/* Whether a slice at `depth` is one Perfetto does not show. */
static inline bool fxt__depth_hidden(uint64_t depth)
{
	return depth > FXT__SHOWN_DEPTH;
}

/* The sentence that says `deeper` slices are hidden, the deepest at
 * depth `max_depth` on (pid, tid), into buf (no newline, no prefix).
 * Returns what snprintf() returns. */
int fxt__depth_warning(char *buf, size_t cap, uint64_t deeper, uint64_t max_depth, uint64_t pid,
		       uint64_t tid);

#endif /* FXT_DEPTH_H */
