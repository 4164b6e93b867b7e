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
 * (KERNEL_BUFFER_KB per CPU, newest dropped when full, counted) every
 * KERNEL_READ_MS into a file of its own next to the archive, deleted
 * already (a run longer than the buffer loses nothing while the reader
 * keeps up, and fxt-run's memory is a page per CPU whatever the run's
 * length); when the program is done the rest is read, and the pages are
 * read back a page per CPU at a time, in time order, into OUT.kernel.fxt
 * with the importer's mapping (import_stream_*(): context switch records,
 * wake-ups), which is merged into OUT after the parts.
 *
 * The instance goes whatever happens to fxt-run short of SIGKILL: at
 * exit, and on a fatal signal; a killed fxt-run's instance is removed by
 * the next --kernel run (its pid is gone), with a note.  Without the
 * permission to trace (not root, tracefs not mounted, a locked-down
 * kernel), one line and exit 2 before the program runs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

void kernel_stream(const char *out)
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

#define KERNEL_PREFIX	 "fxtrace-"
#define KERNEL_BUFFER_KB 65536 /* per CPU, unless FXT_KERNEL_BUFFER says */
#define KERNEL_READ_MS	 100   /* the reader's period */

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
/* The systems of the events enabled, NULL-terminated: only their formats
 * are read at the end (tracefs_local_events() reads all of them and
 * /proc/kallsyms: 0.7 s here). */
#define MAX_SYSTEMS	 16
static char systems_buf[MAX_SYSTEMS][64];
static const char *systems[MAX_SYSTEMS + 1];

/* Each CPU's pages read so far: a file of them, and the CPU's reader. */
struct cpu_file {
	struct tracefs_cpu *tc;
	int raw; /* its trace_pipe_raw, for on_fatal(): -1 none */
	int fd;	 /* -1: none (the CPU is offline, or no file) */
};
static struct cpu_file *cpu_files;
static int ncpu_files, page_bytes;
static pthread_t reader;
static bool reader_on, reader_stop;
static pthread_mutex_t reader_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reader_cv;

static void reader_end(void);
static void cpu_files_close(void);

/* The instance goes (the reader first, and its files of the instance);
 * safe to call twice. */
static void instance_end(void)
{
	reader_end();
	for (int i = 0; i < ncpu_files; i++) {
		if (cpu_files[i].tc)
			tracefs_cpu_free_fd(cpu_files[i].tc);
		cpu_files[i].tc = NULL;
		int raw = cpu_files[i].raw;
		cpu_files[i].raw = -1; /* before on_fatal() could close it again */
		if (raw >= 0)
			close(raw);
	}
	if (inst == NULL)
		return;
	tracefs_trace_off(inst);
	tracefs_instance_destroy(inst);
	tracefs_instance_free(inst);
	inst = NULL;
}

/* Everything goes; safe to call twice (at exit after a signal). */
static void kernel_destroy(void)
{
	instance_end();
	cpu_files_close();
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
	for (int i = 0; i < ncpu_files; i++)
		if (cpu_files[i].raw >= 0)
			close(cpu_files[i].raw);
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
		size_t n = 0;
		while (systems[n] && strcmp(systems[n], sys) != 0)
			n++;
		if (systems[n] == NULL && n < MAX_SYSTEMS) {
			memcpy(systems_buf[n], sys, sizeof(sys));
			systems[n] = systems_buf[n];
		}
		/* An event this kernel lacks is left out. */
		tracefs_event_enable(inst, sys, strcmp(ev, "*") == 0 ? NULL : ev);
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

void kernel_follow(pid_t pid)
{
	char buf[32];

	if (inst == NULL)
		return;
	snprintf(buf, sizeof(buf), "%ld", (long)pid);
	busy_begin();
	if (tracefs_instance_file_write(inst, "set_event_pid", buf) < 0 ||
	    tracefs_trace_on(inst) < 0)
		fprintf(stderr, "fxt-run: --kernel: cannot start recording: %s\n", strerror(errno));
	busy_end();
}

/* ------------------------------------------------------ the reader */

/* A file for CPU `cpu`'s pages next to `out`, deleted already: -1 or
 * an fd.  O_TMPFILE where the file system has it, else a name removed
 * at once. */
static int page_file(const char *out, int cpu)
{
	char dir[PATH_MAX], name[PATH_MAX + 32];
	const char *slash = strrchr(out, '/');
	int fd;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out > 0 ? slash - out : 1), out);
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(name, sizeof(name), "%s.kernel.cpu%d.%ld", out, cpu, (long)getpid());
	fd = open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(name);
	return fd;
}

