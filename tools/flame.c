/* Flame graphs: a tree of call paths built from profile.c's slices, written
 * as folded stacks or as a self-contained SVG (plain or differential).
 *
 * Loading takes two passes over the archive (see flame.h for why):
 *
 *  1. classify: per thread, look for complete events in end order, with
 *     the test profile.c uses to switch a thread to end order (a slice
 *     starting before the latest start on its thread, or one starting
 *     with it and ending later than a complete event that did, i.e.
 *     containing it).  Only starts and ends are looked at.
 *  2. build: feed profile.c and take its slices.  A slice of a
 *     start-ordered thread comes with its ancestors' rows and is added to
 *     its path at once; a per-thread cache of the last path makes that
 *     O(depth) compares and a hash lookup for the new part only.  A slice
 *     of an end-ordered thread is appended to that thread's list; when the
 *     archive is read, each list is sorted by (start ascending, end
 *     descending, arrival) and nested with a stack: a slice is the child of
 *     the innermost earlier one that it fits in.
 */
#include "config.h"

#include "tools/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "fxt/hash.h"
#include "tools/common.h"
#include "tools/profile.h"

/* -------------------------------------------------------------- helpers */

#define GROW(v, cap, need) TOOL_GROW(v, cap, need)

/* ------------------------------------------------------ reading archives */

/* Streams the archive at path ("-": standard input). */
static int read_path(const char *path, flame_record_fn fn, void *ctx, char *err, size_t errlen)
{
	struct fxt_reader *r;
	int rc;

	rc = tool_open_archive(&r, path, 0, err, errlen);
	if (rc < 0)
		return rc;
	rc = tool_read_records(r, fn, ctx, err, errlen);
	fxt_reader_free(r);
	return rc;
}

/* Reads the input (or, when fd >= 0, that descriptor from its start). */
static int read_source(const struct flame_input *in, int fd, flame_record_fn fn, void *ctx,
		       char *err, size_t errlen)
{
	struct fxt_reader *r = NULL;
	int rc;

	if (fd >= 0) {
		if (lseek(fd, 0, SEEK_SET) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s", strerror(-rc));
			return rc;
		}
		rc = fxt_reader_open_fd(&r, fd, 0);
	} else if (in->mem) {
		rc = fxt_reader_open_mem(&r, in->mem, in->len, 0);
	} else {
		return read_path(in->path, fn, ctx, err, errlen);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = tool_read_records(r, fn, ctx, err, errlen);
	fxt_reader_free(r);
	return rc;
}

int flame_read(const struct flame_input *in, flame_record_fn fn, void *ctx, char *err,
	       size_t errlen)
{
	return read_source(in, -1, fn, ctx, err, errlen);
}

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

/* ----------------------------------------------------------------- types */

/* A slice of an end-ordered thread, waiting for the sort. */
struct eslice {
	uint64_t start, end;
	uint32_t label;
	uint32_t seq; /* arrival, to order identical intervals */
};

/* A thread, or with tid = PROC_TID the stand-in for a process (its entry
 * index names the process frame). */
#define PROC_TID UINT64_MAX

struct fthread {
	uint64_t pid, tid;
	uint32_t group; /* the node the thread's stacks hang from; FLAME_NONE = not yet */

	/* Pass 1: end-order detection.  bstack holds the starts of open
	 * begin events, to know the ends of begin/end frames. */
	uint64_t last_start, min_end;
	uint64_t *bstack;
	size_t nb, capb;
	bool seen, end_ordered;

	/* Pass 2, start order: the last path resolved (rows and nodes). */
	uint32_t *crow, *cnode;
	size_t ncache, capcache;

	/* Pass 2, end order. */
	struct eslice *es;
	size_t nes, capes;
};

struct kname {
	unsigned type; /* FXT_OBJ_PROCESS or FXT_OBJ_THREAD */
	uint64_t koid;
	uint64_t seq;
	uint32_t label;
};

struct flame {
	enum flame_by by;
	bool loaded;

	/* Interned, sanitized names.  */
	char **labels;
	size_t nlabels, caplabels;
	uint32_t *labtab; /* label + 1 */
	size_t labmask;

	struct flame_node *nodes;
	uint32_t *nkey; /* per node: label (functions) or thread entry (groups) */
	size_t nnodes, capnodes;
	uint32_t *nodetab; /* node + 1 */
	size_t nodemask;

	struct fthread *thr;
	size_t nthr, capthr;
	uint32_t *thrtab; /* entry + 1 */
	size_t thrmask;
	size_t last_thr;

	struct kname *kn;
	size_t nkn, capkn;

	/* During loading. */
	struct profile *prof;
	uint32_t *row_label; /* profile row -> label + 1 */
	size_t caprl;
	int err;
	uint64_t end_ordered;

	/* Bounds (flame_set_limits()): function frames kept per stack, and
	 * whether a function calling itself stays one frame.  deeper is the
	 * label of the marker frame that stands for the frames past the
	 * limit (FLAME_NONE: no limit). */
	unsigned max_depth;
	bool merge_recursion;
	uint32_t deeper;
};

#define DEEPER_KEY "[deeper frames]"

/* --------------------------------------------------------------- labels */

static int labtab_resize(struct flame *f)
{
	size_t ncap = f->labmask ? (f->labmask + 1) * 2 : 256;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < f->nlabels; i++) {
		const char *s = f->labels[i];
		size_t j = fxt__hash_bytes(s, strlen(s)) & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = (uint32_t)i + 1;
	}
	free(f->labtab);
	f->labtab = nt;
	f->labmask = ncap - 1;
	return 0;
}

