/* Flight-recorder snapshots on slow calls (FXT_SNAPSHOT_IF, fxt-run
 * --snapshot-if; run/settings.def).  Private to agent/.
 *
 * The circular mode keeps each thread's newest records; a snapshot keeps
 * them at a moment that matters, while the program goes on: when a call
 * that a rule watches ends after more than the rule's duration, the
 * thread that made it copies the process's spool, as it is, into a spool
 * of its own, OUT.snapN.spool (run/names.h), sealed with the thread
 * table of that moment and marked with what set it off (the header's
 * snap_* fields, spool/format.h).  fxt-run converts it into OUT.snapN.fxt
 * as it converts a process's spool; without fxt-run the process does, at
 * its exit.  N counts the run's snapshots, across its processes (the
 * session's counter, run/session.h), up to FXT_MAX_SNAPSHOTS.
 *
 * Watching: a function rule goes into the filters' table (agent/keep/filter.h)
 * as a flag on the functions whose names it matches, so that only their
 * calls are timed (CLOCK_MONOTONIC at enter and exit, a small stack per
 * thread); a libc rule times the calls of its group's wrappers
 * (agent/libc/libc.h).  Copying is a pass over the spool file with pread():
 * a chunk that its thread recycled while it was being copied (its seq
 * changed) is left out of the copy; the chunks being filled are copied
 * up to the last record written.  One snapshot at a time per process:
 * a slow call that ends while one is being copied takes none.
 */
#ifndef FXT_AGENT_SNAPSHOT_H
#define FXT_AGENT_SNAPSHOT_H

#include <stdint.h>

#include "agent/gates.h"
#include "agent/tbuf.h"

/* agent_snapshot_fn(), which run-time patching's value tests call too,
 * is declared in agent/gates.h. */

/* At the exit of a process that converts its own spool: converts the
 * snapshots it took that nobody converted, with `convert` (the agent's
 * converter, seal.c). */
typedef int agent_snapshot_convert_fn(const char *spool_path, const char *archive_path,
				      const char *session);
void agent_snapshot_convert_own(agent_snapshot_convert_fn *convert, const char *session);

#endif /* FXT_AGENT_SNAPSHOT_H */
