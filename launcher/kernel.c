/* fxt-run --kernel: the kernel's events of the traced processes, recorded
 * while the program runs and merged into its archive.
 *
 * The events go to a tracefs instance of fxt-run's own, "fxtrace-<pid of
 * fxt-run>" (another user's tracing is left alone), on the clock "mono"
 * (CLOCK_MONOTONIC, the agent's: no shift at the merge), filtered to the
 * program's process by set_event_pid with event-fork on (its children
 * follow), with record-tgid on (so that each thread's states land on the
 * agent's thread: import.h, tgid_of).  While the program runs, a thread
 * of fxt-run's moves each CPU's full pages out of the ring buffer
 * (KERNEL_BUFFER_KB per CPU, newest dropped when full, counted) into
 * files next to the archive (kpages.h: a run longer than the buffer loses
 * nothing while the reader keeps up, in a page of memory per CPU); when
 * the program is done the rest is read (kernel_stop()), the instance goes
 * in a thread while fxt-run converts, and the pages are read back in time
 * order into OUT.kernel.fxt (kernel_finish()) with the importer's
 * mapping (import_stream_*(): context switch records, wake-ups), which is
 * merged into OUT after the parts.
 *
 * The instance goes whatever happens to fxt-run short of SIGKILL: at
 * exit, and on a fatal signal; a killed fxt-run's instance is removed by
 * the next --kernel run (its pid is gone), with a note.  Without the
 * permission to trace (not root, tracefs not mounted, a locked-down
 * kernel), one line and exit 2 before the program runs.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launcher/launcher.h"

#ifndef HAVE_LIBTRACECMD

void kernel_open(const char *groups)
{
	(void)groups;
	die(EXIT_USAGE, "--kernel: fxtrace was built without libtracefs (install "
			"libtracecmd-dev and libtracefs-dev and configure again)");
}

void kernel_follow(pid_t pid)
{
	(void)pid;
}

void kernel_signals(void)
{
}

void kernel_stream(const char *out)
{
	(void)out;
}

void kernel_stop(const char *out)
{
	(void)out;
}

int kernel_finish(const char *out, const struct parts *ps, bool keep, bool quiet)
{
	(void)out;
	(void)ps;
	(void)keep;
	(void)quiet;
	return 0;
}

#else

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "convert/merge.h"
#include "fxt/writer.h"
#include "import/import.h"
#include "launcher/kpages.h"

#define KERNEL_PREFIX	 "fxtrace-"
/* Per CPU, unless FXT_KERNEL_BUFFER says: ~250,000 scheduler events, a
 * second or more of the busiest program's while the reader (every 100 ms)
 * is kept from running; its allocation is most of what starting costs
 * (64 MiB: 0.1-0.4 s here, and 0.1 s to free). */
#define KERNEL_BUFFER_KB 16384

/* The event groups by name: their events as "system:event" ("system:*"
 * the whole system). */
static const struct group {
	const char *name;
	const char *events;
} groups_tab[] = {
	{ "sched", "sched:sched_switch,sched:sched_waking,sched:sched_wakeup,"
		   "sched:sched_wakeup_new,sched:sched_process_fork,"
		   "sched:sched_process_exec,sched:sched_process_exit" },
	{ "syscalls", "raw_syscalls:sys_enter,raw_syscalls:sys_exit" },
	{ "faults", "exceptions:page_fault_user" },
	{ "block", "block:block_rq_issue,block:block_rq_complete" },
	{ "irq", "irq:*" },
};

static struct tracefs_instance *inst;
static char inst_name[64];
/* The events enabled ("*": the system's every event): only their formats
 * are read at the end (tracefs_local_events() reads all of them and
 * /proc/kallsyms: 0.7 s here; a system's every event, 30 of sched's, the
 * most of what the end took with a short run). */
#define MAX_ENABLED	 32
static struct {
	char sys[64], ev[64];
} enabled[MAX_ENABLED];
static size_t nenabled;

