/* Unit tests of the conversion pipeline (convert/pipeline.c) on hook
 * records: spool -> archive, read back with the reader.  The spools are
 * written by the tests' own writer (spool_test_writer.h), as
 * spool/format.h and spool/records.h lay them out; converting and reading
 * back is convert_test_archive.h's, shared with test_convert_tagged.c
 * (the tagged records: libc calls, flows, logs, counters, samples).  Each
 * scenario (threads, names, drops, the FIFO, recovery, recycled copies,
 * time bases, the TSC's ticks written as ns, --min-duration's summaries) builds its spool and
 * checks the archive. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/entries.h"
#include "convert/pipeline.h"
#include "convert/recon.h"
#include "convert/timebase.h"
#include "tests/unit/convert_test_archive.h"
#include "tools/profile/profile.h"

/* Two threads; a frame still open at the seal; names and categories. */
static void test_basic(void)
{
	struct test_thread t1 = { 0 }, t2 = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;

	test_spool_reset(4096, 0);
	test_hook(&t1, A);
	test_hook(&t1, B);
	test_hook(&t1, B | EXIT);
	test_hook(&t1, C); /* never exits */
	test_hook(&t2, B);
	test_hook(&t2, B | EXIT);
	t1.tid = 101;
	t2.tid = 102;
	test_retire(&t2);

	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st, "basic");
	ok(a.magic_first, "basic: magic record first");
	ok(a.provider_id_ok, "basic: provider id is the pid");
	ASSERT_EQ_U64(a.tps, 1000000000, "basic: ticks per second");
	ASSERT_EQ_U64(a.kobj_process, 1, "basic: process named once");
	ASSERT_STR_EQ(a.process_name, "unit", "basic: process name");
	ASSERT_EQ_U64(a.kobj_thread, 2, "basic: two threads named");
	ASSERT_EQ_U64(st.events, 4, "basic: four complete events");
	ASSERT_EQ_U64(st.threads, 2, "basic: two threads");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_DURATION_COMPLETE, NULL), 3, "basic: t1 events");
	ASSERT_EQ_U64(count(&a, 102, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta"), 1,
		      "basic: t2 event named by the symbolizer");
	e = find(&a, 101, "agent_test_gamma");
	ok(e && e->end == ~0ull >> 2, "basic: open frame closed at the seal time");
	e = find(&a, 101, "agent_test_alpha");
	ok(e && e->end == ~0ull >> 2, "basic: open outer frame closed at the seal time");
	e = find(&a, 102, "agent_test_beta");
	ok(e && strcmp(e->cat, "test_convert_pipeline") == 0, "basic: category is the module");
	if (e && strcmp(e->cat, "test_convert_pipeline") != 0)
		diag("  category \"%s\"", e->cat);
	ASSERT_EQ_I64(nesting(&a, 101), -1, "basic: t1 nests");
	ok(stream_ok(&a, 101) && stream_ok(&a, 102), "basic: start order on both threads");
	e = find(&a, 101, "agent_test_alpha");
	ok(e && e == &a.ev[0], "basic: the outer frame is the first event");
	ASSERT_EQ_U64(a.buffer_full, 0, "basic: no buffer-full event");
	free(a.ev);
}

/* Threads whose names are unknown still get their kernel object (it ties
 * them to the process in Perfetto): the main thread (tid = pid) named
 * after the process, the others "thread TID". */
static void test_unnamed_threads(void)
{
	struct test_thread t1 = { 0 }, t2 = { 0 };
	struct archive a;
	struct conv_stats st;

	test_spool_reset(4096, 0);
	test_hook(&t1, A);
	test_hook(&t1, A | EXIT);
	test_hook(&t2, B);
	test_hook(&t2, B | EXIT);
	t1.tid = 4242; /* conv_to's pid: the main thread */
	t2.tid = 4250;
	test_retire(&t2);

	convert_ok(&a, &(struct conv_opts){ .now = 1000, .names_unknown = true }, &st, "unnamed");
	ASSERT_EQ_U64(a.kobj_thread, 2, "unnamed: both threads have a kernel object");
	ASSERT_EQ_U64(a.threads[0].koid, 4242, "unnamed: main thread's koid");
	ASSERT_STR_EQ(a.threads[0].name, "unit", "unnamed: main thread named after the process");
	ASSERT_EQ_U64(a.threads[1].koid, 4250, "unnamed: other thread's koid");
	ASSERT_STR_EQ(a.threads[1].name, "thread 4250", "unnamed: other thread named by its tid");
	ASSERT_EQ_U64(st.events, 2, "unnamed: both threads' events written");
	free(a.ev);
}

