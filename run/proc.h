/* Is a process still there?  A pid alone cannot say (pids are reused, and
 * kill(pid, 0) succeeds on a zombie), so a process is known by its pid and
 * its start time, field 22 of /proc/PID/stat.  Used by the agent (to
 * stamp its spool, and to see whether fxt-run is still there) and by
 * fxt-run (to tell a spool whose process is gone).  No malloc, no stdio. */
#ifndef FXT_RUN_PROC_H
#define FXT_RUN_PROC_H

#include <stdbool.h>
#include <stdint.h>

/* State (field 3: 'R', 'S', 'Z' ...) and start time (field 22, clock ticks
 * since boot) of process `pid` (0: this process).  0 or -errno (-ENOENT:
 * no such process; -EINVAL: unreadable line). */
int run_proc_stat_read(long pid, char *state, uint64_t *start_time);

/* Whether process `pid` runs: it exists, some thread of it is no zombie
 * (its main thread may be, gone by pthread_exit()), and (when start_time
 * is not 0) started at start_time, so is not a later process that reuses
 * the pid. */
bool run_proc_alive(long pid, uint64_t start_time);

/* run_proc_alive(pid, 0), and the start time of the process that runs in
 * *start_time (0: gone, or its line unreadable), in one read. */
bool run_proc_alive_since(long pid, uint64_t *start_time);

/* How many threads process `pid` has (field 20 of /proc/PID/stat), or 0:
 * gone, a zombie, or unreadable. */
unsigned run_proc_threads(long pid);

#endif /* FXT_RUN_PROC_H */
