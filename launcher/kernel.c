/* fxt-run --kernel: the kernel's events of the traced processes, recorded
 * while the program runs and merged into its archive.
 *
 * The events go to a tracefs instance of fxt-run's own, "fxtrace-<pid of
 * fxt-run>" (another user's tracing is left alone), on the clock "mono"
 * (CLOCK_MONOTONIC, the agent's: no shift at the merge), filtered to the
 * program's process by set_event_pid with event-fork on (its children
 * follow).  Each thread's states land on the agent's thread (import.h,
 * tgid_of): a task's tgid comes from its task:task_newtask event if the
 * program created it while recording, from perf's task events if
 * another process did, else from /proc (ktables.h); record-tgid is on
 * for the kernel's saved_tgids, read only where those cannot say.
 * What the kernel makes wait is overlapped with fxt-run's own work where
 * it can be: the clock is set in a thread while fxt-run starts (before
 * recording: setting it stops it; the buffers keep the kernel's default
 * size: a resize waits as long), the tasks' tgids and the event formats
 * are read in another while the program runs, the tasks' names and the
 * new tasks' tgids in one more while the archives are converted,
 * and the instance is removed by a process of its own, which fxt-run does
 * not wait for.  While the program runs, a thread of fxt-run's moves each
 * CPU's full pages out of the ring buffer (newest dropped when full,
 * counted) into files next to the archive (kpages.h: a run longer than the
 * buffer loses nothing while the reader keeps up, in a page of memory per
 * CPU); when the program is done the rest is read (kernel_stop()), the
 * instance starts going, and the pages are read back in time order
 * (kernel_finish()) with the importer's mapping (import_stream_*(): context
 * switch records, wake-ups) to the end of OUT, after the parts
 * (merge_append_begin(): OUT is not rewritten), or with --keep-parts (or a
 * compressed OUT) into OUT.kernel.fxt (then merged into OUT but with
 * --keep-parts).
 *
 * The instance goes whatever happens to fxt-run short of SIGKILL: from
 * the program's exit on (remove_begin(): maybe done a moment after
 * fxt-run's), and on a fatal signal; a killed fxt-run's instance is removed by
 * the next --kernel run (its pid is gone), with a note.  Without the
 * permission to trace (not root, tracefs not mounted, a locked-down
 * kernel), one line and exit 2 before the program runs.
 *
 * One file past 800 lines: the instance, the threads that wait for the
 * kernel (clock, formats, names, the events' writer) and the end's steps
 * share one run's state (the instance, what the stop read), which nothing
 * outside needs.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

void kernel_prepare(const char *out, const struct parts *ps, bool keep)
{
	(void)out;
	(void)ps;
	(void)keep;
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
#include "launcher/ktables.h"

#define KERNEL_PREFIX	     "fxtrace-"
/* Per CPU, unless FXT_KERNEL_BUFFER says: the size a new instance has
 * (the kernel's default, 1408 KB: ~20,000 scheduler events) if at least
 * KERNEL_BUFFER_MIN_KB, else that.  A resize waits for the kernel (an RCU
 * grace period, 20-50 ms here, whatever the size) before the program can
 * start; the reader (kpages.c) wakes when a CPU's buffer is half full,
 * so a burst has half of it to wait for the reader in. */
#define KERNEL_BUFFER_MIN_KB 1024

/* The event groups by name: their events as "system:event" ("system:*"
 * the whole system). */
static const struct group {
	const char *name;
	const char *events;
} groups_tab[] = {
	{ "sched", "sched:sched_switch,sched:sched_waking,sched:sched_wakeup,"
		   "sched:sched_wakeup_new,sched:sched_process_fork,"
		   "sched:sched_process_exec,sched:sched_process_exit,"
		   /* each new task's tgid (ktables.h), not written */
		   "task:task_newtask" },
	{ "syscalls", "raw_syscalls:sys_enter,raw_syscalls:sys_exit" },
	{ "faults", "exceptions:page_fault_user" },
	{ "block", "block:block_rq_issue,block:block_rq_complete" },
	{ "irq", "irq:*" },
};

