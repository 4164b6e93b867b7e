/* The call engines of tools/calls/ on hand-built archives with known
 * answers: the call tree (nesting, recursion folded directly and through
 * a cycle, a path that comes back below a fold, begin/end pairs, two
 * threads grouped and chosen, end order nested, --focus's callers and callees),
 * and the call stream (leaves and calls with children, a begin/end pair
 * made one call with its arguments, instants and logs in line, another
 * thread, a call left open), the merge by time's marks (made at every
 * item in one pass, sharing threads' parts; resumed, on the merge and on
 * a fork, they give what followed), the tree walked on a second thread,
 * and bad input. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/calls/calltree.h"
#include "tools/calls/callmerge.h"
#include "tools/calls/callstream.h"
#include "tools/front/common.h"

/* One record of a test archive: 'X' complete, 'B' begin, 'E' end, 'I'
 * instant, 'L' log line (name is its message); `arg` > 0 adds an
 * argument "n" = arg, and "retval" = arg + 1 on an 'E'. */
struct ev {
	char type;
	uint64_t tid;
	const char *name;
	uint64_t ts, end;
	int64_t arg;
};

#define PID 1

static char path[64];

/* Writes the events to the scratch file `path`. */
static void build(const struct ev *evs, size_t n)
{
	struct fxt_writer *w;
	int rc;

	if (fxt_writer_open_path(&w, path, 0) < 0)
		bail_out("fxt_writer_open_path");
	rc = fxt_writer_magic(w);
	for (size_t i = 0; !rc && i < n; i++) {
		struct fxt_event e = { 0 };
		struct fxt_arg a[2];

		if (evs[i].type == 'L') {
			rc = fxt_writer_log(w, evs[i].ts, fxt_writer_thread(w, PID, evs[i].tid),
					    evs[i].name, strlen(evs[i].name));
			continue;
		}
		e.type = evs[i].type == 'X'   ? FXT_EVENT_DURATION_COMPLETE
			 : evs[i].type == 'B' ? FXT_EVENT_DURATION_BEGIN
			 : evs[i].type == 'E' ? FXT_EVENT_DURATION_END
					      : FXT_EVENT_INSTANT;
		e.ts = evs[i].ts;
		e.extra = evs[i].end;
		e.thread = fxt_writer_thread(w, PID, evs[i].tid);
		e.category = fxt_writer_cstring(w, "fn");
		e.name = fxt_writer_cstring(w, evs[i].name ? evs[i].name : "");
		if (evs[i].arg > 0) {
			a[0] = (struct fxt_arg){ .type = FXT_ARG_INT64,
						 .name = fxt_writer_cstring(w, "n"),
						 .v.i64 = evs[i].arg };
			a[1] = (struct fxt_arg){ .type = FXT_ARG_INT64,
						 .name = fxt_writer_cstring(w, "retval"),
						 .v.i64 = evs[i].arg + 1 };
			e.args = a;
			e.nargs = evs[i].type == 'E' ? 2 : 1;
		}
		rc = fxt_writer_event(w, &e);
	}
	if (!rc)
		rc = fxt_writer_close(w);
	else
		fxt_writer_free(w);
	if (rc)
		bail_out("writing a test archive");
}

/* ------------------------------------------------------------ the tree */

static void put_node(const struct calltree *t, uint32_t i, FILE *m)
{
	const struct calltree_node *n = calltree_node(t, i);

	if (n->row == CALLTREE_GROUP)
		fprintf(m, "[%" PRIu64 "/%" PRIu64 " %" PRIu64 "]\n", n->pid, n->tid, n->total_ns);
	else
		fprintf(m, "%*s%s%s %" PRIu64 " %" PRIu64 " %" PRIu64 "%s\n", 2 * (int)n->depth - 2,
			"", calltree_name(t, n), n->recursive ? "*" : "", n->calls, n->total_ns,
			n->self_ns, n->open ? " open" : "");
	for (uint32_t c = n->first_child; c != CALLTREE_NONE; c = calltree_node(t, c)->next_sibling)
		put_node(t, c, m);
}