/* Copies s, with invalid UTF-8 and control characters replaced by '?' so
 * that every output (XML, folded lines) can carry it. */
static char *sanitize(const char *s, size_t len)
{
	char *d = malloc(len + 1), *w = d;
	size_t i = 0, n;

	if (!d)
		return NULL;
	while (i < len) {
		n = fxt_utf8_char_len(s + i, len - i);
		if (n == 0 || (n == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))) {
			*w++ = '?';
			i++;
			continue;
		}
		memcpy(w, s + i, n);
		w += n;
		i += n;
	}
	*w = 0;
	return d;
}

/* Returns the label of a name (interning it), or -ENOMEM. */
static int64_t label_get(struct flame *f, const char *s, size_t len)
{
	char *clean = sanitize(s, len);
	size_t clen, j;
	uint64_t h;

	if (!clean)
		return -ENOMEM;
	clen = strlen(clean);
	h = fxt__hash_bytes(clean, clen);
	for (j = h & f->labmask; f->labtab[j]; j = (j + 1) & f->labmask) {
		uint32_t k = f->labtab[j] - 1;
		if (strcmp(f->labels[k], clean) == 0) {
			free(clean);
			return k;
		}
	}
	if (f->nlabels >= UINT32_MAX - 1 || GROW(f->labels, f->caplabels, f->nlabels + 1) < 0) {
		free(clean);
		return -ENOMEM;
	}
	f->labels[f->nlabels] = clean;
	f->labtab[j] = (uint32_t)++f->nlabels;
	if (f->nlabels * 2 > f->labmask + 1 && labtab_resize(f) < 0)
		return -ENOMEM;
	return (int64_t)f->nlabels - 1;
}

/* ---------------------------------------------------------------- nodes */

static inline uint64_t node_hash(uint32_t parent, enum flame_kind kind, uint32_t key)
{
	return fxt__hash_pair(parent, (uint64_t)kind << 32 | key);
}

static int nodetab_resize(struct flame *f)
{
	size_t ncap = f->nodemask ? (f->nodemask + 1) * 2 : 1024;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 1; i < f->nnodes; i++) { /* the root is never looked up */
		const struct flame_node *n = &f->nodes[i];
		size_t j = node_hash(n->parent, n->kind, f->nkey[i]) & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = (uint32_t)i + 1;
	}
	free(f->nodetab);
	f->nodetab = nt;
	f->nodemask = ncap - 1;
	return 0;
}

static int node_push(struct flame *f, uint32_t parent, enum flame_kind kind, uint32_t key)
{
	size_t cap = f->capnodes;
	struct flame_node *n;

	if (f->nnodes >= UINT32_MAX - 1 || GROW(f->nodes, f->capnodes, f->nnodes + 1) < 0)
		return -ENOMEM;
	if (cap != f->capnodes) {
		uint32_t *nk = realloc(f->nkey, f->capnodes * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		f->nkey = nk;
	}
	n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->kind = kind;
	n->depth = parent == FLAME_NONE ? 0 : f->nodes[parent].depth + 1;
	n->name = kind == FLAME_FUNCTION ? f->labels[key] : NULL; /* groups: at the end */
	f->nkey[f->nnodes] = key;
	f->nnodes++;
	return 0;
}

/* The child of `parent` with that kind and key, created if needed.
 * Returns its index or -ENOMEM. */
static int64_t node_child(struct flame *f, uint32_t parent, enum flame_kind kind, uint32_t key)
{
	uint64_t h = node_hash(parent, kind, key);
	size_t j;

	for (j = h & f->nodemask; f->nodetab[j]; j = (j + 1) & f->nodemask) {
		uint32_t k = f->nodetab[j] - 1;
		if (f->nkey[k] == key && f->nodes[k].parent == parent && f->nodes[k].kind == kind)
			return k;
	}
	if (node_push(f, parent, kind, key) < 0)
		return -ENOMEM;
	f->nodetab[j] = (uint32_t)f->nnodes;
	if (f->nnodes * 2 > f->nodemask + 1 && nodetab_resize(f) < 0)
		return -ENOMEM;
	return (int64_t)f->nnodes - 1;
}

/* -------------------------------------------------------------- threads */

static int thrtab_resize(struct flame *f)
{
	size_t ncap = f->thrmask ? (f->thrmask + 1) * 2 : 64;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < f->nthr; i++) {
		size_t j = fxt__hash_pair(f->thr[i].pid, f->thr[i].tid) & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = (uint32_t)i + 1;
	}
	free(f->thrtab);
	f->thrtab = nt;
	f->thrmask = ncap - 1;
	return 0;
}

