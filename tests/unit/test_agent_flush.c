/* Unit tests of the agent's flusher (agent/flush.c): spool -> archive,
 * read back with the reader. */
#include <config.h>

#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "agent/flush.h"
#include "agent/recon.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"
#include "tests/unit/agent_test_stubs.h"

#define EXIT SPOOL_EXIT_BIT

/* Real functions, so that the symbolizer names them. */
__attribute__((noinline)) void agent_test_alpha(void);
__attribute__((noinline)) void agent_test_beta(void);
__attribute__((noinline)) void agent_test_gamma(void);
void agent_test_alpha(void)
{
	__asm__ volatile("");
}
void agent_test_beta(void)
{
	__asm__ volatile("");
}
void agent_test_gamma(void)
{
	__asm__ volatile("");
}

#define A ((uint64_t)(uintptr_t)agent_test_alpha)
#define B ((uint64_t)(uintptr_t)agent_test_beta)
#define C ((uint64_t)(uintptr_t)agent_test_gamma)

struct ev {
	uint64_t tid, ts, end;
	int type;
	char name[64], cat[64];
};

struct archive {
	struct ev *ev;
	size_t nev;
	uint64_t tps;
	int magic_first, provider_id_ok, buffer_full;
	unsigned kobj_process, kobj_thread;
	char process_name[64];
	struct {
		uint64_t koid;
		char name[64];
	} threads[8]; /* the first thread kernel objects */
	int errors;
};

static void diag_cb(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	struct archive *a = ctx;

	if (level == FXT_DIAG_ERROR) {
		a->errors++;
		diag("reader error at %llu: %s", (unsigned long long)off, msg);
	}
}

static void copy(char *dst, size_t cap, struct fxt_string s)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;

	memcpy(dst, s.data, n);
	dst[n] = '\0';
}

static int read_archive(const void *data, size_t len, struct archive *a, uint64_t pid)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	size_t cap = 0;
	int first = 1, ret;

	memset(a, 0, sizeof(*a));
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_VALIDATE) < 0)
		return -1;
	fxt_reader_set_diag(r, diag_cb, a);
	while ((ret = fxt_reader_next(r, &rec)) > 0) {
		if (first)
			a->magic_first = rec.type == FXT_RECORD_METADATA &&
					 rec.u.meta.type == FXT_METADATA_TRACE_INFO;
		first = 0;
		if (rec.type == FXT_RECORD_METADATA &&
		    rec.u.meta.type == FXT_METADATA_PROVIDER_INFO)
			a->provider_id_ok = rec.u.meta.provider_id == (uint32_t)pid;
		if (rec.type == FXT_RECORD_METADATA &&
		    rec.u.meta.type == FXT_METADATA_PROVIDER_EVENT &&
		    rec.u.meta.event == FXT_PROVIDER_EVENT_BUFFER_FULL)
			a->buffer_full++;
		if (rec.type == FXT_RECORD_INITIALIZATION)
			a->tps = rec.u.init.ticks_per_second;
		if (rec.type == FXT_RECORD_KERNEL_OBJECT &&
		    rec.u.kobj.obj_type == FXT_OBJ_PROCESS) {
			a->kobj_process++;
			copy(a->process_name, sizeof(a->process_name), rec.u.kobj.name);
		}
		if (rec.type == FXT_RECORD_KERNEL_OBJECT && rec.u.kobj.obj_type == FXT_OBJ_THREAD) {
			if (a->kobj_thread < sizeof(a->threads) / sizeof(a->threads[0])) {
				a->threads[a->kobj_thread].koid = rec.u.kobj.koid;
				copy(a->threads[a->kobj_thread].name, sizeof(a->threads[0].name),
				     rec.u.kobj.name);
			}
			a->kobj_thread++;
		}
		if (rec.type == FXT_RECORD_EVENT) {
			struct ev *e;
			if (a->nev == cap) {
				cap = cap ? cap * 2 : 256;
				a->ev = realloc(a->ev, cap * sizeof(*a->ev));
			}
			e = &a->ev[a->nev++];
			e->tid = rec.u.event.tid;
			e->ts = rec.u.event.ts;
			e->end = rec.u.event.extra;
			e->type = rec.u.event.type;
			copy(e->name, sizeof(e->name), rec.u.event.name);
			copy(e->cat, sizeof(e->cat), rec.u.event.category);
		}
	}
	fxt_reader_free(r);
	return ret;
}

