/* Flame graphs, folded stacks and the Chrome export on hand-built archives
 * with known answers: nesting and recursion, complete events in start and
 * in end order, begin/end pairs, two threads, ticks that are not ns, the
 * differential colors, and bad input. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/front/common.h"
#include "tools/flame/flame.h"
#include "tools/export/export.h"

/* One event of a test archive: 'X' complete, 'B' begin, 'E' end. */
struct ev {
	char type;
	uint64_t tid;
	const char *name;
	uint64_t ts, end;
};

#define PID 1

struct archive {
	void *data;
	size_t len;
};

/* Writes the events (thread tid of process PID) and, when given, a process
 * name and thread names, at `tps` ticks per second (0: none written). */
static struct archive build(const struct ev *evs, size_t n, uint64_t tps, const char *pname,
			    const char *const *tnames)
{
	struct archive a = { NULL, 0 };
	struct fxt_writer *w;
	const void *data;
	int rc;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	rc = fxt_writer_magic(w);
	if (!rc && tps)
		rc = fxt_writer_initialization(w, tps);
	if (!rc && pname)
		rc = fxt_writer_process_name(w, PID, pname);
	for (size_t i = 0; !rc && tnames && tnames[i]; i += 2)
		rc = fxt_writer_thread_name(w, PID, strtoull(tnames[i], NULL, 10), tnames[i + 1]);
	for (size_t i = 0; !rc && i < n; i++) {
		struct fxt_event e = { 0 };

		e.type = evs[i].type == 'X'   ? FXT_EVENT_DURATION_COMPLETE
			 : evs[i].type == 'B' ? FXT_EVENT_DURATION_BEGIN
					      : FXT_EVENT_DURATION_END;
		e.ts = evs[i].ts;
		e.extra = evs[i].end;
		e.thread = fxt_writer_thread(w, PID, evs[i].tid);
		e.category = fxt_writer_cstring(w, "fn");
		e.name = fxt_writer_cstring(w, evs[i].name ? evs[i].name : "");
		rc = fxt_writer_event(w, &e);
	}
	if (!rc)
		rc = fxt_writer_flush(w);
	if (rc)
		bail_out("writing a test archive");
	data = fxt_writer_mem_data(w, &a.len);
	a.data = malloc(a.len);
	if (!a.data)
		bail_out("malloc");
	memcpy(a.data, data, a.len);
	fxt_writer_free(w);
	return a;
}

static struct flame *load(struct archive a, enum flame_by by)
{
	struct tool_input in = { .mem = a.data, .len = a.len };
	struct flame *f;
	char err[256];

	if (flame_new(&f, by) < 0)
		bail_out("flame_new");
	if (flame_load(f, &in, err, sizeof(err)) < 0) {
		diag("flame_load: %s", err);
		flame_free(f);
		return NULL;
	}
	return f;
}

/* Folded output as a string (caller frees). */
static char *folded(const struct flame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m || flame_write_folded(f, m) < 0)
		bail_out("folded");
	fclose(m);
	return buf;
}

static char *svg(const struct flame *f, const struct flame *base)
{
	struct flame_svg_opts o = { .base = base };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m || flame_write_svg(f, &o, m) < 0)
		bail_out("svg");
	fclose(m);
	return buf;
}

/* The value of attribute `attr` in the first element after the <title>
 * whose text starts with title_prefix, e.g. the width of a frame. */
static double frame_attr(const char *doc, const char *title_prefix, const char *attr)
{
	char key[256], akey[64];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s", title_prefix);
	snprintf(akey, sizeof(akey), " %s=\"", attr);
	p = strstr(doc, key);
	if (!p || !(p = strstr(p, "<rect")) || !(p = strstr(p, akey)))
		return -1;
	return strtod(p + strlen(akey), NULL);
}

/* The fill of the frame whose title starts with title_prefix. */
static int frame_fill(const char *doc, const char *title_prefix, char *out, size_t len)
{
	char key[256];
	const char *p, *q;

	snprintf(key, sizeof(key), "<title>%s", title_prefix);
	p = strstr(doc, key);
	if (!p || !(p = strstr(p, "fill=\"")) || !(q = strchr(p + 6, '"')))
		return -1;
	snprintf(out, len, "%.*s", (int)(q - p - 6), p + 6);
	return 0;
}

