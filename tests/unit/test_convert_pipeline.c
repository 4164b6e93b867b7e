/* Unit tests of the conversion pipeline (convert/pipeline.c): spool -> archive, read
 * back with the reader.  The spools are written by the tests' own writer
 * (spool_test_writer.h), as spool/format.h and spool/records.h lay them
 * out.  One job, one file past 800 lines: each scenario (calls, drops,
 * threads, libc frames, flows, logs, counters, sync pairs, pipes, samples,
 * damage, recycled copies, time bases, --min-duration's summaries) builds
 * its spool and checks the archive with the same helpers, which a split
 * would have to share through a header of their own. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/pipeline.h"
#include "convert/recon.h"
#include "spool/libc_table.h"
#include "spool/recording.h"
#include "spool/records.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"
#include "tests/unit/spool_test_writer.h"
#include "tools/profile/profile.h"

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

/* Functions with a body of some bytes, for pcs inside them (samples). */
__attribute__((noinline)) int agent_test_work(int n);
__attribute__((noinline)) int agent_test_outer(int n);
int agent_test_work(int n)
{
	volatile int x = 0;

	for (int i = 0; i < n; i++)
		x += i;
	return x;
}
int agent_test_outer(int n)
{
	return agent_test_work(n) + agent_test_work(n + 1);
}

#define A ((uint64_t)(uintptr_t)agent_test_alpha)
#define B ((uint64_t)(uintptr_t)agent_test_beta)
#define C ((uint64_t)(uintptr_t)agent_test_gamma)

struct arg {
	char name[32];
	int type;
	int64_t i;
	uint64_t u;
	char s[256];
};

struct ev {
	uint64_t tid, ts, end;
	int type;
	char name[256], cat[64];
	unsigned nargs;
	struct arg args[8];
};

struct logrec {
	uint64_t tid, ts;
	char msg[256];
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
	struct logrec logs[16];
	size_t nlogs;
	int errors;
	struct fxt__counts counts; /* as fxt-dump --stats counts them */
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
		if (fxt__counts_record(&a->counts, &rec) < 0)
			abort();
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
			e->nargs = rec.nargs < 8 ? rec.nargs : 8;
			for (unsigned k = 0; k < e->nargs; k++) {
				const struct fxt_arg_value *v = &rec.args[k];
				struct arg *g = &e->args[k];
				memset(g, 0, sizeof(*g));
				copy(g->name, sizeof(g->name), v->name);
				g->type = v->type;
				if (v->type == FXT_ARG_STRING)
					copy(g->s, sizeof(g->s), v->v.s);
				else if (v->type == FXT_ARG_INT32 || v->type == FXT_ARG_INT64)
					g->i = v->v.i;
				else if (v->type == FXT_ARG_BOOL)
					g->i = v->v.b;
				else
					g->u = v->v.u;
			}
		}
		if (rec.type == FXT_RECORD_LOG && a->nlogs < 16) {
			a->logs[a->nlogs].tid = rec.u.log.tid;
			a->logs[a->nlogs].ts = rec.u.log.ts;
			copy(a->logs[a->nlogs].msg, sizeof(a->logs[0].msg), rec.u.log.msg);
			a->nlogs++;
		}
	}
	fxt_reader_free(r);
	return ret;
}

/* When set, conv_to() leaves every thread's name unknown (""), as the
 * agent does for a thread whose /proc/self/task/TID/comm is gone. */
static bool names_unknown;

/* When set, conv_to() gives no thread table, as for a killed process's
 * spool: threads are known from their chunks alone. */
static bool conv_recovered;

/* Further conv_input fields for the next conv_to(). */
static uint64_t conv_lost;
static unsigned conv_groups, conv_sample_hz;
static uint64_t conv_agent_lo, conv_agent_hi;
static const struct session_write *conv_writes;
static size_t conv_nwrites;

/* Whether the conversion counted what a reader of its archive counts (every
 * conv_to() checks it): 0, or -1 after saying what differs. */
static int same_counts(const struct fxt__counts *conv, const struct fxt__counts *read)
{
	struct fxt__counts both = { 0 };
	int same;

	if (fxt__counts_add(&both, conv) < 0 || fxt__counts_add(&both, read) < 0)
		abort();
	same = conv->events == read->events && conv->dropped == read->dropped &&
	       conv->unsampled == read->unsampled && conv->unsampled_why == read->unsampled_why &&
	       fxt__counts_threads(conv) == fxt__counts_threads(read) &&
	       fxt__counts_threads(&both) == fxt__counts_threads(read) &&
	       fxt__counts_processes(conv) == fxt__counts_processes(read) &&
	       fxt__counts_processes(&both) == fxt__counts_processes(read);
	if (!same)
		diag("counts: conversion %llu events, %llu threads, %llu processes, %llu dropped; "
		     "archive %llu, %llu, %llu, %llu; together %llu threads",
		     (unsigned long long)conv->events,
		     (unsigned long long)fxt__counts_threads(conv),
		     (unsigned long long)fxt__counts_processes(conv),
		     (unsigned long long)conv->dropped, (unsigned long long)read->events,
		     (unsigned long long)fxt__counts_threads(read),
		     (unsigned long long)fxt__counts_processes(read),
		     (unsigned long long)read->dropped,
		     (unsigned long long)fxt__counts_threads(&both));
	fxt__counts_free(&both);
	return same ? 0 : -1;
}

/* The next conversions' FXT_MIN_DURATION, and a copy of the last archive
 * (malloc'd) when `conv_keep` is set. */
static uint64_t conv_min_ns;
static bool conv_keep;
static void *kept_archive;
static size_t kept_len;

/* Converts the test spool into memory and reads it back.  The conversion's
 * counts (conv_stats.counts) must be the archive's (fxt/counts.h). */
