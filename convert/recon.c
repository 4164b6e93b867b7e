/* Stack reconstruction in start order (see recon.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/recon.h"

#define FIFO_MIN 256u

static inline int slot_open(const struct recon_slot *s)
{
	return s->end == 0 && !(s->addr & RECON_MARK_BIT);
}

void recon_init(struct recon *r, const struct recon_sink *sink, void *ctx, size_t fifo_max)
{
	size_t max = 2;

	if (!fifo_max)
		fifo_max = RECON_FIFO_MAX;
	while (max < fifo_max)
		max *= 2;
	r->stack = NULL;
	r->depth = r->cap = r->nbegun = 0;
	r->fifo = NULL;
	r->fifo_args = NULL;
	r->fifo_cap = 0;
	r->fifo_max = max;
	r->head = r->tail = 0;
	r->last_ts = 0;
	r->step = 1;
	r->unmatched = 0;
	r->deep = 0;
	r->max_depth = 0;
	r->emitted = 0;
	r->begun = 0;
	r->nargs = 0;
	r->spare = NULL;
	r->sink = sink;
	r->ctx = ctx;
	r->min = 0;
	r->open = ADDRTAB_INIT(struct recon_open);
	r->left_out = 0;
}

void recon_set_step(struct recon *r, uint64_t ticks)
{
	r->step = ticks ? ticks : 1;
}

void recon_set_min(struct recon *r, uint64_t ticks)
{
	r->min = ticks;
}

/* An emitted list goes back to the recon's spares (its arrays back in
 * it): libc calls make one a call, which malloc would cost more than
 * the rest of their lists. */
static void args_free(struct recon *r, struct recon_args *a)
{
	if (a) {
		if (a->v != a->small)
			free(a->v);
		if (a->bytes != a->small_bytes)
			free(a->bytes);
		a->next = r->spare;
		r->spare = a;
	}
}

/* An array that starts in the list itself (`small`), grown to `new`
 * bytes: moved to the heap the first time, reallocated after.  NULL when
 * out of memory (the array is left as it was). */
static void *args_grow(void *p, const void *small, size_t old, size_t new)
{
	void *v;

	if (p != small)
		return realloc(p, new);
	v = malloc(new);
	if (v)
		memcpy(v, small, old);
	return v;
}

void recon_free(struct recon *r)
{
	/* Argument lists of what was never emitted (an error stopped us). */
	for (uint64_t q = r->head; r->nargs && r->fifo_args && q != r->tail; q++) {
		struct recon_args **a = &r->fifo_args[q & (r->fifo_cap - 1)];
		if (*a) {
			args_free(r, *a);
			*a = NULL;
			r->nargs--;
		}
	}
	for (size_t i = 0; r->nargs && i < r->nbegun; i++) {
		if (r->stack[i].args) {
			args_free(r, r->stack[i].args);
			r->nargs--;
		}
	}
	while (r->spare) {
		struct recon_args *a = r->spare;
		r->spare = a->next;
		free(a);
	}
	free(r->stack);
	free(r->fifo);
	free(r->fifo_args);
	addrtab_free(&r->open);
	r->stack = NULL;
	r->fifo = NULL;
	r->fifo_args = NULL;
	r->nargs = 0;
	r->depth = r->cap = r->nbegun = 0;
	r->fifo_cap = 0;
	r->head = r->tail = 0;
}

/* Emits the closed slots at the FIFO's front: runs of frames in one call
 * (up to the ring's wrap), marks one by one. */
