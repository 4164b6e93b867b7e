/* The conversion's pre-pass over every thread's records, before any event is
 * written: which threads have stack samples (their sample tracks are
 * kernel objects, which come first), and the sync pairs (a release and
 * the acquisition it ended may be on any two threads).  Private to
 * convert/.
 *
 * Pairing: a SYNC record lies inside its call's frame.  An acquisition
 * that had to wait is paired with the release that ended the wait:
 *  - a lock acquired after waiting, at its frame's end T: the latest
 *    unlock by another thread whose frame started before T and ended
 *    after the lock's frame started;
 *  - a cond wait that returned: the latest signal or broadcast that
 *    started within the wait's frame;
 *  - a sem_wait that waited: the latest post within it.
 * Each pair is a flow: its begin in the release's frame, its end at the
 * end of the acquiring frame.  Both are actions bound to the SYNC
 * records by their place in the spool, which the replay adds to the
 * frames when it meets those records.
 */
#ifndef FXT_CONVERT_PREPASS_H
#define FXT_CONVERT_PREPASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/chunks.h"

/* A flow event the sync pairing binds to a SYNC record. */
struct sync_action {
	uint64_t pos; /* the SYNC slot's offset in the spool: its identity */
	uint64_t id;
	unsigned phase; /* key of an ARGT_FLOW entry (entries.h) */
};

struct prepass {
	unsigned char *sampled;	     /* by serial: the thread has samples; NULL if not looked for */
	struct sync_action *actions; /* by pos */
	size_t nactions;
};

/* Reads the spool's chunks (sorted as conv_chunks_scan() gives them; the
 * largest serial is `max_serial`) for samples when `samples`, for the
 * sync pairs of process `pid` when `sync`.  0, -ENOMEM or a read error;
 * conv_prepass_free() in either case. */
int conv_prepass(int fd, const struct chunk_ref *chunks, size_t nchunks, uint32_t max_serial,
		 bool samples, bool sync, uint64_t pid, struct prepass *out);

/* The index of the first action bound to the SYNC slot at `pos` (those
 * that are follow it), or nactions. */
size_t conv_prepass_actions_at(const struct prepass *pp, uint64_t pos);

void conv_prepass_free(struct prepass *pp);

#endif /* FXT_CONVERT_PREPASS_H */
