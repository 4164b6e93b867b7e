/* fxt-run --kernel's pages of the kernel's ring buffer (kpages.h): a
 * thread of fxt-run's moves each CPU's full pages (splice, through
 * tracefs_cpu_buffered_read) every KPAGES_READ_MS, and whenever a CPU's
 * buffer is half full, into a file of its own
 * next to the archive, deleted already (O_TMPFILE, else a name unlinked at
 * once), so that a run longer than the buffer loses nothing while the
 * reader keeps up; at the end the rest is read (read() gives the partial
 * pages too), and the files are read back a page per CPU at a time, merged
 * by time: fxt-run's memory is a page per CPU whatever the run's length;
 * what the kernel dropped is read from each CPU's stats.
 * The trace_pipe_raw fds are opened here (tracefs_cpu_alloc_fd), so that
 * kernel.c's signal handler can close them before it removes the
 * instance. */
#include "config.h"

#ifdef HAVE_LIBTRACECMD

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "launcher/kpages.h"
#include "launcher/launcher.h"

#define KPAGES_READ_MS 100 /* the reader's period */

/* Each CPU's pages read so far: a file of them, and the CPU's reader. */
struct cpu_file {
	struct tracefs_cpu *tc;
	int raw; /* its trace_pipe_raw (kpages_release_in_signal()), -1: none */
	int fd;	 /* -1: none (the CPU is offline, or no file) */
};
static struct cpu_file *cpu_files;
static int ncpu_files, page_bytes;
static pthread_t reader;
static bool reader_on;
static int stop_fd = -1; /* an eventfd: kpages_stop() writes it */

/* A file next to `out` (CPU `cpu`'s pages, or another of fxt-run's),
 * deleted already: -1 or an fd.  O_TMPFILE where the file system has it,
 * else a name removed at once. */
int kpages_file(const char *out, int cpu)
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
 * its file.  The number moved, or -errno (the file cannot be written). */
