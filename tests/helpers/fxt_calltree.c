/* fxt_calltree: prints what the end-to-end tests assert on, from an
 * archive read with the reader library.
 *
 *	fxt_calltree [--pid PID] [--tree | --flat | --threads | --stats] ARCHIVE
 *
 *   --tree     (default) per thread, the call tree merged by path, with the
 *              number of calls of each path:
 *                  thread worker-0
 *                    worker 1
 *                      work 1
 *                        step 100
 *              Threads are sorted by name, children by first call.
 *   --flat     calls per function over all threads, "COUNT NAME", by name.
 *   --threads  the name of each thread that has events, sorted.
 *   --stats    "threads N", "slices N", "open N" (begin events that never
 *              end), "overlaps N" (slices that end after their parent, which
 *              a viewer drops), "unmatched N" (end events with no begin),
 *              "maxdepth N", "dropped N" (sum of the agent's
 *              "fxt: N records dropped" instants).
 *
 * --pid PID reads only the records of provider PID (in an archive merged
 * from several processes, those of process PID: see convert/merge.h).
 *
 * Slices are duration complete events and begin/end pairs; nesting is
 * rebuilt from timestamps, as a viewer does, not from record order.  An
 * open slice (a begin with no end) lasts to the end of the trace.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

/* ---------------------------------------------------------- name table */