static struct tracefs_instance *inst;
static char inst_name[64];

/* FXT_RUN_DEBUG: when each step of --kernel's was done, in ms since
 * kernel_open(). */
static struct timespec t_open;
static bool debug;
static void kdebug(const char *what)
{
	struct timespec t;

	if (!debug)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "fxt-run: kernel: +%.1f ms %s\n",
		(double)(t.tv_sec - t_open.tv_sec) * 1e3 +
		    (double)(t.tv_nsec - t_open.tv_nsec) / 1e6,
		what);
}

/* The process removing the instance from the program's exit on
 * (remove_begin()), 0: none; else the thread doing it, and whether it
 * runs. */
static volatile pid_t remover_pid;
static pthread_t remover;
static bool remover_on;

/* The instance's folder, for on_fatal() and the remover. */
static char inst_path[PATH_MAX];

/* The thread that, once recording is on, reads the event formats
 * (formats_main()), and whether it runs; what it read waits in
 * `start_tep` for kernel_stop(). */
static pthread_t formatter;
static bool formatter_on;
static struct tep_handle *start_tep;
static struct ktgids start_m; /* the tasks at the start (ktables_start()) */
static bool forks_on;	      /* perf's task events open (ktables_forks_open()) */
static void formats_start(void);

static void formats_join(void)
{
	if (formatter_on) {
		pthread_join(formatter, NULL);
		formatter_on = false;
	}
}

/* The thread setting the instance's clock and buffer size (clock_main())
 * while fxt-run goes on starting, whether it runs, its errno (0: the
 * clock is set), and the size to set (0: the instance's already). */
static pthread_t clocker;
static bool clocker_on;
static int clock_err;
static uint64_t buffer_kb;

static void clock_join(void)
{
	if (clocker_on) {
		pthread_join(clocker, NULL);
		clocker_on = false;
	}
}

/* The instance goes (the reader first, and its files of the instance);
 * safe to call twice.  With the remover's thread started, waits for it;
 * its process is not waited for (reaped if done). */
static void instance_end(void)
{
	kpages_stop();
	clock_join();
	formats_join();
	kpages_release();
	if (remover_pid > 0) {
		if (waitpid(remover_pid, NULL, WNOHANG) == remover_pid)
			kdebug("instance removed (process)");
		if (inst != NULL)
			tracefs_instance_free(inst);
		inst = NULL;
		return;
	}
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
	kdebug("instance removed (thread)");
	return NULL;
}

/* The remover's process: every fd closed (none of the instance's stays
 * open, and no pipe of fxt-run's is held past its exit), the instance's
 * folder removed, every signal blocked (a ^C to the process group, fxt-run
 * done, still leaves nothing behind).  Async-signal-safe calls only: a
 * child of a process with threads. */
static void remover_child(void)
{
	if (close_range(0, ~0U, 0) != 0)
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	if (chdir("/") != 0) {
		/* no folder of fxt-run's is held either way */
	}
	for (int i = 0; i < 100 && rmdir(inst_path) != 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	_exit(0);
}

/* Removes the instance in a process of its own, from the program's exit
 * on: the kernel's rmdir takes 60-160 ms here, nearly all of it waiting for
 * RCU grace periods (the pid filter's and the events' tracepoints
 * unregistered: tracepoint_synchronize_unregister(), twice), longer than
 * the conversion of a short run, and fxt-run does not wait for it: it
 * may end before the instance is gone, which then goes within that time
 * (a --kernel run starting meanwhile waits for it in its mkdir; its
 * clean_stale() finds the folder gone, or the kernel's event_mutex held
 * until it is).  Its files are closed already, tracing is off.  A fatal
 * signal to fxt-run meanwhile leaves the removal to it.  Without the
 * process (fork() failed), a thread does it while the archives are
 * converted, and instance_end() waits for it; without either, done
 * here. */
static void remove_begin(void)
{
	kpages_release();
	if (inst == NULL || remover_on || remover_pid > 0)
		return;
	tracefs_trace_off(inst);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid_t pid = fork();
	if (pid == 0)
		remover_child();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0) {
		remover_pid = pid;
		return;
	}
	remover_on = kthread_start(&remover, remover_main, NULL);
	if (!remover_on)
		instance_end();
}

