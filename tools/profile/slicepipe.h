/* A pipe of the profile engine's finished slices to a second thread: the
 * engine (and the reader under it) runs on the caller's thread, a
 * consumer of its slices (fxt-tree's call paths) on another, in the same
 * order as if called directly, so that what the consumer makes is the
 * same.  Slices go over in batches (two, filled and drained in turn:
 * bounded memory), each a copy of its numbers and its path.
 *
 * Private to tools/.  Use: slicepipe_start(), then the engine's
 * opts.on_slice = slicepipe_put with opts.ctx = the pipe; after the last
 * record, slicepipe_stop() (before reading what the consumer made).  The
 * consumer must not touch what the engine's thread does meanwhile (the
 * reader, the profile's tables). */
#ifndef FXT_TOOLS_SLICEPIPE_H
#define FXT_TOOLS_SLICEPIPE_H

#include "tools/profile/profile.h"

struct slicepipe;

/* Starts the consumer thread, which calls fn(ctx, slice) for each slice
 * put.  0, or -errno (no thread: call fn directly then). */
int slicepipe_start(struct slicepipe **pp, profile_slice_fn fn, void *ctx);

/* A profile_slice_fn: queues a copy of s for the consumer (ctx: the
 * pipe).  Out of memory, the slice is dropped and slicepipe_stop() says
 * so. */
void slicepipe_put(void *ctx, const struct profile_slice *s);

/* Hands over what is queued, waits for the consumer to be done with it
 * and frees the pipe.  0, or -ENOMEM when a slice could not be queued. */
int slicepipe_stop(struct slicepipe *p);

/* Whether a second thread can run beside this one (more than one CPU
 * online) and FXT_THREADS is not 0 in the environment. */
bool slicepipe_worth(void);

#endif /* FXT_TOOLS_SLICEPIPE_H */