/* The entry of (pid, tid), created if needed; its index or -ENOMEM.
 * Entries move when the table grows: hold indices, not pointers. */
static int64_t thread_get(struct flame *f, uint64_t pid, uint64_t tid)
{
	struct fthread *t;
	size_t j;

	if (f->nthr && f->thr[f->last_thr].pid == pid && f->thr[f->last_thr].tid == tid)
		return (int64_t)f->last_thr;
	for (j = fxt__hash_pair(pid, tid) & f->thrmask; f->thrtab[j]; j = (j + 1) & f->thrmask) {
		t = &f->thr[f->thrtab[j] - 1];
		if (t->pid == pid && t->tid == tid) {
			f->last_thr = f->thrtab[j] - 1;
			return (int64_t)f->last_thr;
		}
	}
	if (GROW(f->thr, f->capthr, f->nthr + 1) < 0)
		return -ENOMEM;
	t = &f->thr[f->nthr];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->group = FLAME_NONE;
	f->thrtab[j] = (uint32_t)++f->nthr;
	f->last_thr = f->nthr - 1;
	if (f->nthr * 2 > f->thrmask + 1 && thrtab_resize(f) < 0)
		return -ENOMEM;
	return (int64_t)f->last_thr;
}

/* The node a thread's stacks hang from, per --by. */
static int64_t thread_group(struct flame *f, size_t ti)
{
	int64_t pi, node;

	if (f->thr[ti].group != FLAME_NONE)
		return f->thr[ti].group;
	if (f->by == FLAME_BY_ALL) {
		node = 0;
	} else {
		pi = thread_get(f, f->thr[ti].pid, PROC_TID);
		if (pi < 0)
			return pi;
		node = node_child(f, 0, FLAME_PROCESS, (uint32_t)pi);
		if (node >= 0 && f->by == FLAME_BY_THREAD)
			node = node_child(f, (uint32_t)node, FLAME_THREAD, (uint32_t)ti);
		if (node < 0)
			return node;
	}
	f->thr[ti].group = (uint32_t)node;
	return node;
}

/* The frame of function `label` called from node `parent` (a function,
 * or the thread's group node `group`), with the bounds applied: a function
 * calling itself stays in its frame when merging recursion, everything
 * below a marker frame is the marker, and a function past the depth limit
 * becomes the marker.  Returns the node (parent itself when merged) or
 * -ENOMEM. */
static int64_t frame_child(struct flame *f, uint32_t parent, uint32_t group, uint32_t label)
{
	const struct flame_node *p = &f->nodes[parent];

	if (p->kind == FLAME_FUNCTION) {
		if (f->nkey[parent] == f->deeper)
			return parent;
		if (f->merge_recursion && f->nkey[parent] == label)
			return parent;
	}
	if (f->deeper != FLAME_NONE && p->depth - f->nodes[group].depth >= f->max_depth)
		label = f->deeper;
	return node_child(f, parent, FLAME_FUNCTION, label);
}

/* ------------------------------------------------------------ public API */

int flame_new(struct flame **out, enum flame_by by)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->by = by;
	f->max_depth = FLAME_DEFAULT_MAX_DEPTH;
	f->deeper = FLAME_NONE;
	if (labtab_resize(f) < 0 || nodetab_resize(f) < 0 || thrtab_resize(f) < 0 ||
	    node_push(f, FLAME_NONE, FLAME_ROOT, 0) < 0) {
		flame_free(f);
		return -ENOMEM;
	}
	f->nodes[0].name = "all";
	*out = f;
	return 0;
}

int flame_set_limits(struct flame *f, unsigned max_depth, bool merge_recursion)
{
	if (f->loaded)
		return -EBUSY;
	f->max_depth = max_depth;
	f->merge_recursion = merge_recursion;
	return 0;
}

