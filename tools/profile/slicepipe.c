/* The pipe of finished slices to a second thread (slicepipe.h): two
 * batches, the engine's thread filling one while the consumer drains the
 * other; a mutex and a condition variable per handover (one per
 * SLICEPIPE_BATCH slices, not per slice). */
#include "config.h"

#include "tools/profile/slicepipe.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/front/common.h"

/* Slices a batch holds: 48 bytes each and their paths, under 1 MB, so
 * that a batch is still in the shared cache when the consumer reads it. */
#define SLICEPIPE_BATCH 16384
#define PATH_SHORT	4

struct item {
	uint64_t pid, tid, start_ns, end_ns, self_ns;
	uint32_t depth, path_off;
	bool open, end_order;
};

struct batch {
	struct item *it;
	size_t n, cap;
	uint32_t *path; /* each item's path[0 .. depth], in turn */
	size_t npath, cappath;
	bool full; /* handed to the consumer, not drained yet */
};

struct slicepipe {
	profile_slice_fn fn;
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[2];
	unsigned fill; /* the batch the engine's thread fills */
	bool done;     /* no more batches will come */
	int err;       /* a slice could not be queued */
};

static void *consume(void *arg)
{
	struct slicepipe *p = arg;
	unsigned k = 0;

	for (;;) {
		struct batch *b = &p->b[k];

		bool full;

		pthread_mutex_lock(&p->mu);
		while (!b->full && !p->done)
			pthread_cond_wait(&p->cv, &p->mu);
		full = b->full;
		pthread_mutex_unlock(&p->mu);
		if (!full)
			break; /* done, and nothing left in this one */
		for (size_t i = 0; i < b->n; i++) {
			const struct item *x = &b->it[i];
			struct profile_slice s = { .pid = x->pid,
						   .tid = x->tid,
						   .start_ns = x->start_ns,
						   .end_ns = x->end_ns,
						   .self_ns = x->self_ns,
						   .open = x->open,
						   .end_order = x->end_order,
						   .depth = x->depth,
						   .path = b->path + x->path_off };
			p->fn(p->ctx, &s);
		}
		b->n = 0;
		b->npath = 0;
		pthread_mutex_lock(&p->mu);
		b->full = false;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		k ^= 1;
	}
	return NULL;
}

bool slicepipe_worth(void)
{
	const char *e = getenv("FXT_THREADS");

	if (e && strcmp(e, "0") == 0)
		return false;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

int slicepipe_start(struct slicepipe **pp, profile_slice_fn fn, void *ctx)
{
	struct slicepipe *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	p->fn = fn;
	p->ctx = ctx;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	rc = pthread_create(&p->th, NULL, consume, p);
	if (rc != 0) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return -rc;
	}
	*pp = p;
	return 0;
}

/* Gives the batch being filled to the consumer and waits until the other
 * one is drained. */
static void hand_over(struct slicepipe *p)
{
	pthread_mutex_lock(&p->mu);
	p->b[p->fill].full = true;
	pthread_cond_broadcast(&p->cv);
	p->fill ^= 1;
	while (p->b[p->fill].full)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void slicepipe_put(void *ctx, const struct profile_slice *s)
{
	struct slicepipe *p = ctx;
	struct batch *b = &p->b[p->fill];
	size_t np = (size_t)s->depth + 1;

	/* Room for PATH_SHORT more than the path: a short one is copied in
	 * one go, a call to memcpy() cost more than the walk it hands over. */
	if (__builtin_expect(b->n >= b->cap || b->npath + np + PATH_SHORT > b->cappath, 0) &&
	    (TOOL_GROW(b->it, b->cap, b->n + 1) < 0 ||
	     TOOL_GROW(b->path, b->cappath, b->npath + np + PATH_SHORT) < 0)) {
		p->err = -ENOMEM;
		return;
	}
	if (b->npath > UINT32_MAX) {
		p->err = -ENOMEM;
		return;
	}
	/* The consumer read these lines last: ask for them ahead (their
	 * stores waited on the other CPU's cache otherwise). */
	__builtin_prefetch(&b->it[b->n + 16], 1);
	__builtin_prefetch(&b->path[b->npath + 64], 1);
	if (np <= PATH_SHORT) {
		uint32_t *d = b->path + b->npath;

		for (size_t i = 0; i < PATH_SHORT; i++) /* past np: what is there is harmless */
			d[i] = i < np ? s->path[i] : 0;
	} else {
		memcpy(b->path + b->npath, s->path, np * sizeof(*s->path));
	}
	b->it[b->n++] = (struct item){ s->pid,	    s->tid,   s->start_ns,	  s->end_ns,
				       s->self_ns,  s->depth, (uint32_t)b->npath, s->open,
				       s->end_order };
	b->npath += np;
	if (b->n >= SLICEPIPE_BATCH)
		hand_over(p);
}

int slicepipe_stop(struct slicepipe *p)
{
	int err;

	if (p->b[p->fill].n)
		hand_over(p);
	pthread_mutex_lock(&p->mu);
	p->done = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	err = p->err;
	for (int i = 0; i < 2; i++) {
		free(p->b[i].it);
		free(p->b[i].path);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	return err;
}