/* main [0,100] calls a [10,40] (-> b [15,25]) and a [50,80], which recurses
 * into a [55,70] (-> b [60,65]). */
static const struct ev nested_start[] = {
	{ 'X', 2, "main", 0, 100 }, { 'X', 2, "a", 10, 40 }, { 'X', 2, "b", 15, 25 },
	{ 'X', 2, "a", 50, 80 },    { 'X', 2, "a", 55, 70 }, { 'X', 2, "b", 60, 65 },
};
/* The same, children first (as an exit-time flusher writes them). */
static const struct ev nested_end[] = {
	{ 'X', 2, "b", 15, 25 }, { 'X', 2, "a", 10, 40 }, { 'X', 2, "b", 60, 65 },
	{ 'X', 2, "a", 55, 70 }, { 'X', 2, "a", 50, 80 }, { 'X', 2, "main", 0, 100 },
};
/* The same with begin/end pairs. */
static const struct ev nested_be[] = {
	{ 'B', 2, "main", 0, 0 }, { 'B', 2, "a", 10, 0 },  { 'B', 2, "b", 15, 0 },
	{ 'E', 2, NULL, 25, 0 },  { 'E', 2, NULL, 40, 0 }, { 'B', 2, "a", 50, 0 },
	{ 'B', 2, "a", 55, 0 },	  { 'B', 2, "b", 60, 0 },  { 'E', 2, NULL, 65, 0 },
	{ 'E', 2, NULL, 70, 0 },  { 'E', 2, NULL, 80, 0 }, { 'E', 2, NULL, 100, 0 },
};
/* Begin/end around complete events in end order. */
static const struct ev nested_mixed[] = {
	{ 'B', 2, "main", 0, 0 }, { 'X', 2, "b", 15, 25 }, { 'X', 2, "a", 10, 40 },
	{ 'X', 2, "b", 60, 65 },  { 'X', 2, "a", 55, 70 }, { 'X', 2, "a", 50, 80 },
	{ 'E', 2, NULL, 100, 0 },
};

static const char nested_folded[] = "main 40\n"
				    "main;a 35\n"
				    "main;a;a 10\n"
				    "main;a;a;b 5\n"
				    "main;a;b 10\n";

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_nested(const char *what, const struct ev *evs, size_t n, uint64_t end_ordered)
{
	struct archive a = build(evs, n, 0, NULL, NULL);
	struct flame *f = load(a, FLAME_BY_ALL);
	const char *path_aa[] = { "main", "a", "a" };
	const struct flame_node *nd;
	char *s;

	if (!f) {
		skip(4, "load failed");
		free(a.data);
		return;
	}
	s = folded(f);
	ASSERT_STR_EQ(s, nested_folded, "%s: folded stacks", what);
	free(s);
	nd = flame_lookup(f, path_aa, 3);
	ok(nd && nd->total_ns == 15 && nd->self_ns == 10 && nd->calls == 1,
	   "%s: main;a;a: total 15, self 10, 1 call", what);
	ASSERT_EQ_U64(flame_node(f, 0)->total_ns, 100, "%s: root total is main's", what);
	ASSERT_EQ_U64(flame_end_ordered_threads(f), end_ordered, "%s: end-ordered threads", what);
	flame_free(f);
	free(a.data);
}

/* Thread 2 in start order, thread 3 in end order, both in process "app". */
static const struct ev two_threads[] = {
	{ 'X', 3, "c", 10, 30 },   { 'X', 2, "main", 0, 100 }, { 'X', 2, "c", 20, 60 },
	{ 'X', 3, "main", 0, 50 }, { 'X', 2, "d", 70, 75 },
};

static void test_threads(void)
{
	static const char *const tnames[] = { "3", "worker", NULL };
	struct archive a = build(two_threads, N(two_threads), 0, "app", tnames);
	struct flame *f;
	char *s;

	f = load(a, FLAME_BY_ALL);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s, "main 85\nmain;c 60\nmain;d 5\n", "two threads merged (--by all)");
	ok(f && flame_end_ordered_threads(f) == 1, "one thread is end-ordered");
	free(s);
	flame_free(f);

	f = load(a, FLAME_BY_PROCESS);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s, "app [1];main 85\napp [1];main;c 60\napp [1];main;d 5\n",
		      "--by process: named process frame");
	free(s);
	flame_free(f);

	f = load(a, FLAME_BY_THREAD);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s,
		      "app [1];tid 2;main 55\napp [1];tid 2;main;c 40\napp [1];tid 2;main;d 5\n"
		      "app [1];worker [3];main 30\napp [1];worker [3];main;c 20\n",
		      "--by thread: named and unnamed threads");
	if (f) {
		const char *p[] = { "app [1]" };
		const struct flame_node *nd = flame_lookup(f, p, 1);
		ok(nd && nd->kind == FLAME_PROCESS && nd->total_ns == 150,
		   "process frame sums its threads");
	} else {
		skip(1, "load failed");
	}
	free(s);
	flame_free(f);
	free(a.data);
}

