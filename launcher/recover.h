/* Recovery: the spool a traced process left behind (killed by a signal,
 * _exit(), abort() ...) -> an FXT archive, with the agent's own flusher.
 *
 * The spool (agent/spool.h) holds everything the archive needs but the
 * per-thread metadata the process kept in memory: the pid, the program's
 * name, the clock calibration start, the modules loaded (for symbols) and
 * every thread's records in its chunks.  What a recovered archive lacks:
 *
 *  - thread names (threads are named "thread TID");
 *  - drop counts (kept in the process): no "records dropped" instants;
 *  - the exact end of frames still open when the process died: they close
 *    one tick after their thread's last record.
 *
 * Ticks per second: 1e9 for the monotonic clock; for the TSC, measured
 * from the spool's calibration start to now (the same machine, an
 * invariant TSC), else from the header's later calibration point.
 * Private to launcher/.
 */
#ifndef FXT_LAUNCHER_RECOVER_H
#define FXT_LAUNCHER_RECOVER_H

#include <stddef.h>
#include <stdint.h>

struct recover_result {
	uint64_t pid;	  /* from the spool header */
	uint64_t events;  /* slices written */
	uint64_t threads; /* threads with records */
	uint64_t records; /* spool records read */
};

/* Writes the archive of `spool_path` to `archive_path` (".gz": compressed),
 * replacing it unless `no_clobber` (then -EEXIST if it exists).  `session`
 * (may be NULL) is the trace's session file (agent/session.h), whose
 * logged pipe writes give the process's pipe reads their flows.  The spool
 * is left in place.  Returns 0 or -errno; -EBADMSG for a file that is not
 * a spool of this version. */
int recover_spool(const char *spool_path, const char *archive_path, int no_clobber,
		  const char *session, struct recover_result *res);

/* The pid a spool belongs to, read from its header, or -errno. */
long recover_spool_pid(const char *spool_path);

#endif /* FXT_LAUNCHER_RECOVER_H */