/* When set, flush_to() leaves every thread's name unknown (""), as the
 * agent does for a thread whose /proc/self/task/TID/comm is gone. */
static bool names_unknown;

/* Flushes the test spool into memory and reads it back. */
static int flush_to(struct archive *a, uint64_t now, size_t fifo_max, struct flush_stats *st)
{
	struct fxt_writer *w;
	struct flush_thread th[512];
	struct flush_input in;
	size_t n = 0;
	const void *data;
	size_t len;
	int err;

	for (struct tbuf *tb = agent.threads; tb && n < 512; tb = tb->next) {
		memset(&th[n], 0, sizeof(th[n]));
		th[n].serial = tb->serial;
		th[n].tid = tb->tid;
		if (!names_unknown)
			snprintf(th[n].name, sizeof(th[n].name), "t%u", tb->serial);
		th[n].dropped = tb->dropped;
		th[n].first_drop_ts = tb->first_drop_ts;
		th[n].stop_ts = tb->stop_ts;
		th[n].end_ts = tb->end_ts;
		n++;
	}
	memset(&in, 0, sizeof(in));
	in.pid = 4242;
	in.process_name = "unit";
	in.ticks_per_second = 1000000000;
	in.now_ts = now;
	in.spool_end = spool_close_grants(&agent.spool);
	in.spool_fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	in.threads = th;
	in.nthreads = n;
	in.fifo_max = fifo_max;
	in.sym = fxt_sym_new(0);
	fxt_sym_add_self(in.sym);
	if (fxt_writer_open_mem(&w, 0) < 0)
		return -1;
	err = agent_flush_archive(w, &in, st);
	fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	if (!err)
		err = read_archive(data, len, a, in.pid);
	fxt_writer_free(w);
	fxt_sym_free(in.sym);
	close(in.spool_fd);
	return err;
}

static size_t count(const struct archive *a, uint64_t tid, int type, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nev; i++)
		n += a->ev[i].tid == tid && a->ev[i].type == type &&
		     (!name || strcmp(a->ev[i].name, name) == 0);
	return n;
}

static long nesting(const struct archive *a, uint64_t tid)
{
	struct ivl *v = malloc((a->nev + 1) * sizeof(*v));
	size_t n = 0;
	long bad;

	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && a->ev[i].type == FXT_EVENT_DURATION_COMPLETE) {
			v[n].start = a->ev[i].ts;
			v[n].end = a->ev[i].end;
			n++;
		}
	bad = ivl_check_nesting(v, n);
	free(v);
	return bad;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* The events of `tid` in stream order are in start order and nest (see
 * agent_test_nest.h); the reason goes to the TAP diagnostics. */
static int stream_ok(const struct archive *a, uint64_t tid)
{
	struct nest_ev *v = malloc((a->nev + 1) * sizeof(*v));
	size_t n = 0;
	const char *why;
	long bad;

	for (size_t i = 0; i < a->nev; i++) {
		const struct ev *e = &a->ev[i];
		if (e->tid != tid)
			continue;
		switch (e->type) {
		case FXT_EVENT_DURATION_COMPLETE:
			v[n].kind = NEST_COMPLETE;
			break;
		case FXT_EVENT_DURATION_BEGIN:
			v[n].kind = NEST_BEGIN;
			break;
		case FXT_EVENT_DURATION_END:
			v[n].kind = NEST_END;
			break;
		default:
			v[n].kind = NEST_INSTANT;
			break;
		}
		v[n].addr = name_hash(e->name);
		v[n].start = e->ts;
		v[n].end = e->type == FXT_EVENT_DURATION_END ? e->ts : e->end;
		n++;
	}
	bad = nest_check_stream(v, n, &why);
	if (bad >= 0)
		diag("  tid %llu, event %ld of %zu: %s", (unsigned long long)tid, bad, n, why);
	free(v);
	return bad < 0;
}