static int conv_to(struct archive *a, uint64_t now, size_t fifo_max, struct conv_stats *st)
{
	struct fxt_writer *w;
	struct conv_thread th[512];
	struct conv_input in;
	size_t n = 0;
	const void *data;
	size_t len;
	int err;

	for (struct test_thread *tb = test_spool.threads; tb && n < 512; tb = tb->next) {
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
	in.spool_fd = test_spool_fd(in.pid, &in.spool_end);
	in.lost = conv_lost;
	in.threads = conv_recovered ? NULL : th;
	in.nthreads = conv_recovered ? 0 : n;
	in.fifo_max = fifo_max;
	in.libc_groups = conv_groups;
	in.sample_hz = conv_sample_hz;
	in.agent_lo = conv_agent_lo;
	in.agent_hi = conv_agent_hi;
	in.pipe_writes = conv_writes;
	in.npipe_writes = conv_nwrites;
	in.min_duration_ns = conv_min_ns;
	in.sym = fxt_sym_new(0);
	fxt_sym_add_self(in.sym);
	if (fxt_writer_open_mem(&w, 0) < 0)
		return -1;
	err = conv_archive(w, &in, st);
	fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	if (conv_keep) {
		free(kept_archive);
		kept_archive = malloc(len + 1);
		if (kept_archive)
			memcpy(kept_archive, data, len);
		kept_len = len;
	}
	if (!err)
		err = read_archive(data, len, a, in.pid);
	if (!err)
		err = same_counts(&st->counts, &a->counts);
	fxt__counts_free(&st->counts);
	fxt__counts_free(&a->counts);
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
		if (e->tid != tid || e->type == FXT_EVENT_COUNTER ||
		    (e->type >= FXT_EVENT_FLOW_BEGIN && e->type <= FXT_EVENT_FLOW_END))
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

	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "basic: converted and read back");
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

	names_unknown = true;
	ASSERT_EQ_I64(conv_to(&a, 1000, 0, &st), 0, "unnamed: converted and read back");
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

	conv_recovered = true;
	ASSERT_EQ_I64(conv_to(&a, 0, 0, &st), 0, "recovered names: converted and read back");
	conv_recovered = false;
	ASSERT_EQ_I64(a.errors, 0, "recovered names: reader finds no error");
	ASSERT_EQ_U64(a.kobj_thread, 3, "recovered names: three threads named");
	ASSERT_STR_EQ(a.threads[0].name, "unit", "recovered names: main thread after the process");
	ASSERT_STR_EQ(a.threads[1].name, "after", "recovered names: the newest name, a rename's");
	ASSERT_STR_EQ(a.threads[2].name, "thread 4260", "recovered names: unnamed, by its tid");
	free(a.ev);

	/* Sealed, names unknown: the chunks' names. */
	names_unknown = true;
	ASSERT_EQ_I64(conv_to(&a, 100000, 0, &st), 0, "sealed, unnamed: converted");
	names_unknown = false;
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
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "drops: converted");
	ASSERT_EQ_I64(a.errors, 0, "drops: reader finds no error");
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
	conv_lost = 5;
	ASSERT_EQ_I64(conv_to(&a, 1000, 0, &st), 0, "lost: converted, counted as read back");
	conv_lost = 0;
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
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "threads: converted");
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
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "names: converted");
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
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 4, &st), 0, "forced: converted");
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
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "midway: converted");
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
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;

	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < n; i++)
		test_hook(&t, A);
	t.tid = 9;
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "deep: converted");
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

/* ------------------------------------------------------------ tagged records */

static void put_slots(struct test_thread *t, const uint64_t *w, unsigned n)
{
	test_record(t, w, n);
}

static void put(struct test_thread *t, uint64_t w0, uint64_t w1)
{
	uint64_t w[2] = { w0, w1 };

	put_slots(t, w, 1);
}

static void call_enter(struct test_thread *t, uint64_t ts, unsigned fn, uint64_t caller)
{
	put(t, ts, EV_CALL_ADDR(fn) | (caller & EV_PAYLOAD_MASK));
}

static void call_exit(struct test_thread *t, uint64_t ts, unsigned fn, uint64_t payload)
{
	put(t, ts, EV_EXIT_BIT | EV_CALL_ADDR(fn) | payload);
}

static void put_arg(struct test_thread *t, unsigned key, enum ev_arg_type type, uint64_t v)
{
	put(t, v, ev_arg_w1(key, type));
}

/* A head slot {w0, w1} followed by the DATA slots of `len` bytes. */
static void put_bytes(struct test_thread *t, uint64_t w0, uint64_t w1, const char *s, size_t len)
{
	uint64_t w[2 + 2 * 64];

	w[0] = w0;
	w[1] = w1;
	ev_put_data(w + 2, s, len);
	put_slots(t, w, 1 + ev_data_slots(len));
}

static void put_str(struct test_thread *t, unsigned key, const char *s)
{
	put_bytes(t, strlen(s), ev_str_w1(key, 0), s, strlen(s));
}

static void put_log(struct test_thread *t, uint64_t ts, unsigned stream, unsigned prio,
		    const char *s)
{
	put_bytes(t, ts, ev_log_w1(stream, prio, strlen(s)), s, strlen(s));
}

static void put_sync(struct test_thread *t, enum ev_sync_op op, uint64_t obj)
{
	put(t, obj, ev_sync_w1(op));
}

static void put_flow(struct test_thread *t, enum ev_flow_phase phase, uint64_t id, bool at_end)
{
	put(t, id, ev_flow_w1(phase, at_end));
}

static const struct ev *find_type(const struct archive *a, uint64_t tid, int type, const char *name)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && a->ev[i].type == type &&
		    (!name || strcmp(a->ev[i].name, name) == 0))
			return &a->ev[i];
	return NULL;
}

static const struct arg *arg_of(const struct ev *e, const char *name)
{
	for (unsigned i = 0; e && i < e->nargs; i++)
		if (strcmp(e->args[i].name, name) == 0)
			return &e->args[i];
	return NULL;
}

/* Argument `name` of `e` is the string `want`. */
static void expect_str(const struct ev *e, const char *name, const char *want, const char *what)
{
	const struct arg *g = arg_of(e, name);

	ok(g && g->type == FXT_ARG_STRING && strcmp(g->s, want) == 0, "%s: %s = \"%s\"", what, name,
	   want);
	if (g && (g->type != FXT_ARG_STRING || strcmp(g->s, want) != 0))
		diag("  type %d, \"%s\"", g->type, g->s);
}

static void expect_int(const struct ev *e, const char *name, int type, uint64_t want,
		       const char *what)
{
	const struct arg *g = arg_of(e, name);
	uint64_t got =
	    g ? (type == FXT_ARG_INT64 || type == FXT_ARG_BOOL ? (uint64_t)g->i : g->u) : 0;

	ok(g && g->type == type && got == want, "%s: %s = %lld (type %d)", what, name,
	   (long long)want, type);
	if (g && (g->type != type || got != want))
		diag("  type %d, value %lld", g->type, (long long)got);
	if (!g)
		diag("  no argument %s (%u arguments)", name, e ? e->nargs : 0);
}