/* A killed process's spool (no seal, so no thread table): each thread is
 * named after its newest chunk's name, a rename included; the main thread
 * without one after the process, another by its tid.  A sealed thread
 * whose name could not be read takes its chunks' too. */
static void test_recovered_names(void)
{
	struct test_thread t1 = { 0 }, t2 = { 0 }, t3 = { 0 };
	struct archive a;
	struct conv_stats st;

	test_spool_reset(4096, 0);
	t1.tid = 4242; /* conv_to's pid: the main thread, its name unknown */
	t2.tid = 4250;
	t3.tid = 4260;
	snprintf(t2.name, sizeof(t2.name), "%s", "before");
	test_hook(&t1, A);
	test_hook(&t2, A);
	test_hook(&t3, C);
	for (unsigned i = 0; i < 600; i++) { /* three chunks */
		test_hook(&t2, B);
		test_hook(&t2, B | EXIT);
		if (i == 300)
			snprintf(t2.name, sizeof(t2.name), "%s", "after");
	}
	test_hook(&t2, A | EXIT);
	test_hook(&t3, C | EXIT);
	test_hook(&t1, A | EXIT);

	convert_ok(&a, &(struct conv_opts){ .recovered = true }, &st, "recovered names");
	ASSERT_EQ_U64(a.kobj_thread, 3, "recovered names: three threads named");
	ASSERT_STR_EQ(a.threads[0].name, "unit", "recovered names: main thread after the process");
	ASSERT_STR_EQ(a.threads[1].name, "after", "recovered names: the newest name, a rename's");
	ASSERT_STR_EQ(a.threads[2].name, "thread 4260", "recovered names: unnamed, by its tid");
	free(a.ev);

	/* Sealed, names unknown: the chunks' names. */
	ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = 100000, .names_unknown = true }, &st),
		      0, "sealed, unnamed: converted");
	ASSERT_STR_EQ(a.threads[1].name, "after", "sealed, unnamed: the newest chunk's name");
	free(a.ev);
}

/* A thread that runs out of budget mid-stack: open frames close at the
 * drop point, drops are counted exactly, and slices + drops = calls. */
static void test_drops(void)
{
	const uint64_t chunk = 4096, calls = 500;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	char name[64];
	const struct ev *e, *outer;

	test_spool_reset(chunk, chunk);
	test_hook(&t, A); /* outer frame, exits after the drop point */
	for (uint64_t i = 0; i < calls; i++) {
		test_hook(&t, B);
		test_hook(&t, C);
		test_hook(&t, C | EXIT);
		test_hook(&t, B | EXIT);
	}
	test_hook(&t, A | EXIT);
	t.tid = 7;
	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st, "drops");
	ASSERT_EQ_U64(count(&a, 7, FXT_EVENT_DURATION_COMPLETE, NULL) + st.dropped, 1 + 2 * calls,
		      "drops: slices + dropped = calls");
	snprintf(name, sizeof(name), "fxt: %llu records dropped", (unsigned long long)t.dropped);
	e = find(&a, 7, name);
	ok(e && e->type == FXT_EVENT_INSTANT && strcmp(e->cat, "fxt") == 0,
	   "drops: instant event \"%s\"", name);
	ASSERT_EQ_U64(a.buffer_full, 1, "drops: provider event buffer full");
	outer = find(&a, 7, "agent_test_alpha");
	ok(outer && e && outer->ts < e->ts && e->ts < outer->end,
	   "drops: instant inside the frames open at the drop point");
	ok(outer && outer->end < (~0ull >> 2), "drops: open frames closed at the drop point");
	ASSERT_EQ_I64(nesting(&a, 7), -1, "drops: slices nest");
	ok(stream_ok(&a, 7), "drops: start order, the instant in place");
	free(a.ev);
}

