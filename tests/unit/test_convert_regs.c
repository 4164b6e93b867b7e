/* Unit tests of the records of fxt-run --args/--retval (spool/records.h:
 * REG, HOOKV and their RAW slots) through the conversion pipeline
 * (convert/replay.c): strings of every length around the slots' edges, cut
 * and unreadable ones, values packed two to a slot with their hook
 * record, torn records, and RAW slots that look like other records.
 * Spools from spool_test_writer.h, converted and read back by
 * convert_test_archive.h, as in test_convert_tagged.c. */
#include <config.h>

#include <stdbool.h>
#include <stddef.h>

#include "run/argspec.h"
#include "run/recording.h"
#include "spool/records.h"
#include "tests/unit/convert_test_archive.h"

static void put_slots(struct test_thread *t, const uint64_t *w, unsigned n)
{
	test_record(t, w, n);
}

static void put(struct test_thread *t, uint64_t w0, uint64_t w1)
{
	uint64_t w[2] = { w0, w1 };

	put_slots(t, w, 1);
}

/* The REG of register `reg` of a call of fn holding the `len` bytes of s
 * (cut when `truncated`), as the agent writes it (agent/patch/rtargs.c). */
static void put_reg_str(struct test_thread *t, unsigned reg, uint64_t fn, const char *s, size_t len,
			bool truncated)
{
	char room[FXT_ARG_STR_MAX + EV_RAW_BYTES] = { 0 };
	uint64_t w[2 + 2 * 8];

	memcpy(room, s, len);
	/* Bytes past the string, which the writer must not keep. */
	memset(room + len, 'Z', sizeof(room) - len);
	w[1] = ev_reg_str_w1(reg, fn, len, truncated);
	ev_reg_put_str(w, room, len);
	put_slots(t, w, 1 + ev_reg_str_raw(len));
}

/* A HOOKV of fn (its exit with `exit`) with the values v[] of regs. */
static void put_hookv(struct test_thread *t, uint64_t ts, uint64_t fn, bool exit, unsigned regs,
		      const uint64_t *v)
{
	unsigned n = ev_hookv_count(regs);
	uint64_t w[2 + 6 + 1] = { ts, ev_hookv_w1(fn, exit, regs) };

	for (unsigned i = 0; i < n; i++)
		w[2 + i] = v[i];
	if (n & 1)
		w[2 + n] = 0;
	put_slots(t, w, 1 + (n + 1) / 2);
}

/* The k-th complete slice of fn's on thread tid. */
static const struct ev *nth(const struct archive *a, uint64_t tid, const char *name, unsigned k)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && a->ev[i].type == FXT_EVENT_DURATION_COMPLETE &&
		    strcmp(a->ev[i].name, name) == 0 && !k--)
			return &a->ev[i];
	return NULL;
}

static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?+";

/* The string of `len` bytes of text. */
static const char *prefix(char *buf, size_t len)
{
	memcpy(buf, text, len);
	buf[len] = '\0';
	return buf;
}

/* Strings of 0, 7, 8, 9, 63 and 64 bytes (the head's 8, then the RAW
 * slots' 16 around their edges), one of 64 cut (what the agent keeps of
 * a longer one: 65 bytes and more), one unreadable, NULL; RAW slots whose
 * second word looks like a hook record, or a tagged one. */
