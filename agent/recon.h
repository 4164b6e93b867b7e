/* Stack reconstruction: a thread's raw enter/exit records -> properly
 * nested (start, end) intervals.  Private to agent/.
 *
 * Perfetto drops a complete event that partly overlaps a sibling, so the
 * intervals handed to `emit` must nest exactly, whatever the records say:
 *
 *  - timestamps are made strictly increasing per thread (a record older
 *    than the previous one, e.g. across a TSC hiccup, or equal to it, is
 *    moved to previous + 1 tick), so no two starts coincide;
 *  - an exit whose function is not on top of the stack but deeper (frames
 *    left by longjmp or by records that were skipped) closes every frame
 *    above it at the same time, then itself;
 *  - an exit whose function is not on the stack at all (its enter happened
 *    before tracing, e.g. in a fork child) is counted and ignored;
 *  - frames still open at the end are closed by recon_finish().
 *
 * The stack is an explicit, growing array: a 1,000,000-deep recursion costs
 * 16 MB of heap and no C stack.  Intervals are emitted innermost first
 * (when they close).
 */
#ifndef FXT_AGENT_RECON_H
#define FXT_AGENT_RECON_H

#include <stddef.h>
#include <stdint.h>

typedef int (*recon_emit_fn)(void *ctx, uint64_t addr, uint64_t start, uint64_t end);

struct recon_frame {
	uint64_t addr;
	uint64_t start;
};

struct recon {
	struct recon_frame *stack;
	size_t depth, cap;
	uint64_t last_ts;   /* last adjusted timestamp; 0 before the first record */
	uint64_t unmatched; /* exits without an enter */
	uint64_t emitted;
	recon_emit_fn emit;
	void *ctx;
};

void recon_init(struct recon *r, recon_emit_fn emit, void *ctx);

/* One record: ts in ticks, addr with SPOOL_EXIT_BIT for an exit.  Returns 0,
 * -ENOMEM, or the first error of `emit`. */
int recon_feed(struct recon *r, uint64_t ts, uint64_t addr);

/* Closes the frames still open at max(end_ts, last timestamp).  The recon
 * can be fed again afterwards (it is empty). */
int recon_finish(struct recon *r, uint64_t end_ts);

void recon_free(struct recon *r);

#endif /* FXT_AGENT_RECON_H */
