/* fxt-waits' engine, once the records are read: each wait with its
 * releaser (the flow's begin, the thread or child that ended within it),
 * what the releaser was busy in, its runnable time (waits-int.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/waits/waits-int.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rel_id(const void *a, const void *b)
{
	const struct release *x = a, *y = b;
	int c = cmp_u64(x->id, y->id);

	return c ? c : cmp_u64(x->ts, y->ts);
}

static int cmp_sw(const void *a, const void *b)
{
	const struct switch_in *x = a, *y = b;
	int c = cmp_u64(x->tid, y->tid);

	return c ? c : cmp_u64(x->ts, y->ts);
}

static int cmp_item(const void *a, const void *b)
{
	const struct waits_item *x = a, *y = b;
	int c = cmp_u64(x->start, y->start);

	if (!c)
		c = cmp_u64(x->tid, y->tid);
	return c;
}

/* The first release of flow id (rels sorted by id), or NULL. */
static const struct release *find_release(const struct waits_engine *e, uint64_t id)
{
	size_t lo = 0, hi = e->nrels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->rels[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nrels && e->rels[lo].id == id ? &e->rels[lo] : NULL;
}

/* Whether release r ended a wait that began at `start` rather
 * than release q: one made during the wait before any made earlier, the
 * first of those made during it, the last of those made before it. */
static bool better(const struct release *r, const struct release *q, uint64_t start)
{
	bool rin = r->ts >= start, qin = q->ts >= start;

	if (rin != qin)
		return rin;
	return rin ? r->ts < q->ts : r->ts > q->ts;
}

/* The innermost frame of the chain from snaps[at] open from `from` to
 * `to`, or NO_NAME. */
static uint32_t since_of(const struct snapframe *s, uint32_t at, uint64_t from, uint64_t to)
{
	for (; at != NO_SNAP; at = s[at].parent)
		if (s[at].start <= from && s[at].end >= to)
			return s[at].name;
	return NO_NAME;
}

/* A thread's last frames, outermost first: its stack at the end of the
 * archive, or when a later record had retired them all, the frame it
 * retired last (the outermost).  Returns their count. */
static size_t last_frames(const struct thread *t, const struct frame **v)
{
	if (!t->n && t->has_last) {
		*v = &t->last;
		return 1;
	}
	*v = t->f;
	return t->n;
}

/* The last frames of t kept in e->snaps, as a chain; *at: its innermost
 * frame (NO_SNAP: none).  0 or -ENOMEM. */
static int final_snap(struct waits_engine *e, const struct thread *t, uint32_t *at)
{
	const struct frame *v;
	size_t nv = last_frames(t, &v);

	*at = NO_SNAP;
	if (TOOL_GROW(e->snaps, e->snaps_cap, e->nsnaps + nv) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < nv; k++) {
		const struct frame *g = &v[k];
		uint64_t end = g->flags & FF_HAS_END ? g->end : t->max_end;
		e->snaps[e->nsnaps] = (struct snapframe){ waits__ns_of(g->start, t->tps),
							  waits__ns_of(end, t->tps), g->name, *at };
		*at = (uint32_t)e->nsnaps++;
	}
	return 0;
}

/* The outermost of a thread's last frames that is a function of the
 * program's (not a libc one, which has a "caller": a thread's own frame
 * "thread"), else the outermost. */
static uint32_t ender_func(const struct thread *t)
{
	const struct frame *v;
	size_t nv = last_frames(t, &v);

	for (size_t k = 0; k < nv; k++)
		if (v[k].caller == NO_NAME)
			return v[k].name;
	return nv ? v[0].name : NO_NAME;
}

/* A join's or a child wait's releaser: the thread that ended last before
 * its end (a join: of the waiter's process, not the waiter; a child wait:
 * of process `child`); the caller tells whether that was within it. */
static const struct thread *ender(const struct waits_engine *e, const struct wait *w, bool join,
				  uint64_t child)
{
	const struct thread *best = NULL;
	uint64_t best_end = 0;

	for (size_t i = 0; i < e->nthreads; i++) {
		const struct thread *t = &e->threads[i];
		uint64_t end = waits__ns_of(t->max_end, t->tps);

		if (!t->used || (t->tid & FXT_SAMPLE_KOID_BIT))
			continue;
		if (join ? t->pid != w->pid || t->tid == w->tid : t->pid != child)
			continue;
		if (end > w->end || (best && end <= best_end))
			continue;
		best = t;
		best_end = end;
	}
	return best;
}

int waits__resolve(struct waits_engine *e, struct waits *out)
{
	size_t nitems = 0;

	if (e->nrels) /* qsort(NULL, 0) is undefined */
		qsort(e->rels, e->nrels, sizeof(*e->rels), cmp_rel_id);
	if (e->nsw)
		qsort(e->sw, e->nsw, sizeof(*e->sw), cmp_sw);
	/* Each wait's release, by another thread, before its end: the first
	 * made while it waited (a read given the bytes of several writes was
	 * let through by the first), else the latest before it began. */
	for (size_t i = 0; i < e->nlinks; i++) {
		struct wait *w = &e->waits[e->links[i].wait];
		const struct release *r = find_release(e, e->links[i].id);

		for (; r && r < e->rels + e->nrels && r->id == e->links[i].id; r++) {
			if ((r->tid == w->tid && r->pid == w->pid) || r->ts > w->end)
				continue;
			if (w->release == NO_WAIT || better(r, &e->rels[w->release], w->start))
				w->release = (uint32_t)(r - e->rels);
		}
	}
	out->items = calloc(e->nwaits ? e->nwaits : 1, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;
	for (size_t i = 0; i < e->nwaits; i++) {
		const struct wait *w = &e->waits[i];
		struct waits_item *it = &out->items[nitems];
		uint32_t since = NO_NAME;

		if (w->end == UINT64_MAX)
			continue; /* never ended (the archive cut it): not a wait */
		if (w->kind == WK_CHILD && w->result <= 0)
			continue; /* no child came (WNOHANG, an error): not a wait */
		memset(it, 0, sizeof(*it));
		it->pid = w->pid;
		it->tid = w->tid;
		it->start = w->start;
		it->end = w->end;
		it->call = waits__name_str(e, w->call);
		it->func = w->func != NO_NAME ? waits__name_str(e, w->func) : "?";
		it->runnable = -1;
		if (w->release != NO_WAIT) {
			const struct release *r = &e->rels[w->release];

			it->via = WAITS_VIA_FLOW;
			it->rpid = r->pid;
			it->rtid = r->tid;
			it->rts = r->ts;
			it->rcall = waits__name_str(e, r->call);
			it->rfunc = r->func != NO_NAME ? waits__name_str(e, r->func) : "?";
			since = since_of(e->snaps, r->snap, w->start, r->ts);
		} else if (w->kind == WK_JOIN || w->kind == WK_CHILD) {
			bool join = w->kind == WK_JOIN;
			const struct thread *t = ender(e, w, join, (uint64_t)w->result);
			uint32_t at;

			if (t && waits__ns_of(t->max_end, t->tps) < w->start)
				continue; /* it had ended: the call did not wait */
			if (t) {
				it->via = join ? WAITS_VIA_THREAD : WAITS_VIA_PROCESS;
				it->rpid = t->pid;
				it->rtid = t->tid;
				it->rts = waits__ns_of(t->max_end, t->tps);
				it->rcall = join ? "(thread end)" : "(exit)";
				it->rfunc = waits__name_str(e, ender_func(t));
				if (!it->rfunc)
					it->rfunc = "?";
				if (final_snap(e, t, &at) < 0)
					return -ENOMEM;
				since = since_of(e->snaps, at, w->start, it->rts);
			}
		}
		if (it->via == WAITS_VIA_NONE)
			it->timed_out = w->flags & FF_TIMEDOUT;
		it->since = waits__name_str(e, since);
		if (it->via != WAITS_VIA_NONE && e->nsw) {
			/* The waiter's first switch-in after its release. */
			size_t lo = 0, hi = e->nsw;
			struct switch_in key = { it->tid, it->rts };

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (cmp_sw(&e->sw[mid], &key) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < e->nsw && e->sw[lo].tid == it->tid && e->sw[lo].ts <= it->end)
				it->runnable = (int64_t)(e->sw[lo].ts - it->rts);
		}
		nitems++;
	}
	qsort(out->items, nitems, sizeof(*out->items), cmp_item);
	out->nitems = nitems;
	return 0;
}
