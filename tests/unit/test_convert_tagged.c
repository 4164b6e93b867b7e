/* Unit tests of the conversion pipeline (convert/pipeline.c) on tagged
 * records (spool/records.h): libc calls and their arguments, flows, log
 * lines, the heap counter, sync pairs, pipe reads, stack samples and
 * damaged slots.  Spools from spool_test_writer.h, converted and read back
 * by convert_test_archive.h, as in test_convert_pipeline.c. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "spool/libc_table.h"
#include "run/recording.h"
#include "spool/records.h"
#include "tests/unit/convert_test_archive.h"

/* ------------------------------------------------------------ writing records */

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
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "calls");
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
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .fifo_max = 2 }, &st, "begun args");
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
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "flows");
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
	char longline[252], name[201];
	size_t nlines = 0;

	memset(longline, 'x', 250);
	longline[250] = '\n';
	longline[251] = '\0';
	memset(name, 'x', 200);
	name[200] = '\0';
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
	put_log(&t, 600, EV_LOG_STDERR, 0, longline);
	t.tid = 24;
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "logs");
	ASSERT_EQ_U64(st.log_lines, 7, "logs: seven lines");
	ASSERT_EQ_U64(a.nlogs, 7, "logs: seven log records");
	for (size_t i = 0; i < a.nev; i++)
		nlines += a.ev[i].type == FXT_EVENT_INSTANT && strcmp(a.ev[i].cat, "log") == 0;
	ASSERT_EQ_U64(nlines, 7, "logs: seven instant events");
	e = find(&a, 24, "hello");
	w = &a.ev[0];
	ok(e && e->type == FXT_EVENT_INSTANT && strcmp(e->cat, "log") == 0,
	   "logs: \"hello\" assembled across two records");
	ok(e && e->ts == 201, "logs: at the record that completed it, inside its write");
	ok(e && !arg_of(e, "message"),
	   "logs: hello: the name is the line, not repeated as message");
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
	e = find(&a, 24, name);
	ok(e != NULL, "logs: a line of 250 bytes: the instant is named after its first 200");
	longline[250] = '\0';
	expect_str(e, "message", longline, "logs: a line of 250 bytes, whole as message");
	nlines = 0;
	for (size_t i = 0; i < a.nlogs; i++)
		nlines += strcmp(a.logs[i].msg, longline) == 0;
	ok(nlines == 1, "logs: a line of 250 bytes, whole in its log record");
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
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "counters");
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
	struct test_thread t[3] = { { 0 } };
	/* Each a call frame holding one SYNC record, thread by thread.  t1
	 * releases: unlock M, signal CV, post SEM, signal CV2 (after t3's
	 * wait), and objects 0 and 0x6000 that nobody waited on.  t2
	 * acquires: lock M, a lock of ~0 that waited (no unlock of it: not
	 * paired with 0's), wait CV, sem SEM.  t3: a lock of M
	 * that waited after the unlock had ended, a lock of M2 nobody
	 * released, a wait on CV2 signalled too late, a barrier. */
	const struct {
		int t;
		uint64_t enter, exit;
		unsigned fn;
		enum ev_sync_op op;
		uint64_t obj;
	} calls[] = {
		{ 0, 100, 110, AGENT_FN_pthread_mutex_unlock, EV_SYNC_UNLOCK, M },
		{ 0, 140, 150, AGENT_FN_pthread_mutex_unlock, EV_SYNC_UNLOCK, 0 },
		{ 0, 160, 170, AGENT_FN_pthread_mutex_unlock, EV_SYNC_UNLOCK, 0x6000 },
		{ 0, 300, 305, AGENT_FN_pthread_cond_signal, EV_SYNC_SIGNAL, CV },
		{ 0, 400, 402, AGENT_FN_sem_post, EV_SYNC_POST, SEM },
		{ 0, 520, 530, AGENT_FN_pthread_cond_signal, EV_SYNC_SIGNAL, CV2 },
		{ 1, 90, 130, AGENT_FN_pthread_mutex_lock, EV_SYNC_LOCK_WAITED, M },
		{ 1, 135, 165, AGENT_FN_pthread_mutex_lock, EV_SYNC_LOCK_WAITED, ~0ull },
		{ 1, 280, 320, AGENT_FN_pthread_cond_wait, EV_SYNC_WOKEN, CV },
		{ 1, 350, 410, AGENT_FN_sem_wait, EV_SYNC_SEM_WAITED, SEM },
		{ 2, 200, 250, AGENT_FN_pthread_mutex_lock, EV_SYNC_LOCK_WAITED, M },
		{ 2, 260, 270, AGENT_FN_pthread_mutex_lock, EV_SYNC_LOCK_WAITED, M2 },
		{ 2, 500, 510, AGENT_FN_pthread_cond_wait, EV_SYNC_WOKEN, CV2 },
		{ 2, 600, 610, AGENT_FN_pthread_barrier_wait, EV_SYNC_BARRIER, 0x5000 },
	};
	struct archive a;
	struct conv_stats st;
	uint64_t id[3];
	const struct ev *b, *e;

	test_spool_reset(1 << 20, 0);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		call_enter(&t[calls[i].t], calls[i].enter, calls[i].fn, 0);
		put_sync(&t[calls[i].t], calls[i].op, calls[i].obj);
		call_exit(&t[calls[i].t], calls[i].exit, calls[i].fn, 0);
	}
	put_sync(&t[2], EV_SYNC_UNLOCK, M); /* outside any call: ignored */
	t[0].tid = 31;
	t[1].tid = 32;
	t[2].tid = 33;
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .groups = AGENT_G_SYNC }, &st, "sync");
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
	ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = 5000 }, &st), 0,
		      "sync: converted again");
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
	convert_ok(
	    &a,
	    &(struct conv_opts){ .now = 5000, .writes = w, .nwrites = sizeof(w) / sizeof(w[0]) },
	    &st, "pipe");
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
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .sample_hz = 1000 }, &st, "samples");
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
		ok(inner && strcmp(inner->cat, "test_convert_tagged") == 0,
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
	const uint64_t koid = 52 | (1ull << 30), lo = (uint64_t)(uintptr_t)agent_test_work;
	const struct conv_opts in_agent = {
		.now = 5000, .sample_hz = 1000, .agent_lo = lo, .agent_hi = lo + 16
	};
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
	ASSERT_EQ_I64(conv_to(&a, &in_agent, &st), 0, "agent samples: converted");
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
	const uint64_t koid = 53 | (1ull << 30), lo = (uint64_t)(uintptr_t)agent_test_work;
	const struct conv_opts in_agent = {
		.now = 5000, .sample_hz = 1000, .agent_lo = lo, .agent_hi = lo + 16
	};

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
		ASSERT_EQ_I64(conv_to(&a, &in_agent, &st), 0, "%s agent sample: converted", what);
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
	ASSERT_EQ_I64(conv_to(&a, &(struct conv_opts){ .now = 5000, .sample_hz = 1000 }, &st), 0,
		      "unsampled: converted");
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
	convert_ok(
	    &a, &(struct conv_opts){ .now = 1ull << 40, .groups = AGENT_G_ALL, .sample_hz = 100 },
	    &st, "garbage");
	e = find(&a, 61, "open");
	expect_str(e, "path", "abcdefghijklmn", "garbage: a STR cut to its DATA");
	expect_int(e, "flags", FXT_ARG_UINT64, 2, "garbage: the ARG after it");
	expect_str(e, "mode", "??ok", "garbage: bytes not UTF-8 replaced");
	expect_int(e, "result", FXT_ARG_INT64, 3, "garbage: result");
	ASSERT_EQ_I64(nesting(&a, 61), -1, "garbage: slices nest");
	free(a.ev);
}

int main(void)
{
	plan(130);
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
	test_spool_cleanup();
	return exit_status();
}
