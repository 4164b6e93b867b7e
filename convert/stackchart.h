/* Stack samples -> a stack chart: nested frames a recon (recon.h) turns
 * into slices.  Private to convert/.
 *
 * Consecutive samples share their outer frames: a frame stays open while
 * the samples keep it on the stack, and closes at the first sample that
 * does not have it.  Precisely, the samples are compared from their
 * outermost frame, by function identity (fn_of of the pc; pc - 1 for every
 * frame but the innermost, which are return addresses): the frames of the
 * new sample that match the open ones at the same depths, up to the first
 * difference, stay open; the deeper open frames close at the sample's
 * time, innermost first, and the sample's remaining frames open at that
 * time, outermost first.  So a recursion is one frame per level, and the
 * same function reached through another caller is another frame.  The
 * last sample's frames end one period after it (its share of the CPU
 * time), or at end_ts if that comes first.
 *
 * A sample stands for CPU time, not for the wait after it: samples tick
 * with the thread's CPU time, and each says how many periods of it the
 * thread used since the previous one.  When the time between two samples
 * is more than that CPU time and one period more (the kernel fires its
 * CPU-time timers at its tick, so the count is one period coarse), the
 * thread waited (blocked, or was not scheduled) in between: every frame
 * of the previous sample closes once that CPU time has passed after it,
 * and the new sample's frames open at its own time.  A sample that does
 * not say (periods 0: an older agent, or a thread that did not give up
 * the CPU, whose wait was for it: preempted) keeps its frames until the
 * next.
 *
 * A stackchart only feeds its recon; the recon's owner frees it.
 */
#ifndef FXT_CONVERT_STACKCHART_H
#define FXT_CONVERT_STACKCHART_H

#include <stddef.h>
#include <stdint.h>

#include "convert/recon.h"

/* Maps a pc to its function's identity (the start address of the function
 * containing it, for the conversion's name table), or 0 when unknown: the
 * looked-up address then stands for the function.  NULL fn_of: the same. */
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
 * addresses, innermost first; `periods`: the periods of CPU time since the
 * previous sample (0: unknown).  Returns 0 or the recon's error. */
int stackchart_sample(struct stackchart *sc, uint64_t ts, const uint64_t *pcs, unsigned depth,
		      uint64_t periods);

/* Closes every open frame (at most one period after the last sample, and
 * not after `end_ts` when it is not 0), and hands the recon's pending
 * slices to its sink (recon_finish).  Returns 0 or the recon's error. */
int stackchart_finish(struct stackchart *sc, uint64_t end_ts);

void stackchart_free(struct stackchart *sc);

#endif /* FXT_CONVERT_STACKCHART_H */