/* The thread removing the instance while the end goes on (remove_begin()),
 * and whether it runs. */
static pthread_t remover;
static bool remover_on;

/* The instance goes (the reader first, and its files of the instance);
 * safe to call twice.  With the remover started, waits for it. */
static void instance_end(void)
{
	kpages_stop();
	kpages_release();
	if (remover_on) {
		pthread_join(remover, NULL);
		remover_on = false;
	}
	if (inst == NULL)
		return;
	tracefs_trace_off(inst);
	tracefs_instance_destroy(inst); /* again after the remover: ENOENT */
	tracefs_instance_free(inst);
	inst = NULL;
}

static void *remover_main(void *arg)
{
	(void)arg;
	tracefs_instance_destroy(inst);
	return NULL;
}

/* Removes the instance in a thread of its own (the kernel's rmdir takes
 * 70-110 ms here, most of it waiting: fxt-run's system time is 20 ms),
 * while the archives are converted and the events read and merged:
 * instance_end() waits for it.  Its files are closed already, and a fatal
 * signal meanwhile still removes it (on_fatal(): whichever rmdir comes
 * first does it, the other fails; a thread inside its rmdir finishes it
 * before the process dies).  Without the thread, removed here. */
static void remove_begin(void)
{
	sigset_t all, old;

	kpages_release();
	if (inst == NULL || remover_on)
		return;
	tracefs_trace_off(inst);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	remover_on = pthread_create(&remover, NULL, remover_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!remover_on)
		instance_end();
}

/* Everything goes; safe to call twice (at exit after a signal). */
static void kernel_destroy(void)
{
	instance_end();
	kpages_close();
}

/* The instance's folder, for on_fatal(). */
static char inst_path[PATH_MAX];

/* While fxt-run's main thread has a file of the instance open (libtracefs
 * opens, writes and closes one in each call), on_fatal() could not remove
 * the folder (EBUSY): a signal then waits in `pending` until busy_end(),
 * whatever thread it came to. */
static volatile sig_atomic_t busy, pending;