static void namer_join(void);
static void writer_join(void);
static void stop_wait(void);
static void end_tables_free(void);

/* Everything goes; safe to call twice (at exit after a signal). */
static void kernel_destroy(void)
{
	stop_wait();
	writer_join();
	instance_end();
	namer_join();
	kpages_close();
	ktables_forks_close();
	ktables_free(&start_m);
	end_tables_free();
}

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
	for (int i = 0; remover_pid <= 0 && i < 100 && rmdir(inst_path) != 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	signal(sig, SIG_DFL);
	/* To the process, not this thread: busy_end() may call this from
	 * the stopper (kernel_stop()), which takes no signal. */
	kill(getpid(), sig);
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

static void *clock_main(void *arg)
{
	(void)arg;
	if (tracefs_instance_file_write(inst, "trace_clock", "mono") < 0)
		clock_err = errno ? errno : EINVAL;
	kdebug("clock set (thread)");
	if (clock_err == 0 && buffer_kb) {
		tracefs_instance_set_buffer_size(inst, (int)buffer_kb, -1);
		kdebug("buffer sized (thread)");
	}
	return NULL;
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
		ktables_want(sys, ev);
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
	const char *dir;
	char want[256], *save = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t_open);
	debug = getenv(FXT_ENV(RUN_DEBUG)) != NULL;
	dir = tracefs_tracing_dir();
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
	/* Every task created from now on (the whole system's, for the
	 * tgids of other processes' tasks: ktables.h); without perf, those
	 * created and ended while recording are unknown. */
	forks_on = ktables_forks_open() == 0;
	if (forks_on)
		ktables_forks_start();
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
	kdebug("instance created");
	tracefs_trace_off(inst);
	char *cur = tracefs_instance_file_read(inst, "buffer_size_kb", NULL);
	uint64_t has = cur ? strtoull(cur, NULL, 10) : 0, kb = has;
	free(cur);
	if (kb < KERNEL_BUFFER_MIN_KB)
		kb = KERNEL_BUFFER_MIN_KB;
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
	/* Set by the clock's thread, before recording: the kernel stops a
	 * buffer's recording while it resizes it (its events then are lost,
	 * and not counted), and a new instance's size (1408 KB a CPU here)
	 * is a write saved. */
	buffer_kb = has == kb ? 0 : kb;
	tracefs_option_disable(inst, TRACEFS_OPTION_OVERWRITE);
	tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK);
	tracefs_option_enable(inst, TRACEFS_OPTION_RECORD_TGID);
	snprintf(want, sizeof(want), "%s", groups);
	for (char *g = strtok_r(want, ",", &save); g; g = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(groups_tab) / sizeof(*groups_tab); i++)
			if (strcmp(groups_tab[i].name, g) == 0)
				enable(groups_tab[i].events);
	/* The clock and the size last, in a thread: setting either waits
	 * for the kernel (the clock empties the buffers and waits twice for
	 * an RCU grace period, the size for the other CPU's worker: 20-50 ms
	 * each here), holding the kernel's lock of the instances' settings,
	 * while fxt-run goes on starting (clock_ready(), before recording).
	 * It has the instance's files open: a signal waits for it (busy). */
	kdebug("events enabled");
	clocker_on = kthread_start(&clocker, clock_main, NULL);
	if (!clocker_on) {
		clock_main(NULL);
		busy_end();
	}
}

/* The clock set (waits for clock_main()), or dies (exit 2): before
 * anything is recorded or done to the program. */
static void clock_ready(void)
{
	if (clocker_on) {
		kdebug("waiting for the clock");
		clock_join();
		busy_end();
		kdebug("clock ready");
	}
	if (clock_err != 0) {
		kernel_destroy();
		die(EXIT_USAGE, "--kernel: this kernel's tracing has no clock 'mono' (%s)",
		    strerror(clock_err));
	}
}

