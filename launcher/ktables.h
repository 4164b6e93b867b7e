/* fxt-run --kernel's tables (ktables.c): what reading the kernel's events
 * needs besides their pages: the formats of the events enabled, and the
 * tasks' names and tgids.  Private to launcher/kernel.c. */
#ifndef FXT_LAUNCHER_KTABLES_H
#define FXT_LAUNCHER_KTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/addrtab.h"

struct tep_handle;
struct parts;

/* Event sys:ev is enabled ("*": the system's every event): its format is
 * read by ktables_formats(). */
void ktables_want(const char *sys, const char *ev);

/* The formats of the events wanted, and the ring buffer's page header:
 * what reading the pages needs.  NULL when out of memory or without a
 * page header. */
struct tep_handle *ktables_formats(void);

/* tid -> tgid.  A task the program created while recording gets its
 * tgid from its task:task_newtask event (its clone flags: CLONE_THREAD,
 * its creator's tgid; else its own); another process's, from perf's
 * task events (PERF_RECORD_FORK, the whole system's: ktables_forks_*());
 * a task that existed before from the table read at the start (/proc);
 * one that none names, from /proc at the end while it runs.  Without
 * those events (the kernel lacks them, or lost some, or perf did) the
 * kernel's saved_tgids, read at the end, as before: the whole system's
 * (31,000 lines here: 26-110 ms of the end's wait). */
struct ktgid {
	int tid, tgid;
};
struct kborn {
	uint64_t key; /* tid + 1 (addrtab.h) */
	int tgid;
};
struct ktgids {
	struct ktgid *v; /* saved_tgids, sorted by tid; used when `saved` */
	size_t n;
	bool saved;
	struct ktgid *start; /* the tasks at the start, sorted by tid */
	size_t nstart;
	/* struct kborn: each task of the events, its tgid (-1: unknown),
	 * ktables_names()'s; `created` of them by task_newtask's */
	struct addrtab born;
	unsigned created;
	uint64_t end_ticks; /* when recording ended, in clock ticks since boot (/proc's) */
	/* struct kfork: the tasks perf saw created (ktables_forks_read()) */
	struct addrtab forked;
	bool forks_lost; /* perf lost some */
	/* the others': from perf, /proc at the end, the start, none */
	unsigned from_forks, from_proc, from_start, unknown;
	long *pids; /* the agent's processes (ktables_tgid_of()), a copy */
	size_t npids;
};

/* The tasks' names into tep: with the scheduler's events enabled, each
 * task's last name in the recorded events' comm fields (kpages.h: the
 * pages read once, all of them in their files), else the kernel's
 * saved_cmdlines; in the same pass, the tgids of the tasks created while
 * recording (task:task_newtask) into m->born (m->start read already).
 * Final once recording is off. */
void ktables_names(struct tep_handle *tep, struct ktgids *m);
/* Every task's tgid now (/proc/PID/task/TID) into m->start. */
void ktables_start(struct ktgids *m);
/* The kernel's saved_tgids into m->v (for m->saved: set it first, before
 * ktables_names(), which then leaves the other tasks to it). */
void ktables_tgids(struct ktgids *m);
/* perf's task events of every CPU (ktables.c), from now on: 0, or -errno
 * (no perf: the tasks of other processes created and ended meanwhile are
 * then unknown).  _start(): a thread reads them while the program runs
 * (however many tasks it creates); _read() at the end (the thread
 * stopped): their tgids into m->forked (0, or -ENODEV: none open);
 * _close(): at the end, or whenever (the thread stopped). */
int ktables_forks_open(void);
void ktables_forks_start(void);
int ktables_forks_read(struct ktgids *m);
void ktables_forks_close(void);
/* Frees *m's tables (all of them), zeroes it. */
void ktables_free(struct ktgids *m);
/* *to takes *from's tables but its processes (pids), *from zeroed. */
void ktables_move(struct ktgids *to, struct ktgids *from);

/* import_ctx's tgid_of with arg a struct ktgids: tid's tgid, -1 if
 * unknown; *agent set when it is one of m->pids. */
int ktables_tgid_of(void *arg, int tid, bool *agent);

/* The tasks of process `pid` (/proc/PID/task) not in `have` yet, appended
 * to it as " TID" each (pid itself when the folder cannot be read).  The
 * number added. */
int ktables_tasks(pid_t pid, char *have, size_t cap);

#endif /* FXT_LAUNCHER_KTABLES_H */