static void on_fatal(int sig)
{
	if (busy) {
		pending = sig;
		return;
	}
	/* Only what is async-signal-safe: libtracefs's calls allocate, and
	 * the signal may have come in the middle of one.  Removing the folder
	 * ends the instance's recording with it; it is busy while a file of
	 * it is open: the reader's first (the reader runs with these signals
	 * blocked; its next read fails), and for a moment after that. */
	kpages_release_in_signal();
	for (int i = 0; i < 100 && rmdir(inst_path) != 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void busy_begin(void)
{
	busy = 1;
}

static void busy_end(void)
{
	busy = 0;
	if (pending)
		on_fatal(pending);
}

/* A stale instance of a killed fxt-run: removed, with a note. */
static int clean_stale(const char *name, void *ctx)
{
	char *end;
	long pid;

	(void)ctx;
	if (strncmp(name, KERNEL_PREFIX, strlen(KERNEL_PREFIX)) != 0)
		return 0;
	pid = strtol(name + strlen(KERNEL_PREFIX), &end, 10);
	if (*end != '\0' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	struct tracefs_instance *old = tracefs_instance_alloc(NULL, name);
	if (old == NULL)
		return 0;
	if (tracefs_instance_destroy(old) == 0)
		fprintf(stderr,
			"fxt-run: note: removed the tracing instance %s of a killed fxt-run\n",
			name);
	tracefs_instance_free(old);
	return 0;
}

static void enable(const char *events)
{
	const char *p = events;

	while (*p) {
		char sys[64], ev[64];
		const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
		size_t e = comma ? (size_t)(comma - p) : strlen(p);

		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - p), p);
		snprintf(ev, sizeof(ev), "%.*s", (int)(e - (size_t)(colon + 1 - p)), colon + 1);
		if (nenabled < MAX_ENABLED) {
			memcpy(enabled[nenabled].sys, sys, sizeof(sys));
			memcpy(enabled[nenabled++].ev, ev, sizeof(ev));
		}
		/* Its enable file, written (tracefs_event_enable() matches
		 * the name against every event: 15-30 ms an event here).  An
		 * event this kernel lacks is left out. */
		char file[160];
		if (strcmp(ev, "*") == 0)
			snprintf(file, sizeof(file), "events/%s/enable", sys);
		else
			snprintf(file, sizeof(file), "events/%s/%s/enable", sys, ev);
		tracefs_instance_file_write(inst, file, "1");
		p += e + (comma != NULL);
	}
}

void kernel_open(const char *groups)
{
	const char *dir = tracefs_tracing_dir();
	char want[256], *save = NULL;

	if (dir == NULL)
		die(EXIT_USAGE, "--kernel: tracefs is not mounted (mount -t tracefs nodev "
				"/sys/kernel/tracing)");
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK) != 0)
		die(EXIT_USAGE, "--kernel: no permission to trace the kernel (%s: %s; run as root)",
		    path, strerror(errno));
	/* The groups first: a typo stops nothing that has begun. */
	snprintf(want, sizeof(want), "%s", groups);
	for (char *g = strtok_r(want, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < sizeof(groups_tab) / sizeof(*groups_tab) &&
		       strcmp(groups_tab[i].name, g) != 0)
			i++;
		if (i == sizeof(groups_tab) / sizeof(*groups_tab))
			die(EXIT_USAGE,
			    "--kernel: unknown group '%s' (sched, syscalls, faults, block, irq)",
			    g);
	}
	tracefs_instances_walk(clean_stale, NULL);
	snprintf(inst_name, sizeof(inst_name), KERNEL_PREFIX "%ld", (long)getpid());
	/* The way out first: a signal as soon as it exists removes it. */
	atexit(kernel_destroy);
	signal(SIGTERM, on_fatal);
	signal(SIGHUP, on_fatal);
	/* Its folder exists before `inst` says so, and its files are open
	 * one after the other until it is set up: a signal waits. */
	snprintf(inst_path, sizeof(inst_path), "%s/instances/%s", dir, inst_name);
	busy_begin();
	inst = tracefs_instance_create(inst_name);
	if (inst == NULL)
		die(EXIT_USAGE, "--kernel: cannot create the tracing instance %s: %s", inst_name,
		    strerror(errno));
	tracefs_trace_off(inst);
	if (tracefs_instance_file_write(inst, "trace_clock", "mono") < 0) {
		kernel_destroy();
		die(EXIT_USAGE, "--kernel: this kernel's tracing has no clock 'mono' (%s)",
		    strerror(errno));
	}
	uint64_t kb = KERNEL_BUFFER_KB;
	const char *size = getenv(FXT_ENV(KERNEL_BUFFER));
	if (size && *size) {
		uint64_t bytes;
		if (run_parse_size(size, &bytes) < 0 || bytes < 4096) {
			kernel_destroy();
			die(EXIT_USAGE, "--kernel: %s=%s: not a size of at least 4K",
			    FXT_ENV(KERNEL_BUFFER), size);
		}
		kb = bytes / 1024;
	}
	tracefs_instance_set_buffer_size(inst, (int)kb, -1);
	tracefs_option_disable(inst, TRACEFS_OPTION_OVERWRITE);
	tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK);
	tracefs_option_enable(inst, TRACEFS_OPTION_RECORD_TGID);
	snprintf(want, sizeof(want), "%s", groups);
	for (char *g = strtok_r(want, ",", &save); g; g = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(groups_tab) / sizeof(*groups_tab); i++)
			if (strcmp(groups_tab[i].name, g) == 0)
				enable(groups_tab[i].events);
	busy_end();
}