int recon__drain(struct recon *r)
{
	const size_t mask = r->fifo_cap - 1;

	while (r->head != r->tail) {
		size_t i = r->head & mask, n = 0;
		size_t limit = r->tail - r->head < r->fifo_cap - i ? (size_t)(r->tail - r->head)
								   : r->fifo_cap - i;
		const struct recon_slot *v = &r->fifo[i];
		int err;

		while (n < limit && v[n].end && !(v[n].addr & (RECON_MARK_BIT | RECON_OMIT_BIT)))
			n++;
		if (n) {
			struct recon_args **a = r->nargs ? &r->fifo_args[i] : NULL;
			err = r->sink->slices(r->ctx, v, a, n);
			if (err < 0)
				return err;
			for (size_t k = 0; a && k < n; k++) {
				if (a[k]) {
					args_free(r, a[k]);
					a[k] = NULL;
					r->nargs--;
				}
			}
			r->emitted += n;
			r->head += n;
			continue;
		}
		if (slot_open(v))
			break;
		if (v->addr & RECON_OMIT_BIT) {
			r->head++; /* a short call, left out */
			continue;
		}
		err = r->sink->event(r->ctx, RECON_MARK, v->addr & ~RECON_MARK_BIT, v->start,
				     v->start, NULL);
		if (err < 0)
			return err;
		r->head++;
	}
	return 0;
}

/* Moves the live slots into a ring twice as large (same sequence numbers). */
static int fifo_grow(struct recon *r)
{
	size_t cap = r->fifo_cap ? r->fifo_cap * 2 : FIFO_MIN;
	struct recon_slot *v;

	if (cap > r->fifo_max)
		cap = r->fifo_max;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (r->fifo_args) {
		struct recon_args **a = calloc(cap, sizeof(*a));
		if (!a) {
			free(v);
			return -ENOMEM;
		}
		for (uint64_t q = r->head; q != r->tail; q++)
			a[q & (cap - 1)] = r->fifo_args[q & (r->fifo_cap - 1)];
		free(r->fifo_args);
		r->fifo_args = a;
	}
	for (uint64_t q = r->head; q != r->tail; q++)
		v[q & (cap - 1)] = r->fifo[q & (r->fifo_cap - 1)];
	free(r->fifo);
	r->fifo = v;
	r->fifo_cap = cap;
	return 0;
}

/* Makes room for one slot: grows the FIFO up to its bound, else forces
 * its front out as a BEGIN event.  The front is the oldest open frame
 * (closed fronts are drained as soon as they close), the lowest frame of
 * the stack not begun yet. */
static int fifo_room(struct recon *r)
{
	struct recon_frame *f;
	int err;

	if (r->tail - r->head < r->fifo_cap)
		return 0;
	if (r->fifo_cap < r->fifo_max)
		return fifo_grow(r);
	f = &r->stack[r->nbegun];
	err = r->sink->event(r->ctx, RECON_BEGIN, f->addr, f->start, 0, NULL);
	if (err < 0)
		return err;
	/* Its arguments, now and to come, go with its END. */
	f->args = NULL;
	if (r->fifo_args) {
		f->args = r->fifo_args[r->head & (r->fifo_cap - 1)];
		r->fifo_args[r->head & (r->fifo_cap - 1)] = NULL;
	}
	r->nbegun++;
	r->emitted++;
	r->begun++;
	r->head++;
	return recon__drain(r);
}