/* libc calls: names, categories, arguments typed as the records say. */
static void test_calls(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;

	test_spool_reset(1 << 20, 0);
	/* read(3) = 5 from agent_test_alpha (a return address just past its
	 * first byte), with a path */
	call_enter(&t, 100, AGENT_FN_read, A + 1);
	put_arg(&t, AGENT_KEY_FD, EV_ARG_I64, 3);
	put_str(&t, AGENT_KEY_PATH, "/etc/hostname");
	call_exit(&t, 200, AGENT_FN_read, ev_int_payload(5));
	/* open = -1, errno ENOENT */
	call_enter(&t, 300, AGENT_FN_open, 0);
	put(&t, ENOENT, ev_arg_w1(AGENT_KEY_ERRNO, EV_ARG_ERRNO));
	call_exit(&t, 400, AGENT_FN_open, ev_int_payload(-1));
	/* pthread_mutex_lock = EBUSY */
	call_enter(&t, 500, AGENT_FN_pthread_mutex_lock, 0);
	put_arg(&t, AGENT_KEY_MUTEX, EV_ARG_PTR, 0xabc0);
	call_exit(&t, 600, AGENT_FN_pthread_mutex_lock, ev_int_payload(EBUSY));
	/* malloc(64) = 0x5000, with a function frame inside */
	call_enter(&t, 700, AGENT_FN_malloc, 0);
	put_arg(&t, AGENT_KEY_SIZE, EV_ARG_U64, 64);
	put(&t, 710, B);
	put(&t, 720, B | EXIT);
	call_exit(&t, 800, AGENT_FN_malloc, ev_ptr_payload(0x5000));
	/* write = 2^50: too large for the payload, given by an ARG */
	call_enter(&t, 900, AGENT_FN_write, 0);
	put_arg(&t, AGENT_KEY_RESULT, EV_ARG_I64, 1ull << 50);
	call_exit(&t, 1000, AGENT_FN_write, EV_RESULT_SPILLED);
	/* free: no result; a bool */
	call_enter(&t, 1100, AGENT_FN_free, 0);
	put_arg(&t, AGENT_KEY_PTR, EV_ARG_PTR, 0x5000);
	put_arg(&t, AGENT_KEY_WAITED, EV_ARG_BOOL, 1);
	put_arg(&t, AGENT_KEY_START_ROUTINE, EV_ARG_CODE, B); /* an entry address */
	call_exit(&t, 1200, AGENT_FN_free, 0);
	/* a function of a later agent, no arguments: the 3-word path */
	call_enter(&t, 1300, 500, 0);
	call_exit(&t, 1400, 500, 7);
	/* four tagged records at one timestamp: the frame still lasts */
	call_enter(&t, 2000, AGENT_FN_close, 0);
	put_arg(&t, AGENT_KEY_FD, EV_ARG_I64, 4);
	put_arg(&t, 200, EV_ARG_U64, 9); /* an unknown key */
	call_exit(&t, 2000, AGENT_FN_close, ev_int_payload(0));
	t.tid = 21;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "calls: converted");
	ASSERT_EQ_I64(a.errors, 0, "calls: reader finds no error");
	ASSERT_EQ_U64(st.libc_calls, 8, "calls: libc calls counted");
	ASSERT_EQ_U64(st.events, 9, "calls: eight calls and a function");

	e = find(&a, 21, "read");
	ok(e && e->type == FXT_EVENT_DURATION_COMPLETE && strcmp(e->cat, "libc.io") == 0,
	   "calls: read is a complete event, category libc.io");
	ok(e && e->ts == 100 && e->end == 200, "calls: read [100, 200]");
	ASSERT_EQ_U64(e ? e->nargs : 0, 4, "calls: read has four arguments");
	expect_str(e, "caller", "agent_test_alpha", "calls: read");
	expect_int(e, "fd", FXT_ARG_INT64, 3, "calls: read");
	expect_str(e, "path", "/etc/hostname", "calls: read");
	expect_int(e, "result", FXT_ARG_INT64, 5, "calls: read");
	ok(e && strcmp(e->args[0].name, "caller") == 0 && strcmp(e->args[3].name, "result") == 0,
	   "calls: arguments in record order");

	e = find(&a, 21, "open");
	ASSERT_EQ_U64(e ? e->nargs : 0, 2, "calls: open has two arguments");
	expect_str(e, "errno", "ENOENT", "calls: open");
	expect_int(e, "result", FXT_ARG_INT64, (uint64_t)-1, "calls: open");

	e = find(&a, 21, "pthread_mutex_lock");
	ok(e && strcmp(e->cat, "libc.sync") == 0, "calls: mutex lock in libc.sync");
	ASSERT_EQ_U64(e ? e->nargs : 0, 3, "calls: lock has three arguments");
	expect_int(e, "mutex", FXT_ARG_POINTER, 0xabc0, "calls: lock");
	expect_int(e, "result", FXT_ARG_INT64, EBUSY, "calls: lock");
	expect_str(e, "error", "EBUSY", "calls: lock");

	e = find(&a, 21, "malloc");
	ok(e && strcmp(e->cat, "libc.mem") == 0, "calls: malloc in libc.mem");
	expect_int(e, "size", FXT_ARG_UINT64, 64, "calls: malloc");
	expect_int(e, "result", FXT_ARG_POINTER, 0x5000, "calls: malloc");
	e = find(&a, 21, "agent_test_beta");
	ok(e && e->ts == 710 && e->end == 720 && e->nargs == 0,
	   "calls: the function frame inside malloc, no arguments");

	e = find(&a, 21, "write");
	ASSERT_EQ_U64(e ? e->nargs : 0, 1, "calls: write has one result");
	expect_int(e, "result", FXT_ARG_INT64, 1ull << 50, "calls: write's spilled result");

	e = find(&a, 21, "free");
	ASSERT_EQ_U64(e ? e->nargs : 0, 3, "calls: free has no result");
	expect_int(e, "waited", FXT_ARG_BOOL, 1, "calls: free");
	expect_str(e, "start_routine", "agent_test_beta", "calls: a code address by name");

	e = find(&a, 21, "libc#500");
	ok(e && strcmp(e->cat, "libc") == 0 && e->nargs == 0 && e->ts == 1300 && e->end == 1400,
	   "calls: unknown function libc#500, category libc, no arguments");

	e = find(&a, 21, "close");
	ok(e && e->ts == 2000 && e->end == 2004,
	   "calls: three arguments at one timestamp: the frame lasts 4 ticks");
	expect_int(e, "arg200", FXT_ARG_UINT64, 9, "calls: close, unknown key");
	ASSERT_EQ_I64(nesting(&a, 21), -1, "calls: nest");
	ok(stream_ok(&a, 21), "calls: start order");
	free(a.ev);
}