/* The tree as text: "NAME[*] calls total self" per node, two spaces per
 * level; a group as "[pid/tid total]" when grouped. */
static char *tree_text(const struct calltree *t, bool groups)
{
	const uint32_t *g;
	size_t ng = calltree_groups(t, &g), len = 0;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, &len);

	for (size_t k = 0; k < ng; k++) {
		const struct calltree_node *n = calltree_node(t, g[k]);

		if (groups)
			put_node(t, g[k], m);
		else
			for (uint32_t c = n->first_child; c != CALLTREE_NONE;
			     c = calltree_node(t, c)->next_sibling)
				put_node(t, c, m);
	}
	fclose(m);
	return buf;
}

static struct calltree *load(const struct ev *evs, size_t n, const struct calltree_opts *o)
{
	static const struct calltree_opts plain = { .by = PROFILE_BY_FUNCTION };
	struct calltree *t;
	char err[256] = "";

	build(evs, n);
	if (calltree_new(&t, o ? o : &plain) < 0)
		bail_out("calltree_new");
	if (calltree_load(t, path, err, sizeof(err)) < 0) {
		diag("calltree_load: %s", err);
		calltree_free(t);
		return NULL;
	}
	return t;
}

/* The tree of the events as tree_text() with groups, or NULL. */
static char *load_text(const struct ev *evs, size_t n, const struct calltree_opts *o)
{
	struct calltree *t = load(evs, n, o);
	char *text = t ? tree_text(t, true) : NULL;

	calltree_free(t);
	return text;
}