static void threads_release(struct flame *f)
{
	for (size_t i = 0; i < f->nthr; i++) {
		free(f->thr[i].bstack);
		free(f->thr[i].crow);
		free(f->thr[i].cnode);
		free(f->thr[i].es);
		f->thr[i].bstack = NULL;
		f->thr[i].crow = f->thr[i].cnode = NULL;
		f->thr[i].es = NULL;
	}
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nlabels; i++)
		free(f->labels[i]);
	threads_release(f);
	profile_free(f->prof);
	free(f->labels);
	free(f->labtab);
	free(f->nodes);
	free(f->nkey);
	free(f->nodetab);
	free(f->thr);
	free(f->thrtab);
	free(f->kn);
	free(f->row_label);
	free(f);
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
	ti = thread_get(f, ev->pid, ev->tid);
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
	l = label_get(f, pr->name, strlen(pr->name));
	if (l >= 0)
		f->row_label[row] = (uint32_t)l + 1;
	return l;
}

static int add_slice(struct flame *f, const struct profile_slice *s)
{
	uint64_t dur = s->end_ns - s->start_ns;
	int64_t ti = thread_get(f, s->pid, s->tid), node, group, l;
	struct fthread *t;
	unsigned i;

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
		    (struct eslice){ s->start_ns, s->end_ns, (uint32_t)l, (uint32_t)t->nes };
		t->nes++;
		return 0;
	}
	group = thread_group(f, (size_t)ti);
	if (group < 0)
		return (int)group;
	node = group;
	t = &f->thr[ti]; /* thread_group() may have moved it */
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
		node = frame_child(f, (uint32_t)node, (uint32_t)group, (uint32_t)l);
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
		l = label_get(f, rec->u.kobj.name.data, rec->u.kobj.name.len);
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

static int cmp_eslice(const void *a, const void *b)
{
	const struct eslice *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

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
	int64_t group = thread_group(f, ti), node;
	struct fthread *t = &f->thr[ti];
	uint32_t parent;
	int rc = 0;

	if (group < 0)
		return (int)group;
	if (t->nes)
		qsort(t->es, t->nes, sizeof(*t->es), cmp_eslice);
	for (i = 0; i < t->nes; i++) {
		const struct eslice *s = &t->es[i];
		uint64_t dur = s->end - s->start;

		while (sp && (st[sp - 1].end <= s->start || st[sp - 1].end < s->end))
			epop(f, &st[--sp]);
		parent = sp ? st[sp - 1].node : (uint32_t)group;
		node = frame_child(f, parent, (uint32_t)group, s->label);
		if (node < 0 || GROW(st, cap, sp + 1) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (node != parent) /* merged: in the parent's total already */
			f->nodes[node].total_ns += dur;
		f->nodes[node].calls++;
		if (sp)
			st[sp - 1].child += dur;
		st[sp++] = (struct estack){ (uint32_t)node, s->end, dur, 0 };
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
			l = label_get(f, buf, strlen(buf));
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
			name = kname_find(f, FXT_OBJ_THREAD, t->tid);
			if (name)
				snprintf(buf, sizeof(buf), "%.512s [%" PRIu64 "]", name, t->tid);
			else
				snprintf(buf, sizeof(buf), "tid %" PRIu64, t->tid);
		}
		l = label_get(f, buf, strlen(buf));
		if (l < 0)
			return -ENOMEM;
		n->name = f->labels[l];
	}
	/* label_get() may have moved the label array, never the strings. */
	for (size_t i = f->nnodes; i-- > 1;) {
		struct flame_node *n = &f->nodes[i], *p = &f->nodes[n->parent];
		if (p->kind != FLAME_FUNCTION)
			p->total_ns += n->total_ns;
	}
	return 0;
}

int flame_load(struct flame *f, const struct flame_input *in, char *err, size_t errlen)
{
	struct profile_opts po = { .by = PROFILE_BY_FUNCTION, .on_slice = on_slice, .ctx = f };
	int fd = -1, rc;

	if (f->loaded) {
		snprintf(err, errlen, "%s", strerror(EBUSY));
		return -EBUSY;
	}
	f->loaded = true;
	if (f->max_depth) {
		int64_t l = label_get(f, DEEPER_KEY, strlen(DEEPER_KEY));

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
	rc = read_source(in, fd, classify, f, err, errlen);
	if (rc < 0)
		goto out;
	rc = profile_new(&f->prof, &po);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		goto out;
	}
	rc = read_source(in, fd, build, f, err, errlen);
	if (rc < 0)
		goto out;
	rc = profile_finish(f->prof);
	if (rc == 0)
		rc = f->err;
	for (size_t i = 0; rc == 0 && i < f->nthr; i++) {
		if (f->thr[i].end_ordered) {
			f->end_ordered++;
			rc = nest_thread(f, i);
		}
	}
	if (rc == 0)
		rc = finish_groups(f);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	threads_release(f);
	profile_free(f->prof);
	f->prof = NULL;
	return rc;
}

