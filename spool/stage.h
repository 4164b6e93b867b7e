/* Copying a staged chunk to its reserved place (spool/format.h, "Staged
 * chunks"): the one way both the agent and fxt-run's drain thread do it;
 * and the write loop it uses. */
#ifndef FXT_SPOOL_STAGE_H
#define FXT_SPOOL_STAGE_H

#include <stdint.h>

#include "spool/format.h"

/* Copies the staged chunk at `off` of the spool open as `fd` (its header
 * `c`, state CHUNK_COPYING, taken by the caller) to c->dest: the records
 * first, then the header, which makes the copy count (serial and seq set,
 * staging fields cleared).  `map` is the chunk's mapping, the agent's own
 * or the drain thread's: both keep staged chunks mapped, and writing from
 * the mapping is one copy where reading the file first would be two.
 * 0 or -errno; the original is never changed. */
int spool_stage_copy(int fd, const struct spool_chunk *c, uint64_t off, const void *map);

/* Writes `size` bytes of `buf` at `off` of `fd`, through short writes and
 * EINTR: 0, -errno, or -EIO for a write that wrote nothing.  Also the
 * agent's snapshots' (agent/keep/snapshot.c). */
int spool_write_all(int fd, const void *buf, uint64_t size, uint64_t off);

#endif /* FXT_SPOOL_STAGE_H */