/* The tasks of process `pid` (/proc/PID/task) not in `have` yet, appended
 * to it as " TID" each (all of them: pid itself when the folder cannot be
 * read).  The number added. */
static int add_tasks(pid_t pid, char *have, size_t cap)
{
	char dir[64], tid[sizeof(((struct dirent *)0)->d_name) + 2];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
	d = opendir(dir);
	if (d == NULL) {
		snprintf(tid, sizeof(tid), " %ld ", (long)pid);
		if (strstr(have, tid) == NULL && strlen(have) + strlen(tid) < cap) {
			strcat(have, tid + 1);
			strcat(have, " ");
			n++;
		}
		return n;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(tid, sizeof(tid), " %s ", e->d_name);
		if (strstr(have, tid) != NULL || strlen(have) + strlen(tid) >= cap)
			continue;
		strcat(have, tid + 1);
		strcat(have, " ");
		n++;
	}
	closedir(d);
	return n;
}

void kernel_follow(pid_t pid)
{
	/* " TID TID ... ": a process attached to has threads already. */
	static char tids[65536];
	int err = 0;

	if (inst == NULL)
		return;
	busy_begin();
	strcpy(tids, " ");
	add_tasks(pid, tids, sizeof(tids));
	if (tracefs_instance_file_write(inst, "set_event_pid", tids) < 0)
		err = errno;
	/* A thread started since is followed (event-fork) only if its
	 * creator was in the list then: once more for those. */
	size_t had = strlen(tids);
	if (err == 0 && add_tasks(pid, tids, sizeof(tids)) > 0 &&
	    tracefs_instance_file_append(inst, "set_event_pid", tids + had - 1) < 0)
		err = errno;
	if (err == 0 && tracefs_trace_on(inst) < 0)
		err = errno;
	if (err != 0)
		fprintf(stderr, "fxt-run: --kernel: cannot start recording: %s\n", strerror(err));
	busy_end();
}

void kernel_signals(void)
{
	if (inst == NULL)
		return;
	signal(SIGTERM, on_fatal);
	signal(SIGHUP, on_fatal);
}

void kernel_stream(const char *out)
{
	int err;

	if (inst == NULL)
		return;
	busy_begin(); /* the raw fds are the signal handler's once open */
	err = kpages_open(inst, out);
	busy_end();
	if (err == 0)
		kpages_start(); /* else read at the end, as far as the buffer holds */
}

/* ------------------------------------------------------- the archive */

/* Parses the format of event sys:ev into tep. */
static void parse_format(struct tep_handle *tep, const char *sys, const char *ev)
{
	int size;
	char *buf = tracefs_event_file_read(NULL, sys, ev, "format", &size);

	if (buf != NULL)
		tep_parse_event(tep, buf, (unsigned long)size, sys);
	free(buf);
}

/* The event formats of the events enabled, and the ring buffer's page
 * header: what reading the pages needs.  NULL when out of memory or
 * without a page header. */
static struct tep_handle *formats(void)
{
	struct tep_handle *tep = tep_alloc();
	char *buf;
	int size;

	if (tep == NULL)
		return NULL;
	tep_set_file_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, (int)sizeof(long));
	tep_set_page_size(tep, (int)sysconf(_SC_PAGESIZE));
	buf = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (buf == NULL ||
	    tep_parse_header_page(tep, buf, (unsigned long)size, sizeof(long)) != 0) {
		free(buf);
		tep_free(tep);
		return NULL;
	}
	free(buf);
	for (size_t i = 0; i < nenabled; i++) {
		if (strcmp(enabled[i].ev, "*") != 0) {
			parse_format(tep, enabled[i].sys, enabled[i].ev);
			continue;
		}
		char **evs = tracefs_system_events(NULL, enabled[i].sys);
		for (size_t j = 0; evs && evs[j]; j++)
			parse_format(tep, enabled[i].sys, evs[j]);
		tracefs_list_free(evs);
	}
	return tep;
}