void kernel_follow(pid_t pid)
{
	/* " TID TID ... ": a process attached to has threads already. */
	static char tids[65536];
	int err = 0;

	if (inst == NULL)
		return;
	clock_ready();
	busy_begin();
	strcpy(tids, " ");
	ktables_tasks(pid, tids, sizeof(tids));
	if (tracefs_instance_file_write(inst, "set_event_pid", tids) < 0)
		err = errno;
	/* A thread started since is followed (event-fork) only if its
	 * creator was in the list then: once more for those. */
	size_t had = strlen(tids);
	if (err == 0 && ktables_tasks(pid, tids, sizeof(tids)) > 0 &&
	    tracefs_instance_file_append(inst, "set_event_pid", tids + had - 1) < 0)
		err = errno;
	if (err == 0 && tracefs_trace_on(inst) < 0)
		err = errno;
	if (err != 0)
		fprintf(stderr, "fxt-run: --kernel: cannot start recording: %s\n", strerror(err));
	busy_end();
	kdebug("recording");
	formats_start();
}

void kernel_signals(void)
{
	if (inst == NULL)
		return;
	signal(SIGTERM, on_fatal);
	signal(SIGHUP, on_fatal);
}

/* Reads every task's tgid (/proc: 1-3 ms here) and the event formats
 * while the program runs (the top instance's files: the kernel's lock of
 * its settings is not taken). */
static void *formats_main(void *arg)
{
	(void)arg;
	ktables_start(&start_m);
	kdebug("tasks at the start read (thread)");
	start_tep = ktables_formats();
	kdebug("formats read (thread)");
	return NULL;
}

/* Starts the formats' thread, once. */
static void formats_start(void)
{
	static bool started;

	if (started)
		return;
	started = true;
	formatter_on = kthread_start(&formatter, formats_main, NULL);
	if (!formatter_on)
		formats_main(NULL);
}

void kernel_stream(const char *out)
{
	int err;

	if (inst == NULL)
		return;
	clock_ready(); /* opening the pages would wait for it anyway */
	busy_begin();  /* the raw fds are the signal handler's once open */
	err = kpages_open(inst, out);
	busy_end();
	if (err == 0)
		kpages_start(); /* else read at the end, as far as the buffer holds */
}

/* ------------------------------------------------------- the archive */

static double ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* What kernel_stop() leaves to kernel_finish(): the event formats, what
 * the kernel dropped, 0 or the error (said); the tasks' names and tgids,
 * read by two threads meanwhile (namer_main(), tgids_main()). */
static bool stopped;
static struct tep_handle *end_tep;
static uint64_t end_lost;
static int end_err;
static struct ktgids end_m;
static pthread_t namer, tgider;
static bool namer_on, tgider_on;

/* The tasks' names and the tgids of those created while recording
 * (into tep, end_tep, and end_m: ktables_names()), and, only where those
 * cannot say (ktables.h), the kernel's saved_tgids (into end_m: 31,000
 * lines here, the whole system's), each in a thread while the archives
 * are converted; the names once the pages are all read, saved_tgids once
 * recording is off. */
static void *namer_main(void *tep)
{
	ktables_names(tep, &end_m);
	kdebug("names read (thread)");
	return NULL;
}

static void *tgids_main(void *arg)
{
	(void)arg;
	ktables_tgids(&end_m);
	kdebug("tgids read (thread)");
	return NULL;
}

static void end_tables_free(void)
{
	ktables_free(&end_m);
}

static void stop_join(void);

/* The tables done: the names' thread, saved_tgids' and the stopper (which
 * reads the names itself when it runs: namer_main()). */
static void namer_join(void)
{
	stop_join();
	if (tgider_on) {
		pthread_join(tgider, NULL);
		tgider_on = false;
	}
	if (namer_on) {
		pthread_join(namer, NULL);
		namer_on = false;
	}
}

