/* Unit tests of tools/waits/waits.c, fxt-waits' engine: an archive built
 * with the writer, whose waits are known by construction, checked field by
 * field.  Two processes: app (pid 10: main 10, worker 11) and child (pid
 * 20; worker2 12), a clock of 1 GHz (ticks are ns), and context switches, so that the
 * runnable time is known.
 *
 *   A  main/want waits in pthread_mutex_lock [200, 50000] (waited=true);
 *      worker/hold unlocks at 49001 (a flow): hold is open throughout;
 *      main is switched in at 49500: runnable 499
 *   -  main/want's second pthread_mutex_lock did not wait: no wait
 *   B  main/poll_loop's pthread_cond_timedwait [70000, 90000] timed out
 *      (result ETIMEDOUT, no flow): no releaser, timed out
 *   C  main/reader reads a pipe [100100, 130000], a begun slice whose flow
 *      comes after its END; child/feed writes at 128001 (another process):
 *      runnable 1499
 *   D  main/joiner's pthread_join [200000, 300000]: worker ends at 250000
 *   E  main/joiner3's pthread_join [340000, 370000]: worker2 ends at 360000
 *      with an instant after its last frame ended (its last frames: that
 *      frame, "thread")
 *   -  main/joiner2's pthread_join [400000, 400100]: the threads had ended,
 *      no wait
 *   -  main/reaper's waitpid [410000, 410010] returned 0 (WNOHANG): no
 *      wait
 *   F  main/reader2 reads a pipe [500000, 600000] given the bytes of two
 *      writes of child/feed2 (flows 3 at 510001 and 4 at 550001): the
 *      first let it through
 *   -  the flow into worker's "thread" frame (its creation): no wait
 * The file holds main's records first, so a flow's end comes before its
 * begin. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/waits/waits.h"

static struct fxt_writer *w;

struct a {
	const char *name;
	enum fxt_arg_type type;
	const char *s;
	int64_t i;
};

static void event(enum fxt_event_type type, uint64_t pid, uint64_t tid, const char *cat,
		  const char *name, uint64_t ts, uint64_t extra, const struct a *args)
{
	struct fxt_event ev = { 0 };
	struct fxt_arg v[8];
	unsigned n = 0;

	for (; args && args[n].name; n++) {
		memset(&v[n], 0, sizeof(v[n]));
		v[n].type = args[n].type;
		v[n].name = fxt_writer_cstring(w, args[n].name);
		if (args[n].type == FXT_ARG_STRING)
			v[n].v.str = fxt_writer_cstring(w, args[n].s);
		else if (args[n].type == FXT_ARG_BOOL)
			v[n].v.b = args[n].i != 0;
		else
			v[n].v.i64 = args[n].i;
	}
	ev.type = type;
	ev.ts = ts;
	ev.thread = fxt_writer_thread(w, pid, tid);
	ev.category = fxt_writer_cstring(w, cat);
	ev.name = fxt_writer_cstring(w, name);
	ev.extra = extra;
	ev.args = v;
	ev.nargs = n;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

static void X(uint64_t pid, uint64_t tid, const char *cat, const char *name, uint64_t ts,
	      uint64_t end, const struct a *args)
{
	event(FXT_EVENT_DURATION_COMPLETE, pid, tid, cat, name, ts, end, args);
}

static void flow(enum fxt_event_type type, uint64_t pid, uint64_t tid, uint64_t ts, uint64_t id)
{
	event(type, pid, tid, "flow", "f", ts, id, NULL);
}

static void switch_in(uint64_t tid, uint64_t ts)
{
	struct fxt_context_switch cs = { 0 };

	cs.out_thread = fxt_writer_thread(w, 0, 0);
	cs.in_thread = fxt_writer_thread(w, 10, tid);
	cs.ts = ts;
	if (fxt_writer_context_switch(w, &cs) < 0)
		bail_out("fxt_writer_context_switch");
}

#define CALLER(f)                              \
	{                                      \
		"caller", FXT_ARG_STRING, f, 0 \
	}
#define END_ARGS                 \
	{                        \
		NULL, 0, NULL, 0 \
	}

static void build(void)
{
	const struct a lock_waited[] = { CALLER("want"),
					 { "waited", FXT_ARG_BOOL, NULL, 1 },
					 { "result", FXT_ARG_INT64, NULL, 0 },
					 END_ARGS };
	const struct a lock_quick[] = { CALLER("want"),
					{ "result", FXT_ARG_INT64, NULL, 0 },
					END_ARGS };
	const struct a timedwait[] = { CALLER("poll_loop"),
				       { "result", FXT_ARG_INT64, NULL, ETIMEDOUT },
				       END_ARGS };
	const struct a rd[] = { CALLER("reader"),
				{ "stream_offset", FXT_ARG_UINT64, NULL, 0 },
				END_ARGS };
	const struct a join1[] = { CALLER("joiner"), END_ARGS };
	const struct a join2[] = { CALLER("joiner2"), END_ARGS };
	const struct a join3[] = { CALLER("joiner3"), END_ARGS };
	const struct a rd2[] = { CALLER("reader2"),
				 { "stream_offset", FXT_ARG_UINT64, NULL, 1 },
				 END_ARGS };
	const struct a feed2[] = { CALLER("feed2"), END_ARGS };
	const struct a nohang[] = { CALLER("reaper"),
				    { "result", FXT_ARG_INT64, NULL, 0 },
				    END_ARGS };
	const struct a create[] = { CALLER("main"), END_ARGS };
	const struct a life[] = { CALLER("app+0x10"), END_ARGS };
	const struct a hold[] = { CALLER("hold"), END_ARGS };
	const struct a feed[] = { CALLER("feed"), END_ARGS };

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, 1000000000);
	fxt_writer_process_name(w, 10, "app");
	fxt_writer_thread_name(w, 10, 10, "main");
	fxt_writer_thread_name(w, 10, 11, "worker");
	fxt_writer_process_name(w, 20, "child");

	/* main */
	X(10, 10, "app", "main", 0, 1000000, NULL);
	X(10, 10, "libc.thread", "pthread_create", 10, 40, create);
	flow(FXT_EVENT_FLOW_BEGIN, 10, 10, 11, 100);
	X(10, 10, "app", "want", 100, 60100, NULL);
	X(10, 10, "libc.sync", "pthread_mutex_lock", 200, 50000, lock_waited);
	flow(FXT_EVENT_FLOW_END, 10, 10, 49999, 1);
	X(10, 10, "libc.sync", "pthread_mutex_lock", 60000, 60010, lock_quick);
	X(10, 10, "libc.sync", "pthread_cond_timedwait", 70000, 90000, timedwait);
	event(FXT_EVENT_DURATION_BEGIN, 10, 10, "app", "reader", 100000, 0, NULL);
	event(FXT_EVENT_DURATION_BEGIN, 10, 10, "libc.io", "read", 100100, 0, rd);
	event(FXT_EVENT_DURATION_END, 10, 10, "libc.io", "read", 130000, 0, NULL);
	flow(FXT_EVENT_FLOW_END, 10, 10, 129999, 2);
	event(FXT_EVENT_DURATION_END, 10, 10, "app", "reader", 130100, 0, NULL);
	X(10, 10, "libc.thread", "pthread_join", 200000, 300000, join1);
	X(10, 10, "libc.thread", "pthread_join", 340000, 370000, join3);
	X(10, 10, "libc.thread", "pthread_join", 400000, 400100, join2);
	X(10, 10, "libc.proc", "waitpid", 410000, 410010, nohang);
	X(10, 10, "libc.io", "read", 500000, 600000, rd2);
	flow(FXT_EVENT_FLOW_END, 10, 10, 599998, 3);
	flow(FXT_EVENT_FLOW_END, 10, 10, 599999, 4);

	/* worker */
	X(10, 11, "libc.thread", "thread", 50, 250000, life);
	flow(FXT_EVENT_FLOW_END, 10, 11, 51, 100);
	X(10, 11, "app", "hold", 60, 240000, NULL);
	X(10, 11, "libc.sync", "pthread_mutex_lock", 70, 80, hold);
	X(10, 11, "libc.sync", "pthread_mutex_unlock", 49000, 49010, hold);
	flow(FXT_EVENT_FLOW_BEGIN, 10, 11, 49001, 1);

	/* worker2 */
	X(10, 12, "libc.thread", "thread", 300500, 350000, life);
	event(FXT_EVENT_INSTANT, 10, 12, "app", "done", 360000, 0, NULL);

	/* child */
	X(20, 20, "app", "feed", 1000, 129000, NULL);
	X(20, 20, "libc.io", "write", 128000, 128500, feed);
	flow(FXT_EVENT_FLOW_BEGIN, 20, 20, 128001, 2);
	X(20, 20, "app", "feed2", 400000, 560000, NULL);
	X(20, 20, "libc.io", "write", 510000, 510100, feed2);
	flow(FXT_EVENT_FLOW_BEGIN, 20, 20, 510001, 3);
	X(20, 20, "libc.io", "write", 550000, 550100, feed2);
	flow(FXT_EVENT_FLOW_BEGIN, 20, 20, 550001, 4);

	/* The process named again after its main thread: a thread's own name
	 * still comes first. */
	fxt_writer_process_name(w, 10, "app");
	switch_in(10, 20000); /* before the release: not the wake-up */
	switch_in(10, 49500);
	switch_in(10, 129500);
	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
}

