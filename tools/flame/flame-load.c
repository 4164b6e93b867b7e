/* Loading an archive into a flame graph's tree (flame-tree.h), in two
 * passes over the archive (see flame.h for why):
 *
 *  1. classify: per thread, look for complete events in end order, with
 *     the test profile.c uses to switch a thread to end order (a slice
 *     starting before the latest start on its thread, or one starting
 *     with it and ending later than a complete event that did, i.e.
 *     containing it).  Only starts and ends are looked at.
 *  2. build: feed profile.c and take its slices, those of calls or, with
 *     flame_set_samples(), those of the sample tracks.  A slice of a
 *     start-ordered thread comes with its ancestors' rows and is added to
 *     its path at once; a per-thread cache of the last path makes that
 *     O(depth) compares and a hash lookup for the new part only.  A slice
 *     of an end-ordered thread is appended to that thread's list; when the
 *     archive is read, each list is sorted by (start ascending, end
 *     descending, arrival) and nested with a stack: a slice is the child of
 *     the innermost earlier one that it fits in.
 *
 * Then the process and thread frames get their names (the last kernel
 * object name of their koid) and their totals.
 */
#include "config.h"

#include "tools/flame/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "tools/front/common.h"
#include "tools/flame/flame-tree.h"
#include "tools/profile/profile.h"

/* ------------------------------------------------------ reading archives */

/* Copies standard input to an unlinked temporary file, for two passes.
 * Returns a descriptor of it or a negative errno (with err set). */
static int spool_stdin(int *out, char *err, size_t errlen)
{
	FILE *tmp = tmpfile();
	char buf[65536];
	size_t got;
	int fd, rc = 0;

	if (!tmp) {
		rc = -errno;
		snprintf(err, errlen, "temporary file: %s", strerror(-rc));
		return rc;
	}
	while (rc == 0 && (got = fread(buf, 1, sizeof(buf), stdin)) > 0)
		if (fwrite(buf, 1, got, tmp) != got)
			rc = -(errno ? errno : EIO);
	if (rc == 0 && ferror(stdin))
		rc = -(errno ? errno : EIO);
	if (rc == 0 && fflush(tmp) != 0)
		rc = -(errno ? errno : EIO);
	if (rc == 0 && (fd = dup(fileno(tmp))) < 0)
		rc = -errno;
	fclose(tmp);
	if (rc) {
		snprintf(err, errlen, "copying standard input to a temporary file: %s",
			 strerror(-rc));
		return rc;
	}
	*out = fd;
	return 0;
}

/* Reads the input, or when fd >= 0 (standard input, copied by
 * spool_stdin()) that descriptor from its start. */