/* tid -> tgid, from the kernel's saved_tgids ("TID TGID" lines). */
struct tgids {
	int *tid, *tgid;
	size_t n;
	const struct parts *ps; /* the agent's processes */
};

static void tgids_load(struct tgids *m)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	size_t cap = 0;

	memset(m, 0, sizeof(*m));
	/* strtol(), not sscanf(): glibc's sscanf() takes the string's
	 * length first, each line the rest of the file's (30,000 lines here:
	 * 300 ms). */
	for (char *p = text; p && *p;) {
		char *end, *end2;
		long tid = strtol(p, &end, 10), tgid = strtol(end, &end2, 10);
		if (end != p && end2 != end && tgid > 0) {
			if (m->n == cap) {
				cap = cap ? 2 * cap : 256;
				int *a = realloc(m->tid, cap * sizeof(int));
				int *b = a ? realloc(m->tgid, cap * sizeof(int)) : NULL;
				if (a)
					m->tid = a;
				if (b == NULL)
					break;
				m->tgid = b;
			}
			m->tid[m->n] = (int)tid;
			m->tgid[m->n++] = (int)tgid;
		}
		char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	free(text);
}

static int tgid_of(void *arg, int tid, bool *agent)
{
	const struct tgids *m = arg;

	for (size_t i = m->n; i-- > 0;) {
		if (m->tid[i] != tid)
			continue;
		for (size_t j = 0; j < m->ps->n; j++)
			if (m->ps->v[j].pid == m->tgid[i])
				*agent = true;
		return m->tgid[i];
	}
	return -1;
}

static double ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* What the kernel dropped: the "dropped events" and "overrun" lines of
 * each CPU's stats. */
static uint64_t lost_events(void)
{
	uint64_t lost = 0;

	for (int cpu = 0; cpu < 4096; cpu++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
		char *text = tracefs_instance_file_read(inst, file, NULL);
		if (text == NULL)
			break;
		for (const char *key = "overrun:"; key;
		     key = strcmp(key, "overrun:") == 0 ? "dropped events:" : NULL) {
			const char *p = strstr(text, key);
			if (p)
				lost += strtoull(p + strlen(key), NULL, 10);
		}
		free(text);
	}
	return lost;
}

/* What kernel_stop() leaves to kernel_finish(): the event formats, what
 * the kernel dropped, 0 or the error (said). */
static bool stopped;
static struct tep_handle *end_tep;
static uint64_t end_lost;
static int end_err;

void kernel_stop(const char *out)
{
	if (inst == NULL || stopped)
		return;
	stopped = true;
	kpages_stop();
	/* The rest of each CPU's pages, what the kernel dropped, the formats
	 * (before the instance goes: removing it holds the kernel's lock of
	 * the event files until it is done); then the instance starts going,
	 * while the conversion and the merge go on. */
	busy_begin();
	if (!kpages_is_open() && kpages_open(inst, out) < 0) {
		kernel_destroy();
		busy_end();
		end_err = -EIO;
		return;
	}
	tracefs_trace_off(inst);
	end_lost = lost_events();
	kpages_drain();
	end_tep = formats();
	remove_begin();
	busy_end();
}

/* Writes the kernel's part, the events of its pages (kpages_read()), to
 * `path`, with fxtrace's mark of time order if `mark`; what it counted
 * in *ic.  0 or -errno (ic->err may say it). */