/* The thread doing kernel_stop()'s work (stop_main()) while the
 * archives are converted, then the names (one thread less to wait for
 * on a loaded machine: each took 10-130 ms to be scheduled at load 18),
 * whether it runs, and whether the stop's part is done (stop_done). */
static pthread_t stopper;
static bool stopper_on;
static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cv = PTHREAD_COND_INITIALIZER;
static bool stop_done;

static void stop_signal(void)
{
	pthread_mutex_lock(&stop_mu);
	stop_done = true;
	pthread_cond_broadcast(&stop_cv);
	pthread_mutex_unlock(&stop_mu);
}

/* The stop's part done (kernel_prepare(), kernel_finish(), the exit's
 * cleanup): what it leaves (end_*) is set; the names may still be read;
 * nothing in the stopper itself (its kernel_destroy() on an error). */
static void stop_wait(void)
{
	if (!stopper_on || pthread_equal(pthread_self(), stopper))
		return;
	pthread_mutex_lock(&stop_mu);
	while (!stop_done)
		pthread_cond_wait(&stop_cv, &stop_mu);
	pthread_mutex_unlock(&stop_mu);
}

/* The stopper done, names and all (namer_join()). */
static void stop_join(void)
{
	if (stopper_on && !pthread_equal(pthread_self(), stopper)) {
		pthread_join(stopper, NULL);
		stopper_on = false;
	}
}

static void stop_main(const char *out, bool thread);

static void *stopper_main(void *out)
{
	stop_main(out, true);
	return NULL;
}

void kernel_stop(const char *out)
{
	if (inst == NULL || stopped)
		return;
	stopped = true;
	kdebug("the program is done");
	/* In a thread, while the parts are converted: the reader's stop,
	 * tracing off, the last pages read (1-10 ms at load 12). */
	stopper_on = kthread_start(&stopper, stopper_main, (void *)out);
	if (!stopper_on)
		stop_main(out, false);
}

/* kernel_stop()'s work, in the stopper (`thread`) or not. */
static void stop_main(const char *out, bool thread)
{
	kpages_stop();
	formats_join();
	/* The rest of each CPU's pages, what the kernel dropped, the formats
	 * (before the instance goes: removing it holds the kernel's lock of
	 * the event files until it is done); then the instance starts going,
	 * while the conversion and the merge go on. */
	busy_begin();
	if (!kpages_is_open() && kpages_open(inst, out) < 0) {
		kernel_destroy();
		busy_end();
		end_err = -EIO;
		stop_signal();
		return;
	}
	tracefs_trace_off(inst);
	/* A task of /proc started since is not one the events saw
	 * (ktables_tgid_of()): the tick after this one's. */
	struct timespec now;
	clock_gettime(CLOCK_BOOTTIME, &now);
	long hz = sysconf(_SC_CLK_TCK);
	start_m.end_ticks = (uint64_t)now.tv_sec * (uint64_t)hz +
			    (uint64_t)now.tv_nsec / (1000000000u / (uint64_t)hz) + 1;
	end_lost = kpages_lost(inst);
	end_tep = start_tep ? start_tep : ktables_formats();
	start_tep = NULL;
	ktables_move(&end_m, &start_m);
	if (forks_on)
		ktables_forks_read(&end_m);
	ktables_forks_close();
	/* The tgids: from the events, the start's table and /proc at the
	 * end (ktables.h); saved_tgids, the whole system's (the longest read:
	 * 26-110 ms here), only when the events cannot say them all (the
	 * kernel has no task:task_newtask, or lost events: a task's creation
	 * may be among them), in a thread of its own from here on. */
	if (end_lost > 0 || end_tep == NULL || !forks_on || end_m.forks_lost ||
	    tep_find_event_by_name(end_tep, "task", "task_newtask") == NULL) {
		end_m.saved = true;
		tgider_on = kthread_start(&tgider, tgids_main, NULL);
		if (!tgider_on)
			tgids_main(NULL);
	}
	kpages_drain();
	kdebug("pages drained");
	remove_begin();
	busy_end();
	kdebug("removing");
	stop_signal();
	if (end_tep != NULL && thread) {
		namer_main(end_tep);
	} else if (end_tep != NULL) {
		namer_on = kthread_start(&namer, namer_main, end_tep);
		if (!namer_on)
			namer_main(end_tep);
	}
}