/* Calls lost outside any thread (the seal's `lost`): a drop instant of
 * their own on the main thread, which then counts as a thread. */
static void test_lost(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;

	test_spool_reset(4096, 0);
	test_hook(&t, A);
	test_hook(&t, A | EXIT);
	t.tid = 4250; /* not the main thread */
	ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = 1000, .lost = 5 }, &st), 0,
		      "lost: converted, counted as read back");
	e = find(&a, 4242, "fxt: 5 records dropped");
	ok(e && e->type == FXT_EVENT_INSTANT, "lost: a drop instant on the main thread");
	ASSERT_EQ_U64(st.dropped, 5, "lost: counted as dropped");
	ASSERT_EQ_U64(a.buffer_full, 1, "lost: provider event buffer full");
	free(a.ev);
}

/* More than 255 threads: thread refs are re-registered by the writer; each
 * thread's events carry its own tid. */
static void test_many_threads(void)
{
	enum { N = 300 };
	static struct test_thread t[N];
	struct archive a;
	struct conv_stats st;
	int all = 1;

	test_spool_reset(64 << 10, 0);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < N; i++) {
		test_hook(&t[i], A);
		test_hook(&t[i], A | EXIT);
		t[i].tid = 1000 + (uint64_t)i;
		test_retire(&t[i]);
	}
	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st, "threads");
	ASSERT_EQ_U64(st.threads, N, "threads: all threads");
	for (int i = 0; i < N; i++)
		all &= count(&a, 1000 + (uint64_t)i, FXT_EVENT_DURATION_COMPLETE,
			     "agent_test_alpha") == 1;
	ok(all, "threads: one event on each of %d tids", N);
	ASSERT_EQ_U64(a.kobj_thread, N, "threads: all named");
	free(a.ev);
}

/* More than 32,767 distinct names: the writer re-registers evicted string
 * indices and the conversion's cached refs must follow.  Addresses outside
 * every module are named "0xADDRESS" by the symbolizer. */
static void test_many_names(void)
{
	const uint64_t n = 40000, again = 2000;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	size_t bad = 0, k = 0;
	char want[32];

	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < n + again; i++) {
		uint64_t addr = 0x1000 + (i % n) * 16;
		test_hook(&t, addr);
		test_hook(&t, addr | EXIT);
	}
	t.tid = 11;
	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st, "names");
	ASSERT_EQ_U64(st.events, n + again, "names: all events");
	for (size_t i = 0; i < a.nev; i++) {
		if (a.ev[i].type != FXT_EVENT_DURATION_COMPLETE)
			continue;
		snprintf(want, sizeof(want), "0x%llx", (unsigned long long)(0x1000 + (k % n) * 16));
		if (strcmp(a.ev[i].name, want) != 0 && bad++ < 3)
			diag("  event %zu: name \"%s\", want \"%s\"", k, a.ev[i].name, want);
		k++;
	}
	ASSERT_EQ_U64(bad, 0, "names: every event carries its own name");
	free(a.ev);
}

/* A tiny start-order FIFO (4 slots): the outer frame and some inner ones
 * are written as begin/end pairs, the rest as complete events; counts and
 * order stay exact. */
static void test_forced_begin(void)
{
	const uint64_t calls = 300;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	size_t complete, begins, ends;

	test_spool_reset(1 << 20, 0);
	test_hook(&t, A);
	for (uint64_t i = 0; i < calls; i++) {
		test_hook(&t, B);
		test_hook(&t, C);
		test_hook(&t, C | EXIT);
		test_hook(&t, B | EXIT);
	}
	test_hook(&t, B); /* left open: closed at the seal */
	test_hook(&t, C);
	t.tid = 5;
	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2, .fifo_max = 4 }, &st, "forced");
	complete = count(&a, 5, FXT_EVENT_DURATION_COMPLETE, NULL);
	begins = count(&a, 5, FXT_EVENT_DURATION_BEGIN, NULL);
	ends = count(&a, 5, FXT_EVENT_DURATION_END, NULL);
	ASSERT_EQ_U64(st.events, 1 + 2 * calls + 2, "forced: every call is a slice");
	ASSERT_EQ_U64(complete + begins, st.events, "forced: complete events + begins = slices");
	ASSERT_EQ_U64(begins, st.begun, "forced: begins counted");
	ASSERT_EQ_U64(ends, begins, "forced: as many ends as begins");
	ok(begins >= 1 && begins < 10, "forced: few begins (%zu)", begins);
	ok(a.ev[0].type == FXT_EVENT_DURATION_BEGIN &&
	       strcmp(a.ev[0].name, "agent_test_alpha") == 0,
	   "forced: the outer frame begins first");
	ok(stream_ok(&a, 5), "forced: start order, balanced");
	free(a.ev);
}