static void is_text(char *got, const char *want, const char *what)
{
	if (!ok(got && strcmp(got, want) == 0, "%s", what))
		diag("got:\n%swant:\n%s", got ? got : "(null)", want);
	free(got);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_tree(const char *what, const struct ev *evs, size_t n,
		       const struct calltree_opts *o, bool groups, const char *want)
{
	struct calltree *t = load(evs, n, o);

	is_text(t ? tree_text(t, groups) : NULL, want, what);
	calltree_free(t);
}

static void test_tree(void)
{
	/* main [0,100): a [10,40) (b [15,25), c [25,35)), a [50,60), c [70,90) */
	static const struct ev nest[] = {
		{ 'X', 10, "main", 0, 100 }, { 'X', 10, "a", 10, 40 }, { 'X', 10, "b", 15, 25 },
		{ 'X', 10, "c", 25, 35 },    { 'X', 10, "a", 50, 60 }, { 'X', 10, "c", 70, 90 },
	};
	/* f calls itself three deep, the innermost calls g. */
	static const struct ev direct[] = {
		{ 'X', 10, "main", 0, 100 }, { 'X', 10, "f", 10, 90 }, { 'X', 10, "f", 20, 80 },
		{ 'X', 10, "f", 30, 70 },    { 'X', 10, "g", 40, 50 },
	};
	/* a -> b -> a -> b, through a cycle. */
	static const struct ev cycle[] = {
		{ 'X', 10, "a", 0, 100 },
		{ 'X', 10, "b", 10, 90 },
		{ 'X', 10, "a", 20, 80 },
		{ 'X', 10, "b", 30, 70 },
	};
	/* main -> b -> c -> b -> c: the inner c folds to the outer c's node
	 * (b -> c again), whose total counts the outer one only. */
	static const struct ev again[] = {
		{ 'X', 10, "main", 0, 100 }, { 'X', 10, "b", 10, 90 }, { 'X', 10, "c", 20, 80 },
		{ 'X', 10, "b", 30, 70 },    { 'X', 10, "c", 40, 60 },
	};
	/* begin/end pairs, one never closed (the trace ends at 200). */
	static const struct ev pairs[] = {
		{ 'B', 10, "main", 0 }, { 'B', 10, "a", 10 },	    { 'E', 10, NULL, 30 },
		{ 'B', 10, "a", 40 },	{ 'X', 10, "b", 45, 55 },   { 'E', 10, NULL, 60 },
		{ 'B', 10, "w", 70 },	{ 'X', 10, "z", 190, 200 },
	};
	/* two threads */
	static const struct ev two[] = {
		{ 'X', 10, "main", 0, 100 },
		{ 'X', 10, "a", 10, 20 },
		{ 'X', 11, "run", 0, 50 },
		{ 'X', 11, "a", 10, 40 },
	};
	/* end order: children before their parent */
	static const struct ev post[] = {
		{ 'X', 10, "b", 10, 20 },
		{ 'X', 10, "a", 5, 30 },
	};
	/* the direct recursion in end order, inside a begin/end pair */
	static const struct ev post_rec[] = {
		{ 'B', 10, "main", 0 },	  { 'X', 10, "g", 40, 50 }, { 'X', 10, "f", 30, 70 },
		{ 'X', 10, "f", 20, 80 }, { 'X', 10, "f", 10, 90 }, { 'E', 10, NULL, 100 },
	};
	struct calltree_opts by_thread = { .by = PROFILE_BY_THREAD };
	uint64_t eleven = 11;
	struct calltree_opts tid11 = { .by = PROFILE_BY_FUNCTION,
				       .pick = { .tids = &eleven, .ntids = 1 } };
	struct calltree *t;

	check_tree("nesting: calls, total, self per path, children by total", nest, N(nest), NULL,
		   false,
		   "main 1 100 40\n"
		   "  a 2 40 20\n"
		   "    b 1 10 10\n"
		   "    c 1 10 10\n"
		   "  c 1 20 20\n");
	check_tree("direct recursion: one node, every frame's calls and self, the outer total",
		   direct, N(direct), NULL, false,
		   "main 1 100 20\n"
		   "  f* 3 80 70\n"
		   "    g 1 10 10\n");
	check_tree("a cycle a -> b -> a -> b folds into a (marked) and its child b", cycle,
		   N(cycle), NULL, false,
		   "a* 2 100 40\n"
		   "  b 2 80 60\n");
	check_tree("a path back below a fold: its total is not counted twice", again, N(again),
		   NULL, false,
		   "main 1 100 20\n"
		   "  b* 2 80 40\n"
		   "    c 2 60 40\n");
	check_tree("begin/end pairs; a frame never closed counts to the trace's end", pairs,
		   N(pairs), NULL, false,
		   "main 1 200 30 open\n"
		   "  w 1 130 120 open\n"
		   "    z 1 10 10\n"
		   "  a 2 40 30\n"
		   "    b 1 10 10\n");
	check_tree("--by thread: a group per thread, the longest first", two, N(two), &by_thread,
		   true,
		   "[1/10 100]\n"
		   "main 1 100 90\n"
		   "  a 1 10 10\n"
		   "[1/11 50]\n"
		   "run 1 50 20\n"
		   "  a 1 30 30\n");
	check_tree("--tid: only that thread's calls", two, N(two), &tid11, false,
		   "run 1 50 20\n"
		   "  a 1 30 30\n");
	t = load(post, N(post), NULL);
	ok(t && calltree_end_ordered(t) == 1, "end order is told (one thread)");
	is_text(t ? tree_text(t, false) : NULL, "a 1 25 15\n  b 1 10 10\n",
		"end order: nested once the archive is read");
	calltree_free(t);
	check_tree("end order under a begin: the same tree as in start order", post_rec,
		   N(post_rec), NULL, false,
		   "main 1 100 20\n"
		   "  f* 3 80 70\n"
		   "    g 1 10 10\n");
}

static void test_focus(void)
{
	/* c called from a (via b) and from d; c calls e. */
	static const struct ev evs[] = {
		{ 'X', 10, "main", 0, 100 }, { 'X', 10, "a", 0, 50 },  { 'X', 10, "b", 0, 40 },
		{ 'X', 10, "c", 0, 30 },     { 'X', 10, "e", 0, 10 },  { 'X', 10, "d", 50, 90 },
		{ 'X', 10, "c", 50, 60 },    { 'X', 10, "e", 52, 54 },
	};
	struct calltree *t = load(evs, N(evs), NULL), *cr = NULL, *ce = NULL;

	ok(t && calltree_focus(t, "c", &cr, &ce) == 0, "calltree_focus");
	is_text(cr ? tree_text(cr, false) : NULL,
		"c 2 40 28\n"
		"  b 1 30 20\n"
		"    a 1 30 20\n"
		"      main 1 30 20\n"
		"  d 1 10 8\n"
		"    main 1 10 8\n",
		"callers: inverted, the focused calls' numbers per chain");
	is_text(ce ? tree_text(ce, false) : NULL,
		"c 2 40 28\n"
		"  e 2 12 12\n",
		"callees: merged over both paths");
	calltree_free(cr);
	calltree_free(ce);
	cr = ce = NULL;
	ok(t && calltree_focus(t, "nosuch", &cr, &ce) == -ENOENT, "no such function: -ENOENT");
	calltree_free(t);
}

/* ---------------------------------------------------------- the stream */

struct sink {
	FILE *m;
	int stop_after; /* > 0: fail the n-th item */
	int n;
};

static int put_item(void *ctx, const struct callstream_item *it)
{
	static const char *const kinds[] = { "CALL", "ENTER", "EXIT", "INSTANT", "LOG" };
	struct sink *s = ctx;

	fprintf(s->m, "%s %" PRIu64 " %u %.*s @%" PRIu64, kinds[it->kind], it->tid, it->depth,
		(int)it->name.len, it->name.data, it->ts_ns);
	if (it->has_dur)
		fprintf(s->m, " +%" PRIu64, it->dur_ns);
	for (unsigned i = 0; i < it->nargs; i++)
		fprintf(s->m, " %.*s=%" PRId64, (int)it->args[i].name.len, it->args[i].name.data,
			it->args[i].v.i);
	fputs(it->open ? " open\n" : "\n", s->m);
	return s->stop_after && ++s->n == s->stop_after ? -EPIPE : 0;
}

static int feed(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	return callstream_add_record(ctx, r, rec);
}

static char *stream_text(const struct ev *evs, size_t n, int stop_after, int *rc)
{
	struct tool_input in = { .path = path };
	struct sink s = { .stop_after = stop_after };
	struct callstream *cs;
	char *buf = NULL, err[256];
	size_t len = 0;

	build(evs, n);
	s.m = open_memstream(&buf, &len);
	if (callstream_new(&cs, put_item, &s) < 0)
		bail_out("callstream_new");
	*rc = tool_read_input(&in, feed, cs, err, sizeof(err));
	if (*rc == 0)
		*rc = callstream_finish(cs);
	callstream_free(cs);
	fclose(s.m);
	return buf;
}

static void test_stream(void)
{
	static const struct ev evs[] = {
		{ 'X', 10, "main", 0, 100 }, /* has children: ENTER, EXIT */
		{ 'X', 10, "a", 10, 20 },    /* a leaf */
		{ 'B', 10, "p", 30, 0, 7 },  /* a pair, a leaf: one CALL */
		{ 'E', 10, NULL, 35, 0, 7 }, /* its end's args too */
		{ 'B', 10, "q", 40 },	     /* a pair with children */
		{ 'I', 10, "mark", 45 },     /* an instant inside q */
		{ 'L', 10, "hello", 46 },    /* a log line */
		{ 'E', 10, NULL, 50, 0, 3 }, /* q's exit, with a return value */
		{ 'X', 11, "run", 20, 80 },  /* another thread: main's EXIT first */
		{ 'X', 11, "x", 30, 40 },    /* run's child */
		{ 'B', 11, "open", 60 },     /* never closed: to the last time, 100 */
	};
	static const struct ev few[] = {
		{ 'X', 10, "a", 0, 10 },
		{ 'X', 10, "b", 20, 30 },
		{ 'X', 10, "c", 40, 50 },
	};
	int rc;

	is_text(stream_text(evs, N(evs), 0, &rc),
		"ENTER 10 0 main @0 +100\n"
		"CALL 10 1 a @10 +10\n"
		"CALL 10 1 p @30 +5 n=7 n=7 retval=8\n"
		"ENTER 10 1 q @40\n"
		"INSTANT 10 2 mark @45\n"
		"LOG 10 2 hello @46\n"
		"EXIT 10 1 q @50 +10 n=3 retval=4\n"
		"EXIT 10 0 main @100 +100\n"
		"ENTER 11 0 run @20 +60\n"
		"CALL 11 1 x @30 +10\n"
		"ENTER 11 1 open @60\n"
		"EXIT 11 1 open @100 +40 open\n"
		"EXIT 11 0 run @80 +60\n",
		"stream: leaves, calls with children, pairs, instants, logs, threads");
	ok(rc == 0, "stream read to the end");
	is_text(stream_text(few, N(few), 2, &rc), "CALL 10 0 a @0 +10\nCALL 10 0 b @20 +10\n",
		"a callback's error stops the stream at once");
	ok(rc == -EPIPE, "and is returned (%d)", rc);
}

/* The items m gives from where it is to its end, as fxt-replay's lines
 * (at most `max`). */
static char *merge_text(struct callmerge *m, size_t max)
{
	const struct callstream_item *it;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t k = 0; k < max && callmerge_next(m, &it) == 1; k++)
		callstream_print(f, it, 0);
	fclose(f);
	return buf;
}