/* The pages' records to the importer's stream but task:task_newtask's
 * (`skip`, -1: none), which only say the tgids (ktables.h): the archive
 * has what it had without them.  A page's note of events missed before
 * it goes to the next record written. */
struct feed {
	struct import_stream *s;
	struct tep_handle *tep;
	int skip;
	long long missed; /* -1: some, how many unknown */
};

static int feed_record(void *arg, struct tep_record *rec)
{
	struct feed *f = arg;
	long long m = (long long)rec->missed_events;

	if (tep_data_type(f->tep, rec) == f->skip) {
		if (m != 0)
			f->missed = m < 0 || f->missed < 0 ? -1 : f->missed + m;
		return 0;
	}
	if (f->missed != 0) {
		rec->missed_events =
		    (unsigned long long)(m < 0 || f->missed < 0 ? -1 : f->missed + m);
		f->missed = 0;
	}
	return import_stream_record(f->s, rec);
}

/* Writes the kernel's events, those of its pages (feed_record()), to w
 * (after its magic record: the part's provider info first); `path` names
 * it in messages; what it counted in *ic.  0 or -errno (ic->err may say
 * it). */
static int kernel_events(struct fxt_writer *w, const char *path, struct tep_handle *tep,
			 struct ktgids *m, uint64_t lost, struct import_ctx *ic)
{
	struct import_stream *s = NULL;
	int err;

	memset(ic, 0, sizeof(*ic));
	ic->w = w;
	ic->path = path;
	ic->next_provider = 1;
	ic->tgid_of = ktables_tgid_of;
	ic->tgid_arg = m;
	err = import_stream_begin(ic, tep, "kernel sched", "mono", &s);
	if (err == 0) {
		struct tep_event *nt = tep_find_event_by_name(tep, "task", "task_newtask");
		struct feed f = { s, tep, nt ? nt->id : -1, 0 };
		err = kpages_each(tep, feed_record, &f);
		/* The buffer drops the newest when full: the pages do not say
		 * so, its stats do. */
		if (err == 0 && lost > ic->st.lost)
			err = import_stream_lost(s, lost - ic->st.lost);
		err = import_stream_end(s, err);
	}
	return err;
}

/* The kernel's part as an archive of its own at `path`, with fxtrace's
 * mark of time order if `mark`.  0 or -errno. */
static int kernel_part(const char *path, struct tep_handle *tep, struct ktgids *m, uint64_t lost,
		       bool mark, struct import_ctx *ic)
{
	struct fxt_writer *w = NULL;
	int err;

	memset(ic, 0, sizeof(*ic));
	err = fxt_writer_open_path(&w, path, 0);
	if (err == 0)
		err = fxt_writer_magic(w);
	if (err == 0 && mark)
		err = fxt_writer_time_ordered(w);
	if (err == 0)
		err = kernel_events(w, path, tep, m, lost, ic);
	if (w != NULL) {
		int cerr = fxt_writer_close(w);
		if (err == 0)
			err = cerr;
	}
	return err;
}

/* What kernel_prepare() leaves to kernel_finish(): the thread writing the
 * kernel's events while OUT's parts are merged (writer_main()), whether it
 * runs, and what it did: the events at the end of OUT go to `tmp` first
 * (appended with `append`), else to the part of their own at `path`. */
/* FXT_RUN_DEBUG: where the tgids came from. */
static void tgids_debug(const struct ktgids *m)
{
	if (!debug)
		return;
	if (m->saved)
		fprintf(stderr, "fxt-run: kernel: tgids from saved_tgids (%zu lines)\n", m->n);
	else
		fprintf(stderr,
			"fxt-run: kernel: tgids: %u tasks created by the program while "
			"recording, of the others %u created meanwhile (perf), %u found in /proc "
			"at the end, %u in the start's table, %u unknown; saved_tgids not read\n",
			m->created, m->from_forks, m->from_proc, m->from_start, m->unknown);
}