/* A thread that dropped records but went on recording (e.g. a signal
 * handler's hook that found the chunk full): the instant sits at the first
 * drop, inside the frames open then, in stream order. */
static void test_drop_midway(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t mid;
	size_t ia = 0, ib = 0, ii = 0, ic = 0;

	test_spool_reset(1 << 20, 0);
	test_hook(&t, A);
	test_hook(&t, B);
	test_hook(&t, B | EXIT);
	mid = test_ticks();
	test_hook(&t, C);
	test_hook(&t, C | EXIT);
	test_hook(&t, A | EXIT);
	t.tid = 6;
	t.dropped = 3;
	t.first_drop_ts = mid;
	convert_ok(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st, "midway");
	ASSERT_EQ_U64(st.dropped, 3, "midway: drops counted");
	for (size_t i = 0; i < a.nev; i++) {
		if (strcmp(a.ev[i].name, "agent_test_alpha") == 0)
			ia = i + 1;
		else if (strcmp(a.ev[i].name, "agent_test_beta") == 0)
			ib = i + 1;
		else if (strcmp(a.ev[i].name, "agent_test_gamma") == 0)
			ic = i + 1;
		else if (strcmp(a.ev[i].name, "fxt: 3 records dropped") == 0)
			ii = i + 1;
	}
	ok(ia == 1 && ib == 2 && ii == 3 && ic == 4, "midway: order alpha, beta, instant, gamma");
	if (!(ia == 1 && ib == 2 && ii == 3 && ic == 4))
		diag("  positions %zu %zu %zu %zu", ia, ib, ii, ic);
	ok(ii && a.ev[ii - 1].ts == mid, "midway: the instant at the first drop");
	ok(stream_ok(&a, 6), "midway: start order");
	free(a.ev);
}

/* 1,000,000-deep recursion left open (exit() from the bottom). */
static void test_deep(void)
{
	const uint64_t n = 1000000;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;

	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < n; i++)
		test_hook(&t, A);
	t.tid = 9;
	ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = ~0ull >> 2 }, &st), 0,
		      "deep: converted");
	ASSERT_EQ_U64(st.events, n, "deep: a million events");
	ASSERT_EQ_I64(nesting(&a, 9), -1, "deep: nested");
	ASSERT_EQ_U64(st.begun, n - RECON_FIFO_MAX, "deep: frames beyond the FIFO begun");
	ASSERT_EQ_U64(count(&a, 9, FXT_EVENT_DURATION_BEGIN, "agent_test_alpha"),
		      n - RECON_FIFO_MAX, "deep: begin events");
	ASSERT_EQ_U64(count(&a, 9, FXT_EVENT_DURATION_END, "agent_test_alpha"), n - RECON_FIFO_MAX,
		      "deep: as many end events");
	ok(stream_ok(&a, 9), "deep: start order, balanced");
	free(a.ev);
}

/* A thread's chunk recycled in place leaves, for a moment, two chunks of
 * one (serial, seq): the original (not yet emptied, or emptied but not yet
 * re-stamped) and its copy at the end of the spool (spool_chunk_drain()).
 * A process killed then is read from the copy: every call once. */