static int kernel_part(const char *path, struct tep_handle *tep, struct tgids *m, uint64_t lost,
		       bool mark, struct import_ctx *ic)
{
	struct fxt_writer *w = NULL;
	struct import_stream *s = NULL;
	int err;

	memset(ic, 0, sizeof(*ic));
	err = fxt_writer_open_path(&w, path, 0);
	if (err == 0)
		err = fxt_writer_magic(w);
	if (err == 0 && mark)
		err = fxt_writer_time_ordered(w);
	ic->w = w;
	ic->path = path;
	ic->next_provider = 1;
	ic->tgid_of = tgid_of;
	ic->tgid_arg = m;
	if (err == 0)
		err = import_stream_begin(ic, tep, "kernel sched", "mono", &s);
	if (err == 0) {
		err = kpages_read(tep, s);
		/* The buffer drops the newest when full: the pages do not say
		 * so, its stats do. */
		if (err == 0 && lost > ic->st.lost)
			err = import_stream_lost(s, lost - ic->st.lost);
		err = import_stream_end(s, err);
	}
	if (w != NULL) {
		int cerr = fxt_writer_close(w);
		if (err == 0)
			err = cerr;
	}
	return err;
}

int kernel_finish(const char *out, const struct parts *ps, bool keep, bool quiet)
{
	struct import_ctx ic;
	struct tgids m;
	char path[PATH_MAX + 16];
	int err;

	if (inst == NULL && !stopped)
		return 0;
	kernel_stop(out);
	if (end_err < 0)
		return end_err;
	struct tep_handle *tep = end_tep;
	uint64_t lost = end_lost;
	struct timespec tt[4];
	end_tep = NULL;
	clock_gettime(CLOCK_MONOTONIC, &tt[0]);
	if (tep == NULL) {
		fprintf(stderr, "fxt-run: --kernel: cannot read the kernel's event formats\n");
		kernel_destroy();
		return -EIO;
	}
	tracefs_load_cmdlines(NULL, tep);
	tgids_load(&m);
	m.ps = ps;
	size_t len = strlen(out);
	if (len > 4 && strcmp(out + len - 4, ".fxt") == 0)
		len -= 4;
	snprintf(path, sizeof(path), "%.*s.kernel.fxt", (int)len, out);
	/* Marked as in time order per thread, unless an event came out of
	 * order (import.h): then written again without the mark. */
	err = kernel_part(path, tep, &m, lost, true, &ic);
	if (err == 0 && ic.st.unordered)
		err = kernel_part(path, tep, &m, lost, false, &ic);
	kpages_close(); /* the pages' files; the instance after the merge */
	tep_free(tep);
	free(m.tid);
	free(m.tgid);
	clock_gettime(CLOCK_MONOTONIC, &tt[1]);
	if (err == 0 && !keep) {
		const char *parts[2] = { out, path };
		struct merge_part_result res[2];
		err = merge_archives(out, parts, 2, res);
		if (err == 0)
			unlink(path);
	}
	clock_gettime(CLOCK_MONOTONIC, &tt[2]);
	kernel_destroy(); /* waits for the remover */
	clock_gettime(CLOCK_MONOTONIC, &tt[3]);
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
		fprintf(stderr,
			"fxt-run: kernel: its events %.1f ms, the merge %.1f ms, then waiting for "
			"the instance's removal %.1f ms\n",
			ms(&tt[0], &tt[1]), ms(&tt[1], &tt[2]), ms(&tt[2], &tt[3]));
	if (!quiet) {
		if (err < 0)
			fprintf(stderr, "fxt-run: --kernel: %s\n",
				ic.err[0] ? ic.err : strerror(-err));
		else
			fprintf(stderr,
				"fxt-run: kernel: %" PRIu64 " events, %" PRIu64 " threads, %" PRIu64
				" lost%s%s\n",
				ic.st.events, ic.st.threads, lost, keep ? " -> " : "",
				keep ? display_name(path) : "");
		if (err == 0 && ic.st.unrecorded)
			fprintf(stderr,
				"fxt-run: note: the kernel did not record %" PRIu64
				" switch-in%s of the program's threads (it records nothing of "
				"some tasks' own): their time from the CPU's switch before is "
				"'unrecorded' in the thread states\n",
				ic.st.unrecorded, ic.st.unrecorded == 1 ? "" : "s");
	}
	return err;
}

#endif /* HAVE_LIBTRACECMD */