static const struct ev *find(const struct archive *a, uint64_t tid, const char *name)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && strcmp(a->ev[i].name, name) == 0)
			return &a->ev[i];
	return NULL;
}

/* Two threads; a frame still open at the flush; names and categories. */
static void test_basic(void)
{
	struct tstate t1 = { 0 }, t2 = { 0 };
	struct archive a;
	struct flush_stats st;
	const struct ev *e;

	test_agent_reset(4096, 1 << 20, 0);
	agent_record(&t1, A);
	agent_record(&t1, B);
	agent_record(&t1, B | EXIT);
	agent_record(&t1, C); /* never exits */
	agent_record(&t2, B);
	agent_record(&t2, B | EXIT);
	t1.tb->tid = 101;
	t2.tb->tid = 102;
	agent_tbuf_retire(&t2);

	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "basic: flushed and read back");
	ASSERT_EQ_I64(a.errors, 0, "basic: reader finds no error");
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
	ok(e && e->end == ~0ull >> 2, "basic: open frame closed at the flush time");
	e = find(&a, 101, "agent_test_alpha");
	ok(e && e->end == ~0ull >> 2, "basic: open outer frame closed at the flush time");
	e = find(&a, 102, "agent_test_beta");
	ok(e && strcmp(e->cat, "test_agent_flush") == 0, "basic: category is the module");
	if (e && strcmp(e->cat, "test_agent_flush") != 0)
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
	struct tstate t1 = { 0 }, t2 = { 0 };
	struct archive a;
	struct flush_stats st;

	test_agent_reset(4096, 1 << 20, 0);
	agent_record(&t1, A);
	agent_record(&t1, A | EXIT);
	agent_record(&t2, B);
	agent_record(&t2, B | EXIT);
	t1.tb->tid = 4242; /* flush_to's pid: the main thread */
	t2.tb->tid = 4250;
	agent_tbuf_retire(&t2);

	names_unknown = true;
	ASSERT_EQ_I64(flush_to(&a, 1000, 0, &st), 0, "unnamed: flushed and read back");
	names_unknown = false;
	ASSERT_EQ_I64(a.errors, 0, "unnamed: reader finds no error");
	ASSERT_EQ_U64(a.kobj_thread, 2, "unnamed: both threads have a kernel object");
	ASSERT_EQ_U64(a.threads[0].koid, 4242, "unnamed: main thread's koid");
	ASSERT_STR_EQ(a.threads[0].name, "unit", "unnamed: main thread named after the process");
	ASSERT_EQ_U64(a.threads[1].koid, 4250, "unnamed: other thread's koid");
	ASSERT_STR_EQ(a.threads[1].name, "thread 4250", "unnamed: other thread named by its tid");
	ASSERT_EQ_U64(st.events, 2, "unnamed: both threads' events written");
	free(a.ev);
}

/* A thread that runs out of budget mid-stack: open frames close at the
 * drop point, drops are counted exactly, and slices + drops = calls. */
static void test_drops(void)
{
	const uint64_t chunk = 4096, calls = 500;
	struct tstate t = { 0 };
	struct archive a;
	struct flush_stats st;
	char name[64];
	const struct ev *e, *outer;

	test_agent_reset(chunk, 1 << 20, chunk);
	agent_record(&t, A); /* outer frame, exits after the drop point */
	for (uint64_t i = 0; i < calls; i++) {
		agent_record(&t, B);
		agent_record(&t, C);
		agent_record(&t, C | EXIT);
		agent_record(&t, B | EXIT);
	}
	agent_record(&t, A | EXIT);
	t.tb->tid = 7;
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "drops: flushed");
	ASSERT_EQ_I64(a.errors, 0, "drops: reader finds no error");
	ASSERT_EQ_U64(count(&a, 7, FXT_EVENT_DURATION_COMPLETE, NULL) + st.dropped, 1 + 2 * calls,
		      "drops: slices + dropped = calls");
	snprintf(name, sizeof(name), "fxt: %llu records dropped",
		 (unsigned long long)t.tb->dropped);
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

