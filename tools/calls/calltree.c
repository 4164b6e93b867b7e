/* The aggregated call tree (calltree.h): the profile engine's slices walked
 * down a tree of call paths, recursion folded, and the focused views
 * (callers, callees) made from it.  Past 800 lines: the walk of slices in
 * start and in end order and the focused views share the node table and
 * the per-thread paths; split, each part would reach into the others. */
#include "config.h"

#include "tools/calls/calltree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>

#include "common/hash.h"
#include "tools/front/thrmap.h"
#include "tools/front/common.h"

/* A slice of a thread in end order, kept until the archive is read: its
 * prefix is the rows of the begin frames open below it (in the thread's
 * `pre`). */
struct eslice {
	struct profile_span span; /* first: profile_span_cmp() */
	uint64_t self;
	uint32_t row, pre_off, pre_len;
	bool open;
};

/* A thread's last path (rows, outermost first) and the nodes it led to;
 * in end order, its slices and their prefixes.  last: what the profile's
 * last slice of the thread was to it (struct profile_slice's same is
 * relative to it), LAST_WALKED (its path is rows), LAST_KEPT (its prefix
 * is the last one kept), else LAST_NONE. */
enum { LAST_NONE, LAST_WALKED, LAST_KEPT };

struct cthread {
	uint32_t group;
	uint32_t *rows, *nodes;
	size_t n, cap;
	int last;
	struct eslice *es;
	size_t nes, capes;
	uint32_t *pre;
	size_t npre, cappre;
	uint32_t last_off, last_len;
};

/* (parent, row) -> the node a walk goes to: a child, or an ancestor that
 * a recursion folds back to. */
struct edge {
	uint64_t key;	 /* parent << 32 | row */
	uint32_t target; /* + 1; 0 = empty */
};

struct calltree {
	struct calltree_opts o;
	struct profile *prof;
	bool own_prof;
	struct calltree_node *nodes;
	size_t nn, capn;
	struct edge *edges;
	uint32_t emask, en;
	struct cthread *thr;
	size_t nthr, capthr;
	struct thrmap tm, gm; /* threads; groups by (pid, tid) as grouped */
	uint32_t *groups;
	size_t ngroups, capg;
	int err; /* the first error of a slice callback */
	uint64_t nslices;
	/* on_slice()'s last thread: its index, -1 when its slices are not
	 * taken as they come (on_slice_other()) */
	uint64_t cur_pid, cur_tid;
	int64_t cur_ti;
};

/* ----------------------------------------------------------------- nodes */

static int64_t node_new(struct calltree *t, uint32_t parent, uint32_t row)
{
	struct calltree_node *n;

	if (t->nn >= CALLTREE_GROUP || TOOL_GROW(t->nodes, t->capn, t->nn + 1) < 0)
		return -ENOMEM;
	n = &t->nodes[t->nn];
	*n = (struct calltree_node){ .parent = parent,
				     .row = row,
				     .first_child = CALLTREE_NONE,
				     .next_sibling = CALLTREE_NONE };
	if (parent != CALLTREE_NONE) {
		struct calltree_node *p = &t->nodes[parent];

		n->depth = p->depth + 1;
		n->next_sibling = p->first_child;
		p->first_child = (uint32_t)t->nn;
	}
	return (int64_t)t->nn++;
}

static inline uint32_t edge_slot(const struct calltree *t, uint64_t key)
{
	uint32_t i = (uint32_t)fxt__hash_mix(key) & t->emask;

	while (t->edges[i].target && t->edges[i].key != key)
		i = (i + 1) & t->emask;
	return i;
}

static int edge_put(struct calltree *t, uint64_t key, uint32_t target)
{
	if ((t->en + 1) * 2 > t->emask + (t->edges ? 1u : 0u)) {
		struct edge *old = t->edges;
		uint32_t oldcap = old ? t->emask + 1 : 0, cap = old ? oldcap * 2 : 1024;

		t->edges = calloc(cap, sizeof(*t->edges));
		if (!t->edges) {
			t->edges = old;
			return -ENOMEM;
		}
		t->emask = cap - 1;
		for (uint32_t k = 0; k < oldcap; k++)
			if (old[k].target)
				t->edges[edge_slot(t, old[k].key)] = old[k];
		free(old);
	}
	t->edges[edge_slot(t, key)] = (struct edge){ key, target + 1 };
	t->en++;
	return 0;
}

