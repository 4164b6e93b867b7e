/* Unit tests of tools/profile/profile.c: archives built with the writer, with
 * numbers worked out by hand.  The cases of one thread's events and the
 * rows they give are a table (row_cases), each read twice (record by
 * record, and by profile_load(): the lean stack); those that need more
 * (processes, string refs, samples, drops, --subtract-overhead...) are
 * code.  Past 800 lines on purpose: one engine's cases, which share the
 * archive builders and row checks above; split, each file would carry
 * its own copy of them. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/format.h>
#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/unit/raw_test_string.h"
#include "tests/lib/tap.h"
#include "tools/profile/profile.h"
#include "tools/profile/tickconv.h"

/* ------------------------------------------------------------ building */

static struct fxt_writer *w;

static void start(uint64_t ticks_per_second)
{
	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, ticks_per_second);
}

static void event(enum fxt_event_type type, uint64_t pid, uint64_t tid, const char *cat,
		  const char *name, uint64_t ts, uint64_t extra)
{
	struct fxt_event ev = { 0 };

	ev.type = type;
	ev.ts = ts;
	ev.thread = fxt_writer_thread(w, pid, tid);
	ev.category = fxt_writer_cstring(w, cat);
	ev.name = fxt_writer_cstring(w, name);
	ev.extra = extra;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

static void B(uint64_t tid, const char *name, uint64_t ts)
{
	event(FXT_EVENT_DURATION_BEGIN, 1, tid, "function", name, ts, 0);
}

static void E(uint64_t tid, const char *name, uint64_t ts)
{
	event(FXT_EVENT_DURATION_END, 1, tid, "function", name, ts, 0);
}

static void X(uint64_t tid, const char *name, uint64_t ts, uint64_t end)
{
	event(FXT_EVENT_DURATION_COMPLETE, 1, tid, "function", name, ts, end);
}

/* Reads the archive built since start() into a new profile. */
static struct profile *finish_opts(const struct profile_opts *o)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	struct profile *p;
	const void *data;
	size_t len;
	int rc;

	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	data = fxt_writer_mem_data(w, &len);
	if (profile_new(&p, o) < 0 || fxt_reader_open_mem(&r, data, len, 0) < 0)
		bail_out("profile_new / fxt_reader_open_mem");
	while ((rc = fxt_reader_next(r, &rec)) > 0)
		if (profile_add_record(p, r, &rec) < 0)
			bail_out("profile_add_record");
	if (rc < 0)
		bail_out(fxt_reader_error(r, NULL));
	if (profile_finish(p) < 0)
		bail_out("profile_finish");
	fxt_reader_free(r);
	fxt_writer_free(w);
	w = NULL;
	return p;
}

static struct profile *finish(enum profile_by by, profile_slice_fn fn, void *ctx)
{
	struct profile_opts o = { by, fn, ctx };

	return finish_opts(&o);
}

/* The archive built since start(), saved to a file (before finish()),
 * and read from it by profile_load() into a new profile: with two CPUs or
 * more on a second thread, start-ordered complete events on the engine's
 * lean stack when no option asks for more (profile.c), which must give
 * what profile_add_record() gives. */
static char saved[64];

static void save(void)
{
	const void *data;
	size_t len;
	int fd;

	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	data = fxt_writer_mem_data(w, &len);
	snprintf(saved, sizeof(saved), "/tmp/test_profile.XXXXXX");
	fd = mkstemp(saved);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		bail_out("saving the archive");
	close(fd);
}

static struct profile *load_saved(enum profile_by by)
{
	struct profile_opts o = { .by = by };
	struct profile *p;
	char err[256];

	if (profile_new(&p, &o) < 0)
		bail_out("profile_new");
	if (profile_load(p, saved, err, sizeof(err)) < 0)
		bail_out(err);
	unlink(saved);
	return p;
}

/* ------------------------------------------------------------ checking */

/* calls total self sum min max open of one row, as one line. */
static void check_row(const struct profile *p, const char *name, uint64_t pid, uint64_t tid,
		      const char *want, const char *what)
{
	const struct profile_row *r = profile_find(p, NULL, name, pid, tid);
	char got[256];

	if (!r) {
		ok(0, "%s: %s present", what, name);
		return;
	}
	snprintf(got, sizeof(got),
		 "calls=%" PRIu64 " total=%" PRIu64 " self=%" PRIu64 " sum=%" PRIu64 " min=%" PRIu64
		 " max=%" PRIu64 " open=%" PRIu64,
		 r->calls, r->total_ns, r->self_ns, r->sum_ns, r->min_ns, r->max_ns, r->open);
	ASSERT_STR_EQ(got, want, "%s: %s", what, name);
}

/* One event of a case: B, E, X (complete: `end`) of category "function"
 * on pid 1, or I, an instant "late" of category "mark". */
struct ev {
	enum fxt_event_type type;
	uint64_t tid;
	const char *name;
	uint64_t ts, end;
};

/* One row's expected numbers (check_row()). */
struct row {
	const char *name, *want;
};

/* An archive of one thread's events, profiled by function, and the
 * rows it must give. */
struct row_case {
	const char *what;
	uint64_t tps;
	struct ev ev[16];
	struct row rows[7];
	size_t nrows;			 /* > 0: the profile has exactly that many rows */
	void (*more)(struct profile *p); /* further checks, after the rows' */
	uint64_t end_ns;		 /* > 0: the trace ends there */
};

static void order_switch_flags(struct profile *p)
{
	const struct profile_anomalies *a = profile_anomalies(p);

	ASSERT_EQ_U64(a->end_ordered, 1, "order switch: thread flagged end-ordered");
	ASSERT_EQ_U64(a->overlaps, 0, "order switch: no overlaps");
}