/* A call frame forced out of a tiny FIFO: begun, its arguments (those
 * from its enter and its exit) on its END event. */
static void test_begun_args(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *b, *e;

	test_spool_reset(1 << 20, 0);
	call_enter(&t, 100, AGENT_FN_read, 0);
	put_arg(&t, AGENT_KEY_FD, EV_ARG_I64, 3);
	for (uint64_t i = 0; i < 4; i++) {
		put(&t, 200 + 10 * i, B);
		put(&t, 205 + 10 * i, B | EXIT);
	}
	call_exit(&t, 300, AGENT_FN_read, ev_int_payload(42));
	t.tid = 22;
	ASSERT_EQ_I64(conv_to(&a, 5000, 2, &st), 0, "begun args: converted");
	ASSERT_EQ_I64(a.errors, 0, "begun args: reader finds no error");
	b = find_type(&a, 22, FXT_EVENT_DURATION_BEGIN, "read");
	e = find_type(&a, 22, FXT_EVENT_DURATION_END, "read");
	ok(b && b->ts == 100 && b->nargs == 0, "begun args: read begins at 100, no arguments");
	ok(e && e->ts == 300, "begun args: read ends at 300");
	ASSERT_EQ_U64(e ? e->nargs : 0, 2, "begun args: two arguments on the END");
	expect_int(e, "fd", FXT_ARG_INT64, 3, "begun args: end");
	expect_int(e, "result", FXT_ARG_INT64, 42, "begun args: end");
	ASSERT_EQ_U64(count(&a, 22, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta"), 4,
		      "begun args: the four calls inside");
	ok(stream_ok(&a, 22), "begun args: start order, balanced");
	free(a.ev);
}

/* FLOW records: flow events inside their frame, after its start or
 * before its end. */
static void test_flows(void)
{
	const uint64_t id1 = ev_flow_id(EV_FLOWID_THREAD, 4242, 1);
	const uint64_t id2 = ev_flow_id(EV_FLOWID_THREAD, 4242, 2);
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *f, *g;

	test_spool_reset(1 << 20, 0);
	call_enter(&t, 100, AGENT_FN_pthread_create, 0);
	put_flow(&t, EV_FLOW_BEGIN, id1, false);
	put_flow(&t, EV_FLOW_STEP, id2, false);
	call_exit(&t, 200, AGENT_FN_pthread_create, ev_int_payload(0));
	call_enter(&t, 300, AGENT_FN_pthread_join, 0);
	put(&t, 310, B); /* a frame inside, before the flow */
	put(&t, 320, B | EXIT);
	put_flow(&t, EV_FLOW_END, id1, true);
	call_exit(&t, 400, AGENT_FN_pthread_join, ev_int_payload(0));
	put_flow(&t, EV_FLOW_BEGIN, id2, false); /* no frame open: dropped */
	t.tid = 23;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "flows: converted");
	ASSERT_EQ_I64(a.errors, 0, "flows: reader finds no error");
	ASSERT_EQ_U64(st.flows, 3, "flows: three flow events");
	f = find_type(&a, 23, FXT_EVENT_FLOW_BEGIN, NULL);
	ok(f && f->end == id1 && f->ts == 101, "flows: begin, its id, at start + 1");
	ok(f && strcmp(f->cat, "flow") == 0 && strcmp(f->name, "pthread_create") == 0,
	   "flows: category flow, named after the frame");
	g = find_type(&a, 23, FXT_EVENT_FLOW_STEP, NULL);
	ok(g && g->end == id2 && g->ts == 102, "flows: step at start + 2");
	f = find_type(&a, 23, FXT_EVENT_FLOW_END, NULL);
	ok(f && f->end == id1 && f->ts == 399 && strcmp(f->name, "pthread_join") == 0,
	   "flows: end \"at end\" at end - 1");
	g = find(&a, 23, "pthread_create");
	ok(g && g->ts == 100 && g->end == 200 && g->nargs == 1,
	   "flows: the frame keeps only its result as an argument");
	ok(stream_ok(&a, 23), "flows: slices in start order");
	free(a.ev);
}

/* Lines assembled across records, split within one, per stream; a line
 * left without its newline at the thread's end. */
static void test_logs(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *w, *e;
	size_t nlines = 0;

	test_spool_reset(1 << 20, 0);
	call_enter(&t, 100, AGENT_FN_write, 0);
	put_log(&t, 101, EV_LOG_STDOUT, 0, "hel");
	call_exit(&t, 110, AGENT_FN_write, ev_int_payload(3));
	call_enter(&t, 200, AGENT_FN_write, 0);
	put_log(&t, 201, EV_LOG_STDOUT, 0, "lo\nwor");
	call_exit(&t, 210, AGENT_FN_write, ev_int_payload(6));
	call_enter(&t, 300, AGENT_FN_write, 0);
	put_log(&t, 301, EV_LOG_STDERR, 0, "e1\ne2\n");
	call_exit(&t, 310, AGENT_FN_write, ev_int_payload(6));
	put_log(&t, 400, EV_LOG_STDOUT, 0, "ld\ntail");
	put_log(&t, 500, EV_LOG_SYSLOG, 3, "disk \xff full");
	t.tid = 24;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "logs: converted");
	ASSERT_EQ_I64(a.errors, 0, "logs: reader finds no error");
	ASSERT_EQ_U64(st.log_lines, 6, "logs: six lines");
	ASSERT_EQ_U64(a.nlogs, 6, "logs: six log records");
	for (size_t i = 0; i < a.nev; i++)
		nlines += a.ev[i].type == FXT_EVENT_INSTANT && strcmp(a.ev[i].cat, "log") == 0;
	ASSERT_EQ_U64(nlines, 6, "logs: six instant events");
	e = find(&a, 24, "hello");
	w = &a.ev[0];
	ok(e && e->type == FXT_EVENT_INSTANT && strcmp(e->cat, "log") == 0,
	   "logs: \"hello\" assembled across two records");
	ok(e && e->ts == 201, "logs: at the record that completed it, inside its write");
	expect_str(e, "message", "hello", "logs: hello");
	expect_str(e, "stream", "stdout", "logs: hello");
	e = find(&a, 24, "e2");
	ok(e && e->ts > 300 && e->ts < 310, "logs: e2 split from e1 in one record");
	expect_str(e, "stream", "stderr", "logs: e2");
	ok(find(&a, 24, "world") != NULL, "logs: world, ended by a record outside any call");
	ok(find(&a, 24, "tail") != NULL, "logs: a line without newline at the end");
	e = find(&a, 24, "disk ? full");
	ok(e != NULL, "logs: syslog message, bytes not UTF-8 replaced");
	expect_str(e, "stream", "syslog", "logs: syslog");
	expect_int(e, "priority", FXT_ARG_INT64, 3, "logs: syslog");
	ok(strcmp(a.logs[0].msg, "hello") == 0 && strcmp(a.logs[1].msg, "e1") == 0 &&
	       strcmp(a.logs[2].msg, "e2") == 0 && strcmp(a.logs[3].msg, "world") == 0,
	   "logs: log records in stream order");
	ok(w && strcmp(w->name, "write") == 0, "logs: the first event is the first write");
	ok(stream_ok(&a, 24), "logs: instants in start order inside their frames");
	free(a.ev);
}