static int read_pass(const struct tool_input *in, int fd, tool_record_fn fn, void *ctx, char *err,
		     size_t errlen)
{
	struct fxt_reader *r;
	int rc;

	if (fd < 0)
		return tool_read_input(in, fn, ctx, err, errlen);
	if (lseek(fd, 0, SEEK_SET) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = fxt_reader_open_fd(&r, fd, FXT_READER_TIME_ORDER);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = tool_read_records(r, fn, ctx, err, errlen);
	fxt_reader_free(r);
	return rc;
}

/* ------------------------------------------------- pass 1: event order */

static int classify(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct flame *f = ctx;
	struct fthread *t;
	uint64_t s, e;
	int64_t ti;

	if (rec->type != FXT_RECORD_EVENT ||
	    (ev->type != FXT_EVENT_DURATION_BEGIN && ev->type != FXT_EVENT_DURATION_END &&
	     ev->type != FXT_EVENT_DURATION_COMPLETE))
		return 0;
	ti = flame__thread_get(f, ev->pid, ev->tid);
	if (ti < 0)
		return (int)ti;
	t = &f->thr[ti];
	s = fxt_reader_ticks_to_ns(r, ev->ts);

	if (ev->type == FXT_EVENT_DURATION_END) {
		if (t->nb && t->bstack[--t->nb] == t->last_start && s < t->min_end)
			t->min_end = s;
		return 0;
	}
	if (ev->type == FXT_EVENT_DURATION_COMPLETE) {
		e = fxt_reader_ticks_to_ns(r, ev->extra);
		if (e < s)
			e = s;
		if (t->seen && (s < t->last_start || (s == t->last_start && e > t->min_end)))
			t->end_ordered = true;
	} else {
		if (GROW(t->bstack, t->capb, t->nb + 1) < 0)
			return -ENOMEM;
		t->bstack[t->nb++] = s;
		e = UINT64_MAX;
	}
	if (!t->seen || s > t->last_start) {
		t->last_start = s;
		t->min_end = UINT64_MAX;
	}
	if (ev->type == FXT_EVENT_DURATION_COMPLETE && e < t->min_end)
		t->min_end = e;
	t->seen = true;
	return 0;
}

/* ------------------------------------------------------- pass 2: build */

static int64_t row_label(struct flame *f, uint32_t row)
{
	const struct profile_row *pr;
	int64_t l;

	if (row < f->caprl && f->row_label[row])
		return f->row_label[row] - 1;
	if (row >= f->caprl) {
		size_t old = f->caprl;
		if (GROW(f->row_label, f->caprl, (size_t)row + 1) < 0)
			return -ENOMEM;
		memset(f->row_label + old, 0, (f->caprl - old) * sizeof(*f->row_label));
	}
	pr = profile_row(f->prof, row);
	l = flame__label_get(f, pr->name, strlen(pr->name));
	if (l >= 0)
		f->row_label[row] = (uint32_t)l + 1;
	return l;
}

static int add_slice(struct flame *f, const struct profile_slice *s)
{
	uint64_t dur = s->end_ns - s->start_ns;
	int64_t ti, node, group, l;
	struct fthread *t;
	unsigned i;

	if (((s->tid & FXT_SAMPLE_KOID_BIT) != 0) != f->samples) {
		f->left_out++;
		return 0;
	}
	ti = flame__thread_get(f, s->pid, s->tid);
	if (ti < 0)
		return (int)ti;
	t = &f->thr[ti];
	if (t->end_ordered) {
		l = row_label(f, s->path[s->depth]);
		if (l < 0)
			return (int)l;
		if (t->nes >= UINT32_MAX || GROW(t->es, t->capes, t->nes + 1) < 0)
			return -ENOMEM;
		t->es[t->nes] =
		    (struct eslice){ { s->start_ns, s->end_ns, (uint32_t)t->nes }, (uint32_t)l };
		t->nes++;
		return 0;
	}
	group = flame__thread_group(f, (size_t)ti);
	if (group < 0)
		return (int)group;
	node = group;
	t = &f->thr[ti]; /* flame__thread_group() may have moved it */
	if ((size_t)s->depth >= t->capcache) {
		size_t cap = t->capcache;
		uint32_t *nc;

		if (GROW(t->crow, cap, (size_t)s->depth + 1) < 0)
			return -ENOMEM;
		nc = realloc(t->cnode, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		t->cnode = nc;
		t->capcache = cap;
	}
	/* Slices finish innermost first, and each finished slice truncates the
	 * cache to its depth (below), so the cached entries under depth d are
	 * the frames still open above this slice: reuse them without walking
	 * the path again.  That keeps a deep recursion linear instead of
	 * quadratic.  The nearest ancestor is still compared, so input that
	 * breaks the rule falls back to the full comparison. */
	i = 0;
	if (s->depth > 0 && t->ncache >= s->depth &&
	    t->crow[s->depth - 1] == s->path[s->depth - 1]) {
		i = s->depth;
		node = t->cnode[i - 1];
	}
	for (; i <= s->depth; i++) {
		uint32_t row = s->path[i];

		if (i < t->ncache && t->crow[i] == row) {
			node = t->cnode[i];
			continue;
		}
		l = row_label(f, row);
		if (l < 0)
			return (int)l;
		node = flame__frame_child(f, (uint32_t)node, (uint32_t)group, (uint32_t)l);
		if (node < 0)
			return (int)node;
		t = &f->thr[ti];
		t->crow[i] = row;
		t->cnode[i] = (uint32_t)node;
		t->ncache = i + 1;
	}
	/* A frame merged into its caller's (recursion, or past the depth
	 * limit) is inside the caller's time already: only its self time and
	 * its call count add up. */
	if (node != (s->depth ? (int64_t)t->cnode[s->depth - 1] : group))
		f->nodes[node].total_ns += dur;
	f->nodes[node].self_ns += s->self_ns;
	f->nodes[node].calls++;
	/* This frame is closed: the next slice at this depth has another one. */
	t->ncache = s->depth;
	return 0;
}

static void on_slice(void *ctx, const struct profile_slice *s)
{
	struct flame *f = ctx;

	if (!f->err)
		f->err = add_slice(f, s);
}

static int build(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	struct flame *f = ctx;
	int rc;

	if (rec->type == FXT_RECORD_KERNEL_OBJECT &&
	    (rec->u.kobj.obj_type == FXT_OBJ_PROCESS || rec->u.kobj.obj_type == FXT_OBJ_THREAD)) {
		int64_t l;

		if (rec->u.kobj.name.len == 0)
			goto feed;
		l = flame__label_get(f, rec->u.kobj.name.data, rec->u.kobj.name.len);
		if (l < 0 || GROW(f->kn, f->capkn, f->nkn + 1) < 0)
			return -ENOMEM;
		f->kn[f->nkn] =
		    (struct kname){ rec->u.kobj.obj_type, rec->u.kobj.koid, f->nkn, (uint32_t)l };
		f->nkn++;
	}
feed:
	rc = profile_add_record(f->prof, r, rec);
	return rc < 0 ? rc : f->err;
}

/* ------------------------------------------------------------ finishing */

struct estack {
	uint32_t node;
	uint64_t end, dur, child;
};

static void epop(struct flame *f, const struct estack *e)
{
	f->nodes[e->node].self_ns += e->dur > e->child ? e->dur - e->child : 0;
}

/* Nests an end-ordered thread's slices: sorted by start (outer first for
 * equal starts), each slice is the child of the innermost open slice that
 * ends at or after it and has not ended by its start. */
static int nest_thread(struct flame *f, size_t ti)
{
	struct estack *st = NULL;
	size_t sp = 0, cap = 0, i;
	int64_t group = flame__thread_group(f, ti), node;
	struct fthread *t = &f->thr[ti];
	uint32_t parent;
	int rc = 0;

	if (group < 0)
		return (int)group;
	if (t->nes)
		qsort(t->es, t->nes, sizeof(*t->es), profile_span_cmp);
	for (i = 0; i < t->nes; i++) {
		const struct eslice *s = &t->es[i];
		uint64_t dur = s->span.end - s->span.start;

		while (sp && !profile_span_holds(&(struct profile_span){ 0, st[sp - 1].end, 0 },
						 &s->span))
			epop(f, &st[--sp]);
		parent = sp ? st[sp - 1].node : (uint32_t)group;
		node = flame__frame_child(f, parent, (uint32_t)group, s->label);
		if (node < 0 || GROW(st, cap, sp + 1) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (node != parent) /* merged: in the parent's total already */
			f->nodes[node].total_ns += dur;
		f->nodes[node].calls++;
		if (sp)
			st[sp - 1].child += dur;
		st[sp++] = (struct estack){ (uint32_t)node, s->span.end, dur, 0 };
	}
	while (sp)
		epop(f, &st[--sp]);
	free(st);
	return rc;
}

static int cmp_kname(const void *a, const void *b)
{
	const struct kname *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->koid != y->koid)
		return x->koid < y->koid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The last name given to a kernel object, or NULL. */
static const char *kname_find(const struct flame *f, unsigned type, uint64_t koid)
{
	size_t lo = 0, hi = f->nkn;

	while (lo < hi) { /* first entry greater than (type, koid) */
		size_t mid = (lo + hi) / 2;
		const struct kname *k = &f->kn[mid];
		if (k->type < type || (k->type == type && k->koid <= koid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && f->kn[lo - 1].type == type && f->kn[lo - 1].koid == koid)
		return f->labels[f->kn[lo - 1].label];
	return NULL;
}

/* The function frames' source locations (a row's, by its name's label:
 * a frame is named without its category, the first row located wins).
 * 0 or -ENOMEM. */
static int locate_functions(struct flame *f)
{
	uint32_t *loc_of = calloc(f->nlabels + 1, sizeof(*loc_of)); /* label -> loc label + 1 */
	size_t nlab = f->nlabels;

	if (!loc_of)
		return -ENOMEM;
	for (size_t row = 0; row < profile_nrows(f->prof) && row < f->caprl; row++) {
		const struct profile_row *pr = profile_row(f->prof, row);
		uint32_t l = f->row_label[row];
		int64_t ll;

		if (!pr->loc || !l || l - 1 >= nlab || loc_of[l - 1])
			continue;
		ll = flame__label_get(f, pr->loc, strlen(pr->loc));
		if (ll < 0) {
			free(loc_of);
			return -ENOMEM;
		}
		loc_of[l - 1] = (uint32_t)ll + 1;
	}
	for (size_t i = 1; i < f->nnodes; i++) {
		uint32_t k = f->nkey[i];

		if (f->nodes[i].kind == FLAME_FUNCTION && k < nlab && loc_of[k])
			f->nodes[i].loc = f->labels[loc_of[k] - 1];
	}
	free(loc_of);
	return 0;
}

/* Names the process and thread frames and sums the children of every
 * frame that is not a function into it. */
static int finish_groups(struct flame *f)
{
	if (f->nkn) /* qsort() wants a non-NULL array even when empty */
		qsort(f->kn, f->nkn, sizeof(*f->kn), cmp_kname);
	for (size_t i = 1; i < f->nnodes; i++) {
		struct flame_node *n = &f->nodes[i];
		const struct fthread *t;
		const char *name;
		char buf[600];
		int64_t l;

		if (n->kind == FLAME_FUNCTION && f->nkey[i] == f->deeper) {
			snprintf(buf, sizeof(buf), "[deeper frames: %" PRIu64 "]", n->calls);
			l = flame__label_get(f, buf, strlen(buf));
			if (l < 0)
				return -ENOMEM;
			n->name = f->labels[l];
			continue;
		}
		if (n->kind == FLAME_FUNCTION)
			continue;
		t = &f->thr[f->nkey[i]];
		if (n->kind == FLAME_PROCESS) {
			name = kname_find(f, FXT_OBJ_PROCESS, t->pid);
			if (name)
				snprintf(buf, sizeof(buf), "%.512s [%" PRIu64 "]", name, t->pid);
			else
				snprintf(buf, sizeof(buf), "pid %" PRIu64, t->pid);
		} else {
			/* A sample track, named "<thread> (samples)", shows the
			 * sampled thread's tid. */
			uint64_t tid = t->tid & ~FXT_SAMPLE_KOID_BIT;

			name = kname_find(f, FXT_OBJ_THREAD, t->tid);
			if (name)
				snprintf(buf, sizeof(buf), "%.512s [%" PRIu64 "]", name, tid);
			else if (tid != t->tid)
				snprintf(buf, sizeof(buf), "tid %" PRIu64 FXT_SAMPLE_TRACK_SUFFIX,
					 tid);
			else
				snprintf(buf, sizeof(buf), "tid %" PRIu64, tid);
		}
		l = flame__label_get(f, buf, strlen(buf));
		if (l < 0)
			return -ENOMEM;
		n->name = f->labels[l];
	}
	/* flame__label_get() may have moved the label array, never the strings. */
	for (size_t i = f->nnodes; i-- > 1;) {
		struct flame_node *n = &f->nodes[i], *p = &f->nodes[n->parent];
		if (p->kind != FLAME_FUNCTION)
			p->total_ns += n->total_ns;
	}
	return 0;
}

int flame_load(struct flame *f, const struct tool_input *in, char *err, size_t errlen)
{
	struct profile_opts po = { .by = PROFILE_BY_FUNCTION, .on_slice = on_slice, .ctx = f };
	int fd = -1, rc;

	if (f->loaded) {
		snprintf(err, errlen, "%s", strerror(EBUSY));
		return -EBUSY;
	}
	f->loaded = true;
	if (f->max_depth) {
		int64_t l = flame__label_get(f, DEEPER_KEY, strlen(DEEPER_KEY));

		if (l < 0) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		f->deeper = (uint32_t)l;
	}
	if (!in->mem && strcmp(in->path, "-") == 0) {
		rc = spool_stdin(&fd, err, errlen);
		if (rc < 0)
			return rc;
	}
	rc = read_pass(in, fd, classify, f, err, errlen);
	if (rc < 0)
		goto out;
	rc = profile_new(&f->prof, &po);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		goto out;
	}
	rc = read_pass(in, fd, build, f, err, errlen);
	if (rc < 0)
		goto out;
	rc = profile_finish(f->prof);
	if (rc == 0)
		rc = f->err;
	f->losses.dropped = profile_dropped(f->prof, NULL);
	f->losses.buffer_full = profile_buffer_full(f->prof);
	for (size_t i = 0; rc == 0 && i < f->nthr; i++) {
		if (f->thr[i].end_ordered) {
			f->end_ordered++;
			rc = nest_thread(f, i);
		}
	}
	if (rc == 0)
		rc = locate_functions(f);
	if (rc == 0)
		rc = finish_groups(f);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	flame__threads_release(f);
	profile_free(f->prof);
	f->prof = NULL;
	return rc;
}
