/* Unit tests of the ONCE record (spool/records.h): a whole libc call in
 * two slots converts to the slice its full form (CALL enter, ARG, SYNC,
 * CALL exit at one time) converts to, its release pairs with a lock that
 * waited as the full form's SYNC does, and torn ones are skipped.  Spools
 * from spool_test_writer.h, converted and read back by
 * convert_test_archive.h, as in test_convert_tagged.c. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "spool/libc_table.h"
#include "run/recording.h"
#include "spool/records.h"
#include "tests/unit/convert_test_archive.h"

/* One call: its function, caller, argument, result payload. */
struct call {
	uint64_t ts;
	unsigned fn;
	uint64_t caller, value, payload;
};

/* The ONCE record of `c`. */
static void put_once(struct test_thread *t, const struct call *c)
{
	uint64_t w[4] = { c->ts, ev_once_w1(c->fn, c->caller), c->value,
			  ev_once_arg_w1(c->fn, c->payload) };

	test_record(t, w, 2);
}

/* The full form of `c`, as the agent wrote it before ONCE records: the
 * argument's key and type and the SYNC op are agent_fn_once()'s. */
static void put_full(struct test_thread *t, const struct call *c)
{
	struct agent_once o;
	uint64_t w[8];
	unsigned n = 0;

	if (!agent_fn_once(c->fn, &o))
		return;
	w[2 * n] = c->ts;
	w[2 * n++ + 1] = EV_CALL_ADDR(c->fn) | (c->caller & EV_PAYLOAD_MASK);
	w[2 * n] = c->value;
	w[2 * n++ + 1] = ev_arg_w1(o.key, o.type);
	if (o.op) {
		w[2 * n] = c->value;
		w[2 * n++ + 1] = ev_sync_w1(o.op);
	}
	w[2 * n] = c->ts;
	w[2 * n++ + 1] = EV_EXIT_BIT | EV_CALL_ADDR(c->fn) | c->payload;
	test_record(t, w, n);
}

/* Whether two slices say the same: name, category, length, arguments. */
static bool same_slice(const struct ev *x, const struct ev *y)
{
	if (!x || !y || strcmp(x->name, y->name) != 0 || strcmp(x->cat, y->cat) != 0 ||
	    x->type != y->type || x->end - x->ts != y->end - y->ts || x->nargs != y->nargs)
		return false;
	for (unsigned i = 0; i < x->nargs; i++) {
		const struct arg *a = &x->args[i], *b = &y->args[i];
		if (strcmp(a->name, b->name) != 0 || a->type != b->type || a->i != b->i ||
		    a->u != b->u || strcmp(a->s, b->s) != 0)
			return false;
	}
	return true;
}

/* Every function agent_fn_once() names, once in each form. */
static void test_same(void)
{
	static const struct call calls[] = {
		{ 100, AGENT_FN_malloc, 0, 64, 0x5000 },
		{ 200, AGENT_FN_free, 0, 0x5000, 0 },
		{ 300, AGENT_FN_pthread_mutex_lock, 0, 0xabc0, 0 },
		{ 400, AGENT_FN_pthread_mutex_timedlock, 0, 0xabc0, 0 },
		{ 500, AGENT_FN_pthread_mutex_trylock, 0, 0xabc0, EBUSY },
		{ 600, AGENT_FN_pthread_mutex_unlock, 0, 0xabc0, 0 },
		{ 700, AGENT_FN_pthread_rwlock_rdlock, 0, 0xbbb0, 0 },
		{ 800, AGENT_FN_pthread_rwlock_wrlock, 0, 0xbbb0, 0 },
		{ 900, AGENT_FN_pthread_rwlock_timedrdlock, 0, 0xbbb0, 0 },
		{ 1000, AGENT_FN_pthread_rwlock_timedwrlock, 0, 0xbbb0, 0 },
		{ 1100, AGENT_FN_pthread_rwlock_tryrdlock, 0, 0xbbb0, 0 },
		{ 1200, AGENT_FN_pthread_rwlock_trywrlock, 0, 0xbbb0, 0 },
		{ 1300, AGENT_FN_pthread_rwlock_unlock, 0, 0xbbb0, 0 },
		{ 1400, AGENT_FN_pthread_cond_signal, 0, 0xccc0, 0 },
		{ 1500, AGENT_FN_pthread_cond_broadcast, 0, 0xccc0, 0 },
		{ 1600, AGENT_FN_sem_wait, 0, 0xddd0, 0 },
		{ 1700, AGENT_FN_sem_timedwait, 0, 0xddd0, 0 },
		{ 1800, AGENT_FN_sem_trywait, 0, 0xddd0, 0 },
		{ 1900, AGENT_FN_sem_post, 0, 0xddd0, 0 },
	};
	const size_t n = sizeof(calls) / sizeof(calls[0]);
	struct test_thread full = { 0 }, once = { 0 };
	struct archive a;
	struct conv_stats st;
	size_t same = 0;

	test_spool_reset(1 << 20, 0);
	for (size_t i = 0; i < n; i++) {
		struct call c = calls[i];
		c.caller = A + 1;
		c.payload = ev_ptr_payload(c.payload);
		put_full(&full, &c);
		put_once(&once, &c);
	}
	full.tid = 41;
	once.tid = 42;
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .groups = AGENT_G_ALL }, &st, "same");
	ASSERT_EQ_U64(st.libc_calls, 2 * n, "same: every call counted, in either form");
	for (size_t i = 0; i < n; i++) {
		const char *name = agent_fn_lookup(calls[i].fn)->name;
		const struct ev *x = find(&a, 41, name), *y = find(&a, 42, name);
		if (same_slice(x, y))
			same++;
		else
			diag("same: %s differs", name);
	}
	ASSERT_EQ_U64(same, n, "same: each ONCE record's slice is its full form's");
	expect_str(find(&a, 42, "malloc"), "caller", "agent_test_alpha", "same: malloc");
	expect_int(find(&a, 42, "malloc"), "size", FXT_ARG_UINT64, 64, "same: malloc");
	expect_int(find(&a, 42, "malloc"), "result", FXT_ARG_POINTER, 0x5000, "same: malloc");
	expect_str(find(&a, 42, "pthread_mutex_trylock"), "error", "EBUSY", "same: trylock");
	ASSERT_EQ_I64(nesting(&a, 42), -1, "same: slices nest");
	free(a.ev);
}