struct names {
	char **str;
	size_t n, cap;
	uint32_t *slots; /* hash -> id + 1 */
	size_t nslots;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int names_grow(struct names *t)
{
	size_t ns = t->nslots != 0 ? 2 * t->nslots : 1024;
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash_bytes(t->str[i], strlen(t->str[i])) & (ns - 1);
		while (slots[j] != 0)
			j = (j + 1) & (ns - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

/* Returns the id of the string, adding it if new, or -ENOMEM. */
static int64_t names_intern(struct names *t, struct fxt_string s)
{
	if (2 * (t->n + 1) > t->nslots && names_grow(t) != 0)
		return -ENOMEM;
	size_t j = hash_bytes(s.data, s.len) & (t->nslots - 1);
	while (t->slots[j] != 0) {
		const char *c = t->str[t->slots[j] - 1];
		if (strlen(c) == s.len && memcmp(c, s.data, s.len) == 0)
			return t->slots[j] - 1;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap != 0 ? 2 * t->cap : 256;
		char **ns = realloc(t->str, nc * sizeof(*ns));
		if (ns == NULL)
			return -ENOMEM;
		t->str = ns;
		t->cap = nc;
	}
	char *copy = malloc(s.len + 1);
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, s.data, s.len);
	copy[s.len] = '\0';
	t->str[t->n] = copy;
	t->slots[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

/* ------------------------------------------------------------- threads */

struct slice {
	uint64_t start, end; /* end = UINT64_MAX while open */
	uint32_t name;
	bool open;
};

struct thread {
	uint64_t pid, tid;
	int64_t name; /* -1 until a kernel object record names it */
	struct slice *slices;
	size_t n, cap;
	/* Begin events waiting for their end: indices into slices. */
	size_t *stack;
	size_t depth, stack_cap;
};

struct trace {
	struct names names;
	struct thread *threads;
	size_t nthreads, cap;
	uint64_t dropped, unmatched;
};

static struct thread *thread_get(struct trace *tr, uint64_t pid, uint64_t tid)
{
	static size_t last; /* consecutive events are mostly on one thread */

	if (last < tr->nthreads && tr->threads[last].tid == tid &&
	    (tr->threads[last].pid == pid || pid == 0))
		return &tr->threads[last];
	for (size_t i = 0; i < tr->nthreads; i++) {
		if (tr->threads[i].tid == tid && (tr->threads[i].pid == pid || pid == 0)) {
			last = i;
			return &tr->threads[i];
		}
	}
	if (tr->nthreads == tr->cap) {
		size_t nc = tr->cap != 0 ? 2 * tr->cap : 16;
		struct thread *nt = realloc(tr->threads, nc * sizeof(*nt));
		if (nt == NULL)
			return NULL;
		tr->threads = nt;
		tr->cap = nc;
	}
	struct thread *t = &tr->threads[tr->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->name = -1;
	return t;
}

static struct slice *slice_add(struct thread *t)
{
	if (t->n == t->cap) {
		size_t nc = t->cap != 0 ? 2 * t->cap : 64;
		struct slice *ns = realloc(t->slices, nc * sizeof(*ns));
		if (ns == NULL)
			return NULL;
		t->slices = ns;
		t->cap = nc;
	}
	return &t->slices[t->n++];
}

static int push_open(struct thread *t, size_t idx)
{
	if (t->depth == t->stack_cap) {
		size_t nc = t->stack_cap != 0 ? 2 * t->stack_cap : 64;
		size_t *ns = realloc(t->stack, nc * sizeof(*ns));
		if (ns == NULL)
			return -ENOMEM;
		t->stack = ns;
		t->stack_cap = nc;
	}
	t->stack[t->depth++] = idx;
	return 0;
}

static int add_event(struct trace *tr, const struct fxt_record *rec)
{
	const __typeof__(rec->u.event) *ev = &rec->u.event;
	struct thread *t = thread_get(tr, ev->pid, ev->tid);
	struct slice *s;
	int64_t name;

	if (t == NULL)
		return -ENOMEM;
	switch (ev->type) {
	case FXT_EVENT_INSTANT:
		tr->dropped += fxt_dropped_in_name(ev->name.data, ev->name.len);
		return 0;
	case FXT_EVENT_DURATION_COMPLETE:
	case FXT_EVENT_DURATION_BEGIN:
		name = names_intern(&tr->names, ev->name);
		if (name < 0 || (s = slice_add(t)) == NULL)
			return -ENOMEM;
		s->start = ev->ts;
		s->name = (uint32_t)name;
		s->open = ev->type == FXT_EVENT_DURATION_BEGIN;
		s->end = s->open ? UINT64_MAX : ev->extra;
		return s->open ? push_open(t, t->n - 1) : 0;
	case FXT_EVENT_DURATION_END:
		if (t->depth == 0) {
			tr->unmatched++;
			return 0;
		}
		s = &t->slices[t->stack[--t->depth]];
		s->end = ev->ts;
		s->open = false;
		return 0;
	default:
		return 0;
	}
}

/* With --pid, the provider whose records are read; -1 = every provider. */
static int64_t only_provider = -1;

static int load(struct trace *tr, const char *path)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	int rc = fxt_reader_open_path(&r, path, 0);

	if (rc < 0) {
		fprintf(stderr, "fxt_calltree: %s: %s\n", path, strerror(-rc));
		return rc;
	}
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		if (only_provider >= 0 && rec.provider_id != (uint64_t)only_provider)
			continue;
		if (rec.type == FXT_RECORD_EVENT) {
			rc = add_event(tr, &rec);
		} else if (rec.type == FXT_RECORD_KERNEL_OBJECT &&
			   rec.u.kobj.obj_type == FXT_OBJ_THREAD) {
			uint64_t pid = 0;
			for (unsigned i = 0; i < rec.nargs; i++)
				if (rec.args[i].type == FXT_ARG_KOID)
					pid = rec.args[i].v.u;
			struct thread *t = thread_get(tr, pid, rec.u.kobj.koid);
			int64_t name = names_intern(&tr->names, rec.u.kobj.name);
			if (t == NULL || name < 0)
				rc = -ENOMEM;
			else
				t->name = name;
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && !fxt_reader_saw_magic(r)) {
		fprintf(stderr, "fxt_calltree: %s: not an FXT archive (no magic record)\n", path);
		rc = -1;
	} else if (rc < 0) {
		uint64_t off = 0;
		const char *why = fxt_reader_error(r, &off);
		fprintf(stderr, "fxt_calltree: %s: %s at offset %" PRIu64 "\n", path,
			why != NULL ? why : strerror(-rc), off);
	}
	fxt_reader_free(r);
	return rc < 0 ? -1 : 0;
}

/* -------------------------------------------------------------- nesting */

static int slice_order(const void *pa, const void *pb)
{
	const struct slice *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1; /* the longer one is the parent */
	return 0;
}

/* A node of the merged tree: one call path. */
struct node {
	uint32_t name;
	uint64_t count;
	size_t first_child, next_sibling; /* 0 = none (node 0 is the root) */
};

struct tree {
	struct node *nodes;
	size_t n, cap;
};

static size_t tree_child(struct tree *tr, size_t parent, uint32_t name)
{
	size_t last = 0;
	for (size_t c = tr->nodes[parent].first_child; c != 0; c = tr->nodes[c].next_sibling) {
		if (tr->nodes[c].name == name)
			return c;
		last = c;
	}
	if (tr->n == tr->cap) {
		size_t nc = 2 * tr->cap;
		struct node *nn = realloc(tr->nodes, nc * sizeof(*nn));
		if (nn == NULL) {
			fputs("fxt_calltree: out of memory\n", stderr);
			exit(2);
		}
		tr->nodes = nn;
		tr->cap = nc;
	}
	size_t id = tr->n++;
	tr->nodes[id] = (struct node){ .name = name };
	if (last == 0)
		tr->nodes[parent].first_child = id;
	else
		tr->nodes[last].next_sibling = id;
	return id;
}

struct nest_stats {
	uint64_t slices, open, overlaps, maxdepth;
};

/* Sorts a thread's slices and rebuilds the nesting into tree (if not
 * NULL) and the counters. */
static void nest(struct thread *t, struct tree *tree, struct nest_stats *st)
{
	struct {
		uint64_t end;
		size_t node;
	} *stack = malloc((t->n + 1) * sizeof(*stack));
	size_t depth = 0;

	if (stack == NULL) {
		fputs("fxt_calltree: out of memory\n", stderr);
		exit(2);
	}
	qsort(t->slices, t->n, sizeof(*t->slices), slice_order);
	for (size_t i = 0; i < t->n; i++) {
		const struct slice *s = &t->slices[i];
		while (depth > 0 && stack[depth - 1].end <= s->start)
			depth--;
		if (depth > 0 && s->end > stack[depth - 1].end)
			st->overlaps++;
		st->slices++;
		st->open += s->open;
		size_t node = 0;
		if (tree != NULL) {
			node = tree_child(tree, depth > 0 ? stack[depth - 1].node : 0, s->name);
			tree->nodes[node].count++;
		}
		stack[depth].end = s->end;
		stack[depth].node = node;
		depth++;
		if (depth > st->maxdepth)
			st->maxdepth = depth;
	}
	free(stack);
}

static void print_tree(const struct tree *tr, const struct names *names, size_t node,
		       unsigned indent)
{
	/* Iterative along siblings, recursive along children; the deep
	 * recursion tests use --flat and --stats, not this. */
	for (size_t c = tr->nodes[node].first_child; c != 0; c = tr->nodes[c].next_sibling) {
		printf("%*s%s %" PRIu64 "\n", (int)indent, "", names->str[tr->nodes[c].name],
		       tr->nodes[c].count);
		print_tree(tr, names, c, indent + 2);
	}
}

static const char *thread_name(const struct trace *tr, const struct thread *t)
{
	return t->name >= 0 ? tr->names.str[t->name] : "(unnamed)";
}

static struct trace *sort_ctx;

static int thread_order(const void *pa, const void *pb)
{
	const struct thread *a = pa, *b = pb;
	int c = strcmp(thread_name(sort_ctx, a), thread_name(sort_ctx, b));
	if (c != 0)
		return c;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int count_order(const void *pa, const void *pb)
{
	const uint64_t *a = pa, *b = pb; /* {name id, count} pairs */
	return strcmp(sort_ctx->names.str[a[0]], sort_ctx->names.str[b[0]]);
}

int main(int argc, char **argv)
{
	const char *mode = "--tree";
	struct trace tr;

	memset(&tr, 0, sizeof(tr));
	if (argc >= 4 && strcmp(argv[1], "--pid") == 0) {
		only_provider = strtoll(argv[2], NULL, 10);
		argv += 2;
		argc -= 2;
	}
	if (argc == 3) {
		mode = argv[1];
	} else if (argc != 2) {
		fputs("usage: fxt_calltree [--pid PID] [--tree|--flat|--threads|--stats] "
		      "ARCHIVE\n",
		      stderr);
		return 2;
	}
	if (load(&tr, argv[argc - 1]) != 0)
		return 1;

	/* Threads that only have a name (no events) are not tracks. */
	size_t k = 0;
	for (size_t i = 0; i < tr.nthreads; i++)
		if (tr.threads[i].n > 0 || tr.threads[i].depth > 0)
			tr.threads[k++] = tr.threads[i];
	tr.nthreads = k;
	sort_ctx = &tr;
	qsort(tr.threads, tr.nthreads, sizeof(*tr.threads), thread_order);

	struct nest_stats st = { 0 };
	if (strcmp(mode, "--tree") == 0) {
		for (size_t i = 0; i < tr.nthreads; i++) {
			struct tree tree = { .cap = 64 };
			tree.nodes = calloc(tree.cap, sizeof(*tree.nodes));
			if (tree.nodes == NULL)
				return 2;
			tree.n = 1;
			nest(&tr.threads[i], &tree, &st);
			printf("thread %s\n", thread_name(&tr, &tr.threads[i]));
			print_tree(&tree, &tr.names, 0, 2);
			free(tree.nodes);
		}
	} else if (strcmp(mode, "--flat") == 0) {
		uint64_t *counts = calloc(2 * (tr.names.n + 1), sizeof(*counts));
		if (counts == NULL)
			return 2;
		for (size_t i = 0; i < tr.nthreads; i++)
			for (size_t j = 0; j < tr.threads[i].n; j++)
				counts[2 * tr.threads[i].slices[j].name + 1]++;
		size_t m = 0;
		for (size_t i = 0; i < tr.names.n; i++) {
			if (counts[2 * i + 1] != 0) {
				counts[2 * m] = i;
				counts[2 * m + 1] = counts[2 * i + 1];
				m++;
			}
		}
		qsort(counts, m, 2 * sizeof(*counts), count_order);
		for (size_t i = 0; i < m; i++)
			printf("%" PRIu64 " %s\n", counts[2 * i + 1], tr.names.str[counts[2 * i]]);
		free(counts);
	} else if (strcmp(mode, "--threads") == 0) {
		for (size_t i = 0; i < tr.nthreads; i++)
			printf("%s\n", thread_name(&tr, &tr.threads[i]));
	} else if (strcmp(mode, "--stats") == 0) {
		for (size_t i = 0; i < tr.nthreads; i++)
			nest(&tr.threads[i], NULL, &st);
		printf("threads %zu\nslices %" PRIu64 "\nopen %" PRIu64 "\noverlaps %" PRIu64
		       "\nunmatched %" PRIu64 "\nmaxdepth %" PRIu64 "\ndropped %" PRIu64 "\n",
		       tr.nthreads, st.slices, st.open, st.overlaps, tr.unmatched, st.maxdepth,
		       tr.dropped);
	} else {
		fprintf(stderr, "fxt_calltree: unknown mode %s\n", mode);
		return 2;
	}

	for (size_t i = 0; i < tr.nthreads; i++) {
		free(tr.threads[i].slices);
		free(tr.threads[i].stack);
	}
	free(tr.threads);
	for (size_t i = 0; i < tr.names.n; i++)
		free(tr.names.str[i]);
	free(tr.names.str);
	free(tr.names.slots);
	return 0;
}