/* Heap deltas of two threads summed in time order, on the main thread. */
static void test_counters(void)
{
	struct test_thread t1 = { 0 }, t2 = { 0 };
	struct archive a;
	struct conv_stats st;
	const uint64_t want_ts[] = { 10, 20, 30, 40 };
	const int64_t want[] = { 100, 110, 60, 65 };
	size_t k = 0, bad = 0;

	test_spool_reset(1 << 20, 0);
	put(&t1, 10, ev_counter_w1(EV_COUNTER_HEAP, 100));
	put(&t2, 20, ev_counter_w1(EV_COUNTER_HEAP, 10));
	put(&t1, 30, ev_counter_w1(EV_COUNTER_HEAP, -50));
	put(&t2, 40, ev_counter_w1(EV_COUNTER_HEAP, 5));
	put(&t2, 50, ev_counter_w1((enum ev_counter)9, 5)); /* unknown counter */
	t1.tid = 4242;
	t2.tid = 4243;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "counters: converted");
	ASSERT_EQ_I64(a.errors, 0, "counters: reader finds no error");
	ASSERT_EQ_U64(st.counters, 4, "counters: four counter events");
	for (size_t i = 0; i < a.nev; i++) {
		const struct ev *e = &a.ev[i];
		if (e->type != FXT_EVENT_COUNTER)
			continue;
		if (k >= 4 || e->tid != 4242 || e->ts != want_ts[k] || e->end != 0 ||
		    strcmp(e->name, "heap") != 0 || strcmp(e->cat, "libc.mem") != 0 ||
		    e->nargs != 1 || strcmp(e->args[0].name, "bytes_in_use") != 0 ||
		    e->args[0].type != FXT_ARG_INT64 || e->args[0].i != want[k])
			bad++;
		k++;
	}
	ASSERT_EQ_U64(k, 4, "counters: four read back");
	ASSERT_EQ_U64(bad, 0,
		      "counters: heap = 100, 110, 60, 65 at 10, 20, 30, 40 on the main thread");
	free(a.ev);
}

static const struct ev *flow_with(const struct archive *a, int type, uint64_t id)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].type == type && a->ev[i].end == id)
			return &a->ev[i];
	return NULL;
}

/* Sync records paired across threads into flows; pairs that do not
 * match make none. */
static void test_sync(void)
{
	const uint64_t M = 0x1000, M2 = 0x2000, CV = 0x3000, CV2 = 0x3100, SEM = 0x4000;
	struct test_thread t1 = { 0 }, t2 = { 0 }, t3 = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t id[3];
	const struct ev *b, *e;

	test_spool_reset(1 << 20, 0);
	/* t1 releases: unlock M [100, 110], signal C [300, 305], post S
	 * [400, 402], signal CV2 [520, 530] (after t3's wait) */
	call_enter(&t1, 100, AGENT_FN_pthread_mutex_unlock, 0);
	put_sync(&t1, EV_SYNC_UNLOCK, M);
	call_exit(&t1, 110, AGENT_FN_pthread_mutex_unlock, 0);
	call_enter(&t1, 300, AGENT_FN_pthread_cond_signal, 0);
	put_sync(&t1, EV_SYNC_SIGNAL, CV);
	call_exit(&t1, 305, AGENT_FN_pthread_cond_signal, 0);
	call_enter(&t1, 400, AGENT_FN_sem_post, 0);
	put_sync(&t1, EV_SYNC_POST, SEM);
	call_exit(&t1, 402, AGENT_FN_sem_post, 0);
	call_enter(&t1, 520, AGENT_FN_pthread_cond_signal, 0);
	put_sync(&t1, EV_SYNC_SIGNAL, CV2);
	call_exit(&t1, 530, AGENT_FN_pthread_cond_signal, 0);
	/* t2 acquires: lock M [90, 130], wait C [280, 320], sem S [350, 410] */
	call_enter(&t2, 90, AGENT_FN_pthread_mutex_lock, 0);
	put_sync(&t2, EV_SYNC_LOCK_WAITED, M);
	call_exit(&t2, 130, AGENT_FN_pthread_mutex_lock, 0);
	call_enter(&t2, 280, AGENT_FN_pthread_cond_wait, 0);
	put_sync(&t2, EV_SYNC_WOKEN, CV);
	call_exit(&t2, 320, AGENT_FN_pthread_cond_wait, 0);
	call_enter(&t2, 350, AGENT_FN_sem_wait, 0);
	put_sync(&t2, EV_SYNC_SEM_WAITED, SEM);
	call_exit(&t2, 410, AGENT_FN_sem_wait, 0);
	/* t3: a lock of M that waited after the unlock had ended, a lock of
	 * M2 nobody released, a wait on CV2 signalled too late, a barrier */
	call_enter(&t3, 200, AGENT_FN_pthread_mutex_lock, 0);
	put_sync(&t3, EV_SYNC_LOCK_WAITED, M);
	call_exit(&t3, 250, AGENT_FN_pthread_mutex_lock, 0);
	call_enter(&t3, 260, AGENT_FN_pthread_mutex_lock, 0);
	put_sync(&t3, EV_SYNC_LOCK_WAITED, M2);
	call_exit(&t3, 270, AGENT_FN_pthread_mutex_lock, 0);
	call_enter(&t3, 500, AGENT_FN_pthread_cond_wait, 0);
	put_sync(&t3, EV_SYNC_WOKEN, CV2);
	call_exit(&t3, 510, AGENT_FN_pthread_cond_wait, 0);
	call_enter(&t3, 600, AGENT_FN_pthread_barrier_wait, 0);
	put_sync(&t3, EV_SYNC_BARRIER, 0x5000);
	call_exit(&t3, 610, AGENT_FN_pthread_barrier_wait, 0);
	put_sync(&t3, EV_SYNC_UNLOCK, M); /* outside any call: ignored */
	t1.tid = 31;
	t2.tid = 32;
	t3.tid = 33;
	conv_groups = AGENT_G_SYNC;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "sync: converted");
	conv_groups = 0;
	ASSERT_EQ_I64(a.errors, 0, "sync: reader finds no error");
	ASSERT_EQ_U64(st.flows, 6, "sync: three pairs, six flow events");
	for (int i = 0; i < 3; i++)
		id[i] = ev_flow_id(EV_FLOWID_LOCAL, 4242, (1u << 31) + 1 + (uint32_t)i);
	/* Pairs are numbered by object: M (0x1000), C (0x3000), S (0x4000). */
	b = flow_with(&a, FXT_EVENT_FLOW_BEGIN, id[0]);
	e = flow_with(&a, FXT_EVENT_FLOW_END, id[0]);
	ok(b && b->tid == 31 && b->ts == 101 && strcmp(b->name, "pthread_mutex_unlock") == 0,
	   "sync: unlock -> flow begin inside the unlock");
	ok(e && e->tid == 32 && e->ts == 129 && strcmp(e->name, "pthread_mutex_lock") == 0,
	   "sync: flow end at the end of the lock that waited");
	b = flow_with(&a, FXT_EVENT_FLOW_BEGIN, id[1]);
	e = flow_with(&a, FXT_EVENT_FLOW_END, id[1]);
	ok(b && b->tid == 31 && b->ts > 300 && b->ts < 305 && e && e->tid == 32 && e->ts == 319,
	   "sync: signal -> the wait it woke");
	b = flow_with(&a, FXT_EVENT_FLOW_BEGIN, id[2]);
	e = flow_with(&a, FXT_EVENT_FLOW_END, id[2]);
	ok(b && b->tid == 31 && b->ts > 400 && b->ts < 402 && e && e->tid == 32 && e->ts == 409,
	   "sync: post -> the sem wait");
	ASSERT_EQ_U64(count(&a, 33, FXT_EVENT_FLOW_END, NULL), 0, "sync: nothing paired on t3");
	free(a.ev);
	/* The same spool from an agent without the sync group: no pairs. */
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "sync: converted again");
	ASSERT_EQ_U64(st.flows, 0, "sync: no pairs without the sync group");
	free(a.ev);
}

