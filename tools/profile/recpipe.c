/* The pipe of records from a reading thread to the profile engine
 * (recpipe.h): a ring of RECPIPE_NBATCH batches, the reading thread
 * filling one while the engine's drains another; a mutex and a condition
 * variable per handover (one per RECPIPE_BATCH records, not per record).
 *
 * What keeps a record's strings valid on the engine's thread: a plain
 * event's strings are the reader's table entries, which the reader keeps
 * (fxt_reader_keep_strings()) until every batch handed over before they
 * were replaced is drained; the strings of a copied record live in its
 * batch's arena until the batch is drained. */
#include "config.h"

#include "tools/profile/recpipe.h"
#include "tools/profile/tickconv.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Records a batch holds: about 64 bytes each, a quarter of a MB, so that
 * a batch is still in the shared cache when the engine reads it. */
#define RECPIPE_BATCH  4096
#define RECPIPE_NBATCH 4
/* A batch goes early past this many bytes of copies, and the reading
 * thread waits for the engine to drain every batch before it goes on
 * past this many bytes of kept strings: memory stays bounded whatever the
 * archive (string records of 32 KB in a row, copies of big records). */
#define ARENA_MAX (4u << 20)
#define KEPT_MAX  (8u << 20)
/* Plain events read at a time (18 KB). */
#define PLAIN_RUN 256
#define BLOCK	  (64u << 10)

struct batch {
	struct recpipe_item *it;
	size_t n;
	/* The arena of copies: blocks, filled in turn; cur the one filled,
	 * used its bytes taken, bytes all taken. */
	char **blk;
	size_t *blkcap;
	size_t nblk, cur, used, bytes;
	uint64_t kept; /* the reader's kept strings when it was handed over */
	bool full;     /* handed to the engine, not drained yet */
};

struct recpipe {
	struct fxt_reader *r;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[RECPIPE_NBATCH];
	struct tickconv conv; /* the reading thread's: the reader's clock */
	bool done;	      /* the reading thread is at the end (rc) */
	bool stop;	      /* the engine wants no more */
	int rc;		      /* 0, -1 (the reader's error), -ENOMEM */
	bool saw_magic;	      /* set with the first batch */
	bool started;
	bool ticks; /* no time made ns (recpipe_start_ticks()) */
	/* The engine's side: the batch it drains (NULL: none held). */
	struct batch *cur;
	unsigned tail;
};

/* ------------------------------------------------------ reading thread */

static void *arena_alloc(struct batch *b, size_t n)
{
	void *m;

	n = (n + 7) & ~(size_t)7;
	if (!b->nblk || b->used + n > b->blkcap[b->cur]) {
		size_t k = b->nblk ? b->cur + 1 : 0;

		if (k == b->nblk || b->blkcap[k] < n) {
			size_t cap = n > BLOCK ? n : BLOCK;
			char *blk = malloc(cap);

			if (!blk)
				return NULL;
			if (k == b->nblk) {
				char **nb = realloc(b->blk, (b->nblk + 1) * sizeof(*nb));
				size_t *nc;

				if (!nb) {
					free(blk);
					return NULL;
				}
				b->blk = nb;
				nc = realloc(b->blkcap, (b->nblk + 1) * sizeof(*nc));
				if (!nc) {
					free(blk);
					return NULL;
				}
				b->blkcap = nc;
				b->nblk++;
			} else {
				free(b->blk[k]);
			}
			b->blk[k] = blk;
			b->blkcap[k] = cap;
		}
		b->cur = k;
		b->used = 0;
	}
	m = b->blk[b->cur] + b->used;
	b->used += n;
	b->bytes += n;
	return m;
}

static void str_room(const struct fxt_string *s, size_t *room)
{
	*room += s->len;
}

static void str_move(struct fxt_string *s, char **at)
{
	if (s->len)
		memcpy(*at, s->data, s->len);
	s->data = *at;
	*at += s->len;
}

/* A copy of rec, with the strings the engine may read (an event's or a
 * kernel object's name and category, the arguments' names and string
 * values), in b's arena; NULL when out of memory. */