static struct {
	pthread_t thread;
	bool on, append;
	int tmp, err;
	uint64_t lost;
	struct tep_handle *tep;
	struct ktgids m;
	struct import_ctx ic;
	char path[PATH_MAX + 16];
} wr = { .tmp = -1 };

/* The writer done (at exit too: it reads the pages kpages_close() frees). */
static void writer_join(void)
{
	if (wr.on) {
		pthread_join(wr.thread, NULL);
		wr.on = false;
	}
}

static void *writer_main(void *arg)
{
	struct fxt_writer *w = NULL;

	(void)arg;
	kdebug("writing begins (thread)");
	namer_join();
	ktables_move(&wr.m, &end_m);
	if (wr.append) {
		/* The records OUT gets, from its end on: no magic record (the
		 * part's provider info first), as merge_append_begin()'s writer
		 * would write them. */
		wr.err = fxt_writer_open_fd(&w, wr.tmp, 0);
		if (wr.err == 0)
			wr.err = kernel_events(w, wr.path, wr.tep, &wr.m, wr.lost, &wr.ic);
		if (w != NULL) {
			int cerr = fxt_writer_close(w);
			if (wr.err == 0)
				wr.err = cerr;
		}
	} else {
		wr.err = kernel_part(wr.path, wr.tep, &wr.m, wr.lost, true, &wr.ic);
		if (wr.err == 0 && wr.ic.st.unordered)
			wr.err = kernel_part(wr.path, wr.tep, &wr.m, wr.lost, false, &wr.ic);
	}
	kdebug("events imported (thread)");
	/* What is left of it (closing the pages' files waits for their
	 * file system: 0-20 ms here). */
	kpages_close();
	tep_free(wr.tep);
	wr.tep = NULL;
	tgids_debug(&wr.m);
	ktables_free(&wr.m);
	kdebug("events written (thread)");
	return NULL;
}

/* Whether the kernel's providers (1 to ic->next_provider - 1) are none
 * of OUT's: its parts' (an agent's archive's provider is its process's
 * pid, a range says its own).  merge_append_end() compares them with
 * OUT's first only: one of OUT's providers again (a process of pid 1)
 * would have the kernel's threads among its own, after its events, and
 * OUT's mark of time order must then go. */
static bool providers_apart(const struct parts *ps, const struct import_ctx *ic)
{
	for (size_t j = 0; j < ps->n; j++) {
		uint64_t id = ps->v[j].len ? ps->v[j].provider : (uint64_t)ps->v[j].pid;
		if (id >= 1 && id < ic->next_provider)
			return false;
	}
	return true;
}

/* OUT-without-.fxt.kernel.fxt. */
static void part_path(char *path, size_t cap, const char *out)
{
	size_t len = strlen(out);

	if (len > 4 && strcmp(out + len - 4, ".fxt") == 0)
		len -= 4;
	snprintf(path, cap, "%.*s.kernel.fxt", (int)len, out);
}

void kernel_prepare(const char *out, const struct parts *ps, bool keep)
{
	stop_wait();
	if (!stopped || end_err < 0 || end_tep == NULL || wr.on)
		return;
	wr.m.pids = calloc(ps->n ? ps->n : 1, sizeof(*wr.m.pids));
	if (wr.m.pids == NULL)
		return; /* kernel_finish() does it all */
	for (size_t j = 0; j < ps->n; j++)
		wr.m.pids[j] = ps->v[j].pid;
	wr.m.npids = ps->n;
	/* At the end of OUT (plain) unless --keep-parts: through a file of
	 * its own (the parts are being merged into OUT meanwhile). */
	wr.append = !keep && fxt_writer_path_flags(out) == 0 && ps->n > 0;
	if (wr.append) {
		snprintf(wr.path, sizeof(wr.path), "%s", out);
		wr.tmp = kpages_file(out, -1);
		if (wr.tmp < 0) {
			ktables_free(&wr.m);
			return;
		}
	} else {
		part_path(wr.path, sizeof(wr.path), out);
	}
	wr.tep = end_tep;
	wr.lost = end_lost;
	wr.on = kthread_start(&wr.thread, writer_main, NULL);
	if (!wr.on) {
		if (wr.tmp >= 0)
			close(wr.tmp);
		wr.tmp = -1;
		wr.tep = NULL;
		ktables_free(&wr.m);
	}
}

