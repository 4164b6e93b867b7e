/* fxt-run's drain thread (see drain.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "launcher/drain.h"
#include "spool/clock.h"
#include "run/names.h"
#include "spool/stage.h"

/* Spools watched at once (each holds a descriptor). */
#define DRAIN_MAX_SPOOLS 64

/* How long the thread sleeps when nobody rings; it also stops then. */
#define IDLE_NS (100 * 1000 * 1000)

static void spool_forget(struct drain_spool *s)
{
	for (size_t i = 0; i < s->nstaged; i++)
		munmap(s->staged[i].c, s->staged[i].size);
	free(s->staged);
	if (s->h)
		munmap(s->h, 4096);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void drain_forget_all(struct drain *d)
{
	for (size_t i = 0; i < d->n; i++)
		spool_forget(&d->v[i]);
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

static bool known(const struct drain *d, const char *path)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].path, path) == 0)
			return true;
	return false;
}

void drain_let_go(struct drain *d, const char *path)
{
	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].path, path) == 0) {
			spool_forget(&d->v[i]);
			d->v[i] = d->v[--d->n];
			break;
		}
	pthread_mutex_unlock(&d->lock);
}

void drain_watch(struct drain *d, const char *path)
{
	struct drain_spool s = { .fd = -1 };
	struct stat st;
	void *p;

	s.fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (s.fd < 0 || fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4096)
		goto skip;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
	if (p == MAP_FAILED)
		goto skip;
	s.h = p;
	if (!spool_header_ok(s.h) || __atomic_load_n(&s.h->state, __ATOMIC_ACQUIRE) == SPOOL_SEALED)
		goto skip;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct drain_spool *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			goto skip;
		d->v = v;
		d->cap = cap;
	}
	s.path = strdup(path);
	if (!s.path)
		goto skip;
	d->v[d->n++] = s;
	return;
skip:
	spool_forget(&s);
}

void drain_rescan(struct drain *d)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir = opendir(d->dir);
	long pid;
	unsigned image;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (!run_spool_parse(d->out, de->d_name, &pid, &image))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dir, de->d_name) >=
		    sizeof(path))
			continue;
		if (!known(d, path))
			drain_watch(d, path);
	}
	closedir(dir);
}

/* Maps the staged chunks linked since the last look (new ones are linked
 * first, so the walk stops at the first one known). */
static void refresh(struct drain_spool *s)
{
	uint64_t off = __atomic_load_n(&s->h->first_staged, __ATOMIC_ACQUIRE);
	size_t added = 0;

	while (off && off % 4096 == 0) {
		bool seen = false;
		for (size_t i = 0; i < s->nstaged && !seen; i++)
			seen = s->staged[i].off == off;
		if (seen || added > 4096)
			break;
		if (s->nstaged == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 8;
			struct drain_staged *v = realloc(s->staged, cap * sizeof(*v));
			if (!v)
				return;
			s->staged = v;
			s->cap = cap;
		}
		/* The header first, then the whole chunk: staged chunks stay
		 * where they are for their thread's life, so one mapping
		 * serves every copy, written straight from it. */
		struct spool_chunk head;
		if (pread(s->fd, &head, sizeof(head), (off_t)off) != (ssize_t)sizeof(head) ||
		    head.magic != SPOOL_CHUNK_MAGIC || head.size < 4096 || head.size % 4096)
			return;
		void *p =
		    mmap(NULL, head.size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, (off_t)off);
		if (p == MAP_FAILED)
			return;
		struct spool_chunk *c = p;
		s->staged[s->nstaged].off = off;
		s->staged[s->nstaged].size = head.size;
		s->staged[s->nstaged].c = c;
		s->nstaged++;
		added++;
		off = __atomic_load_n(&c->next_staged, __ATOMIC_ACQUIRE);
	}
}

size_t drain_pass(struct drain *d)
{
	size_t copied = 0;

	for (size_t i = 0; i < d->n;) {
		struct drain_spool *s = &d->v[i];
		if (__atomic_load_n(&s->h->state, __ATOMIC_ACQUIRE) == SPOOL_SEALED) {
			/* Its process is done: what is left full is read
			 * where it is. */
			spool_forget(s);
			d->v[i] = d->v[--d->n];
			continue;
		}
		refresh(s);
		for (size_t k = 0; k < s->nstaged; k++) {
			struct spool_chunk *c = s->staged[k].c;
			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CHUNK_FULL ||
			    !spool_chunk_claim(c, CHUNK_FULL, CHUNK_COPYING))
				continue;
			/* A chunk shrunk by its thread's exit is never full
			 * again; this is for a spool that lies. */
			int err = c->size <= s->staged[k].size
				      ? spool_stage_copy(s->fd, c, s->staged[k].off, c)
				      : -EINVAL;
			__atomic_store_n(&c->state, err < 0 ? CHUNK_FULL : CHUNK_COPIED,
					 __ATOMIC_RELEASE);
			if (err == 0)
				copied++;
		}
		i++;
	}
	d->copied += copied;
	return copied;
}