/* More than 255 threads: thread refs are re-registered by the writer; each
 * thread's events carry its own tid. */
static void test_many_threads(void)
{
	enum { N = 300 };
	static struct tstate t[N];
	struct archive a;
	struct flush_stats st;
	int all = 1;

	test_agent_reset(64 << 10, 64 << 20, 0);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < N; i++) {
		agent_record(&t[i], A);
		agent_record(&t[i], A | EXIT);
		t[i].tb->tid = 1000 + (uint64_t)i;
		agent_tbuf_retire(&t[i]);
	}
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "threads: flushed");
	ASSERT_EQ_I64(a.errors, 0, "threads: reader finds no error");
	ASSERT_EQ_U64(st.threads, N, "threads: all threads");
	for (int i = 0; i < N; i++)
		all &= count(&a, 1000 + (uint64_t)i, FXT_EVENT_DURATION_COMPLETE,
			     "agent_test_alpha") == 1;
	ok(all, "threads: one event on each of %d tids", N);
	ASSERT_EQ_U64(a.kobj_thread, N, "threads: all named");
	free(a.ev);
}

/* More than 32,767 distinct names: the writer re-registers evicted string
 * indices and the flusher's cached refs must follow.  Addresses outside
 * every module are named "0xADDRESS" by the symbolizer. */
static void test_many_names(void)
{
	const uint64_t n = 40000, again = 2000;
	struct tstate t = { 0 };
	struct archive a;
	struct flush_stats st;
	size_t bad = 0, k = 0;
	char want[32];

	test_agent_reset(1 << 20, 64 << 20, 0);
	for (uint64_t i = 0; i < n + again; i++) {
		uint64_t addr = 0x1000 + (i % n) * 16;
		agent_record(&t, addr);
		agent_record(&t, addr | EXIT);
	}
	t.tb->tid = 11;
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "names: flushed");
	ASSERT_EQ_I64(a.errors, 0, "names: reader finds no error");
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
	struct tstate t = { 0 };
	struct archive a;
	struct flush_stats st;
	size_t complete, begins, ends;

	test_agent_reset(1 << 20, 64 << 20, 0);
	agent_record(&t, A);
	for (uint64_t i = 0; i < calls; i++) {
		agent_record(&t, B);
		agent_record(&t, C);
		agent_record(&t, C | EXIT);
		agent_record(&t, B | EXIT);
	}
	agent_record(&t, B); /* left open: closed at the flush */
	agent_record(&t, C);
	t.tb->tid = 5;
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 4, &st), 0, "forced: flushed");
	ASSERT_EQ_I64(a.errors, 0, "forced: reader finds no error");
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
	struct tstate t = { 0 };
	struct archive a;
	struct flush_stats st;
	uint64_t mid;
	size_t ia = 0, ib = 0, ii = 0, ic = 0;

	test_agent_reset(1 << 20, 64 << 20, 0);
	agent_record(&t, A);
	agent_record(&t, B);
	agent_record(&t, B | EXIT);
	mid = agent_ticks();
	while (agent_ticks() == mid)
		;
	agent_record(&t, C);
	agent_record(&t, C | EXIT);
	agent_record(&t, A | EXIT);
	t.tb->tid = 6;
	t.tb->dropped = 3;
	t.tb->first_drop_ts = mid;
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "midway: flushed");
	ASSERT_EQ_I64(a.errors, 0, "midway: reader finds no error");
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
	struct tstate t = { 0 };
	struct archive a;
	struct flush_stats st;

	test_agent_reset(1 << 20, 64 << 20, 0);
	for (uint64_t i = 0; i < n; i++)
		agent_record(&t, A);
	t.tb->tid = 9;
	ASSERT_EQ_I64(flush_to(&a, ~0ull >> 2, 0, &st), 0, "deep: flushed");
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

int main(void)
{
	plan(67);
	test_basic();
	test_unnamed_threads();
	test_drops();
	test_many_threads();
	test_many_names();
	test_deep();
	test_forced_begin();
	test_drop_midway();
	test_agent_cleanup();
	return exit_status();
}