size_t flame_nnodes(const struct flame *f)
{
	return f->nnodes;
}

const struct flame_node *flame_node(const struct flame *f, size_t i)
{
	return i < f->nnodes ? &f->nodes[i] : NULL;
}

const struct flame_node *flame_lookup(const struct flame *f, const char *const *names, size_t n)
{
	size_t cur = 0, i, j;

	for (i = 0; i < n; i++) {
		for (j = cur + 1; j < f->nnodes; j++)
			if (f->nodes[j].parent == cur && strcmp(f->nodes[j].name, names[i]) == 0)
				break;
		if (j == f->nnodes)
			return NULL;
		cur = j;
	}
	return &f->nodes[cur];
}

uint64_t flame_end_ordered_threads(const struct flame *f)
{
	return f->end_ordered;
}

/* --------------------------------------------------------------- folded */

struct fline {
	char *text; /* "a;b;c" */
	uint64_t self;
};

static int cmp_fline(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->text, ((const struct fline *)b)->text);
}

/* "a;b;c" for node i, without the root; ';' in names becomes ':'. */
static char *path_text(const struct flame *f, size_t i)
{
	size_t len = 0, k, n;
	char *s, *w;

	for (k = i; k != 0; k = f->nodes[k].parent)
		len += strlen(f->nodes[k].name) + 1;
	s = malloc(len ? len : 1);
	if (!s)
		return NULL;
	w = s + len - 1;
	*w = 0;
	for (k = i; k != 0; k = f->nodes[k].parent) {
		n = strlen(f->nodes[k].name);
		w -= n;
		memcpy(w, f->nodes[k].name, n);
		for (size_t c = 0; c < n; c++)
			if (w[c] == ';')
				w[c] = ':';
		if (w != s)
			*--w = ';';
	}
	return s;
}

int flame_write_folded(const struct flame *f, FILE *out)
{
	struct fline *lines = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	for (i = 1; i < f->nnodes; i++) {
		if (!f->nodes[i].self_ns)
			continue;
		if (GROW(lines, cap, n + 1) < 0 || !(lines[n].text = path_text(f, i))) {
			rc = -ENOMEM;
			goto out;
		}
		lines[n++].self = f->nodes[i].self_ns;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_fline);
	for (i = 0; i < n; i++) {
		uint64_t v = lines[i].self;
		/* Equal lines only come from ';' -> ':' making two paths one. */
		while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0)
			v += lines[++i].self;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, v);
	}
	if (fflush(out) != 0 || ferror(out))
		rc = -(errno ? errno : EIO);
out:
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return rc;
}

/* ------------------------------------------------------------------ SVG */

/* Children of every node, ordered by name (then kind, then index), in
 * compressed rows: the children of i are child[first[i] .. first[i + 1]). */
struct kids {
	uint32_t *first, *child;
};

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct flame_node *x = &f->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &f->nodes[*(const uint32_t *)b];
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int kids_build(const struct flame *f, struct kids *k)
{
	size_t n = f->nnodes, i;
	uint32_t *fill;

	k->first = calloc(n + 1, sizeof(*k->first));
	k->child = malloc((n ? n : 1) * sizeof(*k->child));
	fill = calloc(n + 1, sizeof(*fill));
	if (!k->first || !k->child || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 1; i < n; i++)
		k->first[f->nodes[i].parent + 1]++;
	for (i = 0; i < n; i++)
		k->first[i + 1] += k->first[i];
	for (i = 1; i < n; i++) {
		uint32_t p = f->nodes[i].parent;
		k->child[k->first[p] + fill[p]++] = (uint32_t)i;
	}
	free(fill);
	for (i = 0; i < n; i++)
		qsort_r(k->child + k->first[i], k->first[i + 1] - k->first[i], sizeof(*k->child),
			cmp_kid, (void *)f);
	return 0;
}

static void kids_free(struct kids *k)
{
	free(k->first);
	free(k->child);
}

/* The child of node p named `name` (any kind), or FLAME_NONE. */
static uint32_t kids_find(const struct flame *f, const struct kids *k, uint32_t p, const char *name)
{
	size_t lo = k->first[p], hi = k->first[p + 1];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(f->nodes[k->child[mid]].name, name);
		if (c == 0) {
			/* the first of equal names */
			while (mid > k->first[p] &&
			       strcmp(f->nodes[k->child[mid - 1]].name, name) == 0)
				mid--;
			return k->child[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return FLAME_NONE;
}

#define SVG_FRAME_H 16	 /* row pitch */
#define SVG_FONT    12	 /* px */
#define SVG_CHAR_W  7.08 /* average glyph width at SVG_FONT (0.59 em) */
#define SVG_PAD	    10
#define SVG_TOP	    56
#define SVG_BOTTOM  28
#define SVG_MIN_PX  0.1 /* narrower frames (and their children) are left out */

/* Writes s escaped for XML character data (names are valid UTF-8 with no
 * control characters: sanitize() saw to it). */
static void put_xml(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(s[i], out);
		}
	}
}

