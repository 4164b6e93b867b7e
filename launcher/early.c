/* fxt-run's early converter thread (see early.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "launcher/early.h"
#include "run/names.h"
#include "run/proc.h"
#include "spool/clock.h"
#include "symbolizer/symbolizer.h"

/* How long it sleeps when no chunk was whole, and how often it looks for
 * new spools; in its first EARLY_FIRST_FOR_NS, until it has a spool, both
 * every EARLY_FIRST_NS (the root's spool is worth converting from its
 * first chunks on; a readdir costs some microseconds). */
#define EARLY_IDLE_NS	   (20 * 1000 * 1000)
#define EARLY_RESCAN_NS	   (50 * 1000 * 1000)
#define EARLY_FIRST_NS	   (5 * 1000 * 1000)
#define EARLY_FIRST_FOR_NS (250 * 1000 * 1000)
/* Chunks a step converts at most (a few ms of CPU; it ends after its
 * first once early_take() wants the spool): the step's own work, its
 * look at the chain, spread over them. */
#define EARLY_STEP_CHUNKS 8

/* A spool is opened (its header read, its modules' symbols looked at)
 * once it holds this much past its header: before, it is a short
 * process's, whose few chunks are converted at its end as fast (the
 * opening, per process, was most of the early thread's CPU under a fork
 * loop). */
#define EARLY_MIN_BYTES (128u << 10)
/* How long early_take() waits for a step under way (a chunk: a few ms of
 * CPU, when the thread gets any), and when it could lift the thread out
 * of SCHED_IDLE meanwhile (then it runs as fxt-run's other threads do;
 * converting the spool whole instead takes longer). */
#define EARLY_WAIT_NS	     (50 * 1000 * 1000)
#define EARLY_WAIT_LIFTED_NS (1000 * 1000 * 1000)
/* Nice levels below fxt-run's (and the program's): next to a thread of
 * the program on one core it gets some 1.5 % of it (the kernel's weights:
 * 1024 at nice 0, 15 at 19), next to another's work at fxt-run's
 * priority, as much as its nice value gives. */
#define EARLY_NICE_BELOW 19

static bool cas(uint32_t *state, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(state, &from, to, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

static bool known(const struct early *x, const char *path)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->v[i].path, path) == 0)
			return true;
	return false;
}

/* FNV-1a of a path, never 0 (early.going's "none"). */
static uint64_t path_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
	return h ? h : 1;
}

