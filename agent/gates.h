/* What the agent's core (hooks, wrappers, life cycle) branches on, and the
 * out-of-line code behind it.  Private to agent/.
 *
 * The core declares these here and the features (filters, snapshots,
 * sampling) define them, so that hot code sees a flag and a call and
 * includes no feature's header.  Each is documented where it is defined.
 */
#ifndef FXT_AGENT_GATES_H
#define FXT_AGENT_GATES_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/tbuf.h"

/* ------------------------------------------------------------ filters */

/* Set (to 1) once filters are compiled: the hooks then go through
 * agent_filter_hook() (agent/filter.h). */
extern unsigned char agent_filter_on;

/* The hook when filtering: `addr` has SPOOL_EXIT_BIT for an exit. */
void agent_filter_hook(struct tstate *t, uint64_t addr) __attribute__((noinline));

/* ------------------------------------------------------------ snapshots */

/* The libc groups (AGENT_G_*) a rule watches; 0: none (agent/snapshot.h). */
extern unsigned agent_snap_libc;

/* A recorded libc call (spool/libc_table.h's id `fn`) begins, and ends
 * (after its exit record): when a rule watches its group and it took
 * longer than the rule says, a snapshot.  Called when agent_snap_libc is
 * not 0. */
void agent_snapshot_libc_begin(struct tstate *t, unsigned fn);
void agent_snapshot_libc_end(struct tstate *t, unsigned fn);

/* ------------------------------------------------------------ libc calls */

/* The groups switched on (FXT_LIBC), 0 until the settings are loaded and
 * after the flush started.  Read on every wrapped call (agent/libc.h). */
extern unsigned agent_libc_on;

/* ------------------------------------------------------------ sampling */

/* Around a call that gives the calling thread's real mask to a new thread
 * (pthread_create) or process (posix_spawn, system): whether the
 * program's view of the mask blocks SIGPROF while the real mask does not
 * (see "Masks" in sample.c), and then the real mask blocks it too until
 * agent_sample_release_prof(that answer).  So the new thread starts with
 * SIGPROF blocked, as the program means it to, until its start has
 * agent_sample_thread_start() take it over, and a new program gets the
 * mask it would have had.  errno is kept.  (agent/sample.h) */
bool agent_sample_hold_prof(void);
void agent_sample_release_prof(bool prof_blocked);

/* Non-zero while the thread is inside dlopen or dlclose (modules.c): no
 * stack samples meanwhile (agent/sample.h).  Defined in sample.c. */
extern __thread unsigned char agent_in_dl __attribute__((tls_model("initial-exec")));

#endif /* FXT_AGENT_GATES_H */