static void unmatched_end(struct profile *p)
{
	ASSERT_EQ_U64(profile_anomalies(p)->unmatched_ends, 1, "an end without a begin is counted");
}

/* The cases, a few events a line (clang-format would put one a line). */
/* clang-format off */
#define Bv(tid, name, ts)      { FXT_EVENT_DURATION_BEGIN, tid, name, ts, 0 }
#define Ev(tid, name, ts)      { FXT_EVENT_DURATION_END, tid, name, ts, 0 }
#define Xv(tid, name, ts, end) { FXT_EVENT_DURATION_COMPLETE, tid, name, ts, end }
#define Iv(tid, ts)            { FXT_EVENT_INSTANT, tid, "late", ts, 0 }

#define MAIN_FOO_BAR                                                              \
	{ { "main", "calls=1 total=100 self=60 sum=100 min=100 max=100 open=0" }, \
	  { "foo", "calls=1 total=40 self=30 sum=40 min=40 max=40 open=0" },      \
	  { "bar", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" } }, 3
#define SIBLINGS                                                                       \
	{ { "main", "calls=1 total=1000 self=580 sum=1000 min=1000 max=1000 open=0" }, \
	  { "f", "calls=3 total=170 self=170 sum=170 min=20 max=100 open=0" },         \
	  { "g", "calls=1 total=300 self=250 sum=300 min=300 max=300 open=0" } }, 0
#define RECURSION                                                             \
	{ { "fact", "calls=3 total=50 self=50 sum=90 min=10 max=50 open=0" }, \
	  { "a", "calls=2 total=100 self=80 sum=160 min=60 max=100 open=0" }, \
	  { "b", "calls=1 total=80 self=20 sum=80 min=80 max=80 open=0" } }, 0

static const struct row_case row_cases[] = {
	/* main [0, 100] > foo [10, 50] > bar [20, 30], written three ways. */
	{ "begin/end", 1000000000,
	  { Bv(2, "main", 0), Bv(2, "foo", 10), Bv(2, "bar", 20),
	    Ev(2, "bar", 30), Ev(2, "foo", 50), Ev(2, "main", 100) },
	  MAIN_FOO_BAR, NULL },
	{ "complete, start order", 1000000000,
	  { Xv(2, "main", 0, 100), Xv(2, "foo", 10, 50), Xv(2, "bar", 20, 30) },
	  MAIN_FOO_BAR, NULL },
	{ "complete, end order", 1000000000,
	  { Xv(2, "bar", 20, 30), Xv(2, "foo", 10, 50), Xv(2, "main", 0, 100) },
	  MAIN_FOO_BAR, NULL },
	/* Siblings and repeated calls, in both orders of complete events:
	 * main [0, 1000] calls f [100, 200], g [300, 600] > f [400, 450],
	 * f [700, 720]. */
	{ "siblings, start order", 1000000000,
	  { Xv(2, "main", 0, 1000), Xv(2, "f", 100, 200), Xv(2, "g", 300, 600),
	    Xv(2, "f", 400, 450), Xv(2, "f", 700, 720) },
	  SIBLINGS, NULL },
	{ "siblings, end order", 1000000000,
	  { Xv(2, "f", 100, 200), Xv(2, "f", 400, 450), Xv(2, "g", 300, 600),
	    Xv(2, "f", 700, 720), Xv(2, "main", 0, 1000) },
	  SIBLINGS, NULL },
	/* fact [0, 50] > fact [10, 40] > fact [20, 30]: inclusive time is
	 * the outermost frame's only; a > b > a counts a once as well. */
	{ "recursion, begin/end", 1000000000,
	  { Bv(2, "fact", 0), Bv(2, "fact", 10), Bv(2, "fact", 20),
	    Ev(2, "fact", 30), Ev(2, "fact", 40), Ev(2, "fact", 50),
	    Bv(2, "a", 100), Bv(2, "b", 110), Bv(2, "a", 120),
	    Ev(2, "a", 180), Ev(2, "b", 190), Ev(2, "a", 200) },
	  RECURSION, NULL },
	{ "recursion, start order", 1000000000,
	  { Xv(2, "fact", 0, 50), Xv(2, "fact", 10, 40), Xv(2, "fact", 20, 30),
	    Xv(2, "a", 100, 200), Xv(2, "b", 110, 190), Xv(2, "a", 120, 180) },
	  RECURSION, NULL },
	{ "recursion, end order", 1000000000,
	  { Xv(2, "fact", 20, 30), Xv(2, "fact", 10, 40), Xv(2, "fact", 0, 50),
	    Xv(2, "a", 120, 180), Xv(2, "b", 110, 190), Xv(2, "a", 100, 200) },
	  RECURSION, NULL },
	/* Frames never closed count to the trace's last timestamp (an
	 * instant on another thread at 100) and are flagged open. */
	{ "open frames", 1000000000,
	  { Bv(2, "main", 0), Bv(2, "foo", 10), Xv(2, "bar", 20, 30), Iv(3, 100) },
	  { { "main", "calls=1 total=100 self=10 sum=100 min=100 max=100 open=1" },
	    { "foo", "calls=1 total=90 self=80 sum=90 min=90 max=90 open=1" },
	    { "bar", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" } }, 0,
	  NULL, 100 },
	/* 1 MHz ticks: 1 tick = 1000 ns. */
	{ "ticks to ns", 1000000,
	  { Xv(2, "slow", 1, 4), Xv(2, "inner", 2, 3) },
	  { { "slow", "calls=1 total=3000 self=2000 sum=3000 min=3000 max=3000 open=0" } }, 0,
	  NULL },
	/* Two threads open frames of one function.  Thread 3 counts its
	 * frames on its own while thread 2 holds the row, and must go on
	 * doing so for a nested frame after thread 2 lets go: the inner one
	 * is not outermost.  Then the same in start-ordered complete
	 * events. */
	{ "shared rows", 1000000000,
	  { Bv(2, "f", 0), Bv(3, "f", 5), Ev(2, "f", 10), Bv(3, "f", 20), Ev(3, "f", 30),
	    Ev(3, "f", 40), Xv(2, "g", 50, 90), Xv(3, "g", 55, 95), Xv(2, "g", 60, 70),
	    Xv(3, "g", 75, 80) },
	  { { "f", "calls=3 total=45 self=45 sum=55 min=10 max=35 open=0" },
	    { "g", "calls=4 total=80 self=80 sum=95 min=5 max=40 open=0" } }, 0, NULL },
	/* Start order that turns into end order on a thread: a slice
	 * starting with the previous one but ending later is its parent,
	 * arriving late. */
	{ "order switch", 1000000000,
	  { Xv(2, "main", 0, 100), Xv(2, "a", 10, 20), Xv(2, "b", 10, 30), Xv(2, "c", 40, 50) },
	  { { "main", "calls=1 total=100 self=70 sum=100 min=100 max=100 open=0" },
	    { "a", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" },
	    { "b", "calls=1 total=20 self=10 sum=20 min=20 max=20 open=0" },
	    { "c", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" } }, 0,
	  order_switch_flags },
	/* Complete events in start order on the lean stack (profile_load()),
	 * moved onto the general one by a begin and end among them, and
	 * again on it above a complete frame of the general one. */
	{ "lean stack spilled", 1000000000,
	  { Xv(2, "main", 0, 100), Xv(2, "a", 10, 60), Xv(2, "b", 20, 30), Bv(2, "c", 35),
	    Ev(2, "c", 40), Xv(2, "d", 45, 50), Xv(2, "e", 70, 80) },
	  { { "main", "calls=1 total=100 self=40 sum=100 min=100 max=100 open=0" },
	    { "a", "calls=1 total=50 self=30 sum=50 min=50 max=50 open=0" },
	    { "b", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" },
	    { "c", "calls=1 total=5 self=5 sum=5 min=5 max=5 open=0" },
	    { "d", "calls=1 total=5 self=5 sum=5 min=5 max=5 open=0" },
	    { "e", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" } }, 6, NULL },
	/* Top-level complete slices: each settled by the general stack. */
	{ "top-level slices", 1000000000,
	  { Xv(2, "f", 0, 10), Xv(2, "g", 20, 30), Xv(2, "h", 22, 28), Xv(2, "f", 40, 50) },
	  { { "f", "calls=2 total=20 self=20 sum=20 min=10 max=10 open=0" },
	    { "g", "calls=1 total=10 self=4 sum=10 min=10 max=10 open=0" },
	    { "h", "calls=1 total=6 self=6 sum=6 min=6 max=6 open=0" } }, 3, NULL },
	/* Oddities are counted, not fatal. */
	{ "after an unmatched end", 1000000000,
	  { Ev(2, "nothing", 5), Bv(2, "f", 10), Ev(2, "f", 20) },
	  { { "f", "calls=1 total=10 self=10 sum=10 min=10 max=10 open=0" } }, 0, unmatched_end },
};
/* clang-format on */

static void row_case(const struct row_case *c)
{
	struct profile *p;

	start(c->tps);
	for (const struct ev *e = c->ev; e->name; e++)
		event(e->type, 1, e->tid, e->type == FXT_EVENT_INSTANT ? "mark" : "function",
		      e->name, e->ts, e->end);
	save();
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	/* The same archive read by profile_load(), the same rows. */
	for (int loaded = 0; loaded < 2; loaded++) {
		char what[128];

		snprintf(what, sizeof(what), "%s%s", c->what, loaded ? " (profile_load)" : "");
		if (loaded) {
			profile_free(p);
			p = load_saved(PROFILE_BY_FUNCTION);
		}
		for (const struct row *r = c->rows; r->name; r++)
			check_row(p, r->name, 0, 0, r->want, what);
		if (c->nrows)
			ASSERT_EQ_U64(profile_nrows(p), c->nrows, "%s: three rows", what);
		if (c->end_ns)
			ASSERT_EQ_U64(profile_end_ns(p), c->end_ns, "%s: trace end", what);
		if (c->more)
			c->more(p);
	}
	profile_free(p);
}

/* Two processes (providers), three threads; rows by function, process and
 * thread. */
static const struct {
	enum profile_by by;
	const char *name;
	uint64_t pid, tid;
	const char *want, *what;
} process_rows[] = {
	{ PROFILE_BY_FUNCTION, "work", 0, 0,
	  "calls=3 total=1140 self=820 sum=1140 min=40 max=1000 open=0", "by function" },
	{ PROFILE_BY_FUNCTION, "read", 0, 0,
	  "calls=2 total=320 self=320 sum=320 min=20 max=300 open=0", "by function" },
	{ PROFILE_BY_PROCESS, "work", 1, 0,
	  "calls=2 total=140 self=120 sum=140 min=40 max=100 open=0", "by process" },
	{ PROFILE_BY_PROCESS, "work", 2, 0,
	  "calls=1 total=1000 self=700 sum=1000 min=1000 max=1000 open=0", "by process" },
	{ PROFILE_BY_THREAD, "work", 1, 11,
	  "calls=1 total=100 self=80 sum=100 min=100 max=100 open=0", "by thread" },
	{ PROFILE_BY_THREAD, "work", 1, 12, "calls=1 total=40 self=40 sum=40 min=40 max=40 open=0",
	  "by thread" },
	{ PROFILE_BY_THREAD, "read", 2, 21,
	  "calls=1 total=300 self=300 sum=300 min=300 max=300 open=0", "by thread" },
};

static void processes(void)
{
	static const enum profile_by bys[] = { PROFILE_BY_FUNCTION, PROFILE_BY_PROCESS,
					       PROFILE_BY_THREAD };
	struct profile *p;

	for (int i = 0; i < 3; i++) {
		start(1000000000);
		event(FXT_EVENT_DURATION_COMPLETE, 1, 11, "function", "work", 0, 100);
		event(FXT_EVENT_DURATION_BEGIN, 1, 12, "function", "work", 5, 0);
		event(FXT_EVENT_DURATION_COMPLETE, 1, 11, "libc.io", "read", 10, 30);
		event(FXT_EVENT_DURATION_END, 1, 12, "function", "work", 45, 0);
		fxt_writer_provider(w, 2, "second");
		fxt_writer_initialization(w, 1000000000);
		event(FXT_EVENT_DURATION_COMPLETE, 2, 21, "function", "work", 0, 1000);
		event(FXT_EVENT_DURATION_COMPLETE, 2, 21, "libc.io", "read", 100, 400);
		p = finish(bys[i], NULL, NULL);
		for (size_t k = 0; k < sizeof(process_rows) / sizeof(process_rows[0]); k++)
			if (process_rows[k].by == bys[i])
				check_row(p, process_rows[k].name, process_rows[k].pid,
					  process_rows[k].tid, process_rows[k].want,
					  process_rows[k].what);
		if (bys[i] == PROFILE_BY_FUNCTION)
			ASSERT_STR_EQ(profile_find(p, NULL, "read", 0, 0)->category, "libc.io",
				      "libc slices keep their category");
		if (bys[i] == PROFILE_BY_THREAD)
			ASSERT_EQ_U64(profile_nrows(p), 5, "by thread: five rows");
		profile_free(p);
	}
}

/* Registers string `index` as s with a raw string record, so a test can
 * give an index new text (writers that evict do so). */
static void raw_string(uint16_t index, const char *s)
{
	raw_test_string(w, index, s);
}

/* A complete event naming its strings by raw refs. */
static void raw_X(struct fxt_sref cat, struct fxt_sref name, uint64_t ts, uint64_t end)
{
	struct fxt_event ev = { 0 };

	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.ts = ts;
	ev.thread = fxt_tref_inline(1, 2);
	ev.category = cat;
	ev.name = name;
	ev.extra = end;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

/* Rows are cached by string refs: the same ref must find a new row once
 * a string record gives the index new text, or in another provider's
 * section; inline names are never cached by ref. */
static void string_refs(void)
{
	struct fxt_sref cat = fxt_sref_index(5), name = fxt_sref_index(6);
	struct profile *p;

	start(1000000000);
	raw_string(5, "function");
	raw_string(6, "alpha");
	raw_X(cat, name, 0, 10);
	raw_X(cat, name, 10, 15);
	raw_string(6, "beta"); /* same index, shorter text, same address */
	raw_X(cat, name, 20, 50);
	fxt_writer_provider(w, 2, "second");
	fxt_writer_initialization(w, 1000000000);
	raw_string(5, "function");
	raw_string(6, "gamma");
	raw_X(cat, name, 60, 100);
	fxt_writer_provider_section(w, 1); /* back to alpha/beta's tables */
	raw_X(cat, name, 110, 120);
	raw_X(cat, fxt_sref_inline("inl1", 4), 130, 131);
	raw_X(cat, fxt_sref_inline("inl2", 4), 140, 142);
	raw_X(cat, fxt_sref_inline("inl1", 4), 150, 153);
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	check_row(p, "alpha", 0, 0, "calls=2 total=15 self=15 sum=15 min=5 max=10 open=0",
		  "string refs");
	check_row(p, "beta", 0, 0, "calls=2 total=40 self=40 sum=40 min=10 max=30 open=0",
		  "string refs");
	check_row(p, "gamma", 0, 0, "calls=1 total=40 self=40 sum=40 min=40 max=40 open=0",
		  "string refs");
	check_row(p, "inl1", 0, 0, "calls=2 total=4 self=4 sum=4 min=1 max=3 open=0",
		  "string refs");
	check_row(p, "inl2", 0, 0, "calls=1 total=2 self=2 sum=2 min=2 max=2 open=0",
		  "string refs");
	ASSERT_EQ_U64(profile_nrows(p), 5, "string refs: five rows");
	profile_free(p);
}

/* Ticks are converted without a division per event: the result must be
 * floor(ticks * 1e9 / tps) exactly, saturated, for any clock. */
static void ticks_exact(void)
{
	/* clang-format off */
	static const uint64_t rates[] = {
		2995000000, 3000000007, 2400000000, 1000000, 1000, 33, 999999999, 1000000001, 1,
		(UINT64_C(1) << 59) - 1, UINT64_C(1) << 60, UINT64_C(1) << 30, 2000000000,
		UINT64_MAX
	};
	static const uint64_t values[] = {
		0, 1, 2994999999, 2995000000, (UINT64_C(1) << 40) + 7, 123456789012345,
		4242424242424242, (UINT64_C(1) << 53) - 1, UINT64_C(1) << 53, UINT64_MAX / 3,
		UINT64_MAX
	};
	/* clang-format on */
	const size_t nfixed = sizeof(values) / sizeof(values[0]);
	uint64_t x = 88172645463325252u;

	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		int bad = 0;

		/* The fixed values, then pseudo-random ones of every magnitude. */
		for (size_t j = 0; j < nfixed + 48; j++) {
			uint64_t v = values[j < nfixed ? j : 0], want;
			unsigned __int128 q;
			struct profile *p;

			if (j >= nfixed) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v = x >> (x % 64);
			}
			q = (unsigned __int128)v * 1000000000 / rates[i];
			want = q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;

			start(rates[i]);
			event(FXT_EVENT_INSTANT, 1, 2, "mark", "t", v, 0);
			p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
			if (profile_start_ns(p) != want || profile_end_ns(p) != want) {
				diag("%" PRIu64 " ticks at %" PRIu64 "/s: %" PRIu64
				     " ns, want %" PRIu64,
				     v, rates[i], profile_start_ns(p), want);
				bad++;
			}
			profile_free(p);
		}
		ok(bad == 0, "ticks to ns exact at %" PRIu64 " ticks/s", rates[i]);
	}
}

/* tickconv_ns() against the 128-bit division at clocks faster than 1 GHz,
 * whose ticks it converts by a multiplication and a shift below a bound
 * (tickconv_fast()), slower ones and odd ones: at and around the bound and
 * at powers of 2, where a wrong reciprocal or bound shows, and at
 * pseudo-random ticks of every magnitude. */
static void ticks_fast(void)
{
	/* clang-format off */
	static const uint64_t rates[] = {
		2995000000, 3000000007, 2400000000, 1000000001, 4294967311u, 1999999999,
		3141592653, UINT64_C(1) << 31, UINT64_C(1) << 40, 10000000000, 24000000,
		1000000, 999999999, 33, UINT64_MAX, (UINT64_C(1) << 63) + 1
	};
	/* clang-format on */
	uint64_t x = 2463534242u;

	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct tickconv c;
		uint64_t bound, bad = 0, n = 0;

		tickconv_set(&c, rates[i]);
		bound = c.r ? ~c.rmask : 0;
		for (int j = 0; j < 20000; j++) {
			uint64_t v, got, want;
			unsigned __int128 q;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (j < 128)
				v = (UINT64_C(1) << (j / 2)) - (j & 1); /* 2^k, 2^k - 1 */
			else if (j < 256 && bound)
				v = bound - (uint64_t)(j - 128) * 7; /* below the bound */
			else if (j < 384 && bound)
				v = bound + 1 + (uint64_t)(j - 256); /* past it */
			else
				v = x >> (x % 64);
			q = (unsigned __int128)v * 1000000000 / rates[i];
			want = (uint64_t)q;
			if (q > UINT64_MAX || !tickconv_ns(&c, v, &got))
				continue;
			n++;
			if (got != want && bad++ < 3)
				diag("%" PRIu64 " ticks at %" PRIu64 "/s: %" PRIu64
				     " ns, want %" PRIu64,
				     v, rates[i], got, want);
		}
		ok(bad == 0 && n > 10000,
		   "tickconv exact at %" PRIu64 " ticks/s (%" PRIu64 " said)", rates[i], n);
	}
	/* TSC ticks take the short way up to days of ticks at least. */
	{
		struct tickconv c;

		tickconv_set(&c, 2995000000);
		ok(c.r && (c.rmask & (UINT64_C(2995000000) * 86400 * 30)) == 0,
		   "2.995 GHz ticks: the multiplication and shift for 30 days of ticks");
	}
}

/* Many siblings in end order: more than the run cap (16384) of DONE frames,
 * so they are merged, and the parent still gets exact numbers. */
static void many_siblings(void)
{
	const struct profile_anomalies *a;
	struct profile *p;
	uint64_t i, n = 20000;

	start(1000000000);
	for (i = 0; i < n; i++)
		X(2, "leaf", 10 + i * 10, 10 + i * 10 + 4);
	X(2, "main", 0, 10 + n * 10);
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	check_row(p, "main", 0, 0,
		  "calls=1 total=200010 self=120010 sum=200010 min=200010 max=200010 open=0",
		  "20000 siblings, end order");
	check_row(p, "leaf", 0, 0,
		  "calls=20000 total=80000 self=80000 sum=80000 min=4 max=4 open=0",
		  "20000 siblings, end order");
	a = profile_anomalies(p);
	ASSERT_EQ_U64(a->merged, 0, "no parent started inside merged siblings");
	ASSERT_EQ_U64(a->end_ordered, 1, "one thread in end order");
	profile_free(p);
}

/* Deep recursion (100000 frames) as begin/end: no C recursion, exact. */
static void deep(void)
{
	struct profile *p;
	uint64_t i, n = 100000;

	start(1000000000);
	for (i = 0; i < n; i++)
		B(2, "r", i);
	for (i = 0; i < n; i++)
		E(2, "r", n + i);
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	check_row(p, "r", 0, 0,
		  "calls=100000 total=199999 self=199999 sum=10000000000 min=1 max=199999 open=0",
		  "100000 deep recursion");
	profile_free(p);
	/* The same as start-ordered complete events, 10000 deep: the lean
	 * stack grows past its first room (profile_load()). */
	n = 10000;
	start(1000000000);
	for (i = 0; i < n; i++)
		X(2, "r", i, 2 * n - i);
	save();
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	check_row(p, "r", 0, 0,
		  "calls=10000 total=20000 self=20000 sum=100010000 min=2 max=20000 open=0",
		  "10000 deep recursion, complete events");
	profile_free(p);
	p = load_saved(PROFILE_BY_FUNCTION);
	check_row(p, "r", 0, 0,
		  "calls=10000 total=20000 self=20000 sum=100010000 min=2 max=20000 open=0",
		  "10000 deep recursion, complete events (profile_load)");
	profile_free(p);
}

/* The variance of per-call durations: exact (Welford), also for
 * durations far from 0, where sums of squares would cancel. */
static void variance(void)
{
	const struct profile_row *r;
	struct profile *p;
	uint64_t i;

	start(1000000000);
	/* 1 .. 3000 ns: variance n (n + 1) / 12 = 750250. */
	for (i = 0; i < 3000; i++)
		X(2, "f", i * 4000, i * 4000 + 1 + i);
	/* 10^9 + 0, 1, 2: variance 1. */
	for (i = 0; i < 3; i++)
		X(2, "g", 20000000 + i * 2000000000, 20000000 + i * 2000000000 + 1000000000 + i);
	X(2, "h", 10000000000, 10000000005);
	p = finish_opts(&(struct profile_opts){ .by = PROFILE_BY_FUNCTION, .variance = true });
	r = profile_find(p, "function", "f", 0, 0);
	ok(fabs(profile_row_var(r) - 750250) < 1e-6, "variance of 1 .. 3000 (%g)",
	   profile_row_var(r));
	r = profile_find(p, "function", "g", 0, 0);
	ok(fabs(profile_row_var(r) - 1) < 1e-6, "variance of 1e9 + 0..2 is 1 (%g)",
	   profile_row_var(r));
	r = profile_find(p, "function", "h", 0, 0);
	ok(profile_row_var(r) == 0, "one call: variance 0");
	profile_free(p);
}

struct seen {
	unsigned n;
	char paths[8][64];
};

static void on_slice(void *ctx, const struct profile_slice *s)
{
	struct seen *seen = ctx;
	char *out;
	unsigned i;

	if (seen->n >= 8)
		return;
	out = seen->paths[seen->n++];
	out[0] = 0;
	for (i = 0; i <= s->depth; i++)
		snprintf(out + strlen(out), 64 - strlen(out), "%s%u", i ? ";" : "", s->path[i]);
	snprintf(out + strlen(out), 64 - strlen(out), " self=%" PRIu64, s->self_ns);
}

static void callback(void)
{
	struct seen seen = { 0 };
	struct profile *p;

	start(1000000000);
	B(2, "main", 0);
	B(2, "foo", 10);
	X(2, "bar", 20, 30);
	E(2, "foo", 50);
	E(2, "main", 100);
	p = finish(PROFILE_BY_FUNCTION, on_slice, &seen);
	ASSERT_EQ_U64(seen.n, 3, "one callback per slice");
	ASSERT_STR_EQ(seen.paths[0], "0;1;2 self=10", "bar with its stack (row ids)");
	ASSERT_STR_EQ(seen.paths[1], "0;1 self=30", "foo");
	ASSERT_STR_EQ(seen.paths[2], "0 self=60", "main");
	profile_free(p);
}

/* struct profile_slice's same: each thread's last path kept as a
 * consumer keeps it (fxt-tree), the part said unchanged must be, and what
 * is left to compare must grow with the events, not with their depth
 * times their number. */
struct samecheck {
	uint32_t *last[2];
	size_t nlast[2];
	uint64_t slices, wrong, work, rows;
};

static void on_slice_same(void *ctx, const struct profile_slice *s)
{
	struct samecheck *c = ctx;
	unsigned k = s->tid == 3, lim = s->depth + 1, from;

	if (lim > c->nlast[k])
		lim = (unsigned)c->nlast[k];
	from = s->same < lim ? s->same : lim;
	for (unsigned i = 0; i < from; i++)
		if (c->last[k][i] != s->path[i]) {
			c->wrong++;
			break;
		}
	c->work += s->depth + 1 - from;
	c->rows += s->depth + 1;
	c->last[k] = realloc(c->last[k], (s->depth + 1) * sizeof(*s->path));
	if (!c->last[k])
		bail_out("realloc");
	memcpy(c->last[k], s->path, (s->depth + 1) * sizeof(*s->path));
	c->nlast[k] = s->depth + 1;
	c->slices++;
}

static void slice_same(void)
{
	const uint64_t n = 3000;
	struct profile_opts o = { .by = PROFILE_BY_FUNCTION, .on_slice = on_slice_same };
	struct samecheck c;
	struct profile *p;
	char err[256];

	for (int pass = 0; pass < 2; pass++) {
		memset(&c, 0, sizeof(c));
		o.ctx = &c;
		start(1000000000);
		/* tid 2: r in r ... n deep as begin/end events, a leaf x in
		 * each (start-ordered complete events: the lean stack when
		 * loaded), another after each return; tid 3, between them:
		 * complete events children first (end order), s in s. */
		for (uint64_t i = 0; i < n; i++) {
			B(2, "r", 10 * i);
			X(2, "x", 10 * i + 1, 10 * i + 2);
			X(3, "s", 100000 - 10 * i - 5, 100000 + 10 * i + 5);
		}
		for (uint64_t i = 0; i < n; i++) {
			X(2, "y", 10 * n + 10 * i + 1, 10 * n + 10 * i + 2);
			E(2, "r", 10 * n + 10 * i + 5);
		}
		if (pass == 0) {
			p = finish_opts(&o);
		} else {
			save();
			fxt_writer_free(w);
			w = NULL;
			if (profile_new(&p, &o) < 0)
				bail_out("profile_new");
			if (profile_load(p, saved, err, sizeof(err)) < 0)
				bail_out(err);
			unlink(saved);
		}
		ASSERT_EQ_U64(c.slices, 4 * n, "%s: every slice given",
			      pass ? "profile_load" : "profile_add_record");
		ASSERT_EQ_U64(c.wrong, 0, "%s: what same says unchanged is",
			      pass ? "profile_load" : "profile_add_record");
		ok(c.work <= 4 * c.slices,
		   "%s: %" PRIu64 " rows left to compare for %" PRIu64 " slices %u deep "
		   "(in their paths: %" PRIu64 ")",
		   pass ? "profile_load" : "profile_add_record", c.work, c.slices, (unsigned)n,
		   c.rows);
		profile_free(p);
		free(c.last[0]);
		free(c.last[1]);
	}
}

/* profile_load() on bad files: negative errno and a reason. */
static void bad_input(void)
{
	char dir[] = "/tmp/test_profile.XXXXXX", path[256], err[256];
	struct profile *p;
	const void *data;
	size_t len;
	int fd, rc;

	if (!mkdtemp(dir))
		bail_out("mkdtemp");

	profile_new(&p, NULL);
	snprintf(path, sizeof(path), "%s/missing.fxt", dir);
	rc = profile_load(p, path, err, sizeof(err));
	ASSERT_EQ_I64(rc, -ENOENT, "missing file: -ENOENT (%s)", err);
	rc = profile_load(p, dir, err, sizeof(err));
	ASSERT_EQ_I64(rc, -EISDIR, "directory: -EISDIR (%s)", err);
	profile_free(p);

	snprintf(path, sizeof(path), "%s/empty.fxt", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	close(fd);
	profile_new(&p, NULL);
	rc = profile_load(p, path, err, sizeof(err));
	ok(rc < 0 && strstr(err, "empty"), "empty file fails: %s", err);
	profile_free(p);

	fd = open(path, O_WRONLY | O_TRUNC);
	if (write(fd, "#!/bin/sh\necho not a trace at all\n", 34) != 34)
		bail_out("write");
	close(fd);
	profile_new(&p, NULL);
	rc = profile_load(p, path, err, sizeof(err));
	ok(rc < 0 && strstr(err, "not an FXT archive"), "text file fails: %s", err);
	profile_free(p);

	/* A good archive cut in the middle of its last record. */
	start(1000000000);
	X(2, "main", 0, 100);
	X(2, "foo", 10, 50);
	fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (write(fd, data, len - 4) != (ssize_t)(len - 4))
		bail_out("write");
	close(fd);
	fxt_writer_free(w);
	profile_new(&p, NULL);
	rc = profile_load(p, path, err, sizeof(err));
	ok(rc < 0 && strstr(err, "byte"), "truncated archive fails with an offset: %s", err);
	profile_free(p);

	unlink(path);
	rmdir(dir);
}

static void sorting(void)
{
	const struct profile_row *rows[3];
	enum profile_sort key;
	struct profile *p;

	start(1000000000);
	X(2, "main", 0, 100);
	X(2, "b", 10, 20);
	X(2, "b", 30, 40);
	X(2, "a", 50, 90);
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	for (size_t i = 0; i < 3; i++)
		rows[i] = profile_row(p, i);
	ok(profile_sort_parse("calls", &key) == 0 && key == PROFILE_SORT_CALLS, "parse calls");
	ok(profile_sort_parse("bogus", &key) == -EINVAL, "parse rejects bogus");
	profile_sort_rows(rows, 3, PROFILE_SORT_SELF);
	ASSERT_STR_EQ(rows[0]->name, "a", "by self: a (40) first, ties by name");
	ASSERT_STR_EQ(rows[1]->name, "main", "by self: then main (40)");
	ASSERT_STR_EQ(rows[2]->name, "b", "by self: b (20) last");
	profile_sort_rows(rows, 3, PROFILE_SORT_CALLS);
	ASSERT_STR_EQ(rows[0]->name, "b", "by calls: b first");
	profile_sort_rows(rows, 3, PROFILE_SORT_NAME);
	ASSERT_STR_EQ(rows[0]->name, "a", "by name: a first");
	profile_free(p);
}

/* A stack-sample track, as the agent writes it: thread 5 "main" and its
 * samples on koid 5 | 2^30 named "main (samples)".  Grouped by thread, the
 * sample rows get the real tid and the track's name; the two threads'
 * drops add up.  Whatever the grouping, a sampled frame of "work" is a
 * row of its own, never a call of work: by function, work has its 1
 * call of 100 and apart its sampled row of 90. */
static void samples_and_drops(void)
{
	const uint64_t track = 5 | FXT_SAMPLE_KOID_BIT;
	const struct profile_row *r;
	struct profile *p;
	uint64_t nthr = 0;
	size_t i, nsamp = 0, nreal = 0;

	start(1000000000);
	fxt_writer_thread_name(w, 1, 5, "main");
	fxt_writer_thread_name(w, 1, track, "main (samples)");
	X(5, "work", 0, 100);
	event(FXT_EVENT_DURATION_COMPLETE, 1, track, "sample", "work", 0, 90);
	event(FXT_EVENT_INSTANT, 1, 5, "fxt", "fxt: 7 records dropped", 100, 0);
	event(FXT_EVENT_INSTANT, 1, 6, "fxt", "fxt: 3 records dropped", 100, 0);
	p = finish(PROFILE_BY_THREAD, NULL, NULL);
	for (i = 0; i < profile_nrows(p); i++) {
		r = profile_row(p, i);
		if (r->tid != 5)
			continue;
		if (r->track && strcmp(r->track, "main (samples)") == 0 && r->total_ns == 90)
			nsamp++;
		else if (!r->track && r->total_ns == 100)
			nreal++;
	}
	ok(nsamp == 1 && nreal == 1, "sample track: tid 5, named \"main (samples)\"");
	ok(!profile_find(p, NULL, "work", 1, track), "no row on the made-up tid");
	ok(profile_dropped(p, &nthr) == 10 && nthr == 2, "drops: 10 on 2 threads");
	profile_free(p);

	for (int by = PROFILE_BY_FUNCTION; by <= PROFILE_BY_PROCESS; by++) {
		const char *how = by == PROFILE_BY_FUNCTION ? "function" : "process";
		uint64_t ntracks = 0;

		start(1000000000);
		fxt_writer_thread_name(w, 1, 5, "main");
		fxt_writer_thread_name(w, 1, track, "main (samples)");
		X(5, "work", 0, 100);
		X(7, "work", 0, 50);
		event(FXT_EVENT_DURATION_COMPLETE, 1, track, "function", "work", 0, 90);
		p = finish((enum profile_by)by, NULL, NULL);
		nsamp = nreal = 0;
		for (i = 0; i < profile_nrows(p); i++) {
			r = profile_row(p, i);
			if (r->sampled && r->calls == 1 && r->total_ns == 90 && r->tid == 0)
				nsamp++;
			else if (!r->sampled && r->calls == 2 && r->total_ns == 150)
				nreal++;
		}
		ok(nsamp == 1 && nreal == 1 && profile_nrows(p) == 2,
		   "by %s: work's 2 calls, its sampled frame apart", how);
		ok(profile_nslices(p) == 2 && profile_nsampled(p, &ntracks) == 1 && ntracks == 1,
		   "by %s: 2 slices of calls, 1 sampled on 1 track", how);
		profile_free(p);
	}
}

/* The archive's measure of the hooks' cost, as the converter writes it:
 * on pid 1's main thread, before its calls. */
static void hook_cost(double pair, double inside)
{
	struct fxt_arg a[2];
	struct fxt_event ev = { 0 };

	memset(a, 0, sizeof(a));
	a[0].type = a[1].type = FXT_ARG_DOUBLE;
	a[0].name = fxt_writer_cstring(w, FXT_HOOK_ARG_PAIR);
	a[0].v.f64 = pair;
	a[1].name = fxt_writer_cstring(w, FXT_HOOK_ARG_INSIDE);
	a[1].v.f64 = inside;
	ev.type = FXT_EVENT_INSTANT;
	ev.thread = fxt_writer_thread(w, 1, 1);
	ev.category = fxt_writer_cstring(w, "fxt");
	ev.name = fxt_writer_cstring(w, FXT_HOOK_COST_NAME);
	ev.args = a;
	ev.nargs = 2;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

/* main [0, 1000] > a [100, 500] > b [200, 300]; main > c [600, 700] of
 * category libc.mem (not hooked); main > d [800, 802]; pair 10 ns, inside
 * 4 ns.  Taken out: b 4 (96); a 4 + a pair for b (386, self 290); c
 * nothing; d 4, below 0: counted as 0, but main's self is exact: main
 * 1000 - 4 - 3 pairs = 966, self 966 - 386 - 100 - (-2) = 482.  Without
 * --subtract-overhead the measure is ignored; without a measure, times
 * are as measured. */
static void overhead_archive(void)
{
	start(1000000000);
	hook_cost(10, 4);
	X(1, "main", 0, 1000);
	X(1, "a", 100, 500);
	X(1, "b", 200, 300);
	event(FXT_EVENT_DURATION_COMPLETE, 1, 1, "libc.mem", "c", 600, 700);
	X(1, "d", 800, 802);
}

static void overhead(void)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, NULL, NULL, true };
	struct profile *p;
	double pair = 0, inside = 0;

	overhead_archive();
	p = finish(PROFILE_BY_FUNCTION, NULL, NULL);
	ok(profile_hook_cost(p, NULL, NULL) == 0, "no subtraction asked: no measure");
	check_row(p, "main", 0, 0, "calls=1 total=1000 self=498 sum=1000 min=1000 max=1000 open=0",
		  "overhead kept");
	profile_free(p);

	overhead_archive();
	p = finish_opts(&o);
	ok(profile_hook_cost(p, &pair, &inside) == 1 && pair == 10 && inside == 4,
	   "the measure: one process, pair 10, inside 4");
	check_row(p, "b", 0, 0, "calls=1 total=96 self=96 sum=96 min=96 max=96 open=0",
		  "overhead out");
	check_row(p, "a", 0, 0, "calls=1 total=386 self=290 sum=386 min=386 max=386 open=0",
		  "overhead out");
	check_row(p, "c", 0, 0, "calls=1 total=100 self=100 sum=100 min=100 max=100 open=0",
		  "overhead out: libc call as measured");
	check_row(p, "d", 0, 0, "calls=1 total=0 self=0 sum=0 min=0 max=0 open=0",
		  "overhead out: below 0 shown as 0");
	check_row(p, "main", 0, 0, "calls=1 total=966 self=482 sum=966 min=966 max=966 open=0",
		  "overhead out: self exact");
	profile_free(p);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(row_cases) / sizeof(row_cases[0]); i++)
		row_case(&row_cases[i]);
	processes();
	ticks_exact();
	ticks_fast();
	string_refs();
	many_siblings();
	deep();
	variance();
	callback();
	slice_same();
	bad_input();
	sorting();
	samples_and_drops();
	overhead();
	done_testing();
	return exit_status();
}