static const struct fxt_record *copy_record(struct batch *b, const struct fxt_record *rec)
{
	size_t room = sizeof(*rec);
	struct fxt_record *c;
	char *at;

	if (rec->type == FXT_RECORD_EVENT) {
		str_room(&rec->u.event.category, &room);
		str_room(&rec->u.event.name, &room);
	} else if (rec->type == FXT_RECORD_KERNEL_OBJECT) {
		str_room(&rec->u.kobj.name, &room);
	}
	for (unsigned i = 0; i < rec->nargs; i++) {
		str_room(&rec->args[i].name, &room);
		if (rec->args[i].type == FXT_ARG_STRING)
			str_room(&rec->args[i].v.s, &room);
	}
	c = arena_alloc(b, room);
	if (!c)
		return NULL;
	*c = *rec;
	at = (char *)(c + 1);
	if (rec->type == FXT_RECORD_EVENT) {
		str_move(&c->u.event.category, &at);
		str_move(&c->u.event.name, &at);
	} else if (rec->type == FXT_RECORD_KERNEL_OBJECT) {
		str_move(&c->u.kobj.name, &at);
	}
	for (unsigned i = 0; i < c->nargs; i++) {
		str_move(&c->args[i].name, &at);
		if (c->args[i].type == FXT_ARG_STRING)
			str_move(&c->args[i].v.s, &at);
	}
	return c;
}

/* The times of the plain begins, ends and completes in x[0 .. k) in ns,
 * where tickconv_ns() can say them: what the engine's to_ns() would make
 * of them, with the clock it would have then (the reader's: only records
 * that are no event change it, and each goes over with it). */
/* (the items as plain events in a row: recpipe_convert()) */
_Static_assert(sizeof(struct recpipe_item) == sizeof(struct fxt_plain), "an item is its event");

static void convert(struct recpipe *p, struct recpipe_item *x, size_t k)
{
	uint64_t tps = fxt_reader_ticks_per_second(p->r);

	if (tps != p->conv.tps || !p->conv.b)
		tickconv_set(&p->conv, tps);
	recpipe_convert(&p->conv, &x->e, k);
}

/* Fills b with the next records: 1 when it is full, else what
 * fxt_reader_next() said last (0, -1), or -ENOMEM. */
static int fill(struct recpipe *p, struct batch *b)
{
	struct fxt_reader *r = p->r;
	struct fxt_record rec;
	size_t kept;

	while (b->n < RECPIPE_BATCH && b->bytes < ARENA_MAX) {
		struct recpipe_item *x = &b->it[b->n];
		const struct fxt_record *c;
		/* A run at a time that stays in the first-level cache for
		 * convert() (72 bytes an item). */
		size_t room = RECPIPE_BATCH - b->n;
		size_t k = fxt_reader_next_plain(r, &x->e, room < PLAIN_RUN ? room : PLAIN_RUN);
		int rc;

		if (k) {
			if (!p->ticks)
				convert(p, x, k);
			b->n += k;
			continue;
		}
		rc = fxt_reader_next(r, &rec);
		if (rc <= 0)
			return rc;
		if (__builtin_expect(!p->started, 0)) {
			p->started = true;
			p->saw_magic = fxt_reader_saw_magic(r);
		}
		x->e.record_type = (uint8_t)rec.type;
		x->e.aux = NULL;
		if (__builtin_expect(rec.type == FXT_RECORD_EVENT, 1)) {
			const typeof(rec.u.event) *ev = &rec.u.event;

			if (__builtin_expect(!rec.nargs &&
						 !fxt_strref_is_inline(ev->category_ref) &&
						 !fxt_strref_is_inline(ev->name_ref),
					     1)) {
				x->e.type = (uint8_t)ev->type;
				x->e.category_ref = ev->category_ref;
				x->e.name_ref = ev->name_ref;
				x->e.category_len = ev->category.len;
				x->e.name_len = ev->name.len;
				x->e.category = ev->category.data;
				x->e.name = ev->name.data;
				x->e.ts = ev->ts;
				x->e.extra = ev->extra;
				x->e.pid = ev->pid;
				x->e.tid = ev->tid;
				b->n++;
				continue;
			}
			if (!(c = copy_record(b, &rec)))
				return -ENOMEM;
			x->e.aux = c;
			b->n++;
			continue;
		}
		x->e.extra = fxt_reader_ticks_per_second(r);
		if (rec.type == FXT_RECORD_KERNEL_OBJECT || rec.type == FXT_RECORD_CONTEXT_SWITCH ||
		    (rec.type == FXT_RECORD_METADATA &&
		     rec.u.meta.type == FXT_METADATA_PROVIDER_EVENT)) {
			if (!(c = copy_record(b, &rec)))
				return -ENOMEM;
			x->e.aux = c;
		}
		b->n++;
		/* Only these replace or clear table strings. */
		if ((rec.type == FXT_RECORD_STRING || rec.type == FXT_RECORD_METADATA) &&
		    (fxt_reader_kept_strings(r, &kept), kept > KEPT_MAX))
			break;
	}
	return 1;
}

