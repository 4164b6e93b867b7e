/* Stack samples -> a stack chart: nested frames a recon (recon.h) turns
 * into slices.  Private to agent/.
 *
 * Consecutive samples share their outer frames: a frame stays open while
 * the samples keep it on the stack, and closes at the first sample that
 * does not have it.  TODO(owner: sampling): details.
 */
#ifndef FXT_AGENT_STACKCHART_H
#define FXT_AGENT_STACKCHART_H

#include <stddef.h>
#include <stdint.h>

#include "agent/recon.h"

/* Maps a pc to its function's identity (the start address of the function
 * containing it, for the flusher's name table), or 0 when unknown. */
typedef uint64_t stackchart_fn_of(void *ctx, uint64_t pc);

struct stackchart {
	struct recon *r;
	stackchart_fn_of *fn_of;
	void *ctx;
	uint64_t *stack; /* open frames, outermost first (function identities) */
	size_t depth, cap;
	uint64_t last_ts;
	uint64_t period; /* ticks between samples, to end the last one */
};

/* Frames go to `r` (a recon of the sample track).  `period`: the sampling
 * period in ticks. */
void stackchart_init(struct stackchart *sc, struct recon *r, stackchart_fn_of *fn_of, void *ctx,
		     uint64_t period);

/* One sample at `ts`: pcs[0] is the interrupted pc, pcs[1..] return
 * addresses, innermost first.  Returns 0 or the recon's error. */
int stackchart_sample(struct stackchart *sc, uint64_t ts, const uint64_t *pcs, unsigned depth);

/* Closes every open frame (at most one period after the last sample, and
 * not after `end_ts` when it is not 0). */
int stackchart_finish(struct stackchart *sc, uint64_t end_ts);

void stackchart_free(struct stackchart *sc);

#endif /* FXT_AGENT_STACKCHART_H */
