/* fxt-view's replay list, its index and searches (vlist.h): a thread of
 * its own makes the merge by time (its first pass), then reads it once
 * more on a fork and keeps a mark every `step` items, at most
 * VLIST_INDEX_BYTES of them (past that every other mark goes and the step
 * doubles), with the names of each stretch between two marks as bits of
 * their hashes and the distinct names.  A search reads on a fork of its
 * own from the mark before its place, a slice at a time; with the index
 * complete it skips the stretches where no name that matches occurs.
 * Going to a time (':') is such a search for the first item at that time
 * or later, from the last mark before it (each mark notes the time of the
 * item before it: the merge is in time order). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "tools/front/common.h"
#include "tools/view/view.h"
#include "tools/view/vlist.h"

/* ------------------------------------------------------------- names */

static uint64_t name_hash(const struct fxt_string *s)
{
	uint64_t h = fxt__hash_bytes(s->data, s->len);

	return h ? h : 1;
}

static void set_bit(uint64_t *bits, uint64_t h)
{
	bits[h % VLIST_BITS / 64] |= UINT64_C(1) << (h % 64);
}

/* Adds a name to the distinct ones (full past VLIST_NAMES). */
static void names_add(struct vnames *t, const struct fxt_string *s, uint64_t h)
{
	uint32_t i;

	if (t->full || t->cache[h % 16] == h)
		return;
	t->cache[h % 16] = h;
	if ((t->n + 1) * 2 > t->mask + (t->h ? 1u : 0u)) {
		struct vnames old = *t;
		uint32_t cap = t->h ? (t->mask + 1) * 2 : 256;

		t->h = calloc(cap, sizeof(*t->h));
		t->off = calloc(cap, sizeof(*t->off));
		if (!t->h || !t->off || t->n >= VLIST_NAMES) {
			free(t->h);
			free(t->off);
			t->h = old.h;
			t->off = old.off;
			t->full = true;
			return;
		}
		t->mask = cap - 1;
		for (uint32_t k = 0; old.h && k <= old.mask; k++) {
			if (!old.h[k])
				continue;
			for (i = (uint32_t)old.h[k] & t->mask; t->h[i]; i = (i + 1) & t->mask)
				;
			t->h[i] = old.h[k];
			t->off[i] = old.off[k];
		}
		free(old.h);
		free(old.off);
	}
	for (i = (uint32_t)h & t->mask; t->h[i]; i = (i + 1) & t->mask) {
		if (t->h[i] != h)
			continue;
		/* another name of the same hash would go unmatched: no filter */
		if (strlen(t->text + t->off[i]) != s->len ||
		    memcmp(t->text + t->off[i], s->data, s->len) != 0)
			t->full = true;
		return;
	}
	if (t->ntext + s->len + 1 > VLIST_NAME_BYTES ||
	    TOOL_GROW(t->text, t->captext, t->ntext + s->len + 1) < 0) {
		t->full = true;
		return;
	}
	memcpy(t->text + t->ntext, s->data, s->len);
	t->text[t->ntext + s->len] = 0;
	t->h[i] = h;
	t->off[i] = (uint32_t)t->ntext;
	t->ntext += s->len + 1;
	t->n++;
}

/* ------------------------------------------------------------- index */

/* Thins the marks to every other one, the step doubled, while they take
 * more than VLIST_INDEX_BYTES; a mark that goes gives its names to the
 * stretch before it.  With the lock held. */
static void thin(struct vlist *l)
{
	while (l->nmarks > 1 &&
	       l->mark_bytes + callmerge_shared_bytes(l->idx) > VLIST_INDEX_BYTES) {
		size_t w = 0;

		l->step *= 2;
		for (size_t i = 0; i < l->nmarks; i++) {
			uint64_t *prev = w ? l->marks[w - 1].bits : l->bits0;

			if (l->marks[i].item % l->step == 0) {
				l->marks[w++] = l->marks[i];
				continue;
			}
			for (size_t k = 0; k < VLIST_BITS / 64; k++)
				prev[k] |= l->marks[i].bits[k];
			l->mark_bytes -= callmerge_mark_bytes(l->marks[i].mk);
			callmerge_mark_free(l->marks[i].mk);
		}
		l->nmarks = w;
	}
}

static int add_mark(struct vlist *l, uint64_t n, uint64_t ts)
{
	struct callmerge_mark *mk;
	int rc = callmerge_mark(l->idx, &mk);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&l->lock);
	if (TOOL_GROW(l->marks, l->capmarks, l->nmarks + 1) < 0) {
		pthread_mutex_unlock(&l->lock);
		callmerge_mark_free(mk);
		return -ENOMEM;
	}
	l->marks[l->nmarks++] = (struct vmark){ .item = n, .ts = ts, .mk = mk };
	l->mark_bytes += callmerge_mark_bytes(mk) + sizeof(struct vmark);
	thin(l);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* The index: the merge read through on its fork, a mark every step.  The
 * bits of the last stretch are written without the lock: the view reads
 * them only once `indexed` is set. */