static int move_pages(struct cpu_file *c, char *page, bool all)
{
	for (int moved = 0;; moved++) {
		int n = all ? tracefs_cpu_read(c->tc, page, true)
			    : tracefs_cpu_buffered_read(c->tc, page, true);
		if (n <= 0)
			return moved; /* no more (EAGAIN) */
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

/* Each CPU's full pages to its file, every KPAGES_READ_MS and as soon as
 * a CPU's buffer is half full (poll() on its trace_pipe_raw wakes at the
 * instance's buffer_percent, 50 unless changed), until kpages_stop().  A
 * burst of events then waits for the reader only as long as half the
 * buffer lasts, not a whole period: the kernel's default size (1408 KB a
 * CPU) is enough.  Signals stay with fxt-run's main thread. */
static void *reader_main(void *arg)
{
	char *page = malloc((size_t)page_bytes);
	struct pollfd *pf = calloc((size_t)ncpu_files + 1, sizeof(*pf));
	bool said = false, woken = false;

	(void)arg;
	while (page != NULL && pf != NULL) {
		int moved = 0, n = 0;
		for (int i = 0; i < ncpu_files; i++) {
			int r = cpu_files[i].fd >= 0 ? move_pages(&cpu_files[i], page, false) : 0;
			if (r < 0 && !said) {
				fprintf(stderr,
					"fxt-run: --kernel: cannot keep the kernel's events "
					"(%s): those past its buffer are lost\n",
					strerror(-r));
				said = true;
			}
			moved += r > 0 ? r : 0;
		}
		pf[n++] = (struct pollfd){ .fd = stop_fd, .events = POLLIN };
		/* Woken by a buffer with nothing to move (a buffer_percent
		 * of 0 wakes at any event): the period's wait, not a spin. */
		for (int i = 0; i < ncpu_files && !(woken && moved == 0); i++)
			if (cpu_files[i].fd >= 0 && cpu_files[i].raw >= 0)
				pf[n++] =
				    (struct pollfd){ .fd = cpu_files[i].raw, .events = POLLIN };
		if (poll(pf, (nfds_t)n, KPAGES_READ_MS) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			break; /* kpages_stop() */
		woken = false;
		for (int i = 1; i < n; i++)
			woken = woken || pf[i].revents != 0;
	}
	free(pf);
	free(page);
	return NULL;
}

void kpages_stop(void)
{
	if (!reader_on)
		return;
	uint64_t one = 1;
	if (write(stop_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "fxt-run: --kernel: cannot stop the reader: %s\n", strerror(errno));
	pthread_join(reader, NULL);
	reader_on = false;
}

/* CPU cpu's trace_pipe_raw, open (non-blocking): -1 or an fd. */
static int open_raw(struct tracefs_instance *inst, int cpu)
{
	char file[64];

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	char *path = tracefs_instance_get_file(inst, file);
	int fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	tracefs_put_tracing_file(path);
	return fd;
}

/* The size of the ring buffer's pages (sub-buffers). */
static int subbuf_bytes(struct tracefs_instance *inst)
{
	char *kb = tracefs_instance_file_read(inst, "buffer_subbuf_size_kb", NULL);
	long n = kb ? strtol(kb, NULL, 10) : 0;

	free(kb);
	return n > 0 ? (int)n * 1024 : (int)sysconf(_SC_PAGESIZE);
}

int kpages_open(struct tracefs_instance *inst, const char *out)
{
	int n = (int)sysconf(_SC_NPROCESSORS_CONF), err = 0;
	struct cpu_file *cs = calloc(n > 0 ? (size_t)n : 1, sizeof(*cs));

	if (cs == NULL)
		return -ENOMEM;
	page_bytes = subbuf_bytes(inst);
	for (int i = 0; i < n; i++) {
		cs[i].fd = -1;
		cs[i].raw = open_raw(inst, i);
	}
	cpu_files = cs;
	ncpu_files = n;
	for (int i = 0; i < n && err == 0; i++) {
		if (cs[i].raw < 0)
			continue; /* offline */
		cs[i].tc = tracefs_cpu_alloc_fd(cs[i].raw, page_bytes, true);
		if (cs[i].tc == NULL) {
			err = -errno;
			break;
		}
		cs[i].fd = kpages_file(out, i);
		if (cs[i].fd < 0) {
			err = -errno;
			fprintf(stderr,
				"fxt-run: --kernel: cannot create a file for the kernel's events "
				"next to %s (%s)\n",
				display_name(out), strerror(-err));
		}
	}
	if (err < 0)
		kpages_close();
	return err;
}

bool kpages_is_open(void)
{
	return cpu_files != NULL;
}

bool kthread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	bool on;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	on = pthread_create(t, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return on;
}

void kpages_start(void)
{
	if (cpu_files == NULL || reader_on)
		return;
	if (stop_fd < 0)
		stop_fd = eventfd(0, EFD_CLOEXEC);
	if (stop_fd >= 0)
		reader_on = kthread_start(&reader, reader_main, NULL);
}

int kpages_drain(void)
{
	char *page = malloc(page_bytes > 0 ? (size_t)page_bytes : 1);
	int err = page ? 0 : -ENOMEM;

	for (int i = 0; err == 0 && i < ncpu_files; i++)
		if (cpu_files[i].fd >= 0) {
			int r = move_pages(&cpu_files[i], page, true);
			err = r < 0 ? r : 0;
		}
	free(page);
	if (err < 0)
		fprintf(stderr, "fxt-run: --kernel: cannot keep the kernel's events (%s)\n",
			strerror(-err));
	return err;
}

/* What the kernel dropped: the "dropped events" and "overrun" lines of
 * each CPU's stats. */
uint64_t kpages_lost(struct tracefs_instance *inst)
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

void kpages_release(void)
{
	for (int i = 0; i < ncpu_files; i++) {
		if (cpu_files[i].tc)
			tracefs_cpu_free_fd(cpu_files[i].tc);
		cpu_files[i].tc = NULL;
		int raw = cpu_files[i].raw;
		cpu_files[i].raw = -1; /* before a signal could close it again */
		if (raw >= 0)
			close(raw);
	}
}

void kpages_release_in_signal(void)
{
	for (int i = 0; i < ncpu_files; i++)
		if (cpu_files[i].raw >= 0)
			close(cpu_files[i].raw);
}

void kpages_close(void)
{
	struct cpu_file *cs = cpu_files;
	int n = ncpu_files;

	ncpu_files = 0; /* kpages_release_in_signal() leaves them */
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

int kpages_each(struct tep_handle *tep, int (*fn)(void *arg, struct tep_record *rec), void *arg)
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
		if (fn(arg, &min->rec) != 0) {
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

#endif /* HAVE_LIBTRACECMD */