/* While chunks come, the thread polls rather than have each process wake
 * it: a futex wake costs the busy thread that rings more than the copy
 * saves on some machines.  It polls every quarter of the last gap between
 * two passes that copied, between POLL_NS and POLL_MAX_NS: a thread whose
 * chunk is full fills its other staged chunk meanwhile, so the copy is
 * still early, and a thread that fills a chunk every few milliseconds (a
 * program recording every libc call) does not wake it thousands of times
 * a second for nothing.  After ACTIVE_NS without a copy it sleeps until
 * rung (`waiters` set) or IDLE_NS pass.  It looks for new spools when rung
 * and the ones it knows had nothing full, at most every RESCAN_NS. */
#define POLL_NS	    (200 * 1000)
#define POLL_MAX_NS (1000 * 1000)
#define ACTIVE_NS   (50 * 1000 * 1000)
#define RESCAN_NS   (20 * 1000 * 1000)

/* A pass (after a rescan when `rescan`) under the lock. */
static size_t locked_pass(struct drain *d, bool rescan)
{
	size_t copied;

	pthread_mutex_lock(&d->lock);
	if (rescan)
		drain_rescan(d);
	copied = drain_pass(d);
	pthread_mutex_unlock(&d->lock);
	return copied;
}

static void *drain_main(void *arg)
{
	struct drain *d = arg;
	struct run_bell *b = d->bell;
	uint64_t last_copy = 0, next_rescan = 0, poll = POLL_NS;

	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		uint32_t seen = __atomic_load_n(&b->word, __ATOMIC_SEQ_CST);
		uint64_t now = spool_mono_ns(), wait = IDLE_NS;

		bool copied = locked_pass(d, false);

		if (!copied && seen != d->rescanned && now >= next_rescan) {
			/* Rung, and nothing full where we look: a new spool. */
			d->rescanned = seen;
			next_rescan = now + RESCAN_NS;
			copied = locked_pass(d, true);
		}
		if (copied) {
			/* The first copy after a pause: no gap known yet. */
			poll = last_copy && now - last_copy < ACTIVE_NS ? (now - last_copy) / 4
									: POLL_NS;
			poll = poll < POLL_NS ? POLL_NS : poll > POLL_MAX_NS ? POLL_MAX_NS : poll;
			last_copy = now;
			continue;
		}
		if (seen != d->rescanned)
			wait = next_rescan - now;
		if (now - last_copy < ACTIVE_NS && wait > poll) {
			struct timespec ts = { 0, (long)poll };
			nanosleep(&ts, NULL);
			continue;
		}
		/* Announce the sleep, then look once more (a process that
		 * rang before seeing `waiters` did not wake us). */
		__atomic_store_n(&b->waiters, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&b->word, __ATOMIC_SEQ_CST) == seen &&
		    !__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
			struct timespec ts = { (time_t)(wait / 1000000000u),
					       (long)(wait % 1000000000u) };
			syscall(SYS_futex, &b->word, FUTEX_WAIT, seen, &ts, NULL, 0);
		}
		__atomic_store_n(&b->waiters, 0, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

int drain_start(struct drain *d, const char *out, const char *ctl)
{
	const char *slash = strrchr(out, '/');
	int err;

	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->out = out;
	if (!slash || (size_t)(slash - out) >= sizeof(d->dir))
		return -EINVAL;
	memcpy(d->dir, out, (size_t)(slash - out));
	d->dir[slash - out] = '\0';
	if (!d->dir[0])
		strcpy(d->dir, "/");
	d->bell = run_bell_map(ctl);
	if (!d->bell)
		return -EIO;
	d->rescanned = __atomic_load_n(&d->bell->word, __ATOMIC_SEQ_CST) - 1;
	err = -pthread_create(&d->thread, NULL, drain_main, d);
	if (err < 0) {
		munmap((char *)d->bell - RUN_BELL_OFF, RUN_CTL_SIZE);
		d->bell = NULL;
		return err;
	}
	d->running = true;
	return 0;
}

void drain_stop(struct drain *d)
{
	if (d->running) {
		__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&d->bell->word, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &d->bell->word, FUTEX_WAKE, 1, NULL, NULL, 0);
		pthread_join(d->thread, NULL);
		d->running = false;
	}
	drain_forget_all(d);
	if (d->bell) {
		munmap((char *)d->bell - RUN_BELL_OFF, RUN_CTL_SIZE);
		d->bell = NULL;
	}
}