/* The node the edge (parent, row) goes to, or -1. */
static inline int64_t edge_get(const struct calltree *t, uint32_t parent, uint32_t row)
{
	uint32_t i;

	if (!t->edges)
		return -1;
	i = edge_slot(t, (uint64_t)parent << 32 | row);
	return t->edges[i].target ? (int64_t)t->edges[i].target - 1 : -1;
}

/* A new child of parent for row, with its edge. */
static int64_t child_new(struct calltree *t, uint32_t parent, uint32_t row)
{
	int64_t c = node_new(t, parent, row);

	if (c >= 0 && edge_put(t, (uint64_t)parent << 32 | row, (uint32_t)c) < 0)
		return -ENOMEM;
	return c;
}

/* The child of parent for row, made if new (no folding: the focused
 * views copy paths that are folded already). */
static int64_t child_get(struct calltree *t, uint32_t parent, uint32_t row)
{
	int64_t c = edge_get(t, parent, row);

	return c >= 0 ? c : child_new(t, parent, row);
}

static int64_t step_slow(struct calltree *t, uint32_t parent, uint32_t row);

/* One step down a path: from parent, the call of row.  A row already on
 * parent's path folds back to its node (a recursion). */
static inline __attribute__((always_inline)) int64_t step(struct calltree *t, uint32_t parent,
							  uint32_t row)
{
	struct calltree_node *p = &t->nodes[parent];
	int64_t x;

	if (p->hint_row[row & 1] == row + 1)
		return p->hint_node[row & 1];
	x = step_slow(t, parent, row);
	if (x >= 0) {
		p = &t->nodes[parent]; /* step_slow() may have moved it */
		p->hint_row[row & 1] = row + 1;
		p->hint_node[row & 1] = (uint32_t)x;
	}
	return x;
}

static int64_t step_slow(struct calltree *t, uint32_t parent, uint32_t row)
{
	int64_t x = edge_get(t, parent, row);

	if (x >= 0)
		return x;
	for (uint32_t a = parent; t->nodes[a].row != CALLTREE_GROUP; a = t->nodes[a].parent) {
		if (t->nodes[a].row == row) {
			t->nodes[a].recursive = true;
			return edge_put(t, (uint64_t)parent << 32 | row, a) < 0 ? -ENOMEM
										: (int64_t)a;
		}
	}
	return child_new(t, parent, row);
}

/* --------------------------------------------------------------- threads */

static int64_t group_get(struct calltree *t, uint64_t pid, uint64_t tid)
{
	bool fresh;
	int64_t g, n;

	if (t->o.by == PROFILE_BY_FUNCTION)
		pid = tid = 0;
	else if (t->o.by == PROFILE_BY_PROCESS)
		tid = 0;
	g = thrmap_get(&t->gm, pid, tid, (uint32_t)t->ngroups, &fresh);
	if (g < 0 || !fresh)
		return g < 0 ? g : t->groups[g];
	if (TOOL_GROW(t->groups, t->capg, t->ngroups + 1) < 0)
		return -ENOMEM;
	n = node_new(t, CALLTREE_NONE, CALLTREE_GROUP);
	if (n < 0)
		return n;
	t->nodes[n].pid = pid;
	t->nodes[n].tid = tid;
	t->groups[t->ngroups++] = (uint32_t)n;
	return n;
}

static inline int64_t thread_get(struct calltree *t, uint64_t pid, uint64_t tid)
{
	bool fresh;
	int64_t i = thrmap_get(&t->tm, pid, tid, (uint32_t)t->nthr, &fresh), g;

	if (i < 0 || !fresh)
		return i;
	if (TOOL_GROW(t->thr, t->capthr, t->nthr + 1) < 0)
		return -ENOMEM;
	g = group_get(t, pid, tid);
	if (g < 0)
		return g;
	t->thr[t->nthr] = (struct cthread){ .group = (uint32_t)g };
	return (int64_t)t->nthr++;
}

/* ---------------------------------------------------------------- slices */

/* Whether node x, at index i of thread ti's path, is its lowest
 * occurrence there: the mark says where it was seen lowest; it is
 * trusted when this thread set it and the path still holds x there (the
 * path is rewritten from its first change upwards, so a stale mark of
 * this thread means no lower occurrence is left), else the path is
 * searched. */