/* A read of a pipe: a flow end from each write whose first byte it
 * consumed, as the session log says. */
static void test_pipe(void)
{
	static const struct session_write w[] = {
		{ .key = 7, .off = 0, .len = 5, .flow_id = 0x3000000000000001ull },
		{ .key = 7, .off = 5, .len = 5, .flow_id = 0x3000000000000002ull },
		{ .key = 7, .off = 10, .len = 5, .flow_id = 0x3000000000000003ull },
		{ .key = 7, .off = 15, .len = 5, .flow_id = 0x3000000000000004ull },
		{ .key = 8, .off = 3, .len = 5, .flow_id = 0x3000000000000005ull },
	};
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t rec[4];
	const struct ev *e;

	test_spool_reset(1 << 20, 0);
	call_enter(&t, 100, AGENT_FN_read, 0);
	rec[0] = 3; /* bytes [3, 11) of pipe 7: writes at 5 and 10 */
	rec[1] = ev_pipe_w1(EV_PIPE_READ, 7);
	rec[2] = 8;
	rec[3] = ev_tag_bits(EV_TAG_DATA);
	put_slots(&t, rec, 2);
	call_exit(&t, 200, AGENT_FN_read, ev_int_payload(8));
	call_enter(&t, 300, AGENT_FN_write, 0);
	rec[0] = 20;
	rec[1] = ev_pipe_w1(EV_PIPE_WRITE, 7);
	put_slots(&t, rec, 2);
	call_exit(&t, 400, AGENT_FN_write, ev_int_payload(8));
	t.tid = 41;
	conv_writes = w;
	conv_nwrites = sizeof(w) / sizeof(w[0]);
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "pipe: converted");
	conv_writes = NULL;
	conv_nwrites = 0;
	ASSERT_EQ_I64(a.errors, 0, "pipe: reader finds no error");
	ASSERT_EQ_U64(st.flows, 2, "pipe: two flow events");
	ok(!flow_with(&a, FXT_EVENT_FLOW_END, w[0].flow_id), "pipe: not the write before");
	e = flow_with(&a, FXT_EVENT_FLOW_END, w[1].flow_id);
	ok(e && e->tid == 41 && e->ts > 100 && e->ts < 200 && strcmp(e->name, "read") == 0,
	   "pipe: the write at 5, inside the read");
	ok(flow_with(&a, FXT_EVENT_FLOW_END, w[2].flow_id) != NULL, "pipe: the write at 10");
	ok(!flow_with(&a, FXT_EVENT_FLOW_END, w[3].flow_id) &&
	       !flow_with(&a, FXT_EVENT_FLOW_END, w[4].flow_id),
	   "pipe: not the write after, nor another pipe's");
	e = find(&a, 41, "read");
	expect_int(e, "stream_offset", FXT_ARG_UINT64, 3, "pipe: read");
	e = find(&a, 41, "write");
	expect_int(e, "stream_offset", FXT_ARG_UINT64, 20, "pipe: write");
	free(a.ev);
}

/* Stack samples: a sample track, a thread of its own named after the
 * sampled one. */
