/* Stack sampling in a process attached to (fxt-run -p): what sample.c
 * needs of the process's threads, read from /proc/self/task, and the
 * timers it starts on them.  Private to agent/sample/.
 *
 * At a launch each thread starts its own timer as it starts (sample.c).
 * Attached, the threads run already and none passes through our code:
 * the timers are created for them, one per task listed, on that task's
 * CPU-time clock and aimed at it (SIGEV_THREAD_ID), and kept in one table
 * owned by this file (POSIX timers belong to the process: any thread may
 * delete them), which the detach empties.  Threads the program starts
 * while attached are not listed, and not sampled (fxt-run counts them).
 */
#ifndef FXT_AGENT_SAMPLE_LIVE_H
#define FXT_AGENT_SAMPLE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* A task of the process whose mask blocks SIGPROF (its id), or 0: none.
 * Its signals of our timers would wait there, and nothing of ours sees
 * the program's masks change while attached. */
long agent_sample_live_blocker(void);

/* Starts a timer on each task of /proc/self/task: every `period` of the
 * task's CPU time, SIGPROF to it, with `cookie` as the value.  Returns
 * how many tasks are sampled (failures are logged under FXT_DEBUG: a task
 * that ended meanwhile is no failure).  Not in a signal handler. */
unsigned agent_sample_live_start(const struct timespec *period, const void *cookie);

/* A thread begun while attached (its THREAD_START, through the
 * pthread_create() bound in the GOTs): its timer, in the table as the
 * others.  Whether it has one. */
bool agent_sample_live_add(long tid, const struct timespec *period, const void *cookie);

/* Deletes every timer started: once it returns, none can queue a signal
 * (one queued before is still delivered).  Returns how many. */
unsigned agent_sample_live_delete(void);

/* Whether some task of the process has a SIGPROF pending (its own or the
 * process's). */
bool agent_sample_live_prof_pending(void);

/* Whether some task of the process is traced (ptrace): while fxt-run
 * runs a call in one, it may hold a signal and send it again after. */
bool agent_sample_live_traced(void);

/* Whether `pc` lies in the dynamic loader's code (for the handler: a
 * thread there may be changing the loader's lists, which the walk reads;
 * attached, dlopen() is not wrapped to say so).  Signal-safe. */
bool agent_sample_live_in_loader(uint64_t pc);

#endif /* FXT_AGENT_SAMPLE_LIVE_H */