/* Same as put_xml(), for text of any origin (titles from the command line). */
static void put_xml_any(FILE *out, const char *s)
{
	char *clean = sanitize(s, strlen(s));

	if (clean)
		put_xml(out, clean, strlen(clean));
	free(clean);
}

/* The label shown in a frame `w` px wide: the name, or its first
 * characters and "..", or nothing.  The script in the SVG does the same
 * when zooming (JavaScript counts UTF-16 units, this code points: only
 * names outside the BMP can differ, by a character). */
static void put_label(FILE *out, const char *name, double w)
{
	double room = (w - 6) / SVG_CHAR_W;
	size_t fit = room < 0 ? 0 : (size_t)room, chars = 0, i, cut = 0;

	if (fit < 3)
		return;
	for (i = 0; name[i]; i++) {
		if (((unsigned char)name[i] & 0xc0) == 0x80)
			continue;
		if (chars == fit - 2)
			cut = i;
		chars++;
	}
	if (chars <= fit) {
		put_xml(out, name, i);
		return;
	}
	put_xml(out, name, cut);
	fputs("..", out);
}

static void fmt_change(char *buf, size_t len, double base, double now)
{
	char d[32];

	profile_fmt_ns(d, sizeof(d), now - base);
	if (base > 0)
		snprintf(buf, len, "%s%s, %+.1f%%", now >= base ? "+" : "", d,
			 100.0 * (now - base) / base);
	else if (now > 0)
		snprintf(buf, len, "+%s, new", d);
	else
		snprintf(buf, len, "unchanged");
}

/* A warm color from the name's hash: same name, same color (fxt/hash.h:
 * stable within a build, not across versions). */
static void color_of(const struct flame_node *n, int rgb[3])
{
	uint64_t h;

	switch (n->kind) {
	case FLAME_ROOT:
		rgb[0] = rgb[1] = rgb[2] = 200;
		return;
	case FLAME_PROCESS:
		rgb[0] = 150, rgb[1] = 180, rgb[2] = 225;
		return;
	case FLAME_THREAD:
		rgb[0] = 175, rgb[1] = 205, rgb[2] = 235;
		return;
	case FLAME_FUNCTION:
		break;
	}
	h = fxt__hash_bytes(n->name, strlen(n->name));
	rgb[0] = 205 + (int)(h % 50);
	rgb[1] = (int)((h >> 8) % 230);
	rgb[2] = (int)((h >> 16) % 55);
}

/* Red when `now` is above `base`, blue below, white when equal; the
 * relative change sets the saturation, full at 100%. */
static void color_diff(double base, double now, int rgb[3])
{
	double rel = base > 0 ? (now - base) / base : (now > 0 ? 1 : 0);
	double a = fabs(rel) > 1 ? 1 : fabs(rel);
	int fade = (int)lround(255 * (1 - a));

	if (rel > 0)
		rgb[0] = 255, rgb[1] = fade, rgb[2] = fade;
	else if (rel < 0)
		rgb[0] = fade, rgb[1] = fade, rgb[2] = 255;
	else
		rgb[0] = rgb[1] = rgb[2] = 255;
}