static bool listed(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The source locations of the modules of the spool at `path` built with
 * -finstrument-functions (their functions are the slices'), decoded and
 * kept, once a run each (see early.h).  A header being made is looked at
 * again at the next rescan. */
static void fill(struct early *x, const char *path)
{
	struct spool_header *h;
	int fd;

	if (x->nlooked == EARLY_MAX_LOOKED || __atomic_load_n(&x->fill_stop, __ATOMIC_ACQUIRE) ||
	    listed(x->looked, x->nlooked, path))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (convert_read_header(fd, &h) < 0) {
		close(fd);
		return;
	}
	close(fd);
	if ((x->looked[x->nlooked] = strdup(path)) != NULL)
		x->nlooked++;
	for (uint32_t i = 0; i < h->nmodules && x->nfilled < EARLY_MAX_FILLED; i++) {
		const char *mod = h->modules[i].path;

		if (__atomic_load_n(&x->fill_stop, __ATOMIC_ACQUIRE))
			break;
		if (!mod[0] || listed(x->filled, x->nfilled, mod) ||
		    (x->filled[x->nfilled] = strdup(mod)) == NULL)
			continue;
		x->nfilled++;
		if (fxt_sym_loccache_fill(mod, &x->fill_stop) > 0)
			x->kept_ahead++;
	}
	free(h);
}

/* Looks for the new spools of OUT (the thread's side). */
static void rescan(struct early *x)
{
	struct dirent *de;
	DIR *dir = opendir(x->dir);
	long pid;
	unsigned image;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && x->n < EARLY_MAX_SPOOLS) {
		struct early_spool *s = &x->v[x->n];
		int err;

		if (!run_spool_parse(x->out, de->d_name, &pid, &image))
			continue;
		if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s", x->dir, de->d_name) >=
			sizeof(s->path) ||
		    known(x, s->path))
			continue;
		s->pid = pid;
		fill(x, s->path);
		struct stat sb;
		if (stat(s->path, &sb) != 0 ||
		    (uint64_t)sb.st_size < SPOOL_HEADER_SIZE + EARLY_MIN_BYTES)
			continue; /* looked at again at the next rescan */
		/* Published busy: early_take() waits while it is opened. */
		__atomic_store_n(&s->wanted, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, EARLY_BUSY, __ATOMIC_SEQ_CST);
		__atomic_store_n(&x->n, x->n + 1, __ATOMIC_SEQ_CST);
		/* Being recycled (early_holds() did not see it published):
		 * left alone. */
		if (__atomic_load_n(&x->going, __ATOMIC_SEQ_CST) == path_hash(s->path)) {
			__atomic_store_n(&s->state, EARLY_TAKEN, __ATOMIC_RELEASE);
			continue;
		}
		err = convert_early_open(s->path, x->out, x->srcline, &s->ce);
		if (err == -EBADMSG || err == -ENOENT) {
			/* Being made, or gone: another look later. */
			if (cas(&s->state, EARLY_BUSY, EARLY_FREE))
				__atomic_store_n(&x->n, x->n - 1, __ATOMIC_RELEASE);
			else
				__atomic_store_n(&s->state, EARLY_TAKEN, __ATOMIC_RELEASE);
			continue;
		}
		if (s->ce)
			convert_early_yield(s->ce, &s->wanted);
		if (!cas(&s->state, EARLY_BUSY, EARLY_IDLE)) {
			/* Abandoned meanwhile. */
			convert_early_free(s->ce);
			s->ce = NULL;
			__atomic_store_n(&s->state, EARLY_TAKEN, __ATOMIC_RELEASE);
		}
	}
	closedir(dir);
}

/* A step on spool `s` if it is idle; how many chunks it converted. */
static int step(struct early_spool *s)
{
	int r = 0;

	if (__atomic_load_n(&s->wanted, __ATOMIC_ACQUIRE) ||
	    !cas(&s->state, EARLY_IDLE, EARLY_BUSY))
		return 0;
	if (s->ce)
		r = convert_early_step(s->ce, EARLY_STEP_CHUNKS);
	if (!cas(&s->state, EARLY_BUSY, EARLY_IDLE)) {
		/* Abandoned while it ran: the spool was converted whole. */
		convert_early_free(s->ce);
		s->ce = NULL;
		__atomic_store_n(&s->state, EARLY_TAKEN, __ATOMIC_RELEASE);
		return 0;
	}
	return r > 0 ? r : 0;
}

/* The thread's priority as x->idle says: SCHED_IDLE, or SCHED_OTHER
 * EARLY_NICE_BELOW levels below fxt-run.  0 or -errno (an unprivileged
 * thread cannot leave SCHED_IDLE, nor come back up from a lowered nice
 * value: it stays where it is). */
static int early_priority(struct early *x, bool idle)
{
	struct sched_param sp = { .sched_priority = 0 };
	int nice = x->nice + EARLY_NICE_BELOW > 19 ? 19 : x->nice + EARLY_NICE_BELOW;
	int tid = __atomic_load_n(&x->tid, __ATOMIC_ACQUIRE);

	if (!tid) /* not started: 0 would be the caller's own */
		return -ESRCH;
	if (idle)
		return -pthread_setschedparam(x->thread, SCHED_IDLE, &sp);
	if (setpriority(PRIO_PROCESS, (id_t)tid, nice) != 0)
		return -errno;
	return -pthread_setschedparam(x->thread, SCHED_OTHER, &sp);
}

/* Whether the traced processes it converts have a thread for every core
 * (counting those that wait: a program may use them all the next
 * moment). */
