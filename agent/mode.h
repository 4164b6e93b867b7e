/* What the recording mode (FXT_MODE, run/recording.h) means for the
 * thread buffers and the spool's chunks: one comparison each on
 * agent_cfg.mode, for the cold paths that branch on it.  Private to
 * agent/.  How the mode is chosen is run_mode_resolve()'s. */
#ifndef FXT_AGENT_MODE_H
#define FXT_AGENT_MODE_H

#include <stdbool.h>

#include "agent/cfg.h"

/* Stream: full chunks are unmapped (written back) and may be reused;
 * FXT_BUFFER_SIZE bounds the chunks the process maps at once. */
static inline bool agent_mode_stream(void)
{
	return agent_cfg.mode == FXT_MODE_STREAM;
}

/* Circular: a thread's chunks stay mapped as a ring of at most its
 * FXT_BUFFER_SIZE, the oldest emptied and filled again. */
static inline bool agent_mode_ring(void)
{
	return agent_cfg.mode == FXT_MODE_CIRCULAR;
}

/* Oneshot: a thread fills its FXT_BUFFER_SIZE once, then stops. */
static inline bool agent_mode_one_fill(void)
{
	return agent_cfg.mode == FXT_MODE_ONESHOT;
}

#endif
