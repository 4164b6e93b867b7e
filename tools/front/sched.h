/* Each thread's time running, runnable (woken or preempted, waiting for a
 * CPU) and blocked (asleep: a sleep, a lock, I/O), from the kernel's
 * scheduling in an archive: its context switch records (fxt-run --kernel,
 * or a trace.dat through fxt-import) and the wake-up instants the importer
 * writes with them (category "sched", sched_waking / sched_wakeup /
 * sched_wakeup_new, on the woken thread).  fxt-report --by thread and
 * fxt waits say them.
 *
 * A thread's state follows its switches: a switch-in starts "running"; a
 * switch-out ends it and starts "runnable" when the thread was preempted
 * (out_state running), else "blocked" until its wake-up, which starts
 * "runnable" until the next switch-in.  Without wake-ups in the archive,
 * the whole time off the CPU after a sleep is blocked.  The time before a
 * thread's first switch and after its last is not counted but to the
 * archive's end (sched_finish()).
 *
 * A switch the kernel did not record shows on its CPU: the next switch
 * there switches out another thread than the last one switched in (some
 * kernels record no event of some tasks' own: a sandbox's agent, whose
 * leaving a CPU is never said, nor the switch-in of the thread after it).
 * Neither thread's state is known for that span: from the CPU's last
 * switch-in to that next switch, the thread switched out (it ran for a
 * part, waited for the rest) and the one that had come in (it ran for a
 * part) are "unrecorded", not counted as running or runnable: nothing is
 * made up.  So is a thread switched in while it was running elsewhere. */
#ifndef FXT_TOOLS_FRONT_SCHED_H
#define FXT_TOOLS_FRONT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fxt/reader.h>

#include "tools/front/thrmap.h"

enum sched_state {
	SCHED_RUNNING,
	SCHED_RUNNABLE,
	SCHED_BLOCKED,
	SCHED_UNRECORDED, /* a switch of it the kernel did not record */
	SCHED_NSTATES,
	SCHED_NONE
};

struct sched_thread {
	uint64_t pid, tid;
	uint64_t ns[SCHED_NSTATES]; /* time in each state */
	uint64_t switches;	    /* its switch-outs */
	uint64_t wakeups;	    /* its wake-ups from blocked */
	uint64_t since;		    /* when `state` began */
	uint8_t state;		    /* enum sched_state, or SCHED_NONE: none known */
};

struct sched {
	struct sched_thread *t;
	size_t n, cap;
	struct thrmap map;
	/* Threads' names (their kernel objects), by tid. */
	struct sched_name {
		char name[32];
	} * names;
	size_t nnames, capnames;
	struct thrmap namemap; /* (0, tid) -> names[] */
	/* Each CPU's thread last switched in, and when (known: one was). */
	struct sched_cpu {
		uint64_t pid, tid, since;
		bool known;
	} * cpus;
	size_t ncpus;
	uint64_t unrecorded; /* switches seen missing (of any process) */
	uint64_t nswitch;    /* context switch records seen */
	uint64_t last_ns;    /* the last one's time */
};

/* Feeds a record: a context switch, a wake-up instant, a thread's kernel
 * object (its name); anything else is ignored.  `ts_ns` is its time in ns (the caller's
 * conversion). 0 or -ENOMEM. */
int sched_add_record(struct sched *s, const struct fxt_record *rec, uint64_t ts_ns);

/* Ends every open state at `end_ns` (the archive's last time), or at the
 * last switch when later. */
void sched_finish(struct sched *s, uint64_t end_ns);

/* Thread (pid, tid)'s times, NULL when no switch of it was seen. */
const struct sched_thread *sched_find(const struct sched *s, uint64_t pid, uint64_t tid);

/* Thread tid's name (its last kernel object), or NULL. */
const char *sched_name(const struct sched *s, uint64_t tid);

void sched_free(struct sched *s);

/* The one format of the states in text: a heading line (after `lead`),
 * then per thread "RUNNING RUNNABLE BLOCKED UNRECORDED PID TID[ NAME]". */
void sched_put_text_head(FILE *f, const char *lead);
void sched_put_text(FILE *f, const struct sched_thread *t, const char *name);
/* "\"running_ns\":N,\"runnable_ns\":N,\"blocked_ns\":N,\"unrecorded_ns\":N" of a
 * JSON object. */
void sched_put_json(FILE *f, const struct sched_thread *t);

#endif /* FXT_TOOLS_FRONT_SCHED_H */