static void test_samples(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t rec[4];
	bool named = false;

	test_spool_reset(1 << 20, 0);
	put(&t, 100, A);
	rec[0] = 110;
	rec[1] = ev_sample_w1(2);
	rec[2] = (uint64_t)(uintptr_t)agent_test_work + 4;     /* the pc */
	rec[3] = ev_frame_w1((uintptr_t)agent_test_outer + 5); /* a return */
	put_slots(&t, rec, 2);
	rec[0] = 120;
	put_slots(&t, rec, 2);
	put(&t, 200, A | EXIT);
	t.tid = 51;
	conv_sample_hz = 1000;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "samples: converted");
	conv_sample_hz = 0;
	ASSERT_EQ_I64(a.errors, 0, "samples: reader finds no error");
	ASSERT_EQ_U64(st.samples, 2, "samples: two samples");
	for (unsigned i = 0; i < a.kobj_thread && i < 8; i++)
		named |= a.threads[i].koid == (51 | (1ull << 30)) &&
			 strcmp(a.threads[i].name, "t1 (samples)") == 0;
	ok(named, "samples: the sample track is named \"t1 (samples)\"");
	{
		const uint64_t koid = 51 | (1ull << 30);
		const struct ev *outer =
		    find_type(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_outer");
		const struct ev *inner =
		    find_type(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_work");
		ok(outer && outer->ts == 110 && outer->end >= 5000 && outer->end <= 5001,
		   "samples: the caller (a return address) on the sample track, from 110");
		ok(inner && outer && inner->ts > outer->ts && inner->end <= outer->end,
		   "samples: the interrupted function inside it");
		ok(inner && strcmp(inner->cat, "test_convert_pipeline") == 0,
		   "samples: category is the module");
		ASSERT_EQ_U64(st.sample_slices, 2, "samples: two sample slices, counted apart");
		ASSERT_EQ_U64(st.events, 1, "samples: events are the thread's slices only");
	}
	ASSERT_EQ_U64(count(&a, 51, FXT_EVENT_DURATION_COMPLETE, "agent_test_alpha"), 1,
		      "samples: the hook frame as before");
	free(a.ev);
}

/* Time a sampled thread spent in the agent's own code is not the
 * program's: its innermost agent frames become one "fxtrace" frame under
 * the program's frame that called into the agent.  Here agent_test_work
 * plays the agent's code. */
static void test_samples_in_agent(void)
{
	const uint64_t koid = 52 | (1ull << 30);
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t rec[4];

	test_spool_reset(1 << 20, 0);
	put(&t, 100, A);
	rec[0] = 110;
	rec[1] = ev_sample_w1(2);
	rec[2] = (uint64_t)(uintptr_t)agent_test_work + 4;
	rec[3] = ev_frame_w1((uintptr_t)agent_test_outer + 5);
	put_slots(&t, rec, 2);
	put(&t, 200, A | EXIT);
	t.tid = 52;
	conv_sample_hz = 1000;
	conv_agent_lo = (uint64_t)(uintptr_t)agent_test_work;
	conv_agent_hi = conv_agent_lo + 16;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "agent samples: converted");
	conv_agent_lo = conv_agent_hi = 0;
	conv_sample_hz = 0;
	{
		const struct ev *outer =
		    find_type(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_outer");
		const struct ev *mine = find_type(&a, koid, FXT_EVENT_DURATION_COMPLETE, "fxtrace");
		ok(outer && mine && mine->ts >= outer->ts && mine->end <= outer->end &&
		       strcmp(mine->cat, "fxtrace") == 0,
		   "agent samples: one \"fxtrace\" frame under the program's caller");
		ASSERT_EQ_U64(count(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_work"), 0,
			      "agent samples: the agent's function is not on the track");
	}
	free(a.ev);
}

/* A sample the agent marked as its own (taken inside agent code): its
 * innermost frames outside the agent (the C library's functions the agent
 * called; agent_test_beta plays one) are the agent's work too, one
 * "fxtrace" frame.  The same stack unmarked is the program's. */
static void test_samples_agent_marked(void)
{
	const uint64_t koid = 53 | (1ull << 30);

	for (int marked = 0; marked < 2; marked++) {
		struct test_thread t = { 0 };
		struct archive a;
		struct conv_stats st;
		uint64_t rec[6];
		const char *what = marked ? "marked" : "unmarked";

		test_spool_reset(1 << 20, 0);
		put(&t, 100, A);
		rec[0] = 110;
		rec[1] = ev_sample_w1_full(3, 1, marked, false);
		rec[2] = B;					      /* pthread_sigmask */
		rec[3] = ev_frame_w1((uintptr_t)agent_test_work + 5); /* the agent */
		rec[4] = (uint64_t)(uintptr_t)agent_test_outer + 5;   /* the program */
		rec[5] = ev_frame_w1(0);
		put_slots(&t, rec, 3);
		put(&t, 200, A | EXIT);
		t.tid = 53;
		conv_sample_hz = 1000;
		conv_agent_lo = (uint64_t)(uintptr_t)agent_test_work;
		conv_agent_hi = conv_agent_lo + 16;
		ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "%s agent sample: converted", what);
		conv_agent_lo = conv_agent_hi = 0;
		conv_sample_hz = 0;
		ASSERT_EQ_U64(count(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta"),
			      marked ? 0 : 1, "%s: the C library's frame %s", what,
			      marked ? "is the agent's" : "is the program's");
		ASSERT_EQ_U64(count(&a, koid, FXT_EVENT_DURATION_COMPLETE, "fxtrace"), marked,
			      "%s: %s \"fxtrace\" frame", what, marked ? "one" : "no");
		ASSERT_EQ_U64(count(&a, koid, FXT_EVENT_DURATION_COMPLETE, "agent_test_outer"), 1,
			      "%s: under the program's caller", what);
		free(a.ev);
	}
}

/* "Not sampled from here on": an instant on the thread (not a sample
 * track) saying why, counted as the archive's reader counts it. */
static void test_unsampled(void)
{
	const char *name =
	    FXT_UNSAMPLED_PREFIX "it blocks SIGPROF, which the program handles itself";
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;

	test_spool_reset(1 << 20, 0);
	put(&t, 100, A);
	put(&t, 150, ev_unsampled_w1(EV_UNSAMPLED_SIGPROF_USED));
	put(&t, 200, A | EXIT);
	t.tid = 54;
	conv_sample_hz = 1000;
	ASSERT_EQ_I64(conv_to(&a, 5000, 0, &st), 0, "unsampled: converted");
	conv_sample_hz = 0;
	e = find_type(&a, 54, FXT_EVENT_INSTANT, name);
	ok(e && e->ts >= 150 && e->ts < 200 && strcmp(e->cat, "fxt") == 0,
	   "unsampled: an instant \"%s\" on the thread, at its time", name);
	ASSERT_EQ_U64(count(&a, 54 | (1ull << 30), FXT_EVENT_INSTANT, NULL) +
			  count(&a, 54 | (1ull << 30), FXT_EVENT_DURATION_COMPLETE, NULL),
		      0, "unsampled: no sample track for it");
	ASSERT_EQ_U64(count(&a, 54, FXT_EVENT_DURATION_COMPLETE, "agent_test_alpha"), 1,
		      "unsampled: the thread's frame as before");
	free(a.ev);
}

/* Whatever the slots say: no crash, a valid archive. */
static void test_garbage(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t x = 0x9e3779b97f4a7c15ull, rec[4];
	const struct ev *e;

	test_spool_reset(1 << 20, 0);
	put(&t, 5, ev_tag_bits(EV_TAG_DATA) | 123);   /* orphan DATA */
	put(&t, 6, ev_tag_bits(EV_TAG_FRAME) | 0x10); /* FRAME without SAMPLE */
	put(&t, 7, ev_tag_bits(0x7f) | 1);	      /* a tag of a later agent */
	put_sync(&t, EV_SYNC_UNLOCK, 0x10);	      /* no frame open */
	call_exit(&t, 8, AGENT_FN_read, 0);	      /* exit without enter */
	call_enter(&t, 100, AGENT_FN_open, 0);
	/* a STR of 30 bytes with one DATA slot, then an ARG */
	rec[0] = 30;
	rec[1] = ev_str_w1(AGENT_KEY_PATH, 0);
	ev_put_data(rec + 2, "abcdefghijklmn", 14);
	put_slots(&t, rec, 2);
	put_arg(&t, AGENT_KEY_FLAGS, EV_ARG_U64, 2);
	put_str(&t, AGENT_KEY_MODE_STR, "\xff\xfeok");
	/* a SAMPLE of depth 5 with one FRAME, a PIPE without its DATA, a LOG
	 * of 100 bytes without any */
	rec[0] = 110;
	rec[1] = ev_sample_w1(5);
	rec[2] = A;
	rec[3] = ev_frame_w1(0);
	put_slots(&t, rec, 2);
	put(&t, 0, ev_pipe_w1(EV_PIPE_READ, 7));
	put(&t, 120, ev_log_w1(EV_LOG_STDOUT, 0, 100));
	call_exit(&t, 200, AGENT_FN_open, ev_int_payload(3));
	/* 4000 random slots */
	for (int i = 0; i < 4000; i++) {
		uint64_t w0, w1;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w0 = x % 100000;
		w1 = x * 0x2545f4914f6cdd1dull;
		if (i % 3 == 0)
			w1 &= ~(0x7full << 56); /* hook records */
		if (!w1)
			w1 = 1;
		put(&t, w0, w1);
	}
	t.tid = 61;
	conv_groups = AGENT_G_ALL;
	conv_sample_hz = 100;
	ASSERT_EQ_I64(conv_to(&a, 1ull << 40, 0, &st), 0, "garbage: converted");
	conv_groups = 0;
	conv_sample_hz = 0;
	ASSERT_EQ_I64(a.errors, 0, "garbage: reader finds no error");
	e = find(&a, 61, "open");
	expect_str(e, "path", "abcdefghijklmn", "garbage: a STR cut to its DATA");
	expect_int(e, "flags", FXT_ARG_UINT64, 2, "garbage: the ARG after it");
	expect_str(e, "mode", "??ok", "garbage: bytes not UTF-8 replaced");
	expect_int(e, "result", FXT_ARG_INT64, 3, "garbage: result");
	ASSERT_EQ_I64(nesting(&a, 61), -1, "garbage: slices nest");
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
		ASSERT_EQ_I64(conv_to(&a, 1ull << 40, 0, &st), 0, "recycled copy: converted");
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
	ns_a = (double)(ta + conv_time_shift(&a)) * 1e9 / (double)a.ticks_per_second;
	ns_b = (double)(tb + conv_time_shift(&b)) * 1e9 / (double)b.ticks_per_second;
	ok(ns_a - (double)a.base_ns == 3e9, "A: 3 s after its anchor (%.0f ns)",
	   ns_a - (double)a.base_ns);
	ok(ns_a - ns_b < 20000 && ns_b - ns_a < 20000, "A and B agree within 20 us (%.0f ns)",
	   ns_a - ns_b);
	raw_a = (double)ta * 1e9 / (double)a.ticks_per_second;
	raw_b = (double)tb * 1e9 / (double)b.ticks_per_second;
	ok(raw_a - raw_b > 1e7, "raw ticks would disagree by %.0f ms", (raw_a - raw_b) / 1e6);
	memset(&a, 0, sizeof(a));
	a.ticks_per_second = 1000000000u;
	ASSERT_EQ_U64(conv_time_shift(&a), 0, "no time base: raw ticks");
	a.base_ticks = a.base_ns = 12345;
	ASSERT_EQ_U64(conv_time_shift(&a), 0, "ns ticks: nothing to shift");
}

/* The kept archive's profile (tools/profile/profile.h), by function. */
static struct profile *profile_of_kept(void)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, NULL, NULL };
	struct fxt_reader *r;
	struct fxt_record rec;
	struct profile *p;

	if (!kept_archive || profile_new(&p, &o) < 0)
		return NULL;
	if (fxt_reader_open_mem(&r, kept_archive, kept_len, 0) < 0) {
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
	size_t same = 0;

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

	conv_keep = true;
	conv_min_ns = 0;
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "min duration: converted whole");
	free(a.ev);
	full = profile_of_kept();
	conv_min_ns = 2;
	ASSERT_EQ_I64(conv_to(&a, ~0ull >> 2, 0, &st), 0, "min duration: converted, 2 ns");
	ASSERT_EQ_U64(st.left_out, 10, "min duration: 7 calls of A and 3 of C left out");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_DURATION_COMPLETE, "agent_test_gamma"), 0,
		      "min duration: no slice of C");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_DURATION_COMPLETE, "agent_test_alpha"), 1,
		      "min duration: the outer A only");
	ASSERT_EQ_U64(count(&a, 101, FXT_EVENT_INSTANT, "agent_test_alpha"), 1,
		      "min duration: A's summary instant");
	free(a.ev);
	cut = profile_of_kept();
	conv_keep = false;
	conv_min_ns = 0;
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
	free(kept_archive);
	kept_archive = NULL;
}

int main(void)
{
	plan(225);
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
	test_calls();
	test_begun_args();
	test_flows();
	test_logs();
	test_counters();
	test_sync();
	test_pipe();
	test_samples();
	test_samples_in_agent();
	test_samples_agent_marked();
	test_unsampled();
	test_garbage();
	test_recycled_copy();
	test_time_base();
	test_min_duration();
	test_spool_cleanup();
	return exit_status();
}