static int index_pass(struct vlist *l)
{
	uint64_t start = callmerge_start_ns(l->idx), span = callmerge_end_ns(l->idx) - start + 1;
	const struct callstream_item *it;
	uint64_t n = 0;
	int rc;

	while ((rc = callmerge_next(l->idx, &it)) == 1) {
		uint64_t h;

		if (callstream_log_copy(it))
			continue;
		h = name_hash(&it->name);
		set_bit(l->nmarks ? l->marks[l->nmarks - 1].bits : l->bits0, h);
		names_add(&l->names, &it->name, h);
		if (++n % l->step)
			continue;
		if (atomic_load_explicit(&l->stop, memory_order_relaxed))
			return -ECANCELED;
		if ((rc = add_mark(l, n, it->ts_ns)) < 0)
			return rc;
		atomic_store_explicit(
		    &l->progress, (unsigned)((unsigned __int128)(it->ts_ns - start) * 1000 / span),
		    memory_order_relaxed);
	}
	if (rc < 0)
		return rc;
	l->total = n;
	atomic_store_explicit(&l->indexed, true, memory_order_release);
	return 0;
}

void *vindex_worker(void *arg)
{
	struct vlist *l = arg;
	const char *pause = getenv("FXT_VIEW_LIST_PAUSE");
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	/* tests: the list's pass held while the file exists (a key pressed
	 * meanwhile is pressed before the pass ends, whatever the load) */
	while (pause && *pause && access(pause, F_OK) == 0 &&
	       !atomic_load_explicit(&l->stop, memory_order_relaxed))
		nanosleep(&ts, NULL);
	l->prc = callmerge_open(&l->pm, l->path, l->perr, sizeof(l->perr));
	if (l->prc < 0 || callmerge_fork(l->pm, &l->idx) < 0)
		atomic_store(&l->idx_failed, true);
	atomic_store_explicit(&l->ready, true, memory_order_release);
	if (l->idx && index_pass(l) < 0)
		atomic_store(&l->idx_failed, true);
	return NULL;
}

void vindex_free(struct vlist *l)
{
	for (size_t i = 0; i < l->nmarks; i++)
		callmerge_mark_free(l->marks[i].mk);
	free(l->marks);
	free(l->names.h);
	free(l->names.off);
	free(l->names.text);
	callmerge_free(l->idx);
	callmerge_free(l->sm);
}

const struct vmark *vindex_mark_before(const struct vlist *l, uint64_t at)
{
	size_t lo = 0, hi = l->nmarks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->marks[mid].item <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &l->marks[lo - 1] : NULL;
}