static bool program_fills_cores(const struct early *x)
{
	unsigned threads = 0;
	size_t n = __atomic_load_n(&x->n, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n && threads < x->cpus; i++) {
		uint32_t st = __atomic_load_n(&x->v[i].state, __ATOMIC_ACQUIRE);

		if (st == EARLY_IDLE || st == EARLY_BUSY)
			threads += run_proc_threads(x->v[i].pid);
	}
	return threads >= x->cpus;
}

/* Below the program, or at SCHED_IDLE while it fills every core (looked
 * at with each rescan); not while early_take() has lifted it. */
static void early_choose(struct early *x, uint64_t *idle_since)
{
	bool idle = program_fills_cores(x);

	if (idle == (bool)x->idle || __atomic_load_n(&x->lifted, __ATOMIC_ACQUIRE))
		return;
	if (early_priority(x, idle) != 0)
		return;
	if (idle)
		*idle_since = spool_mono_ns();
	else
		x->idle_ms += (spool_mono_ns() - *idle_since) / 1000000;
	__atomic_store_n(&x->idle, idle, __ATOMIC_RELEASE);
}

/* Sleeps `ns` (under a second), or until early_stop() wakes it: the
 * run's end waits for this thread, and a plain sleep made it wait for
 * the rest of the thread's 5-20 ms at the end of every run. */
static void early_sleep(struct early *x, long ns)
{
	struct timespec ts = { 0, ns };

	syscall(SYS_futex, &x->stop, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void *early_main(void *arg)
{
	struct early *x = arg;
	uint64_t next_rescan = 0, idle_since = 0,
		 first_until = spool_mono_ns() + EARLY_FIRST_FOR_NS;

	__atomic_store_n(&x->tid, (int)gettid(), __ATOMIC_RELEASE);
	pthread_setname_np(pthread_self(), "fxt-early"); /* for ps -L, top -H */
	/* Below the program from the start, until it fills every core. */
	if (early_priority(x, false) != 0) {
		early_priority(x, true);
		__atomic_store_n(&x->idle, 1, __ATOMIC_RELEASE);
		idle_since = spool_mono_ns();
	}
	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		bool progress = false;
		uint64_t now = spool_mono_ns();
		bool first = !x->n && now < first_until;

		if (now >= next_rescan) {
			rescan(x);
			early_choose(x, &idle_since);
			next_rescan = now + (first ? EARLY_FIRST_NS : EARLY_RESCAN_NS);
		}
		for (size_t i = 0; i < x->n && !__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE);) {
			int r = step(&x->v[i]);

			if (r > 0) {
				progress = true;
				__atomic_add_fetch(&x->fed, (uint64_t)r, __ATOMIC_RELAXED);
			} else {
				i++; /* the same spool while it has whole chunks */
			}
		}
		if (!progress)
			early_sleep(x, first ? EARLY_FIRST_NS : EARLY_IDLE_NS);
	}
	if (x->idle)
		x->idle_ms += (spool_mono_ns() - idle_since) / 1000000;
	return NULL;
}

int early_start(struct early *x, const char *out, const char *dir, bool srcline)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->out = out;
	x->dir = dir[0] ? dir : "/";
	x->srcline = srcline;
	errno = 0;
	x->nice = getpriority(PRIO_PROCESS, 0);
	if (errno != 0)
		x->nice = 0;
	cpu_set_t set;
	x->cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	err = -pthread_create(&x->thread, NULL, early_main, x);
	if (err < 0)
		return err;
	x->running = true;
	return 0;
}

/* The thread at fxt-run's own priority (the step under way then ends
 * sooner on a busy machine: below it, it may wait for seconds).  0, or
 * -errno: only a privileged fxt-run (CAP_SYS_NICE, or a RLIMIT_NICE that
 * allows it) may take a thread out of SCHED_IDLE or raise its priority. */
