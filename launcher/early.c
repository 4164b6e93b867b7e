/* fxt-run's early converter thread (see early.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launcher/early.h"
#include "run/names.h"

/* How long it sleeps when no chunk was whole, and how often it looks for
 * new spools. */
#define EARLY_IDLE_NS	(20 * 1000 * 1000)
#define EARLY_RESCAN_NS (50 * 1000 * 1000)

/* Chunks converted under one hold of the lock: early_take() waits for
 * no more (the thread may get little CPU while it holds it). */
#define EARLY_STEP 1

static bool known(const struct early *x, const char *path)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->v[i].path, path) == 0)
			return true;
	return false;
}

/* Looks for the new spools of OUT; called under the lock. */
static void rescan(struct early *x)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir = opendir(x->dir);
	long pid;
	unsigned image;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL) {
		struct convert_early *ce = NULL;
		int err;

		if (!run_spool_parse(x->out, de->d_name, &pid, &image))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", x->dir, de->d_name) >=
			sizeof(path) ||
		    known(x, path))
			continue;
		err = convert_early_open(path, x->out, x->srcline, &ce);
		if (err == -EBADMSG || err == -ENOENT)
			continue; /* being made, or gone: another look later */
		if (x->n == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 8;
			struct early_spool *v = realloc(x->v, cap * sizeof(*v));
			if (!v) {
				convert_early_free(ce);
				break;
			}
			x->v = v;
			x->cap = cap;
		}
		x->v[x->n].path = strdup(path);
		if (!x->v[x->n].path) {
			convert_early_free(ce);
			break;
		}
		x->v[x->n++].ce = ce; /* NULL: not one to convert early */
	}
	closedir(dir);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *early_main(void *arg)
{
	struct early *x = arg;
	struct sched_param sp = { .sched_priority = 0 };
	uint64_t next_rescan = 0;

	/* Only on a core nothing else wants. */
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		bool progress = false;
		uint64_t now = mono_ns();

		if (now >= next_rescan) {
			pthread_mutex_lock(&x->lock);
			rescan(x);
			pthread_mutex_unlock(&x->lock);
			next_rescan = now + EARLY_RESCAN_NS;
		}
		for (size_t i = 0;; i++) {
			int r = 0;

			pthread_mutex_lock(&x->lock);
			if (i >= x->n) {
				pthread_mutex_unlock(&x->lock);
				break;
			}
			if (x->v[i].ce)
				r = convert_early_step(x->v[i].ce, EARLY_STEP);
			pthread_mutex_unlock(&x->lock);
			if (r > 0) {
				progress = true;
				__atomic_add_fetch(&x->fed, (uint64_t)r, __ATOMIC_RELAXED);
				if (__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE))
					break;
				i--; /* the same spool while it has whole chunks */
			}
		}
		if (!progress) {
			struct timespec ts = { 0, EARLY_IDLE_NS };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int early_start(struct early *x, const char *out, bool srcline)
{
	const char *slash = strrchr(out, '/');
	int err;

	memset(x, 0, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	x->out = out;
	x->srcline = srcline;
	if (!slash || (size_t)(slash - out) >= sizeof(x->dir))
		return -EINVAL;
	memcpy(x->dir, out, (size_t)(slash - out));
	x->dir[slash - out] = '\0';
	if (!x->dir[0])
		strcpy(x->dir, "/");
	err = -pthread_create(&x->thread, NULL, early_main, x);
	if (err < 0)
		return err;
	x->running = true;
	return 0;
}

struct convert_early *early_take(struct early *x, const char *path)
{
	struct convert_early *ce = NULL;

	if (!x || !x->running)
		return NULL;
	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->v[i].path, path) == 0) {
			ce = x->v[i].ce;
			x->v[i].ce = NULL; /* known: not looked at again */
			break;
		}
	pthread_mutex_unlock(&x->lock);
	return ce;
}

void early_stop(struct early *x)
{
	if (x->running) {
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(x->thread, NULL);
		x->running = false;
	}
	for (size_t i = 0; i < x->n; i++) {
		convert_early_free(x->v[i].ce);
		free(x->v[i].path);
	}
	free(x->v);
	x->v = NULL;
	x->n = x->cap = 0;
}