static inline void mark(struct calltree *t, const struct cthread *th, uint32_t ti, uint32_t x,
			uint32_t i)
{
	struct calltree_node *n = &t->nodes[x];

	/* At its own depth, no fold on the path up to it: the nodes there
	 * are all different (a fold goes to a shallower node, and the depth
	 * at index i is at most i + 1), so i is its lowest index. */
	if (n->depth == i + 1) {
		n->mark_thr = ti + 1;
		n->mark_idx = i;
		return;
	}
	if (n->mark_thr == ti + 1 && n->mark_idx <= i && th->nodes[n->mark_idx] == x)
		return;
	if (n->mark_thr != ti + 1) {
		uint32_t j = 0;

		while (j < i && th->nodes[j] != x)
			j++;
		i = j;
	}
	n->mark_thr = ti + 1;
	n->mark_idx = i;
}

/* Room for a path of n rows on th.  0 or -ENOMEM. */
static __attribute__((noinline)) int path_room(struct cthread *th, size_t n)
{
	size_t cap = th->cap;

	if (TOOL_GROW(th->rows, cap, n) < 0 || TOOL_GROW(th->nodes, th->cap, n) < 0)
		return -ENOMEM;
	return 0;
}

/* Counts a slice whose whole path is known: path[0 .. d] (its own row
 * last) on thread ti, its first `same` rows known to be those of the
 * thread's last path (not compared again: a slice then costs what
 * changed, not its depth).  Returns 0 or -ENOMEM. */
static inline __attribute__((always_inline)) int add_path(struct calltree *t, uint32_t ti,
							  const uint32_t *path, uint32_t d,
							  uint32_t same, uint64_t self,
							  uint64_t dur, bool open)
{
	struct cthread *th = &t->thr[ti];
	struct calltree_node *n;
	const uint32_t *rows;
	uint32_t lim, i, x;

	if (__builtin_expect(d + 1 > th->cap, 0) && path_room(th, d + 1) < 0)
		return -ENOMEM;
	rows = th->rows;
	lim = th->n < d + 1 ? (uint32_t)th->n : d + 1;
	for (i = same < lim ? same : lim; i < lim && rows[i] == path[i]; i++)
		;
	if (i <= d) { /* walked from the first row that changed */
		x = i ? th->nodes[i - 1] : th->group;
		for (; i <= d; i++) {
			int64_t y = step(t, x, path[i]);

			if (y < 0)
				return -ENOMEM;
			x = (uint32_t)y;
			th->rows[i] = path[i];
			th->nodes[i] = x;
			mark(t, th, ti, x, i);
		}
	} else { /* not walked now: the mark may be another thread's */
		x = th->nodes[d];
		mark(t, th, ti, x, d);
	}
	th->n = d + 1;
	n = &t->nodes[x];
	n->calls++;
	n->self_ns += self;
	n->open += open;
	if (n->mark_idx == d)
		n->total_ns += dur;
	if (d == 0) {
		t->nodes[th->group].calls++;
		t->nodes[th->group].total_ns += dur;
	}
	t->nslices++;
	return 0;
}

/* add_path() of a slice as the profile gives it: what of its path is
 * unchanged since the thread's last one, if that one was walked here. */
static inline __attribute__((always_inline)) int add_slice(struct calltree *t, uint32_t ti,
							   const struct profile_slice *s)
{
	struct cthread *th = &t->thr[ti];
	uint32_t same = th->last == LAST_WALKED ? s->same : 0;

	th->last = LAST_WALKED;
	return add_path(t, ti, s->path, s->depth, same, s->self_ns, s->end_ns - s->start_ns,
			s->open);
}

/* End order: the slice waits for the end of the archive, when its thread's
 * slices are nested by their intervals (nest_thread()).  Its prefix is
 * stored once while it stays the same. */
static int keep_slice(struct cthread *th, const struct profile_slice *s)
{
	uint32_t d = s->depth;
	bool kept = th->last == LAST_KEPT && s->same >= d; /* the last one's prefix */

	th->last = LAST_KEPT;
	if (d != th->last_len ||
	    (d && !kept && memcmp(th->pre + th->last_off, s->path, d * sizeof(*s->path)) != 0)) {
		if (TOOL_GROW(th->pre, th->cappre, th->npre + d) < 0)
			return -ENOMEM;
		memcpy(th->pre + th->npre, s->path, d * sizeof(*s->path));
		th->last_off = (uint32_t)th->npre;
		th->last_len = d;
		th->npre += d;
	}
	if (th->nes >= UINT32_MAX || TOOL_GROW(th->es, th->capes, th->nes + 1) < 0)
		return -ENOMEM;
	th->es[th->nes] = (struct eslice){ { s->start_ns, s->end_ns, (uint32_t)th->nes },
					   s->self_ns,
					   s->path[d],
					   th->last_off,
					   th->last_len,
					   s->open };
	th->nes++;
	return 0;
}