/* Moves CPU c's full pages (all its pages with `all`, tracing off) to
 * its file.  0 or -errno (the file cannot be written). */
static int move_pages(struct cpu_file *c, char *page, bool all)
{
	for (;;) {
		int n = all ? tracefs_cpu_read(c->tc, page, true)
			    : tracefs_cpu_buffered_read(c->tc, page, true);
		if (n <= 0)
			return 0; /* none (EAGAIN) */
		/* A page whole, even when the kernel filled less of it: the
		 * file is pages of page_bytes. */
		for (size_t done = 0; done < (size_t)page_bytes;) {
			ssize_t w = write(c->fd, page + done, (size_t)page_bytes - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += (size_t)w;
		}
	}
}

/* Every KERNEL_READ_MS until reader_end(): each CPU's full pages to its
 * file.  Signals stay with fxt-run's main thread. */
static void *reader_main(void *arg)
{
	char *page = malloc((size_t)page_bytes);
	struct timespec next;
	bool said = false;

	(void)arg;
	pthread_mutex_lock(&reader_mu);
	while (!reader_stop && page != NULL) {
		pthread_mutex_unlock(&reader_mu);
		for (int i = 0; i < ncpu_files; i++) {
			int err = cpu_files[i].fd >= 0 ? move_pages(&cpu_files[i], page, false) : 0;
			if (err < 0 && !said) {
				fprintf(stderr,
					"fxt-run: --kernel: cannot keep the kernel's events "
					"(%s): those past its buffer are lost\n",
					strerror(-err));
				said = true;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &next);
		next.tv_nsec += KERNEL_READ_MS * 1000 * 1000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&reader_mu);
		while (!reader_stop &&
		       pthread_cond_timedwait(&reader_cv, &reader_mu, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&reader_mu);
	free(page);
	return NULL;
}

/* Stops the reader thread, if it runs. */
static void reader_end(void)
{
	if (!reader_on)
		return;
	pthread_mutex_lock(&reader_mu);
	reader_stop = true;
	pthread_cond_signal(&reader_cv);
	pthread_mutex_unlock(&reader_mu);
	pthread_join(reader, NULL);
	reader_on = false;
}

static void cpu_files_close(void)
{
	struct cpu_file *cs = cpu_files;
	int n = ncpu_files;

	ncpu_files = 0; /* on_fatal() leaves them */
	for (int i = 0; i < n; i++) {
		if (cs[i].tc)
			tracefs_cpu_free_fd(cs[i].tc);
		if (cs[i].raw >= 0)
			close(cs[i].raw);
		if (cs[i].fd >= 0)
			close(cs[i].fd);
	}
	free(cs);
	cpu_files = NULL;
}

/* CPU cpu's trace_pipe_raw, open (non-blocking): -1 or an fd. */
static int open_raw(int cpu)
{
	char file[64];

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	char *path = tracefs_instance_get_file(inst, file);
	int fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	tracefs_put_tracing_file(path);
	return fd;
}

/* The size of the ring buffer's pages (sub-buffers). */
static int subbuf_bytes(void)
{
	char *kb = tracefs_instance_file_read(inst, "buffer_subbuf_size_kb", NULL);
	long n = kb ? strtol(kb, NULL, 10) : 0;

	free(kb);
	return n > 0 ? (int)n * 1024 : (int)sysconf(_SC_PAGESIZE);
}

/* Each CPU's reader and file (next to `out`).  0 or -errno (said).  Its
 * trace_pipe_raw fds are on_fatal()'s to close: a signal waits until they
 * are all in the table. */
static int cpu_files_open(const char *out)
{
	int n = (int)sysconf(_SC_NPROCESSORS_CONF), err = 0;
	struct cpu_file *cs = calloc(n > 0 ? (size_t)n : 1, sizeof(*cs));

	if (cs == NULL)
		return -ENOMEM;
	busy_begin();
	page_bytes = subbuf_bytes();
	for (int i = 0; i < n; i++) {
		cs[i].fd = -1;
		cs[i].raw = open_raw(i);
	}
	cpu_files = cs;
	ncpu_files = n;
	busy_end();
	for (int i = 0; i < n && err == 0; i++) {
		if (cs[i].raw < 0)
			continue; /* offline */
		cs[i].tc = tracefs_cpu_alloc_fd(cs[i].raw, page_bytes, true);
		if (cs[i].tc == NULL) {
			err = -errno;
			break;
		}
		cs[i].fd = page_file(out, i);
		if (cs[i].fd < 0) {
			err = -errno;
			fprintf(stderr,
				"fxt-run: --kernel: cannot create a file for the kernel's events "
				"next to %s (%s)\n",
				display_name(out), strerror(-err));
		}
	}
	if (err < 0)
		cpu_files_close();
	return err;
}

void kernel_stream(const char *out)
{
	pthread_condattr_t ca;
	sigset_t all, old;

	if (inst == NULL || cpu_files_open(out) < 0)
		return; /* read at the end, as far as the buffer holds */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reader_cv, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	reader_on = pthread_create(&reader, NULL, reader_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------- the archive */

/* The event formats of the systems enabled, and the ring buffer's page
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
	for (size_t i = 0; systems[i]; i++) {
		char **evs = tracefs_system_events(NULL, systems[i]);
		for (size_t j = 0; evs && evs[j]; j++) {
			buf = tracefs_event_file_read(NULL, systems[i], evs[j], "format", &size);
			if (buf != NULL)
				tep_parse_event(tep, buf, (unsigned long)size, systems[i]);
			free(buf);
		}
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
	for (char *p = text; p && *p;) {
		int tid, tgid;
		if (sscanf(p, "%d %d", &tid, &tgid) == 2 && tgid > 0) {
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
			m->tid[m->n] = tid;
			m->tgid[m->n++] = tgid;
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

/* One CPU's events, from its file a page at a time, the next event
 * waiting in `rec`. */
struct cpu_events {
	int fd;
	size_t npages, page; /* in the file, the one loaded */
	char *buf;	     /* the page loaded */
	struct kbuffer *kb;
	void *data; /* the next event, NULL: none */
	struct tep_record rec;
};

static int cpu_load(struct cpu_events *c, struct tep_handle *tep, int cpu)
{
	off_t size = lseek(cpu_files[cpu].fd, 0, SEEK_END);

	memset(c, 0, sizeof(*c));
	c->fd = cpu_files[cpu].fd;
	c->npages = size > 0 ? (size_t)size / (size_t)page_bytes : 0;
	c->buf = malloc((size_t)page_bytes);
	c->kb = tep_kbuffer(tep);
	c->rec.cpu = cpu;
	return c->buf && c->kb ? 0 : -ENOMEM;
}

/* The CPU's next event into c->rec (c->data NULL at the end). */
static void cpu_next(struct cpu_events *c, bool first)
{
	unsigned long long ts = 0;

	c->data = first || c->data == NULL ? NULL : kbuffer_next_event(c->kb, &ts);
	while (c->data == NULL) {
		if (first)
			first = false;
		else if (++c->page > c->npages)
			return;
		if (c->page >= c->npages)
			return;
		if (pread(c->fd, c->buf, (size_t)page_bytes,
			  (off_t)(c->page * (size_t)page_bytes)) != page_bytes ||
		    kbuffer_load_subbuffer(c->kb, c->buf) < 0)
			continue;
		c->rec.missed_events = kbuffer_missed_events(c->kb);
		c->data = kbuffer_read_event(c->kb, &ts);
	}
	if (c->data == NULL)
		return;
	c->rec.ts = ts;
	c->rec.data = c->data;
	c->rec.size = kbuffer_event_size(c->kb);
}

/* Every CPU's events to the stream, merged by time.  0 or -errno. */
static int read_events(struct tep_handle *tep, struct import_stream *s)
{
	int ncpu = ncpu_files, err = 0;
	struct cpu_events *cs = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*cs));

	if (cs == NULL)
		return -ENOMEM;
	for (int i = 0; i < ncpu && err == 0; i++) {
		if (cpu_files[i].fd < 0)
			continue;
		err = cpu_load(&cs[i], tep, i);
		if (err == 0)
			cpu_next(&cs[i], true);
	}
	while (err == 0) {
		struct cpu_events *min = NULL;
		for (int i = 0; i < ncpu; i++)
			if (cs[i].data && (min == NULL || cs[i].rec.ts < min->rec.ts))
				min = &cs[i];
		if (min == NULL)
			break;
		if (import_stream_record(s, &min->rec) != 0) {
			err = -EIO;
			break;
		}
		min->rec.missed_events = 0;
		cpu_next(min, false);
	}
	for (int i = 0; i < ncpu; i++) {
		if (cs[i].kb)
			kbuffer_free(cs[i].kb);
		free(cs[i].buf);
	}
	free(cs);
	return err;
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

int kernel_finish(const char *out, const struct parts *ps, bool keep, bool quiet)
{
	struct import_ctx ic;
	struct tgids m;
	char path[PATH_MAX + 16];
	struct fxt_writer *w = NULL;
	int err;

	if (inst == NULL)
		return 0;
	reader_end();
	/* The rest of each CPU's pages, the last partial ones too: read()
	 * (not splice()) gives those; then the instance goes, before the
	 * long part. */
	if (cpu_files == NULL && cpu_files_open(out) < 0) {
		kernel_destroy();
		return -EIO;
	}
	busy_begin();
	tracefs_trace_off(inst);
	uint64_t lost = lost_events();
	char *page = malloc((size_t)page_bytes);
	for (int i = 0; page && i < ncpu_files; i++) {
		int merr = cpu_files[i].fd >= 0 ? move_pages(&cpu_files[i], page, true) : 0;
		if (merr < 0) {
			fprintf(stderr, "fxt-run: --kernel: cannot keep the kernel's events (%s)\n",
				strerror(-merr));
			break;
		}
	}
	free(page);
	instance_end();
	busy_end();
	struct tep_handle *tep = formats();
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
	err = fxt_writer_open_path(&w, path, 0);
	if (err == 0)
		err = fxt_writer_magic(w);
	memset(&ic, 0, sizeof(ic));
	ic.w = w;
	ic.path = path;
	ic.next_provider = 1;
	ic.tgid_of = tgid_of;
	ic.tgid_arg = &m;
	struct import_stream *s = NULL;
	if (err == 0)
		err = import_stream_begin(&ic, tep, "kernel sched", "mono", &s);
	if (err == 0) {
		err = read_events(tep, s);
		/* The buffer drops the newest when full: the pages do not say
		 * so, its stats do. */
		if (err == 0 && lost > ic.st.lost)
			err = import_stream_lost(s, lost - ic.st.lost);
		err = import_stream_end(s, err);
	}
	if (w != NULL) {
		int cerr = fxt_writer_close(w);
		if (err == 0)
			err = cerr;
	}
	kernel_destroy();
	tep_free(tep);
	free(m.tid);
	free(m.tgid);
	if (err == 0 && !keep) {
		const char *parts[2] = { out, path };
		struct merge_part_result res[2];
		err = merge_archives(out, parts, 2, res);
		if (err == 0)
			unlink(path);
	}
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
	}
	return err;
}

#endif /* HAVE_LIBTRACECMD */