static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var fg = [], fgDetails;\n"
    "function fgInit(evt) {\n"
    "  var gs = document.getElementsByClassName('f');\n"
    "  fgDetails = document.getElementById('details').firstChild;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
    "    var fr = { g: g, r: r, t: g.getElementsByTagName('text')[0],\n"
    "      info: g.getElementsByTagName('title')[0].textContent,\n"
    "      x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y') };\n"
    "    fr.name = fr.info.split('\\n')[0];\n"
    "    fg.push(fr);\n"
    "    g.onclick = fgZoom.bind(null, fr);\n"
    "    g.onmouseover = fgShow.bind(null, fr);\n"
    "    g.onmouseout = fgShow.bind(null, null);\n"
    "  }\n"
    "}\n"
    "function fgShow(fr) {\n"
    "  fgDetails.nodeValue = fr ? fr.info.replace(/\\n/g, ', ') : ' ';\n"
    "}\n"
    "function fgPlace(fr, x, w) {\n"
    "  var m = Math.floor((w - 6) / CHAR_W), n = fr.name;\n"
    "  fr.r.setAttribute('x', x.toFixed(2));\n"
    "  fr.r.setAttribute('width', w.toFixed(2));\n"
    "  fr.t.setAttribute('x', (x + 3).toFixed(2));\n"
    "  fr.t.textContent = m < 3 ? '' : n.length <= m ? n : n.substring(0, m - 2) + '..';\n"
    "  fr.g.style.display = '';\n"
    "}\n"
    "/* Zoom: the frame and its descendants fill the width, its ancestors\n"
    "   span it, the rest hides.  Zooming on the root resets. */\n"
    "function fgZoom(z) {\n"
    "  var k = WIDTH / z.w, e = 0.005;\n"
    "  for (var i = 0; i < fg.length; i++) {\n"
    "    var fr = fg[i];\n"
    "    if (fr.y > z.y && fr.x <= z.x + e && fr.x + fr.w >= z.x + z.w - e)\n"
    "      fgPlace(fr, PAD, WIDTH);\n"
    "    else if (fr.y <= z.y && fr.x >= z.x - e && fr.x + fr.w <= z.x + z.w + e)\n"
    "      fgPlace(fr, PAD + (fr.x - z.x) * k, fr.w * k);\n"
    "    else\n"
    "      fr.g.style.display = 'none';\n"
    "  }\n"
    "}\n"
    "]]></script>\n";

/* The paths of base that f does not have: how many subtrees and the
 * time at their tops (a diff draws only f's paths, so it says so). */
static int gone_paths(const struct flame *f, const struct kids *k, const struct flame *base,
		      uint64_t *gone_ns, uint64_t *ngone)
{
	uint32_t *m = malloc(base->nnodes * sizeof(*m));

	if (!m)
		return -ENOMEM;
	m[0] = 0;
	for (size_t i = 1; i < base->nnodes; i++) {
		uint32_t pm = m[base->nodes[i].parent];

		m[i] = pm == FLAME_NONE ? FLAME_NONE : kids_find(f, k, pm, base->nodes[i].name);
		if (m[i] == FLAME_NONE && pm != FLAME_NONE) {
			*gone_ns += base->nodes[i].total_ns;
			(*ngone)++;
		}
	}
	free(m);
	return 0;
}