static void test_recycled_copy(void)
{
	for (int emptied = 0; emptied < 2; emptied++) {
		struct test_thread t = { 0 };
		struct test_chunk *k;
		struct archive a;
		struct conv_stats st;

		test_spool_reset(4096, 0);
		for (int i = 0; i < 500; i++) {
			test_hook(&t, A);
			test_hook(&t, A | EXIT);
		}
		t.tid = 71;
		/* Room for one more chunk, then chunk 1 copied to the end. */
		test_spool.chunks = realloc(test_spool.chunks,
					    (test_spool.nchunks + 1) * sizeof(*test_spool.chunks));
		if (!test_spool.chunks)
			abort();
		k = &test_spool.chunks[test_spool.nchunks++];
		k->owner = &t;
		k->c = malloc(4096);
		if (!k->c)
			abort();
		memcpy(k->c, test_spool.chunks[1].c, 4096);
		if (emptied)
			memset((char *)test_spool.chunks[1].c + SPOOL_CHUNK_HEADER_SIZE, 0,
			       SPOOL_RECORD_SIZE);
		ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = 1ull << 40 }, &st), 0,
			      "recycled copy: converted");
		ASSERT_EQ_U64(count(&a, 71, FXT_EVENT_DURATION_COMPLETE, NULL), 500,
			      "recycled copy (%s): every call once",
			      emptied ? "original emptied" : "original whole");
		ASSERT_EQ_I64(nesting(&a, 71), -1, "recycled copy: slices nest");
		free(a.ev);
	}
}

/* Two processes whose measured tick rates differ by 1e-5 agree on when
 * an event happened once rebased on their monotonic anchors: the error is
 * the rate error times the process's own run time (1 s: 10 us), not times
 * the TSC's count since boot (6000 s: 60 ms). */
static void test_time_base(void)
{
	const double true_rate = 3e9;
	struct conv_input a, b;
	uint64_t ta, tb;
	double ns_a, ns_b, raw_a, raw_b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.ticks_per_second = 3000000000u;
	a.base_ticks = 18000000000000u; /* 6000 s of TSC since boot */
	a.base_ns = 6000000000000u;
	b.ticks_per_second = 3000030000u;	   /* measured 1e-5 fast */
	b.base_ticks = a.base_ticks + 6000000000u; /* started 2 s later */
	b.base_ns = a.base_ns + 2000000000u;
	/* One instant, 3 s after A started, 1 s after B started. */
	ta = a.base_ticks + (uint64_t)(3 * true_rate);
	tb = ta;
	ns_a = (double)conv_time_ns(&a, ta);
	ns_b = (double)conv_time_ns(&b, tb);
	ok(ns_a - (double)a.base_ns == 3e9, "A: 3 s after its anchor (%.0f ns)",
	   ns_a - (double)a.base_ns);
	ok(ns_a - ns_b < 20000 && ns_b - ns_a < 20000, "A and B agree within 20 us (%.0f ns)",
	   ns_a - ns_b);
	raw_a = (double)ta * 1e9 / (double)a.ticks_per_second;
	raw_b = (double)tb * 1e9 / (double)b.ticks_per_second;
	ok(raw_a - raw_b > 1e7, "raw ticks would disagree by %.0f ms", (raw_a - raw_b) / 1e6);
	memset(&a, 0, sizeof(a));
	a.ticks_per_second = 1000000000u;
	ASSERT_EQ_U64(conv_time_ns(&a, 777), 777, "no time base: ns ticks are the ns");
	a.base_ticks = a.base_ns = 12345;
	ASSERT_EQ_U64(conv_time_ns(&a, 777), 777, "ns ticks: nothing to shift");
}

/* The archive is in ns whatever the spool's clock (convert/timebase.h):
 * a TSC of 2,596,122,243 ticks a second whose records are a tick apart
 * (three of them in one ns) still gives slices in start order that
 * nest; a call of one second of ticks lasts 10^9 ns to
 * the rounding; every time is the time base's ns plus its ticks in ns. */
