/* The engine of fxt-waits: who made each thread wait, and for how long.
 *
 * One pass over an archive follows each thread's open slices.  A wait is a
 * blocking libc call (a lock, a condition or semaphore wait, a pipe or
 * socket read, a join, a wait for a child: waits.c's table) whose slice
 * ends a flow begun on another thread or process: the flow's begin is in
 * the call that released it (an unlock, a signal, a write).  A lock or
 * semaphore call counts when it says it waited (its argument "waited"),
 * a read when it read a pipe or socket (its "stream_offset").  Joins and
 * waits for a child have no flow: their releaser is the thread of the
 * process that ended last before the call returned, or the child (the
 * call's result); when that had ended before the call began, the call did
 * not wait and is no wait.  A blocking call for which none of that finds a
 * releaser is a wait with no releaser (timed out, or its releaser not
 * traced), kept apart.
 *
 * When the archive holds the kernel's scheduling (context switch records:
 * fxt-import of a trace.dat, merged with fxt-merge), a released wait's
 * runnable time is from its release to the waiter's next switch-in, and
 * each thread's time running, runnable and blocked is known
 * (tools/front/sched.h). */
#ifndef FXT_TOOLS_WAITS_H
#define FXT_TOOLS_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/front/common.h"
#include "tools/front/sched.h"

/* How a wait's releaser was found. */
enum waits_via {
	WAITS_VIA_NONE,	   /* not found */
	WAITS_VIA_FLOW,	   /* a flow from its release call */
	WAITS_VIA_THREAD,  /* a join: the thread that ended within it */
	WAITS_VIA_PROCESS, /* a wait for a child: the child that ended within it */
};

/* One wait.  Times in ns on the archive's clock; strings live as long as
 * the struct waits. */
struct waits_item {
	uint64_t pid, tid;   /* the waiter */
	uint64_t start, end; /* the blocking call's slice */
	const char *call;    /* "pthread_mutex_lock" */
	const char *func;    /* the function that called it (its "caller",
				else its parent slice), "?" if neither */
	enum waits_via via;
	bool timed_out;	     /* no releaser, and the call said ETIMEDOUT */
	uint64_t rpid, rtid; /* the releaser (via != NONE) */
	uint64_t rts;	     /* the release (a flow's begin; an end) */
	const char *rcall;   /* the release call, "(thread end)", "(exit)" */
	const char *rfunc;   /* the function the releaser was in */
	const char *since;   /* its innermost slice open from the wait's
				start to the release; NULL: none was */
	int64_t runnable;    /* ns from the release to the waiter's
				switch-in; -1: not known */
};

struct waits {
	struct waits_item *items; /* in the order of their start */
	size_t nitems;
	uint64_t start_ns;    /* the archive's first time */
	bool sched;	      /* the archive has context switches */
	uint64_t events;      /* event records read */
	uint64_t kernel_lost; /* events the kernel lost ("fxt: N kernel
				 events lost") */
	/* The calls the tracer dropped, another writer's full buffers. */
	struct tool_losses losses;
	/* With context switches: the states of the threads with calls (all
	 * the threads with events when none has calls: an imported trace). */
	struct sched_thread *states;
	size_t nstates, nstates_cap;
	struct waits_engine *e; /* the tables behind the strings */
};

/* Reads the archive of in into w (zeroed first).  Returns 0, or a negative
 * errno with a one-line reason in err (tool_read_records()'s). */
int waits_load(struct waits *w, const struct tool_input *in, char *err, size_t errlen);

/* The name of thread tid (kernel object records), else of its process,
 * else NULL. */
const char *waits_thread_name(const struct waits *w, uint64_t pid, uint64_t tid);

void waits_free(struct waits *w);

#endif /* FXT_TOOLS_WAITS_H */