static bool any_full(const struct recpipe *p)
{
	for (unsigned i = 0; i < RECPIPE_NBATCH; i++)
		if (p->b[i].full)
			return true;
	return false;
}

static void *produce(void *arg)
{
	struct recpipe *p = arg;
	struct fxt_reader *r = p->r;
	unsigned k = 0;

	for (;;) {
		struct batch *b = &p->b[k];
		size_t kept;
		bool stop;
		int rc;

		pthread_mutex_lock(&p->mu);
		while (b->full && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
		/* Drained, and every batch before it: what was kept for them
		 * can go. */
		fxt_reader_release_strings(r, b->kept);
		b->n = 0;
		b->cur = 0;
		b->used = 0;
		b->bytes = 0;
		rc = fill(p, b);
		b->kept = fxt_reader_kept_strings(r, &kept);
		pthread_mutex_lock(&p->mu);
		b->full = true;
		if (rc <= 0) {
			p->done = true;
			p->rc = rc;
		}
		pthread_cond_broadcast(&p->cv);
		if (rc > 0 && kept > KEPT_MAX) {
			/* Too much kept: wait for the engine to drain every
			 * batch, then none of it is needed. */
			while (any_full(p) && !p->stop)
				pthread_cond_wait(&p->cv, &p->mu);
			if (!p->stop)
				fxt_reader_release_strings(r, b->kept);
		}
		pthread_mutex_unlock(&p->mu);
		if (rc <= 0)
			break;
		k = (k + 1) % RECPIPE_NBATCH;
	}
	return NULL;
}

/* ------------------------------------------------------ engine's side */

static int start(struct recpipe **pp, struct fxt_reader *r, bool ticks)
{
	struct recpipe *p = calloc(1, sizeof(*p));
	int rc = -ENOMEM;

	if (!p)
		return -ENOMEM;
	p->r = r;
	p->ticks = ticks;
	for (unsigned i = 0; i < RECPIPE_NBATCH; i++)
		if (!(p->b[i].it = malloc(RECPIPE_BATCH * sizeof(*p->b[i].it))))
			goto fail;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	fxt_reader_keep_strings(r, true);
	rc = pthread_create(&p->th, NULL, produce, p);
	if (rc != 0) {
		rc = -rc;
		fxt_reader_keep_strings(r, false);
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		goto fail;
	}
	*pp = p;
	return 0;
fail:
	for (unsigned i = 0; i < RECPIPE_NBATCH; i++)
		free(p->b[i].it);
	free(p);
	return rc;
}

bool recpipe_worth(void)
{
	const char *e = getenv("FXT_THREADS");

	if (e && strcmp(e, "0") == 0)
		return false;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

int recpipe_start(struct recpipe **pp, struct fxt_reader *r)
{
	return start(pp, r, false);
}

int recpipe_start_ticks(struct recpipe **pp, struct fxt_reader *r)
{
	return start(pp, r, true);
}

int recpipe_take(struct recpipe *p, const struct recpipe_item **items, size_t *n)
{
	struct batch *b = p->cur;
	bool full;

	pthread_mutex_lock(&p->mu);
	if (b) {
		/* Drained: the reading thread may fill it again. */
		b->full = false;
		pthread_cond_broadcast(&p->cv);
		p->cur = NULL;
		p->tail = (p->tail + 1) % RECPIPE_NBATCH;
	}
	b = &p->b[p->tail];
	while (!b->full && !p->done)
		pthread_cond_wait(&p->cv, &p->mu);
	full = b->full;
	pthread_mutex_unlock(&p->mu);
	if (!full)
		return p->rc;
	p->cur = b;
	*items = b->it;
	*n = b->n;
	return 1;
}

bool recpipe_saw_magic(const struct recpipe *p)
{
	return p->saw_magic;
}

void recpipe_stop(struct recpipe *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	fxt_reader_keep_strings(p->r, false);
	for (unsigned i = 0; i < RECPIPE_NBATCH; i++) {
		for (size_t k = 0; k < p->b[i].nblk; k++)
			free(p->b[i].blk[k]);
		free(p->b[i].blk);
		free(p->b[i].blkcap);
		free(p->b[i].it);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