/* on_slice() of a slice of another thread than the last one's, or of
 * one the tree does not take as it comes: the thread looked up (and
 * remembered when its next slices can be taken as they come), the view's
 * consumer given the slice, an end-ordered slice kept. */
static __attribute__((noinline)) void on_slice_other(struct calltree *t,
						     const struct profile_slice *s)
{
	int64_t ti;
	int rc;

	if (t->err)
		return;
	t->cur_pid = s->pid;
	t->cur_tid = s->tid;
	t->cur_ti = -1;
	if ((s->tid & FXT_SAMPLE_KOID_BIT) || !tool_picked(&t->o.pick, s->pid, s->tid))
		return;
	if (t->o.also)
		t->o.also(t->o.also_ctx, s);
	ti = thread_get(t, s->pid, s->tid);
	if (ti < 0)
		rc = (int)ti;
	else if (__builtin_expect(s->end_order, 0))
		rc = keep_slice(&t->thr[ti], s);
	else
		rc = add_slice(t, (uint32_t)ti, s);
	if (rc < 0)
		t->err = rc;
	else if (!t->o.also)
		t->cur_ti = ti;
}

static void on_slice(void *ctx, const struct profile_slice *s)
{
	struct calltree *t = ctx;
	int rc;

	/* The last slice's thread, taken as it comes: no sample track, a
	 * thread chosen, no view's consumer, no error (cur_ti is -1 else). */
	if (__builtin_expect(
		s->tid != t->cur_tid || s->pid != t->cur_pid || t->cur_ti < 0 || s->end_order, 0)) {
		on_slice_other(t, s);
		return;
	}
	rc = add_slice(t, (uint32_t)t->cur_ti, s);
	if (__builtin_expect(rc < 0, 0)) {
		t->err = rc;
		t->cur_ti = -1;
	}
}

/* The end-ordered slices of thread ti, nested (profile.h, struct
 * profile_span): a slice's parent is the innermost earlier one that holds
 * it and has the same prefix, else its prefix's last frame.  The path is
 * kept from one slice to the next: the stack's slices all have the same
 * prefix, so it changes only when the stack is empty; below the slice's
 * own row, all is then the last path's (the stack popped to a part of
 * the last path). */
static int nest_thread(struct calltree *t, uint32_t ti)
{
	struct cthread *th = &t->thr[ti];
	uint32_t *stack = NULL, *path = NULL, pre_off = 0, pre_len = UINT32_MAX;
	size_t ns = 0, caps = 0, capp = 0;
	int rc = 0;

	qsort(th->es, th->nes, sizeof(*th->es), profile_span_cmp);
	for (size_t k = 0; k < th->nes && rc == 0; k++) {
		const struct eslice *e = &th->es[k];
		uint32_t same;
		size_t d;

		while (ns) {
			const struct eslice *top = &th->es[stack[ns - 1]];

			if (top->pre_off == e->pre_off && top->pre_len == e->pre_len &&
			    profile_span_holds(&top->span, &e->span))
				break;
			ns--;
		}
		d = e->pre_len + ns;
		if (d >= UINT32_MAX || TOOL_GROW(path, capp, d + 1) < 0 ||
		    TOOL_GROW(stack, caps, ns + 1) < 0) {
			rc = -ENOMEM;
			break;
		}
		/* (th->rows: the engine's last path, or this loop's) */
		same = k ? (uint32_t)d : 0;
		if (e->pre_off != pre_off || e->pre_len != pre_len) {
			if (e->pre_len)
				memcpy(path, th->pre + e->pre_off, e->pre_len * sizeof(*path));
			pre_off = e->pre_off;
			pre_len = e->pre_len;
			same = 0;
		}
		path[d] = e->row;
		rc = add_path(t, ti, path, (uint32_t)d, same, e->self, e->span.end - e->span.start,
			      e->open);
		stack[ns++] = (uint32_t)k;
	}
	free(stack);
	free(path);
	free(th->es);
	free(th->pre);
	th->es = NULL;
	th->pre = NULL;
	th->nes = th->npre = 0;
	th->last = LAST_NONE;
	return rc;
}

/* ---------------------------------------------------------------- public */

int calltree_new(struct calltree **out, const struct calltree_opts *opts)
{
	struct calltree *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->o = *opts;
	t->cur_ti = -1;
	t->cur_pid = t->cur_tid = UINT64_MAX;
	*out = t;
	return 0;
}