static void test_ticks(void)
{
	/* 1 tick = 1 us: everything is 1000 times the ns of nested_start. */
	struct archive a = build(nested_start, N(nested_start), 1000000, NULL, NULL);
	struct flame *f = load(a, FLAME_BY_ALL);
	char *s = f ? folded(f) : NULL;

	ASSERT_STR_EQ(s,
		      "main 40000\nmain;a 35000\nmain;a;a 10000\nmain;a;a;b 5000\nmain;a;b "
		      "10000\n",
		      "ticks converted to ns");
	free(s);
	flame_free(f);
	free(a.data);
}

static void test_svg(void)
{
	struct archive a = build(nested_end, N(nested_end), 0, NULL, NULL);
	struct flame *f = load(a, FLAME_BY_ALL);
	char *doc;

	if (!f) {
		skip(6, "load failed");
		free(a.data);
		return;
	}
	doc = svg(f, NULL);
	/* 1200 px wide with 10 px margins: 1180 px for 100 ns. */
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "all\n", "width") * 100), 118000,
		      "root spans the width");
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "main\n", "width") * 100), 118000,
		      "main is all of it");
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "a\ntotal 60 ns", "width") * 100), 70800,
		      "main;a: 60%% of the width");
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "b\ntotal 10 ns", "width") * 100), 11800,
		      "main;a;b: 10%%");
	/* Children are ordered by name: main;a;a (15 ns) first, then main;a;b. */
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "b\ntotal 10 ns", "x") * 100), 1000 + 17700,
		      "main;a;b comes after main;a;a (15 ns = 177 px)");
	ok(strstr(doc, "<title>a\ntotal 60 ns (60.00%)\nself 35 ns\ncalls 2</title>") != NULL,
	   "hover text: name, total, share, self, calls");
	free(doc);
	flame_free(f);
	free(a.data);
}

static void test_diff(void)
{
	static const struct ev base_evs[] = {
		{ 'X', 2, "main", 0, 103 },
		{ 'X', 2, "f", 0, 40 },
		{ 'X', 2, "g", 50, 90 },
		{ 'X', 2, "h", 96, 99 },
	};
	static const struct ev new_evs[] = {
		{ 'X', 2, "main", 0, 100 },
		{ 'X', 2, "f", 0, 60 },
		{ 'X', 2, "g", 60, 80 },
	};
	struct archive ab = build(base_evs, N(base_evs), 0, NULL, NULL);
	struct archive an = build(new_evs, N(new_evs), 0, NULL, NULL);
	struct flame *fb = load(ab, FLAME_BY_ALL), *fn = load(an, FLAME_BY_ALL);
	char fill[64] = "", *doc;

	if (!fb || !fn) {
		skip(6, "load failed");
		goto out;
	}
	doc = svg(fn, fb);
	frame_fill(doc, "f\n", fill, sizeof(fill));
	ASSERT_STR_EQ(fill, "rgb(255,128,128)", "f 50%% slower: half red");
	frame_fill(doc, "g\n", fill, sizeof(fill));
	ASSERT_STR_EQ(fill, "rgb(128,128,255)", "g 50%% faster: half blue");
	frame_fill(doc, "main\n", fill, sizeof(fill));
	ASSERT_STR_EQ(fill, "rgb(255,255,255)", "main's self time unchanged: white");
	ASSERT_EQ_I64((int64_t)(frame_attr(doc, "f\n", "width") * 100), 70800,
		      "frames sized by NEW (f: 60 of 100 ns)");
	ok(strstr(doc, "self: base 40 ns, new 60 ns (+20 ns, +50.0%)") != NULL,
	   "hover shows both times and the change");
	ok(strstr(doc, "<title>all\ntotal: base 103 ns, new 100 ns (-3 ns, -2.9%)\n"
		       "only in base: 1 paths, 3 ns</title>") != NULL,
	   "the root tells what only BASE had (h)");
	free(doc);
out:
	flame_free(fb);
	flame_free(fn);
	free(ab.data);
	free(an.data);
}

