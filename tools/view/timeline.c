/* The per-thread timeline (timeline.h): bars per thread and depth, merged
 * at a coarser resolution when the threads hold too many. */
#include "config.h"

#include "tools/view/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>

#include "tools/front/thrmap.h"
#include "tools/front/common.h"

struct timeline {
	struct thrmap tm;
	struct timeline_thread **thr; /* pointers: stable while the array grows */
	size_t nthr, capthr;
	uint64_t nbars, max_bars;
	int err;
};

int timeline_new(struct timeline **out)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return -ENOMEM;
	tl->max_bars = TIMELINE_MAX_BARS;
	*out = tl;
	return 0;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nthr; i++) {
		for (unsigned d = 0; d < TIMELINE_MAX_DEPTH; d++)
			free(tl->thr[i]->lv[d].b);
		free(tl->thr[i]);
	}
	free(tl->thr);
	thrmap_free(&tl->tm);
	free(tl);
}

void timeline_set_max_bars(struct timeline *tl, uint64_t max)
{
	tl->max_bars = max ? max : 1;
}

int timeline_error(const struct timeline *tl)
{
	return tl->err;
}

size_t timeline_nthreads(const struct timeline *tl)
{
	return tl->nthr;
}

const struct timeline_thread *timeline_thread(const struct timeline *tl, size_t i)
{
	return tl->thr[i];
}

uint64_t timeline_nbars(const struct timeline *tl)
{
	return tl->nbars;
}

/* ------------------------------------------------------------- merging */

/* Whether slice [s, e) of row goes into bar b at resolution res. */
static inline bool absorb(struct timeline_bar *b, uint64_t res, uint64_t s, uint64_t e,
			  uint32_t row)
{
	if (!res || s - b->start >= res || s < b->start)
		return false;
	if (e - s > b->end - b->start || b->n == 0)
		b->row = row; /* the longest names the bar (approximately) */
	if (e > b->end)
		b->end = e;
	if (b->n < UINT32_MAX)
		b->n++;
	return true;
}

/* Merges the bars of th again at its (new) resolution. */
static void remerge(struct timeline *tl, struct timeline_thread *th)
{
	size_t total = 0;

	for (unsigned d = 0; d < th->ndepth; d++) {
		struct timeline_level *l = &th->lv[d];
		size_t w = 0;

		for (size_t r = 0; r < l->n; r++) {
			struct timeline_bar b = l->b[r];

			if (w && b.start >= l->b[w - 1].start &&
			    b.start - l->b[w - 1].start < th->res_ns) {
				struct timeline_bar *p = &l->b[w - 1];

				if (b.end - b.start > p->end - p->start)
					p->row = b.row;
				if (b.end > p->end)
					p->end = b.end;
				p->n = p->n + b.n < p->n ? UINT32_MAX : p->n + b.n;
				continue;
			}
			l->b[w++] = b;
		}
		l->n = w;
		total += w;
	}
	tl->nbars -= th->nbars - total;
	th->nbars = total;
}

/* Makes th coarser until it holds half of what it did: the first time at
 * twice the mean spacing of its bars on a level, then doubled. */
static void coarsen(struct timeline *tl, struct timeline_thread *th)
{
	uint64_t span = th->last_ns - th->first_ns, goal = th->nbars / 2;

	if (!th->res_ns) {
		th->res_ns = th->nbars ? span / th->nbars * th->ndepth * 2 : 0;
		if (!th->res_ns)
			th->res_ns = 1;
	} else
		th->res_ns *= 2;
	remerge(tl, th);
	while (th->nbars > goal && th->res_ns < span) {
		th->res_ns *= 2;
		remerge(tl, th);
	}
}

static struct timeline_thread *thread_get(struct timeline *tl, uint64_t pid, uint64_t tid)
{
	bool fresh;
	int64_t i = thrmap_get(&tl->tm, pid, tid, (uint32_t)tl->nthr, &fresh);
	struct timeline_thread *th;

