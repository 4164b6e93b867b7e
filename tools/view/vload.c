/* fxt-view's pass over the archive (the call tree, and through
 * calltree_opts.also the timeline) on a thread of its own, so that the
 * first screen comes after a moment, not after the whole pass, and keys
 * are answered while the totals fill in.
 *
 * The tree and the timeline are the pass's while it runs: it holds `mu`
 * all along but between two slices, where it hands `mu` over when the
 * frame has asked for it (view_lock() sets `want`) and waits until the
 * frame gives it back (view_unlock() clears `want`), so that the frame's
 * turn comes within a slice's work (and the pass is not starved by a
 * frame waiting for keys: the frame holds `mu` only between two keys).
 * Each turn of the frame starts by catching up with what the pass added:
 * the new nodes' folding, the tree's lines, the timeline's window while
 * it is the whole trace (vtree_sync(), vtime_sync()). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/view/view.h"

struct vload {
	pthread_t th;
	pthread_mutex_t mu;   /* the tree and the timeline */
	pthread_mutex_t gate; /* with cv: `want` cleared, `done` set */
	pthread_cond_t cv;
	atomic_bool want; /* the frame waits for mu */
	atomic_bool done; /* rc, err and s final (release) */
	bool synced;	  /* the frame has caught up with the end */
	int rc;
	char err[512];
	double t0, s; /* the pass's start, its length (s) */
	/* FXT_VIEW_LOAD_PAUSE (for tests): once the tree has counted a
	 * slice, the pass waits while this file exists, the frame shown
	 * meanwhile */
	const char *pause;
	bool paused;
	uint64_t slices;
	struct view *v;
};

static void hand_over(struct vload *ld)
{
	pthread_mutex_unlock(&ld->mu);
	pthread_mutex_lock(&ld->gate);
	while (atomic_load(&ld->want))
		pthread_cond_wait(&ld->cv, &ld->gate);
	pthread_mutex_unlock(&ld->gate);
	pthread_mutex_lock(&ld->mu);
}

static void pause_while_file(struct vload *ld)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	ld->paused = true;
	pthread_mutex_unlock(&ld->mu);
	while (access(ld->pause, F_OK) == 0)
		nanosleep(&ts, NULL);
	pthread_mutex_lock(&ld->mu);
}

/* calltree_opts.also: the frame's turn, then the timeline's slice (the
 * tree has counted every slice before this one). */
static void on_slice(void *ctx, const struct profile_slice *s)
{
	struct view *v = ctx;
	struct vload *ld = v->load;

	if (atomic_load_explicit(&ld->want, memory_order_relaxed))
		hand_over(ld);
	if (__builtin_expect(ld->pause && !ld->paused, 0) && ++ld->slices == 2)
		pause_while_file(ld);
	timeline_on_slice(v->tl, s);
}

static void *pass(void *arg)
{
	struct vload *ld = arg;
	struct view *v = ld->v;
	int rc;

	pthread_mutex_lock(&ld->mu);
	rc = calltree_load(v->tree, v->path, ld->err, sizeof(ld->err));
	if (rc == 0 && timeline_error(v->tl))
		rc = timeline_error(v->tl), ld->err[0] = 0;
	if (rc < 0 && !ld->err[0])
		snprintf(ld->err, sizeof(ld->err), "%s", strerror(-rc));
	ld->rc = rc;
	ld->s = view_now_s() - ld->t0;
	atomic_store_explicit(&ld->done, true, memory_order_release);
	pthread_mutex_unlock(&ld->mu);
	pthread_mutex_lock(&ld->gate);
	pthread_cond_broadcast(&ld->cv);
	pthread_mutex_unlock(&ld->gate);
	return NULL;
}

int vload_start(struct view *v, const struct calltree_opts *o)
{
	struct calltree_opts to = *o;
	struct vload *ld = calloc(1, sizeof(*ld));
	pthread_condattr_t ca;
	int rc;

	if (!ld)
		return -ENOMEM;
	ld->v = v;
	ld->pause = getenv("FXT_VIEW_LOAD_PAUSE");
	pthread_mutex_init(&ld->mu, NULL);
	pthread_mutex_init(&ld->gate, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ld->cv, &ca);
	pthread_condattr_destroy(&ca);
	v->load = ld;
	rc = timeline_new(&v->tl);
	if (rc == 0) {
		to.also = on_slice;
		to.also_ctx = v;
		rc = calltree_new(&v->tree, &to);
	}
	ld->t0 = view_now_s();
	if (rc == 0)
		rc = -pthread_create(&ld->th, NULL, pass, ld);
	if (rc < 0) {
		v->load = NULL;
		pthread_cond_destroy(&ld->cv);
		pthread_mutex_destroy(&ld->gate);
		pthread_mutex_destroy(&ld->mu);
		free(ld);
	}
	return rc;
}

bool vload_wait(struct view *v, double s)
{
	struct vload *ld = v->load;
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)s;
	until.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&ld->gate);
	while (!(done = atomic_load(&ld->done)))
		if (s < 0)
			pthread_cond_wait(&ld->cv, &ld->gate);
		else if (pthread_cond_timedwait(&ld->cv, &ld->gate, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&ld->gate);
	return done;
}

bool vload_busy(const struct view *v)
{
	return v->load && !atomic_load_explicit(&v->load->done, memory_order_acquire);
}

double vload_seconds(const struct view *v)
{
	return vload_busy(v) ? view_now_s() - v->load->t0 : v->load->s;
}

int vload_result(const struct view *v, const char **err)
{
	*err = v->load->err;
	return vload_busy(v) ? 0 : v->load->rc;
}

void view_lock(struct view *v)
{
	struct vload *ld = v->load;
	bool end;

	atomic_store(&ld->want, true);
	pthread_mutex_lock(&ld->mu);
	end = atomic_load_explicit(&ld->done, memory_order_acquire) && !ld->synced;
	if (end && ld->rc < 0)
		return; /* the frame says why and quits */
	ld->synced |= end;
	vtree_sync(v, end);
	vtime_sync(v);
}

void view_unlock(struct view *v)
{
	struct vload *ld = v->load;

	pthread_mutex_unlock(&ld->mu);
	pthread_mutex_lock(&ld->gate);
	atomic_store(&ld->want, false);
	pthread_cond_broadcast(&ld->cv);
	pthread_mutex_unlock(&ld->gate);
}

bool vload_free(struct view *v)
{
	struct vload *ld = v->load;

	if (!ld)
		return true;
	if (vload_busy(v))
		return false; /* q while reading: the pass ends with the process */
	pthread_join(ld->th, NULL);
	pthread_cond_destroy(&ld->cv);
	pthread_mutex_destroy(&ld->gate);
	pthread_mutex_destroy(&ld->mu);
	free(ld);
	v->load = NULL;
	return true;
}
