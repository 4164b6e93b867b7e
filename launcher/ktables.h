/* fxt-run --kernel's tables (ktables.c): what reading the kernel's events
 * needs besides their pages: the formats of the events enabled, and the
 * tasks' names and tgids.  Private to launcher/kernel.c. */
#ifndef FXT_LAUNCHER_KTABLES_H
#define FXT_LAUNCHER_KTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tep_handle;
struct parts;

/* Event sys:ev is enabled ("*": the system's every event): its format is
 * read by ktables_formats(). */
void ktables_want(const char *sys, const char *ev);

/* The formats of the events wanted, and the ring buffer's page header:
 * what reading the pages needs.  NULL when out of memory or without a
 * page header. */
struct tep_handle *ktables_formats(void);

/* tid -> tgid, from the kernel's saved_tgids, sorted by tid. */
struct ktgid {
	int tid, tgid;
};
struct ktgids {
	struct ktgid *v;
	size_t n;
	long *pids; /* the agent's processes (ktables_tgid_of()), a copy */
	size_t npids;
};

/* The tasks' names into tep: with the scheduler's events enabled, each
 * task's last name in the recorded events' comm fields (kpages.h: the
 * pages read once, all of them in their files), else the kernel's
 * saved_cmdlines.  Final once recording is off. */
void ktables_names(struct tep_handle *tep);
/* The kernel's saved_tgids into *m (free with ktables_free()). */
void ktables_tgids(struct ktgids *m);
void ktables_free(struct ktgids *m);

/* import_ctx's tgid_of with arg a struct ktgids: tid's tgid, -1 if
 * unknown; *agent set when it is one of m->pids. */
int ktables_tgid_of(void *arg, int tid, bool *agent);

/* The tasks of process `pid` (/proc/PID/task) not in `have` yet, appended
 * to it as " TID" each (pid itself when the folder cannot be read).  The
 * number added. */
int ktables_tasks(pid_t pid, char *have, size_t cap);

#endif /* FXT_LAUNCHER_KTABLES_H */