void calltree_free(struct calltree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nthr; i++) {
		free(t->thr[i].rows);
		free(t->thr[i].nodes);
		free(t->thr[i].es);
		free(t->thr[i].pre);
	}
	free(t->thr);
	thrmap_free(&t->tm);
	thrmap_free(&t->gm);
	free(t->groups);
	free(t->edges);
	free(t->nodes);
	if (t->own_prof)
		profile_free(t->prof);
	free(t);
}

int calltree_load(struct calltree *t, const char *path, char *err, size_t errlen)
{
	struct profile_opts po = { .by = PROFILE_BY_FUNCTION, .on_slice = on_slice, .ctx = t };
	int rc;

	if (t->prof)
		return -EINVAL;
	rc = profile_new(&t->prof, &po);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	t->own_prof = true;
	/* One group even when no slice comes, so that the output has a root. */
	if (t->o.by == PROFILE_BY_FUNCTION && group_get(t, 0, 0) < 0)
		rc = -ENOMEM;
	if (rc == 0) {
		/* With more than one CPU the profile reads on a second thread
		 * (tools/profile/recpipe.c) while this one rebuilds the stacks
		 * and walks the paths: the reading is a third of the work,
		 * and handing each finished slice and its path over to a
		 * walker instead cost the engine's thread more than the walk
		 * (865 -> 755 M instructions on it for 2 M events). */
		rc = profile_load(t->prof, path, err, errlen);
		if (rc < 0)
			return rc; /* err says why */
	}
	if (rc == 0 && t->err)
		rc = t->err;
	for (size_t i = 0; rc == 0 && i < t->nthr; i++)
		if (t->thr[i].nes)
			rc = nest_thread(t, (uint32_t)i);
	if (rc == 0)
		rc = calltree_sort(t);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

size_t calltree_nnodes(const struct calltree *t)
{
	return t->nn;
}

const struct calltree_node *calltree_node(const struct calltree *t, uint32_t i)
{
	return &t->nodes[i];
}

size_t calltree_groups(const struct calltree *t, const uint32_t **v)
{
	*v = t->groups;
	return t->ngroups;
}

const char *calltree_name(const struct calltree *t, const struct calltree_node *n)
{
	return n->row == CALLTREE_GROUP ? "" : calltree_row_name(t, n->row);
}

const char *calltree_category(const struct calltree *t, const struct calltree_node *n)
{
	return n->row == CALLTREE_GROUP ? "" : calltree_row_category(t, n->row);
}

const char *calltree_row_name(const struct calltree *t, uint32_t row)
{
	return profile_row(t->prof, row)->name;
}

const char *calltree_row_category(const struct calltree *t, uint32_t row)
{
	return profile_row(t->prof, row)->category;
}

uint64_t calltree_start_ns(const struct calltree *t)
{
	return t->prof ? profile_start_ns(t->prof) : 0;
}

uint64_t calltree_end_ns(const struct calltree *t)
{
	return t->prof ? profile_end_ns(t->prof) : 0;
}

uint64_t calltree_dropped(const struct calltree *t, uint64_t *nthreads)
{
	if (nthreads)
		*nthreads = 0;
	return t->prof ? profile_dropped(t->prof, nthreads) : 0;
}

uint64_t calltree_overwritten(const struct calltree *t)
{
	return t->prof ? profile_overwritten(t->prof) : 0;
}

uint64_t calltree_kernel_lost(const struct calltree *t)
{
	return t->prof ? profile_kernel_lost(t->prof) : 0;
}

uint64_t calltree_buffer_full(const struct calltree *t)
{
	return t->prof ? profile_buffer_full(t->prof) : 0;
}

uint64_t calltree_total_ns(const struct calltree *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->ngroups; i++)
		sum += t->nodes[t->groups[i]].total_ns;
	return sum;
}

uint64_t calltree_end_ordered(const struct calltree *t)
{
	return t->prof && t->own_prof ? profile_anomalies(t->prof)->end_ordered : 0;
}

uint64_t calltree_nslices(const struct calltree *t)
{
	return t->nslices;
}

uint64_t calltree_nrecords(const struct calltree *t)
{
	return t->prof ? profile_nrecords(t->prof) : 0;
}