/* Names that would break the outputs: ';' (the folded separator), XML
 * specials, invalid UTF-8, a control character. */
static void test_names(void)
{
	static const struct ev evs[] = {
		{ 'X', 2, "<&>", 0, 20 },
		{ 'X', 2, "bad\xffname\n", 0, 10 },
		{ 'X', 2, "x;y", 0, 5 },
	};
	struct archive a = build(evs, N(evs), 0, NULL, NULL);
	struct tool_input in = { .mem = a.data, .len = a.len };
	struct flame *f = load(a, FLAME_BY_ALL);
	char *s = f ? folded(f) : NULL, *doc, *buf = NULL, err[256];
	size_t len = 0;
	FILE *m;

	ASSERT_STR_EQ(s, "<&> 10\n<&>;bad?name? 5\n<&>;bad?name?;x:y 5\n",
		      "folded: ';' -> ':', bad bytes and controls -> '?'");
	free(s);
	doc = f ? svg(f, NULL) : NULL;
	ok(doc && strstr(doc, "<title>&lt;&amp;&gt;\n") && strstr(doc, "<title>x;y\n"),
	   "svg: names escaped for XML");
	free(doc);
	flame_free(f);

	m = open_memstream(&buf, &len);
	ok(export_chrome(&in, m, true, NULL, err, sizeof(err)) == 0, "export_chrome");
	fclose(m);
	ok(buf && strstr(buf, "\"name\":\"bad\\ufffdname\\u000a\"") &&
	       strstr(buf, "\"name\":\"<&>\""),
	   "json: invalid UTF-8 as U+FFFD, controls escaped");
	free(buf);
	free(a.data);
}

static void test_bad_input(void)
{
	struct archive a = build(nested_start, N(nested_start), 0, NULL, NULL);
	struct tool_input in = { .mem = "hello, world, not FXT", .len = 21 };
	struct flame *f;
	char err[256] = "";
	int rc;

	flame_new(&f, FLAME_BY_ALL);
	rc = flame_load(f, &in, err, sizeof(err));
	ok(rc == -EINVAL && strncmp(err, "not an FXT archive", 18) == 0, "garbage: %s", err);
	flame_free(f);

	in.mem = "";
	in.len = 0;
	flame_new(&f, FLAME_BY_ALL);
	rc = flame_load(f, &in, err, sizeof(err));
	ok(rc == -ENODATA && strcmp(err, "empty file, not an FXT archive") == 0, "empty: %s", err);
	flame_free(f);

	in.mem = a.data;
	in.len = a.len - 4;
	flame_new(&f, FLAME_BY_ALL);
	rc = flame_load(f, &in, err, sizeof(err));
	ok(rc == -EINVAL && strstr(err, " at byte ") != NULL, "truncated: %s", err);
	flame_free(f);

	in.mem = NULL;
	in.path = "/nonexistent/archive.fxt";
	flame_new(&f, FLAME_BY_ALL);
	rc = flame_load(f, &in, err, sizeof(err));
	ok(rc == -ENOENT && strcmp(err, strerror(ENOENT)) == 0, "missing: %s", err);
	flame_free(f);
	free(a.data);
}

