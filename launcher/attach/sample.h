/* fxt-run -p --sample: what fxt-run checks and says of the sampling in a
 * process attached to, read from /proc (the agent's side is
 * agent/sample/, "Attached").
 *
 * Refused before anything is done to the process: a process that has a
 * SIGPROF handler of its own, or a thread of which blocks SIGPROF (once
 * running, its calls of sigaction() and pthread_sigmask() are not ours to
 * see: the agent could not share SIGPROF with it).  While attached: which
 * threads the agent gives a timer (its timers in /proc/PID/timers: SIGPROF
 * to one thread each), and the threads that start meanwhile, which it
 * does not sample (their start goes through no code of ours), looked for
 * at each scan of the window: one that lives less than a scan's interval
 * may go uncounted.
 */
#ifndef FXT_LAUNCHER_ATTACH_SAMPLE_H
#define FXT_LAUNCHER_ATTACH_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* 0, or -EBUSY and the line in `why` (see above). */
int attach_sample_preflight(pid_t pid, char *why, size_t cap);

/* The threads of the process, for the warnings of the window. */
struct attach_pending {
	pid_t tid;
};

struct attach_threads {
	pid_t pid;
	pid_t *known; /* threads there before the attach, or seen since */
	size_t n, cap;
	unsigned sampled;		   /* threads the agent's timers sample at the attach */
	unsigned later;			   /* threads begun while attached, sampled */
	unsigned started;		   /* threads begun while attached, not sampled */
	struct attach_pending pending[64]; /* begun, no timer seen yet */
	size_t npending;
};

/* Lists the threads there before the attach. */
void attach_threads_init(struct attach_threads *a, pid_t pid);

/* After the attach: counts the threads the agent's timers sample
 * (a->sampled). */
void attach_threads_sampled(struct attach_threads *a);

/* At each scan of the window: counts the threads started since the
 * attach, but the agent's own (a->started). */
void attach_threads_scan(struct attach_threads *a);

/* At the end of the window, before the detach: the threads begun and
 * not seen with a timer yet are counted. */
void attach_threads_end(struct attach_threads *a);

/* The warnings, on stderr: no thread sampled; threads started while
 * attached not sampled. */
void attach_threads_report(const struct attach_threads *a);

void attach_threads_free(struct attach_threads *a);

#endif /* FXT_LAUNCHER_ATTACH_SAMPLE_H */
