/* fxt-run's early converter: a thread that converts the traced processes'
 * full chunks while they run (convert_early_open(), convert/convert.h), so
 * that when a process ends only its last chunks are left to convert.  It
 * runs at the lowest priority there is (SCHED_IDLE): on a core the program
 * leaves idle, never in the way of a program that uses them all (it then
 * gets little done, and the conversion at the end does the rest).  Nothing
 * depends on it: what it converted is used only when it fits the spool as
 * it ends (convert_spool()), and it keeps nothing on disk but unnamed
 * files, so a killed fxt-run leaves the spools as they were. */
#ifndef FXT_LAUNCHER_EARLY_H
#define FXT_LAUNCHER_EARLY_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/convert.h"

/* A spool the thread looked at: its conversion, or NULL (not one it can
 * convert early, or taken). */
struct early_spool {
	char *path;
	struct convert_early *ce;
};

struct early {
	const char *out; /* OUT, absolute: whose spools */
	char dir[PATH_MAX];
	bool srcline;
	pthread_mutex_t lock; /* v, n, cap and each conversion's steps */
	struct early_spool *v;
	size_t n, cap;
	uint64_t fed; /* chunks converted, for the debug log */
	int stop;
	bool running;
	pthread_t thread;
};

/* Starts the thread for the spools of OUT (`out`, absolute).  0 or -errno
 * (the run goes on without it). */
int early_start(struct early *x, const char *out, bool srcline);
/* The early conversion of the spool at `path`, taken from the thread (the
 * caller passes it to the conversion and frees it), or NULL.  Safe if the
 * thread never started. */
struct convert_early *early_take(struct early *x, const char *path);
/* Stops and joins it and frees what it holds.  Safe if it never started. */
void early_stop(struct early *x);

#endif /* FXT_LAUNCHER_EARLY_H */