	if (i < 0)
		return NULL;
	if (!fresh)
		return tl->thr[i];
	if (TOOL_GROW(tl->thr, tl->capthr, tl->nthr + 1) < 0 || !(th = calloc(1, sizeof(*th))))
		return NULL;
	th->pid = pid;
	th->tid = tid;
	th->first_ns = UINT64_MAX;
	tl->thr[tl->nthr++] = th;
	return th;
}

void timeline_on_slice(void *ctx, const struct profile_slice *s)
{
	struct timeline *tl = ctx;
	struct timeline_thread *th;
	struct timeline_level *l;
	uint32_t row;

	if (tl->err)
		return;
	th = thread_get(tl, s->pid, s->tid);
	if (!th) {
		tl->err = -ENOMEM;
		return;
	}
	th->slices++;
	if (s->start_ns < th->first_ns)
		th->first_ns = s->start_ns;
	if (s->end_ns > th->last_ns)
		th->last_ns = s->end_ns;
	if (s->depth == 0)
		th->busy_ns += s->end_ns - s->start_ns;
	if (s->depth >= TIMELINE_MAX_DEPTH) {
		th->too_deep++;
		return;
	}
	row = s->path[s->depth];
	l = &th->lv[s->depth];
	if (l->n && absorb(&l->b[l->n - 1], th->res_ns, s->start_ns, s->end_ns, row))
		return;
	if (TOOL_GROW(l->b, l->cap, l->n + 1) < 0) {
		tl->err = -ENOMEM;
		return;
	}
	l->b[l->n++] = (struct timeline_bar){ s->start_ns, s->end_ns, row, 1 };
	if (s->depth + 1 > th->ndepth)
		th->ndepth = s->depth + 1;
	th->nbars++;
	tl->nbars++;
	if (tl->nbars > tl->max_bars) {
		struct timeline_thread *big = th;

		for (size_t i = 0; i < tl->nthr; i++)
			if (tl->thr[i]->nbars > big->nbars)
				big = tl->thr[i];
		coarsen(tl, big);
	}
}

/* ------------------------------------------------------------- queries */

const struct timeline_bar *timeline_find(const struct timeline_thread *th, unsigned depth,
					 uint64_t a, uint64_t b)
{
	const struct timeline_level *l;
	size_t lo = 0, hi;

	if (depth >= th->ndepth)
		return NULL;
	l = &th->lv[depth];
	hi = l->n;
	while (lo < hi) { /* the first bar that ends after a */
		size_t mid = lo + (hi - lo) / 2;

		if (l->b[mid].end > a)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* A bar of no length at a is in [a, b) too. */
	while (lo > 0 && l->b[lo - 1].end == a && l->b[lo - 1].start == a)
		lo--;
	if (lo < l->n && l->b[lo].start < b)
		return &l->b[lo];
	return NULL;
}

const struct timeline_bar *timeline_search(const struct timeline_thread *th, uint64_t from,
					   bool backward, bool (*match)(void *ctx, uint32_t row),
					   void *ctx, unsigned *depth)
{
	const struct timeline_bar *best = NULL;

	for (unsigned d = 0; d < th->ndepth; d++) {
		const struct timeline_level *l = &th->lv[d];
		size_t lo = 0, hi = l->n;

		while (lo < hi) { /* the first bar that starts at from or after */
			size_t mid = lo + (hi - lo) / 2;

			if (l->b[mid].start >= from)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (!backward) {
			for (size_t i = lo; i < l->n; i++) {
				if (best && l->b[i].start >= best->start)
					break;
				if (match(ctx, l->b[i].row)) {
					best = &l->b[i];
					*depth = d;
					break;
				}
			}
		} else {
			for (size_t i = lo; i-- > 0;) {
				if (best && l->b[i].start <= best->start)
					break;
				if (match(ctx, l->b[i].row)) {
					best = &l->b[i];
					*depth = d;
					break;
				}
			}
		}
	}
	return best;
}