/* A ONCE unlock lets a lock through on another thread: the same flow as
 * from the full form's SYNC record. */
static void test_pairs(void)
{
	const uint64_t M = 0x1000;
	struct test_thread t0 = { 0 }, t1 = { 0 };
	struct call unlock = { 100, AGENT_FN_pthread_mutex_unlock, 0, M, 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *b = NULL, *e = NULL;

	test_spool_reset(1 << 20, 0);
	put_once(&t0, &unlock);
	test_record(&t1, (uint64_t[]){ 90, EV_CALL_ADDR(AGENT_FN_pthread_mutex_lock) }, 1);
	test_record(&t1, (uint64_t[]){ M, ev_sync_w1(EV_SYNC_LOCK_WAITED) }, 1);
	test_record(
	    &t1, (uint64_t[]){ 130, EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_pthread_mutex_lock) }, 1);
	t0.tid = 51;
	t1.tid = 52;
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .groups = AGENT_G_SYNC }, &st, "pairs");
	ASSERT_EQ_U64(st.flows, 2, "pairs: one pair, two flow events");
	for (size_t i = 0; i < a.nev; i++) {
		if (a.ev[i].type == FXT_EVENT_FLOW_BEGIN)
			b = &a.ev[i];
		if (a.ev[i].type == FXT_EVENT_FLOW_END)
			e = &a.ev[i];
	}
	ok(b && b->tid == 51 && strcmp(b->name, "pthread_mutex_unlock") == 0 && b->ts > 100,
	   "pairs: the flow begins inside the ONCE unlock");
	ok(e && e->tid == 52 && strcmp(e->name, "pthread_mutex_lock") == 0 && e->ts < 130,
	   "pairs: and ends at the end of the lock that waited");
	free(a.ev);
}

/* A head without its ONCE_ARG slot, an orphan ONCE_ARG slot, a head whose
 * slot names another function: skipped, the calls around them kept. */
static void test_torn(void)
{
	struct test_thread t = { 0 };
	struct call c = { 100, AGENT_FN_malloc, 0, 16, 0x6000 };
	struct archive a;
	struct conv_stats st;

	test_spool_reset(1 << 20, 0);
	test_record(&t, (uint64_t[]){ 50, ev_once_w1(AGENT_FN_malloc, 0) }, 1);
	put_once(&t, &c);
	test_record(&t, (uint64_t[]){ 16, ev_once_arg_w1(AGENT_FN_malloc, 0x7000) }, 1);
	test_record(&t,
		    (uint64_t[]){ 150, ev_once_w1(AGENT_FN_free, 0), 0x6000,
				  ev_once_arg_w1(AGENT_FN_malloc, 0) },
		    2);
	c.ts = 200;
	c.value = 32;
	put_full(&t, &c);
	t.tid = 61;
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .groups = AGENT_G_ALL }, &st, "torn");
	ASSERT_EQ_U64(st.libc_calls, 2, "torn: the two whole calls, nothing else");
	ASSERT_EQ_U64(count(&a, 61, FXT_EVENT_DURATION_COMPLETE, "malloc"), 2, "torn: two mallocs");
	ASSERT_EQ_U64(count(&a, 61, FXT_EVENT_DURATION_COMPLETE, "free"), 0, "torn: no free");
	ASSERT_EQ_I64(nesting(&a, 61), -1, "torn: slices nest");
	free(a.ev);
}

/* A ONCE record inside a function's frame (queued after it) and one at
 * depth 0 (straight to the archive): the same arguments, each where its
 * time puts it. */
static void test_nested(void)
{
	struct test_thread t = { 0 };
	struct call c = { 100, AGENT_FN_malloc, 0, 16, 0x6000 };
	struct archive a;
	struct conv_stats st;
	const struct ev *f, *in = NULL, *out = NULL;

	test_spool_reset(1 << 20, 0);
	test_record(&t, (uint64_t[]){ 50, B }, 1);
	put_once(&t, &c);
	test_record(&t, (uint64_t[]){ 150, B | EXIT }, 1);
	c.ts = 200;
	put_once(&t, &c);
	t.tid = 71;
	convert_ok(&a, &(struct conv_opts){ .now = 5000, .groups = AGENT_G_ALL }, &st, "nested");
	f = find(&a, 71, "agent_test_beta");
	for (size_t i = 0; i < a.nev; i++)
		if (a.ev[i].tid == 71 && strcmp(a.ev[i].name, "malloc") == 0)
			*(in ? &out : &in) = &a.ev[i];
	ok(f && in && in->ts > f->ts && in->end < f->end, "nested: the first inside the function");
	ok(f && out && out->ts > f->end, "nested: the second after it");
	ok(same_slice(in, out), "nested: both with the same arguments");
	ASSERT_EQ_I64(nesting(&a, 71), -1, "nested: slices nest");
	free(a.ev);
}

int main(void)
{
	plan(26);
	test_same();
	test_pairs();
	test_torn();
	test_nested();
	test_spool_cleanup();
	return exit_status();
}
