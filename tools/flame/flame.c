/* The flame graph's tree: its tables (interned names, nodes, threads),
 * the depth and recursion bounds applied as frames are added, the public
 * accessors and the folded-stack output.  Loading an archive into it is
 * flame-load.c's job, drawing it flame-svg.c's. */
#include "config.h"

#include "tools/flame/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tools/front/escape.h"
#include "tools/flame/flame-tree.h"

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

int64_t flame__label_get(struct flame *f, const char *s, size_t len)
{
	char *clean = malloc(len + 1);
	size_t j;
	uint64_t h;

	if (!clean)
		return -ENOMEM;
	tool_clean_str(clean, s, len);
	h = fxt__hash_bytes(clean, len);
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

int64_t flame__thread_find(struct flame *f, uint64_t pid, uint64_t tid)
{
	struct fthread *t;
	size_t j;

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

int64_t flame__thread_group(struct flame *f, size_t ti)
{
	int64_t pi, node;

	if (f->thr[ti].group != FLAME_NONE)
		return f->thr[ti].group;
	if (f->by == FLAME_BY_ALL) {
		node = 0;
	} else {
		pi = flame__thread_get(f, f->thr[ti].pid, PROC_TID);
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

int64_t flame__frame_child(struct flame *f, uint32_t parent, uint32_t group, uint32_t label)
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

int flame_set_samples(struct flame *f, bool samples)
{
	if (f->loaded)
		return -EBUSY;
	f->samples = samples;
	return 0;
}

bool flame_is_samples(const struct flame *f)
{
	return f->samples;
}

uint64_t flame_left_out(const struct flame *f)
{
	return f->left_out;
}

const struct tool_losses *flame_losses(const struct flame *f)
{
	return &f->losses;
}

void flame__threads_release(struct flame *f)
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
	flame__threads_release(f);
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

/* ------------------------------------------------------------- accessors */

size_t flame_nnodes(const struct flame *f)
{
	return f->nnodes;
}

const struct flame_node *flame_node(const struct flame *f, size_t i)
{
	return i < f->nnodes ? &f->nodes[i] : NULL;
}

const struct flame_node *flame_nodes(const struct flame *f)
{
	return f->nodes;
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
