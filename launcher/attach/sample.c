/* fxt-run -p --sample: its checks and warnings, from /proc (see
 * sample.h). */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/attach/preflight.h"
#include "launcher/attach/sample.h"
#include "launcher/attach/why.h"
#include "run/attach.h"

/* SIGPROF's bit in the masks of /proc/PID/status. */
#define PROF_BIT (1ull << (SIGPROF - 1))

/* The hexadecimal mask of line `name` ("SigCgt") of task tid's status
 * (tid 0: the process's), or 0. */
static unsigned long long task_mask(pid_t pid, pid_t tid, const char *name)
{
	char path[96], text[4096], *p;
	size_t len = strlen(name);

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (attach_slurp(path, text, sizeof(text)) < 0)
		return 0;
	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return strtoull(p + len + 1, NULL, 16);
	return 0;
}

/* Whether thread tid of process pid is the agent's own (run/attach.h). */
static bool agents_thread(pid_t pid, pid_t tid)
{
	char path[96], comm[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	return attach_slurp(path, comm, sizeof(comm)) >= 0 &&
	       strncmp(comm, FXT_ATTACH_THREAD_PREFIX, strlen(FXT_ATTACH_THREAD_PREFIX)) == 0;
}

/* The process's threads, malloc'd into *v (n of them); false if none
 * could be listed. */
static bool list_tasks(pid_t pid, pid_t **v, size_t *n)
{
	char path[64];
	struct dirent *d;
	size_t cap = 0;
	DIR *dir;

	*v = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			pid_t *p = realloc(*v, (cap = cap ? 2 * cap : 16) * sizeof(**v));

			if (!p)
				break;
			*v = p;
		}
		(*v)[(*n)++] = (pid_t)tid;
	}
	closedir(dir);
	return *n != 0;
}

/* Whether thread `tid` blocks SIGPROF.  One glibc has just created blocks
 * every signal until it first runs (pthread_create()), which a loaded
 * machine may make a while: a mask that blocks it is read again, for at
 * most 200 ms, before it counts. */
static bool blocks_prof(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 20; i++) {
		if (!(task_mask(pid, tid, "SigBlk") & PROF_BIT))
			return false;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	return true;
}

int attach_sample_preflight(pid_t pid, char *why, size_t cap)
{
	pid_t *v;
	size_t n;
	int err = 0;

	if (task_mask(pid, 0, "SigCgt") & PROF_BIT)
		return attach_fail(why, cap, -EBUSY,
				   "--sample: process %d has a SIGPROF handler of its own, which "
				   "sampling cannot share once the process runs (run the program "
				   "under fxt-run --sample instead)",
				   (int)pid);
	if (!list_tasks(pid, &v, &n))
		return 0; /* gone: the attach says so */
	for (size_t i = 0; i < n && !err; i++)
		if (!agents_thread(pid, v[i]) && blocks_prof(pid, v[i]))
			err = attach_fail(why, cap, -EBUSY,
					  "--sample: thread %d of process %d blocks SIGPROF, which "
					  "sampling cannot see change once the process runs (run "
					  "the program under fxt-run --sample instead)",
					  (int)v[i], (int)pid);
	free(v);
	return err;
}

static bool known(const struct attach_threads *a, pid_t tid)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->known[i] == tid)
			return true;
	return false;
}

static void add_known(struct attach_threads *a, pid_t tid)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		pid_t *p = realloc(a->known, cap * sizeof(*p));

		if (!p)
			return;
		a->known = p;
		a->cap = cap;
	}
	a->known[a->n++] = tid;
}

void attach_threads_init(struct attach_threads *a, pid_t pid)
{
	memset(a, 0, sizeof(*a));
	a->pid = pid;
	list_tasks(pid, &a->known, &a->n);
	a->cap = a->n;
}

/* /proc/PID/timers: "signal: 27/..." then "notify: signal/tid.TID" for
 * each timer that sends SIGPROF to one thread: the agent's (the process
 * has no SIGPROF handler of its own, or it was refused).  The number of
 * them, or, with `tid` not 0, whether that thread has one. */
static unsigned prof_timers(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	unsigned n = 0;
	bool prof = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timers", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int sig;

		if (sscanf(line, "signal: %d/", &sig) == 1)
			prof = sig == SIGPROF;
		else if (prof && strncmp(line, "notify: signal/tid.", 19) == 0 &&
			 (!tid || atol(line + 19) == (long)tid))
			n++;
	}
	fclose(f);
	return n;
}

void attach_threads_sampled(struct attach_threads *a)
{
	a->sampled = prof_timers(a->pid, 0);
}

/* Whether thread tid of process pid is there still. */
static bool task_exists(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* The threads begun while attached and not seen with a timer yet: each
 * stays pending until its timer is seen (it is made as the thread starts,
 * a moment after the task appears: on a loaded machine that can be later
 * than the 3 scans, 150 ms, that were waited for before), it ends, or the
 * window does: then it counts as not sampled. */
static void check_pending(struct attach_threads *a, bool last)
{
	size_t k = 0;

	for (size_t i = 0; i < a->npending; i++) {
		pid_t tid = a->pending[i].tid;

		if (prof_timers(a->pid, tid)) {
			a->later++;
		} else if (!task_exists(a->pid, tid)) {
			/* ended unseen: not counted either way */
		} else if (agents_thread(a->pid, tid)) {
			/* the agent's, named a moment after it began */
		} else if (last) {
			a->started++;
		} else {
			a->pending[k++] = a->pending[i];
		}
	}
	a->npending = k;
}

void attach_threads_scan(struct attach_threads *a)
{
	pid_t *v;
	size_t n;

	if (!list_tasks(a->pid, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (known(a, v[i]))
			continue;
		add_known(a, v[i]);
		if (agents_thread(a->pid, v[i]))
			continue;
		if (a->npending < sizeof(a->pending) / sizeof(a->pending[0]))
			a->pending[a->npending++] = (struct attach_pending){ v[i] };
		else
			a->started++; /* too many to follow: counted as not sampled */
	}
	free(v);
	check_pending(a, false);
}

void attach_threads_end(struct attach_threads *a)
{
	check_pending(a, true);
}

void attach_threads_report(const struct attach_threads *a)
{
	if (a->sampled == 0)
		fprintf(stderr,
			"fxt-run: warning: no thread of process %d was sampled (FXT_DEBUG=1 "
			"makes its agent say why on its standard error)\n",
			(int)a->pid);
	if (a->started != 0)
		fprintf(stderr,
			"fxt-run: warning: %u thread%s started while attached %s not sampled "
			"(a thread's timer starts with it, through the pthread_create() of ours "
			"bound in the process's modules: one it called some other way)\n",
			a->started, a->started == 1 ? "" : "s", a->started == 1 ? "was" : "were");
}

void attach_threads_free(struct attach_threads *a)
{
	free(a->known);
	a->known = NULL;
}