int recon__enter_slow(struct recon *r, uint64_t fn, uint64_t ts)
{
	struct recon_frame *f;
	struct recon_slot *s;
	int err;

	if (r->depth == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct recon_frame *v = realloc(r->stack, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->stack = v;
		r->cap = cap;
	}
	err = fifo_room(r);
	if (err < 0)
		return err;
	s = &r->fifo[r->tail & (r->fifo_cap - 1)];
	s->addr = fn;
	s->start = ts;
	s->end = 0;
	f = &r->stack[r->depth++];
	f->addr = fn;
	f->start = ts;
	f->slot = r->tail++;
	return 0;
}

/* Short calls: a frame at `depth` closes and is emitted. */
static void kept_depth(struct recon *r, size_t depth)
{
	if (fxt__depth_hidden(depth) && depth > r->max_depth)
		r->max_depth = depth;
}

/* Pops frames down to (and including) index `to`, all ending at `end`
 * (equal ends still nest), innermost first, then emits what is ready. */
static int close_to(struct recon *r, size_t to, uint64_t end)
{
	const size_t mask = r->fifo_cap - 1;

	while (r->depth > to) {
		const struct recon_frame *f = &r->stack[--r->depth];
		int err;

		/* Short calls: these frames are emitted, whatever they last. */
		if (r->min)
			kept_depth(r, r->depth);
		if (r->min && f->left_out) {
			err = r->sink->short_children(r->ctx, f->addr, f->left_out);
			if (err < 0)
				return err;
		}
		if (r->depth >= r->nbegun) {
			r->fifo[f->slot & mask].end = end;
			continue;
		}
		/* A begun frame: everything still queued started after it and
		 * has closed (the frames above it were popped first), so all
		 * of it precedes its END. */
		r->nbegun = r->depth;
		err = recon__drain(r);
		if (!err)
			err = r->sink->event(r->ctx, RECON_END, f->addr, f->start, end, f->args);
		if (f->args) {
			args_free(r, f->args);
			r->nargs--;
		}
		if (err < 0)
			return err;
	}
	return recon__drain(r);
}

int recon__exit_slow(struct recon *r, uint64_t fn, uint64_t ts)
{
	/* The top frame (begun), else the nearest matching one. */
	for (size_t i = r->depth; i > 0; i--) {
		if (r->stack[i - 1].addr == fn)
			return close_to(r, i - 1, ts);
	}
	r->unmatched++;
	return 0;
}

/* ------------------------------------------------------------ short calls */

/* The open-frame count of `addr`, or NULL when out of memory. */
static uint64_t *open_count(struct recon *r, uint64_t addr)
{
	struct recon_open *o = addrtab_get(&r->open, addr, NULL);

	return o ? &o->n : NULL;
}

/* recon_feed() with the short calls' bookkeeping: which frames of each
 * function are open, each frame's children's time, and the top frame's
 * verdict when it closes (the rare other exits are left to recon__feed(),
 * their frames emitted). */
int recon__feed_min(struct recon *r, uint64_t ts, uint64_t addr)
{
	const uint64_t fn = addr & ~SPOOL_EXIT_BIT;
	uint64_t *n = open_count(r, fn);
	struct recon_frame *f, *parent;
	uint64_t t, dur;
	int err;

	if (!n)
		return -ENOMEM;
	if (!(addr & SPOOL_EXIT_BIT)) {
		size_t depth = r->depth, max = r->max_depth;
		err = recon__feed(r, ts, addr);
		/* The deepest is known when frames close: the deepest to open
		 * may be left out. */
		r->max_depth = max;
		if (err < 0 || r->depth != depth + 1)
			return err;
		r->stack[depth].child = r->stack[depth].left_out = 0;
		++*n;
		return 0;
	}
	if (!(r->depth > r->nbegun && r->stack[r->depth - 1].addr == fn)) {
		/* Not the top frame: every frame it closes is emitted; their
		 * counts follow. */
		for (size_t i = r->depth; i > 0; i--) {
			if (r->stack[i - 1].addr != fn)
				continue;
			for (size_t k = i - 1; k < r->depth; k++) {
				uint64_t *m = open_count(r, r->stack[k].addr);
				if (m && *m)
					--*m;
			}
			break;
		}
		return recon__feed(r, ts, addr);
	}
	t = r->last_ts && ts <= r->last_ts ? r->last_ts + r->step : ts;
	f = &r->stack[r->depth - 1];
	parent = r->depth > 1 ? &r->stack[r->depth - 2] : NULL;
	dur = t - f->start;
	if (*n)
		--*n;
	if (parent)
		parent->child += dur;
	if (dur < r->min && !(r->fifo_args && r->fifo_args[f->slot & (r->fifo_cap - 1)])) {
		r->fifo[f->slot & (r->fifo_cap - 1)].addr |= RECON_OMIT_BIT;
		if (parent)
			parent->left_out += dur;
		r->left_out++;
		if (fxt__depth_hidden(r->depth - 1))
			r->deep--; /* counted as it opened */
		err = r->sink->short_call(r->ctx, fn, dur, dur - f->child, *n == 0);
	} else {
		kept_depth(r, r->depth - 1);
		err = f->left_out ? r->sink->short_children(r->ctx, fn, f->left_out) : 0;
	}
	return err < 0 ? err : recon__feed(r, ts, addr);
}

int recon_mark(struct recon *r, uint64_t ts, uint64_t cookie)
{
	struct recon_slot *s;
	int err;

	if (r->last_ts && ts <= r->last_ts)
		ts = r->last_ts + r->step;
	r->last_ts = ts;
	err = fifo_room(r);
	if (err < 0)
		return err;
	s = &r->fifo[r->tail++ & (r->fifo_cap - 1)];
	s->addr = cookie | RECON_MARK_BIT;
	s->start = ts;
	s->end = ts;
	return recon__drain(r);
}

/* Appends `a` (and its bytes) to the list at *list, created on demand. */
static int args_append(struct recon *r, struct recon_args **list, const struct recon_arg *a,
		       const void *bytes)
{
	struct recon_args *l = *list;

	if (!l) {
		l = r->spare;
		if (l)
			r->spare = l->next;
		else if (!(l = malloc(sizeof(*l))))
			return -ENOMEM;
		l->n = 0;
		l->cap = RECON_ARGS_SMALL;
		l->used = 0;
		l->room = RECON_BYTES_SMALL;
		l->v = l->small;
		l->bytes = l->small_bytes;
		*list = l;
		r->nargs++;
	}
	if (l->n == l->cap) {
		struct recon_arg *v =
		    args_grow(l->v, l->small, l->cap * sizeof(*v), 2 * l->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap *= 2;
	}
	if (a->len > l->room - l->used) {
		uint32_t room = l->room;
		char *b;
		while (room - l->used < a->len)
			room *= 2;
		b = args_grow(l->bytes, l->small_bytes, l->used, room);
		if (!b)
			return -ENOMEM;
		l->bytes = b;
		l->room = room;
	}
	l->v[l->n] = *a;
	l->v[l->n].off = l->used;
	if (a->len)
		memcpy(l->bytes + l->used, bytes, a->len);
	l->used += a->len;
	l->n++;
	return 0;
}

int recon_arg(struct recon *r, const struct recon_arg *a, const void *bytes)
{
	struct recon_frame *f;

	r->last_ts += r->step;
	if (!a || !r->depth)
		return 0;
	f = &r->stack[r->depth - 1];
	if (r->depth - 1 < r->nbegun)
		return args_append(r, &f->args, a, bytes);
	if (!r->fifo_args && !(r->fifo_args = calloc(r->fifo_cap, sizeof(*r->fifo_args))))
		return -ENOMEM;
	return args_append(r, &r->fifo_args[f->slot & (r->fifo_cap - 1)], a, bytes);
}

int recon_leaf(struct recon *r, uint64_t ts, uint64_t addr, const struct recon_arg *v, size_t n,
	       size_t idle)
{
	struct recon_args l, *lp = &l;
	struct recon_slot s;
	int err;

	/* The general way: frames before it still queued (it must follow
	 * them), short calls; a time of 0 (recon__feed()'s "no record
	 * yet"). */
	if (r->min || r->head != r->tail || !ts) {
		err = recon_feed(r, ts, addr);
		for (size_t i = 0; i < n && !err; i++)
			err = recon_arg(r, &v[i], NULL);
		for (size_t i = 0; i < idle && !err; i++)
			err = recon_arg(r, NULL, NULL);
		return err ? err : recon_feed(r, ts, addr | SPOOL_EXIT_BIT);
	}
	if (r->last_ts && ts <= r->last_ts)
		ts = r->last_ts + r->step;
	recon__leaf_depth(r, 1);
	s.addr = addr;
	s.start = ts;
	/* The exit a step after the last entry or step, each a step after
	 * the one before. */
	s.end = ts + (n + idle + 1) * r->step;
	r->last_ts = s.end;
	r->emitted++;
	if (!n)
		return r->sink->slices(r->ctx, &s, NULL, 1);
	/* The caller's entries themselves, read only: a list of its own. */
	memset(&l, 0, offsetof(struct recon_args, small));
	l.n = l.cap = (uint32_t)n;
	l.v = (struct recon_arg *)v;
	l.bytes = l.small_bytes;
	return r->sink->slices(r->ctx, &s, &lp, 1);
}

int recon_finish(struct recon *r, uint64_t end_ts)
{
	/* Strictly after the last record, so no frame ends where it starts. */
	if (r->depth && end_ts <= r->last_ts)
		end_ts = r->last_ts + r->step;
	return close_to(r, 0, end_ts);
}