int64_t vindex_resume_before(struct vlist *l, struct callmerge *x, uint64_t at)
{
	const struct vmark *vm;
	int64_t rc;

	pthread_mutex_lock(&l->lock);
	vm = vindex_mark_before(l, at);
	rc = vm ? callmerge_resume(x, vm->mk) : callmerge_rewind(x);
	if (rc == 0)
		rc = vm ? (int64_t)vm->item : 0;
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* ------------------------------------------------------------ search */

/* Stretch k (with the index complete): [its start, its end), k = 0 before
 * the first mark, k = nmarks after the last. */
static uint64_t st_start(const struct vlist *l, size_t k)
{
	return k ? l->marks[k - 1].item : 0;
}

static uint64_t st_end(const struct vlist *l, size_t k)
{
	return k < l->nmarks ? l->marks[k].item : UINT64_MAX;
}

static bool st_hits(const struct vlist *l, size_t k)
{
	const uint64_t *bits = k ? l->marks[k - 1].bits : l->bits0;

	for (size_t i = 0; i < VLIST_BITS / 64; i++)
		if (bits[i] & l->want[i])
			return true;
	return false;
}

/* The stretch of item i. */
static size_t st_of(const struct vlist *l, uint64_t i)
{
	const struct vmark *vm = vindex_mark_before(l, i);

	return vm ? (size_t)(vm - l->marks) + 1 : 0;
}

/* Puts sm at the start of the stretch with a match nearest to item i
 * (forward from i's, or backward), with the filter; without, at the mark
 * before i.  Returns 0, 1 when no stretch is left, or -errno. */
static int stretch(struct vlist *l, uint64_t i)
{
	int64_t at;

	if (l->filter) {
		size_t k = st_of(l, i);

		if (l->sback) {
			while (!st_hits(l, k) && k)
				k--;
			if (!st_hits(l, k))
				return 1;
			if (st_end(l, k) < l->shi)
				l->shi = st_end(l, k);
		} else {
			while (k <= l->nmarks && !st_hits(l, k))
				k++;
			if (k > l->nmarks)
				return 1;
			l->send = st_end(l, k);
		}
		i = st_start(l, k);
	}
	at = vindex_resume_before(l, l->sm, i);
	if (at < 0)
		return (int)at;
	l->sidx = l->slo = (uint64_t)at;
	l->slast = UINT64_MAX;
	return 0;
}

bool vindex_search_start(struct vlist *l, const regex_t *re, bool back, uint64_t from)
{
	int rc = 0;

	if (!l->sm)
		rc = callmerge_fork(l->m, &l->sm);
	l->sre = re;
	l->sgo = false;
	l->sback = back;
	l->sfrom = l->shi = from;
	l->send = UINT64_MAX;
	l->filter = atomic_load_explicit(&l->indexed, memory_order_acquire) && !l->names.full;
	if (l->filter) { /* the bits of the names that match */
		memset(l->want, 0, sizeof(l->want));
		for (uint32_t k = 0; l->names.h && k <= l->names.mask; k++)
			if (l->names.h[k] &&
			    regexec(re, l->names.text + l->names.off[k], 0, NULL, 0) == 0)
				set_bit(l->want, l->names.h[k]);
	}
	if (rc == 0 && back && from == 0)
		return l->searching = false;
	if (rc == 0)
		rc = stretch(l, back ? from - 1 : from);
	l->searching = rc == 0;
	if (rc < 0)
		snprintf(l->err, sizeof(l->err), "search: %s", strerror(-rc));
	return l->searching;
}

bool vindex_goto_start(struct vlist *l, uint64_t ts)
{
	size_t lo = 0, hi;
	int64_t at;
	int rc = 0;

	if (!l->sm)
		rc = callmerge_fork(l->m, &l->sm);
	l->sgo = true;
	l->sgo_ts = ts;
	l->sback = l->filter = false;
	l->send = UINT64_MAX;
	l->slast = UINT64_MAX;
	if (rc == 0) {
		/* the last mark whose item before is earlier than ts */
		pthread_mutex_lock(&l->lock);
		hi = l->nmarks;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l->marks[mid].ts < ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		at = lo ? callmerge_resume(l->sm, l->marks[lo - 1].mk) : callmerge_rewind(l->sm);
		if (at == 0)
			at = lo ? (int64_t)l->marks[lo - 1].item : 0;
		pthread_mutex_unlock(&l->lock);
		rc = at < 0 ? (int)at : 0;
		l->sidx = l->slo = l->sfrom = l->shi = at < 0 ? 0 : (uint64_t)at;
	}
	l->searching = rc == 0;
	if (rc < 0)
		snprintf(l->err, sizeof(l->err), "going to a time: %s", strerror(-rc));
	return l->searching;
}

uint64_t vindex_search_slice(struct vlist *l)
{
	double t0 = view_now_s();
	const struct callstream_item *it;
	int rc;

	for (unsigned k = 1;; k++) {
		uint64_t i;

		if (k % 1024 == 0 && view_now_s() - t0 > VLIST_SLICE_S)
			return UINT64_MAX;
		rc = callmerge_next(l->sm, &it);
		if (rc == 1 && callstream_log_copy(it))
			continue;
		i = l->sidx;
		if (rc == 1 && !(l->sback && i >= l->shi) && i < l->send) {
			l->sidx++;
			l->sts = it->ts_ns;
			if (l->sgo) {
				if (it->ts_ns >= l->sgo_ts)
					return i;
				continue;
			}
			if ((l->sback || i >= l->sfrom) &&
			    TOOL_GROW(l->name, l->capname, it->name.len + 1) == 0) {
				memcpy(l->name, it->name.data, it->name.len);
				l->name[it->name.len] = 0;
				if (regexec(l->sre, l->name, 0, NULL, 0) == 0) {
					if (!l->sback)
						return i;
					l->slast = i;
				}
			}
			continue;
		}
		/* the end of the stretch, or of the list */
		if (rc == 1 && !l->sback) { /* forward, the filter's stretch read */
			if ((rc = stretch(l, i)) != 0)
				return UINT64_MAX - 1;
			continue;
		}
		if (!l->sback || l->slast != UINT64_MAX)
			return l->sback ? l->slast : UINT64_MAX - 1;
		if (l->slo == 0)
			return UINT64_MAX - 1;
		l->shi = l->slo;
		if (stretch(l, l->slo - 1) != 0)
			return UINT64_MAX - 1;
	}
}