/* Every kind of record the export handles, in one archive. */
static void test_chrome(void)
{
	struct fxt_writer *w;
	struct fxt_event e = { 0 };
	struct fxt_arg args[3];
	struct tool_input in = { 0 };
	struct export_stats st;
	const void *data;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *m;
	int rc = 0;
	static const enum fxt_event_type types[] = {
		FXT_EVENT_DURATION_COMPLETE, FXT_EVENT_DURATION_BEGIN, FXT_EVENT_DURATION_END,
		FXT_EVENT_INSTANT,	     FXT_EVENT_COUNTER,	       FXT_EVENT_ASYNC_BEGIN,
		FXT_EVENT_ASYNC_INSTANT,     FXT_EVENT_ASYNC_END,      FXT_EVENT_FLOW_BEGIN,
		FXT_EVENT_FLOW_STEP,	     FXT_EVENT_FLOW_END,
	};

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	rc |= fxt_writer_magic(w);
	rc |= fxt_writer_process_name(w, PID, "app \"one\"");
	rc |= fxt_writer_thread_name(w, PID, 2, "main-thread");
	args[0] = (struct fxt_arg){ .type = FXT_ARG_INT32, .name = fxt_writer_cstring(w, "n") };
	args[0].v.i32 = -5;
	args[1] = (struct fxt_arg){ .type = FXT_ARG_STRING, .name = fxt_writer_cstring(w, "s") };
	args[1].v.str = fxt_writer_cstring(w, "tab\there");
	args[2] = (struct fxt_arg){ .type = FXT_ARG_DOUBLE, .name = fxt_writer_cstring(w, "d") };
	args[2].v.f64 = 0.5;
	for (size_t i = 0; i < N(types); i++) {
		e.type = types[i];
		e.ts = 1000 + i * 1001;
		e.extra = types[i] == FXT_EVENT_DURATION_COMPLETE ? 2234 : 7;
		e.thread = fxt_writer_thread(w, PID, 2);
		e.category = fxt_writer_cstring(w, "cat");
		e.name = fxt_writer_cstring(w, "ev");
		e.args = i == 0 ? args : NULL;
		e.nargs = i == 0 ? 3 : 0;
		rc |= fxt_writer_event(w, &e);
	}
	rc |= fxt_writer_log(w, 99000, fxt_writer_thread(w, PID, 2), "hello \"log\"", 11);
	rc |= fxt_writer_flush(w);
	if (rc)
		bail_out("writing the export archive");
	data = fxt_writer_mem_data(w, &in.len);
	in.mem = data;

	m = open_memstream(&buf, &len);
	rc = export_chrome(&in, m, true, &st, err, sizeof(err));
	fclose(m);
	ASSERT_EQ_I64(rc, 0, "export_chrome");
	ok(st.slices == 3 && st.instants == 1 && st.counters == 1 && st.async == 3 &&
	       st.flows == 3 && st.logs == 1 && st.processes == 1 && st.threads == 1,
	   "counts per kind");
	ok(buf &&
	       strstr(buf, "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"name\":\"ev\",\"cat\":\"cat\","
			   "\"ts\":1.000,\"dur\":1.234,\"args\":{\"n\":-5,\"s\":\"tab\\u0009here\","
			   "\"d\":0.5}}"),
	   "complete event: us with ns decimals, args");
	ok(buf && strstr(buf, "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
			      "\"args\":{\"name\":\"app \\\"one\\\"\"}}"),
	   "process name, escaped");
	ok(buf && strstr(buf, "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\","
			      "\"args\":{\"name\":\"main-thread\"}}"),
	   "thread name under its process");
	ok(buf && strstr(buf, "\"ph\":\"f\",\"pid\":1,\"tid\":2,\"name\":\"ev\",\"cat\":\"cat\","
			      "\"ts\":11.010,\"bp\":\"e\",\"id\":\"0x7\"}"),
	   "flow end binds to its enclosing slice");
	ok(buf && strstr(buf, "\"name\":\"log\",\"cat\":\"log\",\"s\":\"t\",\"ts\":99.000,"
			      "\"args\":{\"message\":\"hello \\\"log\\\"\"}}"),
	   "log record as an instant event");
	free(buf);
	fxt_writer_free(w);
}

/* DEEP nested slices of "dive" on one thread, slice k (depth k) spanning
 * [k, 2 * DEEP - k], so every slice has 2 ns of self time; parents first,
 * or (end_order) children first. */
#define DEEP 100000

static struct archive build_deep(bool end_order)
{
	struct ev *evs = malloc(DEEP * sizeof(*evs));
	struct archive a;

	if (!evs)
		bail_out("malloc");
	for (size_t k = 0; k < DEEP; k++)
		evs[end_order ? DEEP - 1 - k : k] = (struct ev){ 'X', 2, "dive", k, 2 * DEEP - k };
	a = build(evs, DEEP, 0, NULL, NULL);
	free(evs);
	return a;
}

static struct flame *load_limited(struct archive a, unsigned max_depth, bool merge)
{
	struct tool_input in = { .mem = a.data, .len = a.len };
	struct flame *f;
	char err[256];