static void test_marks(void)
{
	static const struct ev evs[] = {
		{ 'X', 10, "main", 0, 100 }, { 'X', 10, "a", 10, 20 },
		{ 'B', 10, "p", 30, 0, 7 },  { 'E', 10, NULL, 35, 0, 7 },
		{ 'B', 10, "q", 40 },	     { 'I', 10, "mark", 45 },
		{ 'L', 10, "hello", 46 },    { 'E', 10, NULL, 50, 0, 3 },
		{ 'X', 11, "run", 20, 80 },  { 'X', 11, "x", 30, 40 },
		{ 'X', 11, "y", 41, 42 },    { 'B', 11, "open", 60 },
	};
	struct callmerge *m, *f = NULL;
	struct callmerge_mark *mk[15];
	char err[256] = "", *all, *again, *forked;
	const char *rest;
	size_t n = 0, bad = 0;

	build(evs, N(evs));
	if (callmerge_open(&m, path, err, sizeof(err)) < 0 || callmerge_fork(m, &f) < 0) {
		diag("%s", err);
		bail_out("callmerge_open");
	}
	all = merge_text(m, SIZE_MAX);
	for (const char *c = all; *c; c++)
		n += *c == '\n';
	if (!ok(n == 14, "merge: %zu items", n))
		return;
	/* the marks made in one pass, all kept: they share threads' parts */
	callmerge_rewind(m);
	for (size_t k = 0; k <= n; k++) {
		const struct callstream_item *it;

		if (callmerge_mark(m, &mk[k]) < 0)
			bail_out("callmerge_mark");
		if (k == 0) { /* a second mark at the same place */
			size_t before = callmerge_shared_bytes(m);
			struct callmerge_mark *same;

			if (callmerge_mark(m, &same) < 0)
				bail_out("callmerge_mark");
			ok(callmerge_shared_bytes(m) == before && callmerge_mark_bytes(same) > 0,
			   "a second mark at the same place shares the first's parts (%zu bytes)",
			   before);
			callmerge_mark_free(same);
		}
		if (k < n && callmerge_next(m, &it) != 1)
			bail_out("callmerge_next");
	}
	for (size_t k = 0; k <= n; k++) {
		callmerge_resume(m, mk[k]);
		again = merge_text(m, SIZE_MAX);
		callmerge_resume(f, mk[k]);
		forked = merge_text(f, SIZE_MAX);
		rest = all;
		for (size_t j = 0; j < k; j++)
			rest = strchr(rest, '\n') + 1;
		if (strcmp(rest, again) || strcmp(rest, forked)) {
			diag("mark after %zu items: rest\n%sagain\n%sforked\n%s", k, rest, again,
			     forked);
			bad++;
		}
		free(again);
		free(forked);
	}
	for (size_t k = 0; k <= n; k++)
		callmerge_mark_free(mk[k]);
	ok(bad == 0, "resumed at each of the %zu places, the merge and a fork give what followed",
	   n + 1);
	ok(callmerge_shared_bytes(m) == 0, "the marks freed, what they shared is too");
	free(all);
	callmerge_free(f);
	callmerge_free(m);
}

