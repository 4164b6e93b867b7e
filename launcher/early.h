/* fxt-run's early converter: a thread that converts the traced processes'
 * full chunks while they run (convert_early_open(), convert/convert.h), so
 * that when a process ends only its last chunks are left to convert.  It
 * runs EARLY_NICE_BELOW nice levels below fxt-run (so below the program,
 * which has fxt-run's): on a core the program leaves, also on a machine
 * busy with others' work, where SCHED_IDLE would get nothing; and at the
 * lowest priority there is (SCHED_IDLE) while the traced processes have
 * a thread for every core, never in the way of a program that uses them
 * all (it then gets little done, and the conversion at the end does the
 * rest).  Nothing
 * depends on it: what it converted is used only when it fits the spool as
 * it ends (convert_spool()), and it keeps nothing on disk but unnamed
 * files, so a killed fxt-run leaves the spools as they were.
 *
 * When it first sees a spool, it also decodes the source location of every
 * function of each of its modules built with -finstrument-functions into
 * the files kept across runs (fxt_sym_loccache_fill(), FXT_SRCLINE_CACHE),
 * unless one is kept already: the conversions then read them (the
 * process's, also the first run of a new build, and its own early ones)
 * rather than decode the line programs.  It stops once the program has
 * exited (early_fill_stop()): what it has not done, a conversion decodes.
 *
 * It shares no lock with fxt-run's main thread (a thread that waits for
 * one held by a thread of the lowest priority waits for as long as the
 * machine is busy): each spool's slot has a state that one side or the
 * other moves by compare-and-swap, and the main thread waits for a step
 * under way at most EARLY_WAIT_NS before it converts the spool whole and
 * leaves the slot for the thread to free. */
#ifndef FXT_LAUNCHER_EARLY_H
#define FXT_LAUNCHER_EARLY_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/convert.h"

/* Spools the thread converts in a run (the rest are converted at their
 * end only); spools whose modules it looks at (a run's processes mostly
 * share theirs), and modules. */
#define EARLY_MAX_SPOOLS 64
#define EARLY_MAX_LOOKED 64
#define EARLY_MAX_FILLED 256

enum early_state {
	EARLY_FREE = 0,	 /* no spool */
	EARLY_BUSY,	 /* the thread opens it or converts a chunk */
	EARLY_IDLE,	 /* between two steps: ce is for the taking */
	EARLY_TAKEN,	 /* the main thread took ce (or it had none) */
	EARLY_ABANDONED, /* the main thread went on without it: the thread frees ce */
};

/* A spool the thread looked at: its path (set before the slot leaves
 * EARLY_FREE, then fixed), its conversion (NULL: not one it can convert
 * early). */
struct early_spool {
	uint32_t state;	 /* enum early_state */
	uint32_t wanted; /* set by early_take(): no step begins */
	long pid;	 /* its process */
	char path[PATH_MAX];
	struct convert_early *ce;
};

struct early {
	const char *out; /* OUT, absolute: whose spools */
	const char *dir; /* OUT's directory */
	bool srcline;
	struct early_spool v[EARLY_MAX_SPOOLS];
	size_t n;	  /* slots used; only the thread adds one */
	uint64_t fed;	  /* chunks converted, for the debug log */
	uint64_t idle_ms; /* how long it was at SCHED_IDLE, for the debug log */
	/* The spools whose modules it looked at, the modules (malloc'd
	 * paths), how many of them it decoded the locations of. */
	char *looked[EARLY_MAX_LOOKED];
	size_t nlooked;
	char *filled[EARLY_MAX_FILLED];
	size_t nfilled;
	uint64_t kept_ahead;
	/* early_holds()'s last path, hashed (0: none yet). */
	uint64_t going;
	int fill_stop; /* early_fill_stop() */
	int nice;      /* fxt-run's nice value */
	unsigned cpus; /* the cores fxt-run may run on */
	int tid;       /* the thread's (its nice value is its own) */
	int idle;      /* at SCHED_IDLE (else below fxt-run by EARLY_NICE_BELOW) */
	int lifted;    /* early_take() lifted it: the thread leaves its priority */
	int stop;      /* early_stop(); a futex word: it wakes the thread's sleep */
	bool running;
	pthread_t thread;
};

/* Starts the thread for the spools of OUT (`out`, absolute) in its
 * directory `dir` ("" for the root; both kept).  0 or -errno (the run
 * goes on without it). */
int early_start(struct early *x, const char *out, const char *dir, bool srcline);
/* The early conversion of the spool at `path`, taken from the thread (the
 * caller passes it to the conversion and frees it), or NULL.  Safe with
 * x NULL. */
struct convert_early *early_take(struct early *x, const char *path);
/* Whether the thread may read the spool at `path` now or later: a step on
 * it under way, or one to come (it reads the chunks through a mapping: a
 * spool it may read must not be cut, e.g. recycled as a spare, only
 * removed).  The path is marked first, so that the thread leaves alone a
 * spool it had not opened yet.  Safe with x NULL. */
bool early_holds(struct early *x, const char *path);
/* No more locations decoded ahead (the program has exited: the
 * conversions are under way).  Safe with x NULL. */
void early_fill_stop(struct early *x);
/* Stops and joins it and frees what it holds.  Safe if it never started. */
void early_stop(struct early *x);

#endif /* FXT_LAUNCHER_EARLY_H */