static void test_strings(void)
{
	static const size_t lens[] = { 0, 7, 8, 9, 63, 64 };
	struct test_thread t = { 0 }, u = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;
	char want[FXT_ARG_STR_MAX + 8], name[8];

	test_spool_reset(1 << 20, 0);
	put(&t, 100, B);
	for (unsigned i = 0; i < 6; i++)
		put_reg_str(&t, FXT_REG_GPR0 + i, B, text, lens[i], false);
	put(&t, 200, B | EXIT);
	put(&u, 300, B);
	put_reg_str(&u, FXT_REG_GPR0, B, text, FXT_ARG_STR_MAX, true);
	put(&u, 0xdead0, ev_reg_w1(FXT_REG_GPR0 + 1, B) | EV_REG_STR_UNREADABLE);
	put(&u, 0, ev_reg_w1(FXT_REG_GPR0 + 2, B) | EV_REG_STR_UNREADABLE);
	/* Bytes 16..23 (its first RAW slot's second word): a hook record's
	 * exit; 32..39 (the second's): a libc call's exit.  (0x80, 0x81 are
	 * no NUL: a string may hold them.) */
	{
		char s[41];

		memset(s, 'q', 40);
		s[23] = (char)0x80;
		s[39] = (char)0x81;
		s[40] = '\0';
		put_reg_str(&u, FXT_REG_GPR0 + 3, B, s, 40, false);
	}
	put(&u, 400, B | EXIT);
	t.tid = 31;
	u.tid = 32;
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "strings");
	e = find_type(&a, 31, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta");
	ok(e != NULL, "strings: the call's slice");
	for (unsigned i = 0; i < 6; i++) {
		char what[32];

		snprintf(name, sizeof(name), "arg%u", i + 1);
		snprintf(what, sizeof(what), "strings: %zu bytes", lens[i]);
		expect_str(e, name, prefix(want, lens[i]), what);
	}
	e = find_type(&a, 32, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta");
	prefix(want, FXT_ARG_STR_MAX);
	strcat(want, "\xe2\x80\xa6");
	expect_str(e, "arg1", want, "strings: 64 bytes of more, cut");
	expect_str(e, "arg2", "(unreadable 0xdead0)", "strings: unreadable");
	expect_str(e, "arg3", "NULL", "strings: NULL");
	expect_str(e, "arg4", "qqqqqqqqqqqqqqqqqqqqqqq?qqqqqqqqqqqqqqq?",
		   "strings: RAW slots like a hook's and a libc call's exit, read as bytes");
	ok(e && e->nargs == 4, "strings: ... and nothing else");
	ASSERT_EQ_U64(st.fn_args, 10, "strings: ten values on their frames");
	ok(stream_ok(&a, 31) && stream_ok(&a, 32), "strings: start order, balanced");
	free(a.ev);
}

/* HOOKV: two arguments and the result (the bench's add2), one argument
 * (odd: half a RAW slot), six, a result only, rax and rdx; a value of a
 * frame that is not its function's is left out. */
static void test_hookv(void)
{
	static const uint64_t two[] = { 5, 6 }, six[] = { 1, 2, 3, 4, 5, UINT64_MAX },
			      ret[] = { 11 }, pair[] = { 12, 13 },
			      one[] = { 0x8000000000000000ull };
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;

	test_spool_reset(1 << 20, 0);
	put_hookv(&t, 100, B, false, 3, two);
	put_hookv(&t, 200, B, true, 1, ret);
	put_hookv(&t, 300, B, false, 4, one);
	put(&t, 400, B | EXIT);
	put_hookv(&t, 500, B, false, 0x3f, six);
	put_hookv(&t, 600, B, true, 3, pair);
	put(&t, 700, B);
	put_hookv(&t, 800, B, true, 1, ret);
	/* A's frame left open (a longjmp()): B's values are not its */
	put(&t, 850, B);
	put(&t, 900, A);
	put_hookv(&t, 950, B, true, 1, ret);
	t.tid = 41;
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "hookv");
	e = nth(&a, 41, "agent_test_beta", 0);
	ok(e && e->ts == 100 && e->end == 200, "hookv: the first call, 100 to 200");
	expect_int(e, "arg1", FXT_ARG_UINT64, 5, "hookv: two values, the first");
	expect_int(e, "arg2", FXT_ARG_UINT64, 6, "hookv: the second");
	expect_int(e, "retval", FXT_ARG_UINT64, 11, "hookv: the result");
	ok(e && e->nargs == 3, "hookv: nothing else");
	e = nth(&a, 41, "agent_test_beta", 1);
	expect_int(e, "arg3", FXT_ARG_UINT64, 0x8000000000000000ull, "hookv: one value (arg3)");
	ok(e && e->nargs == 1, "hookv: ... alone");
	e = nth(&a, 41, "agent_test_beta", 2);
	expect_int(e, "arg6", FXT_ARG_UINT64, UINT64_MAX, "hookv: six values, the last");
	expect_int(e, "retval", FXT_ARG_UINT64, 12, "hookv: rax (rdx is not shown raw)");
	ok(e && e->nargs == 7, "hookv: ... seven in all");
	e = nth(&a, 41, "agent_test_beta", 3);
	expect_int(e, "retval", FXT_ARG_UINT64, 11, "hookv: a result only");
	ok(e && e->nargs == 1, "hookv: ... alone");
	ASSERT_EQ_U64(count(&a, 41, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta"), 5,
		      "hookv: five calls");
	e = nth(&a, 41, "agent_test_beta", 4);
	ok(e && e->nargs == 0, "hookv: a value while another frame is the innermost: left out");
	ASSERT_EQ_U64(st.fn_args, 2 + 1 + 1 + 6 + 2 + 1, "hookv: the values on their frames");
	ASSERT_EQ_U64(st.fn_args_orphan, 1, "hookv: one of another frame's");
	ok(stream_ok(&a, 41), "hookv: start order, balanced");
	free(a.ev);
}

/* Records whose RAW slots were never written (a process killed while
 * writing them: zero slots): a string ends there, a value is 0; nothing
 * after them is taken for theirs. */
static void test_torn(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	const struct ev *e;
	uint64_t w[4];

	test_spool_reset(1 << 20, 0);
	put(&t, 100, B);
	/* 40 bytes said (2 RAW slots), one there */
	w[1] = ev_reg_str_w1(FXT_REG_GPR0, B, 40, false);
	ev_reg_put_str(w, "0123456789abcdefghijklmnopqrstu\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
	w[1] = ev_reg_str_w1(FXT_REG_GPR0, B, 40, false);
	put_slots(&t, w, 2);
	t.tid = 51;
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "torn");
	e = find_type(&a, 51, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta");
	expect_str(e, "arg1", "0123456789abcdefghijklmn", "torn: a string, what there is");
	free(a.ev);

	test_spool_reset(1 << 20, 0);
	t = (struct test_thread){ .tid = 52 };
	w[0] = 100;
	w[1] = ev_hookv_w1(B, false, 7); /* three values said, two there */
	w[2] = 21;
	w[3] = 22;
	put_slots(&t, w, 2);
	convert_ok(&a, &(struct conv_opts){ .now = 5000 }, &st, "torn hookv");
	e = find_type(&a, 52, FXT_EVENT_DURATION_COMPLETE, "agent_test_beta");
	expect_int(e, "arg2", FXT_ARG_UINT64, 22, "torn: a HOOKV's values, what there is");
	expect_int(e, "arg3", FXT_ARG_UINT64, 0, "torn: ... the third of a slot never written");
	free(a.ev);
}

int main(void)
{
	plan(42);
	test_strings();
	test_hookv();
	test_torn();
	test_spool_cleanup();
	return exit_status();
}