/* The archive read on a second thread (tools/profile/recpipe.c, many
 * batches of records handed over) gives the tree read and walked on one
 * thread (FXT_THREADS=0), node for node: three threads, recursion, a
 * begin/end pair around each, one thread in end order. */
static void test_threads(void)
{
	static const char *const names[] = { "main", "a", "b", "c", "r" };
	const size_t per = 12000; /* iterations a thread: 5 slices each */
	struct ev *evs = calloc(3 * (per * 5 + 2), sizeof(*evs));
	struct calltree_opts o = { .by = PROFILE_BY_THREAD };
	char *one, *two;
	size_t n = 0;

	if (!evs)
		bail_out("calloc");
	for (uint64_t tid = 1; tid <= 3; tid++) {
		uint64_t ts = 1000 * tid;

		evs[n++] = (struct ev){ 'B', tid, names[0], ts, 0 };
		for (size_t i = 0; i < per; i++, ts += 100) {
			/* a [ts, ts+60) (b, r (r)), c [ts+70, ts+90); end order on 3 */
			struct ev it[5] = {
				{ 'X', tid, names[1], ts, ts + 60 },
				{ 'X', tid, names[2], ts + 5, ts + 20 },
				{ 'X', tid, names[4], ts + 25, ts + 55 },
				{ 'X', tid, names[4], ts + 30, ts + 50 },
				{ 'X', tid, names[3], ts + 70, ts + 90 },
			};
			static const int end_order[5] = { 1, 3, 2, 0, 4 };

			for (int k = 0; k < 5; k++)
				evs[n++] = it[tid == 3 ? end_order[k] : k];
		}
		evs[n++] = (struct ev){ 'E', tid, NULL, ts, 0 };
	}
	setenv("FXT_THREADS", "0", 1);
	one = load_text(evs, n, &o);
	unsetenv("FXT_THREADS");
	two = load_text(evs, n, &o);
	ok(one && two && strlen(one) > 100 && strcmp(one, two) == 0,
	   "%zu slices: the same tree with the archive read on a second thread", n);
	if (one && two && strcmp(one, two) != 0)
		diag("one thread:\n%s\ntwo:\n%s", one, two);
	free(one);
	free(two);
	free(evs);
}

static void test_bad(void)
{
	struct calltree_opts o = { .by = PROFILE_BY_FUNCTION };
	struct calltree *t;
	char err[256] = "";
	FILE *f = fopen(path, "w");

	fputs("not an archive at all\n", f);
	fclose(f);
	if (calltree_new(&t, &o) < 0)
		bail_out("calltree_new");
	ok(calltree_load(t, path, err, sizeof(err)) < 0 && strstr(err, "not an FXT archive"),
	   "not an archive: refused (%s)", err);
	calltree_free(t);
}

int main(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_calls.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		bail_out("mkstemp");
	close(fd);
	test_tree();
	test_focus();
	test_stream();
	test_marks();
	test_threads();
	test_bad();
	unlink(path);
	done_testing();
	return exit_status();
}
