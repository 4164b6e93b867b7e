/* Replaying one thread's records: a chunk's slots (spool/records.h),
 * decoded in order and fed to the thread's reconstruction (recon.h).  Hook
 * records are frames; tagged records become frames too (CALL: a libc
 * call, named after the function), or entries of the innermost open frame
 * (entries.h: arguments, strings, flow events, the flows the pre-pass
 * bound to a SYNC record, a pipe read's flows from the session's writes),
 * or go elsewhere: LOG bytes to the thread's log lines (loglines.h),
 * COUNTER deltas to the heap counter (counters.h), SAMPLE stacks to the
 * thread's stack chart (stackchart.h).  Whatever the slots say, nothing
 * is read outside the block: torn records, orphan payload slots and
 * unknown tags are skipped.  Private to convert/. */
#ifndef FXT_CONVERT_REPLAY_H
#define FXT_CONVERT_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "convert/chunks.h"
#include "convert/counters.h"
#include "convert/pipeline.h"
#include "convert/loglines.h"
#include "convert/prepass.h"
#include "convert/recon.h"
#include "convert/stackchart.h"

/* Where the drop instant of a thread goes: before the first record at or
 * after its time (NO_MARK once placed, or when there is none). */
#define NO_MARK UINT64_MAX

/* One thread's replay: where its records go. */
struct replay {
	const struct conv_input *in;
	struct conv_stats *st;
	struct recon *r;
	struct log_lines *logs;
	const struct prepass *pp;
	struct heap_counter *heap;
	struct stackchart *sc; /* the sample track, when `sampling` */
	bool sampling;	       /* cleared if this build makes no stack charts */
};

/* Feeds the records of chunk `c` (read into `buf`, READ_BLOCK bytes) to
 * the thread's reconstruction, placing the drop mark before the first
 * record at or after *mark_ts (then NO_MARK).  0 or -errno. */
int conv_replay_chunk(struct replay *d, const struct chunk_ref *c, uint64_t *buf,
		      uint64_t *mark_ts);

/* A thread whose oldest records were overwritten (the circular mode): the
 * frames open where its kept records, its chunks[0 .. n), begin.  They
 * are the exits that come while no frame is open (their enters were
 * overwritten): *out (malloc'd, or NULL) gets their frame identities as
 * recon_feed() takes them, outermost first, *nout their number, and
 * *first_ts the time of the first record (0 if none).  0 or -errno. */
int conv_replay_open_frames(const struct conv_input *in, const struct chunk_ref *chunks, size_t n,
			    uint64_t *buf, uint64_t **out, size_t *nout, uint64_t *first_ts);

#endif /* FXT_CONVERT_REPLAY_H */