static void check_item(const struct waits_item *it, uint64_t tid, uint64_t start, uint64_t end,
		       const char *call, const char *func, const char *what)
{
	ASSERT_EQ_U64(it->tid, tid, "%s: waiter", what);
	ASSERT_EQ_U64(it->start, start, "%s: start", what);
	ASSERT_EQ_U64(it->end, end, "%s: end", what);
	ASSERT_STR_EQ(it->call, call, "%s: call", what);
	ASSERT_STR_EQ(it->func, func, "%s: function", what);
}

static void check_release(const struct waits_item *it, enum waits_via via, uint64_t rpid,
			  uint64_t rtid, uint64_t rts, const char *rcall, const char *rfunc,
			  const char *since, int64_t runnable, const char *what)
{
	ASSERT_EQ_U64(it->via, via, "%s: via", what);
	ASSERT_EQ_U64(it->rpid, rpid, "%s: releaser pid", what);
	ASSERT_EQ_U64(it->rtid, rtid, "%s: releaser tid", what);
	ASSERT_EQ_U64(it->rts, rts, "%s: release time", what);
	ASSERT_STR_EQ(it->rcall, rcall, "%s: release call", what);
	ASSERT_STR_EQ(it->rfunc, rfunc, "%s: releaser's function", what);
	if (since)
		ASSERT_STR_EQ(it->since, since, "%s: busy in", what);
	else if (!ok(!it->since, "%s: busy in nothing", what))
		diag("  got \"%s\"", it->since);
	ASSERT_EQ_I64(it->runnable, runnable, "%s: runnable", what);
}