static void test_ns_ticks(void)
{
	const uint64_t tps = 2596122243u, t0 = 1000000000000u;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	struct conv_tb tb;
	const struct ev *e;
	uint64_t last = 0, prev, ns, d;
	int up = 1, steps = 1;

	test_spool_reset(4096, 0);
	test_spool.clock = t0;
	test_hook(&t, A);
	for (int i = 0; i < 20; i++) {
		test_hook(&t, B);
		test_hook(&t, C);
		test_hook(&t, C | EXIT);
		test_hook(&t, B | EXIT);
	}
	test_hook(&t, B);
	test_spool.clock += tps; /* one second */
	test_hook(&t, B | EXIT);
	test_hook(&t, A | EXIT);
	t.tid = 7;
	test_retire(&t);
	convert_ok(&a,
		   &(struct conv_opts){ .now = t0 + 3 * tps,
					.tps = tps,
					.base_ticks = t0 - 1000,
					.base_ns = 500000000000u },
		   &st, "ns ticks");
	ASSERT_EQ_U64(a.tps, 1000000000, "ns ticks: the archive says ns");
	ASSERT_EQ_I64(nesting(&a, 7), -1, "ns ticks: slices nest");
	ok(stream_ok(&a, 7), "ns ticks: start order");
	for (size_t i = 0; i < a.nev; i++)
		if (a.ev[i].type == FXT_EVENT_DURATION_COMPLETE) {
			up &= a.ev[i].ts >= last;
			last = a.ev[i].ts;
		}
	ok(up, "ns ticks: no slice starts before the one before it");
	e = find(&a, 7, "agent_test_alpha");
	/* 1000 ticks after the base: 385 ns. */
	ok(e && e->ts == 500000000000u + 385,
	   "ns ticks: the first start is the base's ns + 1000 "
	   "ticks (%llu)",
	   e ? (unsigned long long)e->ts : 0ull);
	d = 0;
	for (size_t i = 0; i < a.nev; i++)
		if (a.ev[i].end - a.ev[i].ts > d && strcmp(a.ev[i].name, "agent_test_beta") == 0)
			d = a.ev[i].end - a.ev[i].ts;
	ok(d >= 999999998 && d <= 1000000003, "ns ticks: a second of ticks lasts 10^9 ns (%llu)",
	   (unsigned long long)d);
	free(a.ev);

	/* The conversion alone: non-decreasing, and a step always a ns on. */
	up = 1;
	conv_tb_init(&tb, tps, t0, 12345);
	prev = conv_tb_ns(&tb, t0 - 5000);
	for (uint64_t x = t0 - 5000; x < t0 + 5000; x++) {
		ns = conv_tb_ns(&tb, x);
		up &= ns >= prev;
		steps &= conv_tb_ns(&tb, x + conv_tb_step(&tb)) > ns;
		prev = ns;
	}
	ok(up, "ns ticks: a later tick never gives an earlier ns, before the base and after");
	ok(steps, "ns ticks: a step (%llu ticks) always moves on a ns",
	   (unsigned long long)conv_tb_step(&tb));
	conv_tb_init(&tb, 2000000000u, 0, 0);
	ASSERT_EQ_U64(conv_tb_step(&tb), 2, "ns ticks: 2 GHz: a step of 2 ticks");
	ASSERT_EQ_U64(conv_tb_ns(&tb, 3), 1, "ns ticks: 2 GHz: 3 ticks are 1 ns, rounded down");
	conv_tb_init(&tb, 1000000000u, 50, 70);
	ASSERT_EQ_U64(conv_tb_ns(&tb, 60), 80, "ns ticks: ns ticks move by the base alone");
	conv_tb_init(&tb, 500000000u, 0, 0);
	ASSERT_EQ_U64(conv_tb_ns(&tb, 3), 6, "ns ticks: 500 MHz: a tick is 2 ns");
}

/* An archive's profile (tools/profile/profile.h), by function. */
static struct profile *profile_of(const void *archive, size_t len)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, NULL, NULL };
	struct fxt_reader *r;
	struct fxt_record rec;
	struct profile *p;

	if (!archive || profile_new(&p, &o) < 0)
		return NULL;
	if (fxt_reader_open_mem(&r, archive, len, 0) < 0) {
		profile_free(p);
		return NULL;
	}
	while (fxt_reader_next(r, &rec) > 0)
		profile_add_record(p, r, &rec);
	profile_finish(p);
	fxt_reader_free(r);
	return p;
}

/* FXT_MIN_DURATION: the short calls are written as no slice, but the
 * summary instants give every function's numbers back exactly. */