int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out)
{
	const struct flame *base = o->base;
	unsigned width = o->width ? o->width : 1200;
	double inner = (double)width - 2 * SVG_PAD, bscale = 1;
	struct kids k = { 0 }, bk = { 0 };
	uint32_t *stack = NULL, *bmatch = NULL, maxdepth = 0;
	uint64_t gone_ns = 0, ngone = 0;
	double *x = NULL, *w = NULL;
	size_t sp = 0, i, n = f->nnodes;
	unsigned height;
	int rc;

	rc = kids_build(f, &k);
	if (rc == 0 && base)
		rc = kids_build(base, &bk);
	x = calloc(n, sizeof(*x));
	w = calloc(n, sizeof(*w));
	stack = malloc(n * sizeof(*stack));
	bmatch = malloc(n * sizeof(*bmatch));
	if (rc < 0 || !x || !w || !stack || !bmatch) {
		rc = -ENOMEM;
		goto out;
	}
	if (base && o->normalize && base->nodes[0].total_ns)
		bscale = (double)f->nodes[0].total_ns / (double)base->nodes[0].total_ns;
	if (base) {
		rc = gone_paths(f, &k, base, &gone_ns, &ngone);
		if (rc < 0)
			goto out;
	}

	/* Layout, parents first: x and w in pixels.  Children wider than
	 * their parent (partly overlapping slices) are squeezed into it. */
	x[0] = SVG_PAD;
	w[0] = inner;
	for (i = 0; i < n; i++) {
		const struct flame_node *p = &f->nodes[i];
		uint64_t sum = 0;
		double kx, at = x[i];

		if (i && w[i] < SVG_MIN_PX)
			continue;
		if (p->depth > maxdepth)
			maxdepth = p->depth;
		for (uint32_t c = k.first[i]; c < k.first[i + 1]; c++)
			sum += f->nodes[k.child[c]].total_ns;
		if (sum < p->total_ns)
			sum = p->total_ns;
		kx = sum ? w[i] / (double)sum : 0; /* px per ns, w[i] == total * scale */
		for (uint32_t c = k.first[i]; c < k.first[i + 1]; c++) {
			uint32_t ci = k.child[c];
			x[ci] = at;
			w[ci] = (double)f->nodes[ci].total_ns * kx;
			at += w[ci];
		}
	}
	if (!f->nodes[0].total_ns)
		w[0] = inner; /* an empty graph still shows its root */
	height = SVG_TOP + (maxdepth + 1) * SVG_FRAME_H + SVG_BOTTOM;

	fprintf(
	    out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" onload=\"fgInit(evt)\">\n"
	    "<style type=\"text/css\">\n"
	    "text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
	    "g.f { cursor: pointer; }\n"
	    "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	    "text.h { font-size: 17px; }\n"
	    "</style>\n"
	    "<script type=\"text/ecmascript\">var WIDTH = %.2f, PAD = %d, CHAR_W = %.2f;</script>\n"
	    "%s"
	    "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f4\"/>\n"
	    "<text class=\"h\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
	    width, height, width, height, SVG_FONT, inner, SVG_PAD, SVG_CHAR_W, svg_script, width,
	    height, width / 2);
	put_xml_any(out, o->title ? o->title : base ? "Differential flame graph" : "Flame graph");
	fprintf(out, "</text>\n<text x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
	if (o->subtitle)
		put_xml_any(out, o->subtitle);
	fprintf(out,
		"</text>\n"
		"<text x=\"%d\" y=\"42\" onclick=\"fgZoom(fg[0])\" style=\"cursor:pointer\">"
		"Reset zoom</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		SVG_PAD, SVG_PAD, height - 10);

	/* Frames, depth first from the root, so zoom's fg[0] is the root. */
	stack[sp++] = 0;
	bmatch[0] = 0;
	while (sp) {
		uint32_t ni = stack[--sp];
		const struct flame_node *nd = &f->nodes[ni];
		double y = (double)height - SVG_BOTTOM - (double)(nd->depth + 1) * SVG_FRAME_H;
		char t1[32], t2[32], t3[48];
		int rgb[3];

		fputs("<g class=\"f\"><title>", out);
		put_xml(out, nd->name, strlen(nd->name));
		profile_fmt_ns(t1, sizeof(t1), (double)nd->total_ns);
		if (!base) {
			fprintf(out, "\ntotal %s (%.2f%%)", t1,
				f->nodes[0].total_ns
				    ? 100.0 * (double)nd->total_ns / (double)f->nodes[0].total_ns
				    : 0.0);
			if (nd->kind == FLAME_FUNCTION) {
				profile_fmt_ns(t2, sizeof(t2), (double)nd->self_ns);
				fprintf(out, "\nself %s\ncalls %" PRIu64, t2, nd->calls);
			}
			color_of(nd, rgb);
		} else {
			const struct flame_node *b =
			    bmatch[ni] == FLAME_NONE ? NULL : &base->nodes[bmatch[ni]];
			double bt = b ? (double)b->total_ns * bscale : 0;
			double bs = b ? (double)b->self_ns * bscale : 0;

			profile_fmt_ns(t2, sizeof(t2), bt);
			fmt_change(t3, sizeof(t3), bt, (double)nd->total_ns);
			fprintf(out, "\ntotal: base %s, new %s (%s)", t2, t1, t3);
			if (ni == 0 && ngone) {
				profile_fmt_ns(t2, sizeof(t2), (double)gone_ns * bscale);
				fprintf(out, "\nonly in base: %" PRIu64 " paths, %s", ngone, t2);
			}
			if (nd->kind == FLAME_FUNCTION) {
				profile_fmt_ns(t1, sizeof(t1), (double)nd->self_ns);
				profile_fmt_ns(t2, sizeof(t2), bs);
				fmt_change(t3, sizeof(t3), bs, (double)nd->self_ns);
				fprintf(out, "\nself: base %s, new %s (%s)", t2, t1, t3);
				fprintf(out, "\ncalls: base %" PRIu64 ", new %" PRIu64,
					b ? b->calls : 0, nd->calls);
				color_diff(bs, (double)nd->self_ns, rgb);
			} else {
				color_diff(bt, (double)nd->total_ns, rgb);
			}
		}
		fprintf(out,
			"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
			x[ni], y, w[ni], SVG_FRAME_H - 1, rgb[0], rgb[1], rgb[2], x[ni] + 3,
			y + 11.5);
		put_label(out, nd->name, w[ni]);
		fputs("</text></g>\n", out);

		/* Children in reverse, so they come out in name order. */
		for (uint32_t c = k.first[ni + 1]; c-- > k.first[ni];) {
			uint32_t ci = k.child[c];
			if (w[ci] < SVG_MIN_PX)
				continue;
			if (base)
				bmatch[ci] =
				    bmatch[ni] == FLAME_NONE
					? FLAME_NONE
					: kids_find(base, &bk, bmatch[ni], f->nodes[ci].name);
			stack[sp++] = ci;
		}
	}
	fputs("</svg>\n", out);
	rc = fflush(out) != 0 || ferror(out) ? -(errno ? errno : EIO) : 0;
out:
	kids_free(&k);
	kids_free(&bk);
	free(stack);
	free(bmatch);
	free(x);
	free(w);
	return rc;
}