/* ---------------------------------------------------------------- order */

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct calltree *t = ctx;
	const struct calltree_node *x = &t->nodes[*(const uint32_t *)a];
	const struct calltree_node *y = &t->nodes[*(const uint32_t *)b];
	int c;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->row == CALLTREE_GROUP || y->row == CALLTREE_GROUP)
		return x->pid != y->pid	  ? (x->pid < y->pid ? -1 : 1)
		       : x->tid != y->tid ? (x->tid < y->tid ? -1 : 1)
					  : 0;
	c = strcmp(calltree_name(t, x), calltree_name(t, y));
	return c ? c : strcmp(calltree_category(t, x), calltree_category(t, y));
}

int calltree_sort(struct calltree *t)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->nn; i++) {
		size_t n = 0;

		for (uint32_t c = t->nodes[i].first_child; c != CALLTREE_NONE;
		     c = t->nodes[c].next_sibling) {
			if (TOOL_GROW(v, cap, n + 1) < 0) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(v, n, sizeof(*v), cmp_nodes, t);
		t->nodes[i].first_child = v[0];
		for (size_t k = 0; k < n; k++)
			t->nodes[v[k]].next_sibling = k + 1 < n ? v[k + 1] : CALLTREE_NONE;
	}
	if (t->ngroups > 1)
		qsort_r(t->groups, t->ngroups, sizeof(*t->groups), cmp_nodes, t);
	free(v);
	return 0;
}

/* ---------------------------------------------------------------- focus */

static void add_numbers(struct calltree_node *d, const struct calltree_node *s)
{
	d->calls += s->calls;
	d->total_ns += s->total_ns;
	d->self_ns += s->self_ns;
	d->open += s->open;
	d->recursive |= s->recursive;
}

/* Adds the subtree of src's node x under dst's node parent. */
static int merge(struct calltree *dst, uint32_t parent, const struct calltree *src, uint32_t x)
{
	int64_t d = child_get(dst, parent, src->nodes[x].row);

	if (d < 0)
		return (int)d;
	add_numbers(&dst->nodes[d], &src->nodes[x]);
	for (uint32_t c = src->nodes[x].first_child; c != CALLTREE_NONE;
	     c = src->nodes[c].next_sibling) {
		int rc = merge(dst, (uint32_t)d, src, c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A tree for a view of t: t's names, one group. */
static int view_new(const struct calltree *t, struct calltree **out)
{
	struct calltree_opts o = { .by = PROFILE_BY_FUNCTION };
	int rc = calltree_new(out, &o);

	if (rc < 0)
		return rc;
	(*out)->prof = t->prof;
	if (group_get(*out, 0, 0) < 0)
		return -ENOMEM;
	return 0;
}

static void view_total(struct calltree *v)
{
	struct calltree_node *g = &v->nodes[v->groups[0]];

	for (uint32_t c = g->first_child; c != CALLTREE_NONE; c = v->nodes[c].next_sibling) {
		g->calls += v->nodes[c].calls;
		g->total_ns += v->nodes[c].total_ns;
	}
}

int calltree_focus(const struct calltree *t, const char *name, struct calltree **callers,
		   struct calltree **callees)
{
	struct calltree *cr = NULL, *ce = NULL;
	bool found = false;
	int rc;

	rc = view_new(t, &cr);
	if (rc == 0)
		rc = view_new(t, &ce);
	for (size_t x = 0; rc == 0 && x < t->nn; x++) {
		const struct calltree_node *n = &t->nodes[x];
		int64_t d;

		if (n->row == CALLTREE_GROUP || strcmp(calltree_name(t, n), name) != 0)
			continue;
		found = true;
		rc = merge(ce, ce->groups[0], t, (uint32_t)x);
		d = cr->groups[0];
		for (uint32_t a = (uint32_t)x; rc == 0 && t->nodes[a].row != CALLTREE_GROUP;
		     a = t->nodes[a].parent) {
			d = child_get(cr, (uint32_t)d, t->nodes[a].row);
			if (d < 0) {
				rc = (int)d;
				break;
			}
			cr->nodes[d].calls += n->calls;
			cr->nodes[d].total_ns += n->total_ns;
			cr->nodes[d].self_ns += n->self_ns;
			cr->nodes[d].open += n->open;
			cr->nodes[d].recursive |= a == x && n->recursive;
		}
	}
	if (rc == 0 && !found)
		rc = -ENOENT;
	if (rc == 0) {
		view_total(cr);
		view_total(ce);
		rc = calltree_sort(cr);
	}
	if (rc == 0)
		rc = calltree_sort(ce);
	if (rc < 0) {
		calltree_free(cr);
		calltree_free(ce);
		return rc;
	}
	*callers = cr;
	*callees = ce;
	return 0;
}
