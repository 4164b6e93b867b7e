/* Nesting depth of duration slices per thread, streaming: see nesting.h.
 *
 * Each thread keeps a stack of the ends of its open slices (UINT64_MAX for
 * a begin not ended yet).  A complete event first closes the slices that
 * ended at or before its start, then its depth is the stack's height. */
#include "config.h"

#include "tools/dump/nesting.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <fxt/reader.h>

#include "common/hash.h"
#include "tools/front/common.h"

#define OPEN UINT64_MAX

struct nthread {
	uint64_t pid, tid;
	uint64_t *ends; /* the open slices, outermost first */
	size_t n, cap;
	uint64_t last_start;
	bool seen, deeper;
};

struct nesting {
	unsigned limit;
	struct nthread *thr;
	size_t nthr, capthr;
	uint32_t *tab; /* thread index + 1; 0 = empty */
	size_t mask;
	size_t last;
	struct nesting_result res;
};

static int rehash(struct nesting *n)
{
	size_t ncap = n->mask ? (n->mask + 1) * 2 : 64;
	uint32_t *t = calloc(ncap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n->nthr; i++) {
		size_t j = fxt__hash_pair(n->thr[i].pid, n->thr[i].tid) & (ncap - 1);

		while (t[j])
			j = (j + 1) & (ncap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(n->tab);
	n->tab = t;
	n->mask = ncap - 1;
	return 0;
}

/* The thread (pid, tid), created if needed, or NULL (out of memory). */
static struct nthread *thread_get(struct nesting *n, uint64_t pid, uint64_t tid)
{
	struct nthread *t;
	size_t j;

	if (n->nthr && n->thr[n->last].pid == pid && n->thr[n->last].tid == tid)
		return &n->thr[n->last];
	for (j = fxt__hash_pair(pid, tid) & n->mask; n->tab[j]; j = (j + 1) & n->mask) {
		t = &n->thr[n->tab[j] - 1];
		if (t->pid == pid && t->tid == tid) {
			n->last = n->tab[j] - 1;
			return t;
		}
	}
	if (n->nthr >= UINT32_MAX - 1 || TOOL_GROW(n->thr, n->capthr, n->nthr + 1) < 0)
		return NULL;
	t = &n->thr[n->nthr];
	*t = (struct nthread){ .pid = pid, .tid = tid };
	n->tab[j] = (uint32_t)++n->nthr;
	n->last = n->nthr - 1;
	if (n->nthr * 2 > n->mask + 1 && rehash(n) < 0)
		return NULL;
	return &n->thr[n->last];
}

int nesting_new(struct nesting **out, unsigned limit)
{
	struct nesting *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->limit = limit;
	if (rehash(n) < 0) {
		free(n);
		return -ENOMEM;
	}
	*out = n;
	return 0;
}

void nesting_free(struct nesting *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nthr; i++)
		free(n->thr[i].ends);
	free(n->thr);
	free(n->tab);
	free(n);
}

/* Opens a slice ending at `end` (OPEN for a begin) at the top of t. */
static int push(struct nesting *n, struct nthread *t, uint64_t end)
{
	uint64_t depth = t->n;

	if (TOOL_GROW(t->ends, t->cap, t->n + 1) < 0)
		return -ENOMEM;
	t->ends[t->n++] = end;
	n->res.slices++;
	if (depth > n->res.max_depth || n->res.slices == 1) {
		n->res.max_depth = depth;
		n->res.max_pid = t->pid;
		n->res.max_tid = t->tid;
	}
	if (depth > n->limit) {
		n->res.deeper++;
		if (!t->deeper)
			n->res.deeper_threads++;
		t->deeper = true;
	}
	return 0;
}

/* Closes the complete events that ended at or before ts. */
static void close_until(struct nthread *t, uint64_t ts)
{
	while (t->n && t->ends[t->n - 1] != OPEN && t->ends[t->n - 1] <= ts)
		t->n--;
}

int nesting_complete(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t start, uint64_t end)
{
	struct nthread *t = thread_get(n, pid, tid);

	if (!t)
		return -ENOMEM;
	if (t->seen && start < t->last_start) {
		/* Out of start order: the complete events on the stack may be
		 * its children, not its parents.  Forget them, so that what
		 * stays is only ever ancestors and depths are lower bounds. */
		size_t k = 0;

		n->res.unordered++;
		for (size_t i = 0; i < t->n; i++)
			if (t->ends[i] == OPEN)
				t->ends[k++] = OPEN;
		t->n = k;
	}
	t->seen = true;
	t->last_start = start;
	close_until(t, start);
	return push(n, t, end < start ? start : end);
}

int nesting_begin(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t ts)
{
	struct nthread *t = thread_get(n, pid, tid);

	if (!t)
		return -ENOMEM;
	close_until(t, ts);
	if (!t->seen || ts > t->last_start)
		t->last_start = ts;
	t->seen = true;
	return push(n, t, OPEN);
}

int nesting_end(struct nesting *n, uint64_t pid, uint64_t tid, uint64_t ts)
{
	struct nthread *t = thread_get(n, pid, tid);
	size_t i;

	if (!t)
		return -ENOMEM;
	close_until(t, ts);
	/* The innermost open begin; complete events above it (partly
	 * overlapping it) close with it. */
	for (i = t->n; i-- > 0;) {
		if (t->ends[i] == OPEN) {
			t->n = i;
			break;
		}
	}
	return 0;
}

int nesting_record(struct nesting *n, struct fxt_reader *r, const struct fxt_record *rec)
{
	const __typeof__(rec->u.event) *ev = &rec->u.event;

	if (rec->type != FXT_RECORD_EVENT)
		return 0;
	switch (ev->type) {
	case FXT_EVENT_DURATION_COMPLETE:
		return nesting_complete(n, ev->pid, ev->tid, fxt_reader_ticks_to_ns(r, ev->ts),
					fxt_reader_ticks_to_ns(r, ev->extra));
	case FXT_EVENT_DURATION_BEGIN:
		return nesting_begin(n, ev->pid, ev->tid, fxt_reader_ticks_to_ns(r, ev->ts));
	case FXT_EVENT_DURATION_END:
		return nesting_end(n, ev->pid, ev->tid, fxt_reader_ticks_to_ns(r, ev->ts));
	default:
		return 0;
	}
}

void nesting_result(const struct nesting *n, struct nesting_result *out)
{
	*out = n->res;
}
