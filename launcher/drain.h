/* fxt-run's drain thread: while the program runs, it copies the traced
 * processes' full staged chunks to their reserved places (spool/format.h,
 * "Staged chunks"), on a core the program's threads may not be using, so
 * that their hooks do not pay for the copy.  The processes ring it through
 * the control file's doorbell (run/control.h).  A chunk it does not get
 * to in time is copied by its own thread: the drain thread only ever saves
 * work, and nothing depends on it running.  It allocates only when rung,
 * so fxt-run's fork of the program (before any process can ring) finds
 * it asleep. */
#ifndef FXT_LAUNCHER_DRAIN_H
#define FXT_LAUNCHER_DRAIN_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spool/format.h"
#include "run/control.h"

struct drain_staged {
	uint64_t off, size;
	struct spool_chunk *c; /* the chunk, mapped shared */
};

/* A spool the thread watches: open, header mapped, its staged chunks. */
struct drain_spool {
	char *path;
	int fd;
	struct spool_header *h;
	struct drain_staged *staged;
	size_t nstaged, cap;
};

struct drain {
	const char *out; /* OUT, absolute: whose spools */
	char dir[PATH_MAX];
	struct run_bell *bell;
	struct drain_spool *v;
	size_t n, cap;
	pthread_mutex_t lock; /* v, n, cap: the thread's passes, drain_let_go() */
	uint64_t copied;    /* chunks copied, for the debug log */
	uint32_t rescanned; /* the doorbell's word at the last look at dir */
	int stop;
	bool running;
	pthread_t thread;
};

/* Starts the thread for the spools of OUT (`out`, absolute), rung through
 * the control file `ctl`.  0 or -errno (the run goes on without it). */
int drain_start(struct drain *d, const char *out, const char *ctl);

/* Lets go of the spool at `path` if the thread watches it (before its file
 * is emptied and given to another process: fxt-run's spare spools).  Safe
 * if the thread never started. */
void drain_let_go(struct drain *d, const char *path);

/* Stops and joins it, and lets every spool go.  Safe if it never started. */
void drain_stop(struct drain *d);

/* The thread's two steps, for tests: drain_pass() copies every full
 * staged chunk of the spools it watches and returns how many it copied;
 * drain_rescan() looks for new spools of OUT. */
size_t drain_pass(struct drain *d);
void drain_rescan(struct drain *d);

/* Watches the spool at `path` if it is one of this version, unsealed, with
 * staged chunks (drain_rescan() does it for the spools of OUT). */
void drain_watch(struct drain *d, const char *path);

/* Lets every spool go (drain_stop() does it). */
void drain_forget_all(struct drain *d);

#endif /* FXT_LAUNCHER_DRAIN_H */