static int lift(struct early *x)
{
	struct sched_param sp = { .sched_priority = 0 };
	int tid = __atomic_load_n(&x->tid, __ATOMIC_ACQUIRE);

	if (!tid) /* not started: 0 would be the caller's own */
		return -ESRCH;
	if (setpriority(PRIO_PROCESS, (id_t)tid, x->nice) != 0)
		return -errno;
	return -pthread_setschedparam(x->thread, SCHED_OTHER, &sp);
}

/* Waits until slot `s`'s step under way ends, then takes its conversion;
 * past `deadline`, leaves it to the thread.  The conversion, or NULL. */
static struct convert_early *wait_step(struct early_spool *s, uint64_t deadline)
{
	for (;;) {
		uint32_t st;

		if (cas(&s->state, EARLY_IDLE, EARLY_TAKEN)) {
			struct convert_early *ce = s->ce;
			s->ce = NULL;
			return ce;
		}
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (st != EARLY_BUSY)
			return NULL; /* taken before, or nothing */
		if (spool_mono_ns() > deadline) {
			/* The thread gets no CPU: on without it. */
			if (cas(&s->state, EARLY_BUSY, EARLY_ABANDONED))
				return NULL;
			continue;
		}
		struct timespec ts = { 0, 200 * 1000 };
		nanosleep(&ts, NULL);
	}
}

bool early_holds(struct early *x, const char *path)
{
	size_t n;

	if (!x || !x->running)
		return false;
	/* Marked, then looked for: the thread publishes a slot, then looks
	 * at the mark (all sequentially consistent), so one of the two sees
	 * the other. */
	__atomic_store_n(&x->going, path_hash(path), __ATOMIC_SEQ_CST);
	n = __atomic_load_n(&x->n, __ATOMIC_SEQ_CST);
	for (size_t i = 0; i < n; i++) {
		uint32_t st = __atomic_load_n(&x->v[i].state, __ATOMIC_SEQ_CST);

		if ((st == EARLY_BUSY || st == EARLY_IDLE || st == EARLY_ABANDONED) &&
		    strcmp(x->v[i].path, path) == 0)
			return true;
	}
	return false;
}

struct convert_early *early_take(struct early *x, const char *path)
{
	struct convert_early *ce;
	size_t n;
	uint64_t deadline;

	if (!x || !x->running)
		return NULL;
	n = __atomic_load_n(&x->n, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < n; i++) {
		struct early_spool *s = &x->v[i];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (st == EARLY_FREE || strcmp(s->path, path) != 0)
			continue;
		/* No step begins after the one under way. */
		__atomic_store_n(&s->wanted, 1, __ATOMIC_RELEASE);
		deadline = spool_mono_ns() + EARLY_WAIT_NS;
		__atomic_store_n(&x->lifted, 1, __ATOMIC_RELEASE);
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == EARLY_BUSY && lift(x) == 0)
			deadline += EARLY_WAIT_LIFTED_NS - EARLY_WAIT_NS;
		ce = wait_step(s, deadline);
		early_priority(x, __atomic_load_n(&x->idle, __ATOMIC_ACQUIRE));
		__atomic_store_n(&x->lifted, 0, __ATOMIC_RELEASE);
		return ce;
	}
	return NULL;
}

void early_fill_stop(struct early *x)
{
	if (x)
		__atomic_store_n(&x->fill_stop, 1, __ATOMIC_RELEASE);
}

void early_stop(struct early *x)
{
	if (x->running) {
		__atomic_store_n(&x->fill_stop, 1, __ATOMIC_RELEASE);
		/* At fxt-run's priority, woken: it has only to return, which
		 * at nice 19 on a busy machine waited for the others. */
		lift(x);
		__atomic_store_n(&x->stop, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &x->stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		pthread_join(x->thread, NULL);
		x->running = false;
	}
	for (size_t i = 0; i < x->n; i++) {
		convert_early_free(x->v[i].ce);
		x->v[i].ce = NULL;
	}
	x->n = 0;
	for (size_t i = 0; i < x->nlooked; i++)
		free(x->looked[i]);
	for (size_t i = 0; i < x->nfilled; i++)
		free(x->filled[i]);
	x->nlooked = x->nfilled = 0;
}