static void test_min_duration(void)
{
	struct test_thread t = { 0 };
	struct conv_stats st;
	struct archive a;
	struct profile *full, *cut;
	uint64_t W = (uint64_t)(uintptr_t)agent_test_work,
		 O = (uint64_t)(uintptr_t)agent_test_outer;
	const uint64_t fns[] = { O, A, B, C, W };
	const char *names[] = { "agent_test_outer", "agent_test_alpha", "agent_test_beta",
				"agent_test_gamma", "agent_test_work" };
	size_t same = 0, kept_len = 0;
	void *kept = NULL;

	/* One tick a hook: a leaf lasts 1 tick, B 7, W 3, the outer A 3. */
	test_spool_reset(4096, 0);
	test_hook(&t, O);
	for (int i = 0; i < 5; i++) {
		test_hook(&t, A);
		test_hook(&t, A | EXIT);
	}
	test_hook(&t, B);
	for (int i = 0; i < 3; i++) {
		test_hook(&t, C);
		test_hook(&t, C | EXIT);
	}
	test_hook(&t, B | EXIT);
	test_hook(&t, W);
	test_hook(&t, A);
	test_hook(&t, A | EXIT);
	test_hook(&t, W | EXIT);
	test_hook(&t, A); /* a recursion: the inner call is short */
	test_hook(&t, A);
	test_hook(&t, A | EXIT);
	test_hook(&t, A | EXIT);
	test_hook(&t, O | EXIT);
	t.tid = 101;
	test_retire(&t);

	ASSERT_EQ_I64(
	    conv_to(&a,
		    &(struct conv_opts){ .now = ~0ull >> 2, .keep = &kept, .keep_len = &kept_len },
		    &st),
	    0, "min duration: converted whole");
	free(a.ev);
	full = profile_of(kept, kept_len);
	ASSERT_EQ_I64(
	    conv_to(&a,
		    &(struct conv_opts){
			.now = ~0ull >> 2, .min_ns = 2, .keep = &kept, .keep_len = &kept_len },
		    &st),
	    0, "min duration: converted, 2 ns");
	ASSERT_EQ_U64(st.left_out, 10, "min duration: 7 calls of A and 3 of C left out");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_DURATION_COMPLETE, "agent_test_gamma"), 0,
		      "min duration: no slice of C");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_DURATION_COMPLETE, "agent_test_alpha"), 1,
		      "min duration: the outer A only");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_INSTANT, "agent_test_alpha"), 1,
		      "min duration: A's summary instant");
	free(a.ev);
	cut = profile_of(kept, kept_len);
	ok(full && cut, "min duration: both archives profiled");
	for (size_t i = 0; full && cut && i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct profile_row *x = profile_find(full, NULL, names[i], 0, 0);
		const struct profile_row *y = profile_find(cut, NULL, names[i], 0, 0);

		if (x && y && x->calls == y->calls && x->total_ns == y->total_ns &&
		    x->self_ns == y->self_ns && x->sum_ns == y->sum_ns && x->min_ns == y->min_ns &&
		    x->max_ns == y->max_ns) {
			same++;
			continue;
		}
		diag("%s: whole %llu calls %llu/%llu/%llu total/self/sum, left out %llu calls "
		     "%llu/%llu/%llu",
		     names[i], x ? (unsigned long long)x->calls : 0,
		     x ? (unsigned long long)x->total_ns : 0,
		     x ? (unsigned long long)x->self_ns : 0, x ? (unsigned long long)x->sum_ns : 0,
		     y ? (unsigned long long)y->calls : 0, y ? (unsigned long long)y->total_ns : 0,
		     y ? (unsigned long long)y->self_ns : 0, y ? (unsigned long long)y->sum_ns : 0);
	}
	ASSERT_EQ_U64(same, 5,
		      "min duration: every function's calls, total, self, sum, min, max "
		      "as without it");
	if (full)
		profile_free(full);
	if (cut)
		profile_free(cut);
	free(kept);
}

int main(void)
{
	plan(112);
	test_basic();
	test_unnamed_threads();
	test_recovered_names();
	test_drops();
	test_lost();
	test_many_threads();
	test_many_names();
	test_deep();
	test_forced_begin();
	test_drop_midway();
	test_recycled_copy();
	test_time_base();
	test_ns_ticks();
	test_min_duration();
	test_spool_cleanup();
	return exit_status();
}