static void test_known_waits(void)
{
	const void *data;
	struct tool_input in = { "built", NULL, 0 };
	struct waits ws;
	char err[256];

	build();
	data = fxt_writer_mem_data(w, &in.len);
	in.mem = data;
	if (!ok(waits_load(&ws, &in, err, sizeof(err)) == 0, "the archive loads"))
		diag("  %s", err);
	ASSERT_EQ_U64(ws.nitems, 6, "six waits: a mutex, a join and a waitpid are none");
	ok(ws.sched, "the archive has scheduling");
	if (ws.nitems != 6) {
		waits_free(&ws);
		fxt_writer_free(w);
		return;
	}
	check_item(&ws.items[0], 10, 200, 50000, "pthread_mutex_lock", "want", "A");
	check_release(&ws.items[0], WAITS_VIA_FLOW, 10, 11, 49001, "pthread_mutex_unlock", "hold",
		      "hold", 499, "A");
	check_item(&ws.items[1], 10, 70000, 90000, "pthread_cond_timedwait", "poll_loop", "B");
	ASSERT_EQ_U64(ws.items[1].via, WAITS_VIA_NONE, "B: no releaser");
	ok(ws.items[1].timed_out, "B: timed out");
	check_item(&ws.items[2], 10, 100100, 130000, "read", "reader", "C");
	check_release(&ws.items[2], WAITS_VIA_FLOW, 20, 20, 128001, "write", "feed", "feed", 1499,
		      "C");
	check_item(&ws.items[3], 10, 200000, 300000, "pthread_join", "joiner", "D");
	check_release(&ws.items[3], WAITS_VIA_THREAD, 10, 11, 250000, "(thread end)", "hold",
		      "thread", -1, "D");
	check_item(&ws.items[4], 10, 340000, 370000, "pthread_join", "joiner3", "E");
	check_release(&ws.items[4], WAITS_VIA_THREAD, 10, 12, 360000, "(thread end)", "thread",
		      NULL, -1, "E");
	check_item(&ws.items[5], 10, 500000, 600000, "read", "reader2", "F");
	check_release(&ws.items[5], WAITS_VIA_FLOW, 20, 20, 510001, "write", "feed2", "feed2", -1,
		      "F");
	ASSERT_STR_EQ(waits_thread_name(&ws, 10, 11), "worker", "the worker's name");
	ASSERT_STR_EQ(waits_thread_name(&ws, 10, 10), "main",
		      "the main thread's name, not its process's (the same koid)");
	ASSERT_STR_EQ(waits_thread_name(&ws, 20, 20), "child", "a thread named by its process");
	waits_free(&ws);
	fxt_writer_free(w);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The archive read on a second thread (tools/profile/recpipe.c, many
 * batches of records handed over, the times left in ticks) gives the
 * waits read on one thread (FXT_THREADS=0), item for item: three
 * threads taking a lock in turn, each wait but the first released by the
 * previous one's unlock (a flow), plain complete events around them, a
 * clock of 2.995 GHz. */
static void test_threads(void)
{
	const struct a waited[] = { CALLER("step"),
				    { "waited", FXT_ARG_BOOL, NULL, 1 },
				    { "result", FXT_ARG_INT64, NULL, 0 },
				    END_ARGS };
	const struct a unlock[] = { CALLER("step"), END_ARGS };
	struct tool_input in = { "built", NULL, 0 };
	struct waits one, two;
	char err[256];
	size_t bad = 0;
	int rc1, rc2;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, 2995000000);
	for (uint64_t i = 0, ts = 1000; i < 9000; i++, ts += 1000) {
		uint64_t tid = 11 + i % 3;

		X(10, tid, "app", "step", ts, ts + 900, NULL);
		X(10, tid, "app", "leaf", ts + 10, ts + 100, NULL);
		X(10, tid, "libc.sync", "pthread_mutex_lock", ts + 200, ts + 500, waited);
		if (i)
			flow(FXT_EVENT_FLOW_END, 10, tid, ts + 499, i);
		X(10, tid, "app", "leaf", ts + 600, ts + 700, NULL);
		X(10, tid, "libc.sync", "pthread_mutex_unlock", ts + 800, ts + 810, unlock);
		flow(FXT_EVENT_FLOW_BEGIN, 10, tid, ts + 805, i + 1);
	}
	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	in.mem = fxt_writer_mem_data(w, &in.len);
	setenv("FXT_THREADS", "0", 1);
	rc1 = waits_load(&one, &in, err, sizeof(err));
	unsetenv("FXT_THREADS");
	rc2 = waits_load(&two, &in, err, sizeof(err));
	ok(rc1 == 0 && rc2 == 0 && one.nitems == 9000 && two.nitems == one.nitems,
	   "one thread and two: %zu and %zu waits", one.nitems, two.nitems);
	for (size_t k = 0; rc1 == 0 && rc2 == 0 && k < one.nitems && k < two.nitems; k++) {
		const struct waits_item *x = &one.items[k], *y = &two.items[k];

		bad += x->pid != y->pid || x->tid != y->tid || x->start != y->start ||
		       x->end != y->end || !same_str(x->call, y->call) ||
		       !same_str(x->func, y->func) || x->via != y->via ||
		       x->timed_out != y->timed_out || x->rpid != y->rpid || x->rtid != y->rtid ||
		       x->rts != y->rts || !same_str(x->rcall, y->rcall) ||
		       !same_str(x->rfunc, y->rfunc) || !same_str(x->since, y->since) ||
		       x->runnable != y->runnable;
	}
	ok(bad == 0 && one.start_ns == two.start_ns, "the same waits, field for field");
	waits_free(&one);
	waits_free(&two);
	fxt_writer_free(w);
}

/* Bad input: one error, no crash. */
static void test_bad(void)
{
	static const char garbage[] = "this is not an FXT archive at all";
	struct tool_input in = { "garbage", garbage, sizeof(garbage) };
	struct waits ws;
	char err[256] = "";

	ok(waits_load(&ws, &in, err, sizeof(err)) < 0 && err[0], "garbage is refused: %s", err);
	waits_free(&ws);
}

int main(void)
{
	test_known_waits();
	test_threads();
	test_bad();
	done_testing();
	return exit_status();
}