	if (flame_new(&f, FLAME_BY_ALL) < 0)
		bail_out("flame_new");
	if (flame_set_limits(f, max_depth, merge) < 0 || flame_load(f, &in, err, sizeof(err)) < 0) {
		flame_free(f);
		return NULL;
	}
	return f;
}

/* A 100,000-deep recursion: bounded by the depth limit (the default) to
 * 1024 frames and a marker, or to one frame when merging recursion. */
static void test_deep(const char *what, bool end_order)
{
	struct archive a = build_deep(end_order);
	const uint64_t hidden = DEEP - FLAME_DEFAULT_MAX_DEPTH;
	const struct flame_node *nd;
	struct flame *f;
	size_t lines = 0;
	char *s, *t;

	f = load(a, FLAME_BY_ALL);
	ok(f && flame_nnodes(f) == FLAME_DEFAULT_MAX_DEPTH + 2,
	   "%s: default limit: root, 1024 frames and a marker", what);
	nd = f ? flame_node(f, flame_nnodes(f) - 1) : NULL;
	ok(nd && nd->depth == FLAME_DEFAULT_MAX_DEPTH + 1 && nd->calls == hidden &&
	       nd->total_ns == 2 * (DEEP - FLAME_DEFAULT_MAX_DEPTH) && nd->self_ns == 2 * hidden,
	   "%s: the marker holds the %" PRIu64 " deeper slices", what, hidden);
	s = f ? folded(f) : NULL;
	for (t = s; t && *t; t++)
		lines += *t == '\n';
	ok(lines == FLAME_DEFAULT_MAX_DEPTH + 1, "%s: %zu folded lines", what, lines);
	ok(s && strstr(s, ";dive;[deeper frames: 98976] 197952\n"), "%s: marker line", what);
	free(s);
	s = f ? svg(f, NULL) : NULL;
	ok(s && strlen(s) < 1024 * 1024 && strstr(s, "<title>[deeper frames: 98976]\n"),
	   "%s: small SVG (%zu bytes) with the marker", what, s ? strlen(s) : 0);
	free(s);
	flame_free(f);

	f = load_limited(a, 0, true);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s, "dive 200000\n", "%s: merged recursion is one frame", what);
	nd = f ? flame_node(f, 1) : NULL;
	ok(f && flame_nnodes(f) == 2 && nd->calls == DEEP && nd->total_ns == 2 * DEEP,
	   "%s: merged: every call, the outermost's total", what);
	free(s);
	flame_free(f);
	free(a.data);
}

/* Mutual recursion is not merged, the depth limit still bounds it; the
 * two bounds together: a;b;a;b... limited to 3 frames. */
static const struct ev mutual[] = {
	{ 'X', 2, "a", 0, 100 }, { 'X', 2, "b", 10, 90 }, { 'X', 2, "b", 15, 85 },
	{ 'X', 2, "a", 20, 80 }, { 'X', 2, "b", 30, 70 }, { 'X', 2, "a", 40, 60 },
};

static void test_limits(void)
{
	struct archive a = build(mutual, N(mutual), 0, NULL, NULL);
	struct flame *f;
	char *s;

	f = load_limited(a, 3, false);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s, "a 20\na;b 10\na;b;b 10\na;b;b;[deeper frames: 3] 60\n",
		      "depth limit 3: a marker for the 3 deeper slices");
	free(s);
	flame_free(f);
	f = load_limited(a, 3, true);
	s = f ? folded(f) : NULL;
	ASSERT_STR_EQ(s, "a 20\na;b 20\na;b;a 20\na;b;a;[deeper frames: 2] 40\n",
		      "depth limit 3 and merging: b;b is one frame");
	free(s);
	flame_free(f);
	ok(flame_new(&f, FLAME_BY_ALL) == 0 && flame_set_limits(f, 0, false) == 0,
	   "limits set before loading");
	flame_free(f);
	free(a.data);
}

int main(void)
{
	plan(49 + 14 + 3);
	test_nested("complete, start order", nested_start, N(nested_start), 0);
	test_nested("complete, end order", nested_end, N(nested_end), 1);
	test_nested("begin/end", nested_be, N(nested_be), 0);
	test_nested("begin/end around end order", nested_mixed, N(nested_mixed), 1);
	test_threads();
	test_ticks();
	test_svg();
	test_diff();
	test_names();
	test_bad_input();
	test_chrome();
	test_deep("complete, start order", false);
	test_deep("complete, end order", true);
	test_limits();
	return exit_status();
}