int kernel_finish(const char *out, const struct parts *ps, bool keep, bool quiet)
{
	struct import_ctx ic;
	struct ktgids m;
	char path[PATH_MAX + 16];
	int err;

	if (inst == NULL && !stopped)
		return 0;
	kernel_stop(out);
	stop_wait();
	if (end_err < 0)
		return end_err;
	uint64_t lost = end_lost;
	struct timespec tt[4];
	clock_gettime(CLOCK_MONOTONIC, &tt[0]);
	kdebug("merge begins");
	part_path(path, sizeof(path), out);
	struct merge_append app;
	bool append;
	if (wr.on) {
		/* Written while the parts were merged: appended (a copy in
		 * the kernel), or a part of its own. */
		writer_join();
		err = wr.err;
		ic = wr.ic;
		append = wr.append;
		struct stat sb;
		if (append && err == 0)
			err = fstat(wr.tmp, &sb) == 0 ? merge_append_begin(&app, out) : -errno;
		if (append && err == 0) {
			err = fxt_writer_append_fd(app.w, wr.tmp, 0, (uint64_t)sb.st_size,
						   (uint64_t)sb.st_size);
			err = merge_append_end(&app, err,
					       !ic.st.unordered && providers_apart(ps, &ic),
					       (uint32_t)(ic.next_provider - 1));
		}
		if (wr.tmp >= 0)
			close(wr.tmp);
		wr.tmp = -1;
		end_tep = NULL;
	} else {
		struct tep_handle *tep = end_tep;
		end_tep = NULL;
		if (tep == NULL) {
			fprintf(stderr,
				"fxt-run: --kernel: cannot read the kernel's event formats\n");
			kernel_destroy();
			return -EIO;
		}
		namer_join();
		kdebug("names ready");
		memset(&m, 0, sizeof(m));
		m.pids = calloc(ps->n ? ps->n : 1, sizeof(*m.pids));
		for (size_t j = 0; m.pids && j < ps->n; j++)
			m.pids[j] = ps->v[j].pid;
		m.npids = m.pids ? ps->n : 0;
		ktables_move(&m, &end_m);
		/* At the end of OUT (plain): no OUT.kernel.fxt, and OUT is
		 * not rewritten; else (--keep-parts, a compressed OUT) a part
		 * of its own, merged into OUT but with --keep-parts.  Either
		 * way marked as in time order per thread unless an event came
		 * out of order (import.h): the part is then written again
		 * without the mark, OUT's is undone. */
		append = !keep && merge_append_begin(&app, out) == 0;
		if (append) {
			err = kernel_events(app.w, out, tep, &m, lost, &ic);
			err = merge_append_end(&app, err,
					       !ic.st.unordered && providers_apart(ps, &ic),
					       (uint32_t)(ic.next_provider - 1));
		} else {
			err = kernel_part(path, tep, &m, lost, true, &ic);
			if (err == 0 && ic.st.unordered)
				err = kernel_part(path, tep, &m, lost, false, &ic);
		}
		kpages_close(); /* the pages' files; the instance after the merge */
		tep_free(tep);
		tgids_debug(&m);
		ktables_free(&m);
	}
	kdebug("events written");
	clock_gettime(CLOCK_MONOTONIC, &tt[1]);
	if (err == 0 && !keep && !append) {
		const char *parts[2] = { out, path };
		struct merge_part_result res[2];
		err = merge_archives(out, parts, 2, res);
		if (err == 0)
			unlink(path);
	}
	clock_gettime(CLOCK_MONOTONIC, &tt[2]);
	kernel_destroy(); /* waits for the remover's thread, not its process */
	kdebug("done");
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
