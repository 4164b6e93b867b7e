/* Unit tests of the agent's stack reconstruction (agent/recon.c). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "agent/recon.h"
#include "agent/spool.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"

#define EXIT SPOOL_EXIT_BIT

struct emitted {
	uint64_t addr, start, end;
};

struct sink {
	struct emitted *v;
	size_t n, cap;
	int fail_after; /* > 0: the n-th emit fails with -EIO */
};

static int record(void *ctx, uint64_t addr, uint64_t start, uint64_t end)
{
	struct sink *s = ctx;

	if (s->fail_after && (int)s->n + 1 >= s->fail_after)
		return -EIO;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n].addr = addr;
	s->v[s->n].start = start;
	s->v[s->n].end = end;
	s->n++;
	return 0;
}

static void expect(const struct sink *s, size_t i, uint64_t addr, uint64_t start, uint64_t end,
		   const char *what)
{
	if (i >= s->n) {
		ok(0, "%s: event %zu missing (only %zu)", what, i, s->n);
		return;
	}
	ok(s->v[i].addr == addr && s->v[i].start == start && s->v[i].end == end,
	   "%s: event %zu is %#llx [%llu, %llu]", what, i, (unsigned long long)addr,
	   (unsigned long long)start, (unsigned long long)end);
	if (s->v[i].addr != addr || s->v[i].start != start || s->v[i].end != end)
		diag("  got %#llx [%llu, %llu]", (unsigned long long)s->v[i].addr,
		     (unsigned long long)s->v[i].start, (unsigned long long)s->v[i].end);
}

static void test_simple(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 10, 0xa);
	recon_feed(&r, 20, 0xb);
	recon_feed(&r, 30, 0xb | EXIT);
	recon_feed(&r, 35, 0xc);
	recon_feed(&r, 37, 0xc | EXIT);
	recon_feed(&r, 40, 0xa | EXIT);
	ASSERT_EQ_U64(recon_finish(&r, 50), 0, "simple: finish");
	ASSERT_EQ_U64(s.n, 3, "simple: three events");
	expect(&s, 0, 0xb, 20, 30, "simple");
	expect(&s, 1, 0xc, 35, 37, "simple");
	expect(&s, 2, 0xa, 10, 40, "simple");
	ASSERT_EQ_U64(r.unmatched, 0, "simple: no unmatched exit");
	recon_free(&r);
	free(s.v);
}

/* Records out of order (a record older than its predecessor) and equal
 * timestamps become strictly increasing, so no two starts coincide. */
static void test_out_of_order(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 100, 0xa);
	recon_feed(&r, 90, 0xb);	/* older than the parent's start: 101 */
	recon_feed(&r, 95, 0xb | EXIT); /* 102 */
	recon_feed(&r, 102, 0xc);	/* equal to the previous: 103 */
	recon_feed(&r, 150, 0xc | EXIT);
	recon_feed(&r, 200, 0xa | EXIT);
	recon_finish(&r, 0);
	ASSERT_EQ_U64(s.n, 3, "out of order: three events");
	expect(&s, 0, 0xb, 101, 102, "out of order");
	expect(&s, 1, 0xc, 103, 150, "out of order");
	expect(&s, 2, 0xa, 100, 200, "out of order");
	recon_free(&r);
	free(s.v);
}

/* Exits without enters (e.g. a fork child returning through frames entered
 * in the parent) are counted and ignored, whatever is open. */
static void test_unmatched_exits(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 5, 0xf | EXIT);
	recon_feed(&r, 10, 0xa);
	recon_feed(&r, 20, 0xe | EXIT); /* not on the stack: A stays open */
	recon_feed(&r, 30, 0xb);
	recon_feed(&r, 40, 0xb | EXIT);
	recon_feed(&r, 50, 0xa | EXIT);
	recon_feed(&r, 60, 0xd | EXIT);
	recon_finish(&r, 100);
	ASSERT_EQ_U64(r.unmatched, 3, "unmatched: three ignored exits");
	ASSERT_EQ_U64(s.n, 2, "unmatched: two events");
	expect(&s, 0, 0xb, 30, 40, "unmatched");
	expect(&s, 1, 0xa, 10, 50, "unmatched");
	recon_free(&r);
	free(s.v);
}

/* An exit of a deeper frame (longjmp, or exits skipped) closes the frames
 * above it at the same time, innermost first. */
static void test_exit_deeper(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 10, 0xa);
	recon_feed(&r, 20, 0xb);
	recon_feed(&r, 30, 0xc);
	recon_feed(&r, 40, 0xd);
	recon_feed(&r, 50, 0xb | EXIT);
	recon_feed(&r, 60, 0xa | EXIT);
	recon_finish(&r, 100);
	ASSERT_EQ_U64(s.n, 4, "deeper exit: four events");
	expect(&s, 0, 0xd, 40, 50, "deeper exit");
	expect(&s, 1, 0xc, 30, 50, "deeper exit");
	expect(&s, 2, 0xb, 20, 50, "deeper exit");
	expect(&s, 3, 0xa, 10, 60, "deeper exit");
	recon_free(&r);
	free(s.v);
}

/* Recursion: an exit matches the innermost frame of that function. */
static void test_recursion(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 10, 0xa);
	recon_feed(&r, 20, 0xa);
	recon_feed(&r, 30, 0xa | EXIT);
	recon_feed(&r, 40, 0xa | EXIT);
	recon_finish(&r, 100);
	ASSERT_EQ_U64(s.n, 2, "recursion: two events");
	expect(&s, 0, 0xa, 20, 30, "recursion");
	expect(&s, 1, 0xa, 10, 40, "recursion");
	recon_free(&r);
	free(s.v);
}

/* Frames never exited close at the end time, or one tick after the last
 * record when the end time is earlier (it never moves backwards). */
static void test_never_exited(void)
{
	struct sink s = { 0 };
	struct recon r;

	recon_init(&r, record, &s);
	recon_feed(&r, 10, 0xa);
	recon_feed(&r, 20, 0xb);
	recon_feed(&r, 30, 0xc);
	recon_feed(&r, 40, 0xc | EXIT);
	ASSERT_EQ_U64(recon_finish(&r, 1000), 0, "never exited: finish");
	ASSERT_EQ_U64(s.n, 3, "never exited: three events");
	expect(&s, 0, 0xc, 30, 40, "never exited");
	expect(&s, 1, 0xb, 20, 1000, "never exited");
	expect(&s, 2, 0xa, 10, 1000, "never exited");
	ASSERT_EQ_U64(r.depth, 0, "never exited: stack empty after finish");

	s.n = 0;
	recon_feed(&r, 2000, 0xd);
	recon_finish(&r, 5); /* an end before the last record */
	ASSERT_EQ_U64(s.n, 1, "end before last record: one event");
	expect(&s, 0, 0xd, 2000, 2001, "end before last record");
	recon_free(&r);
	free(s.v);
}

/* 1,000,000 nested frames: no recursion on the C stack, every frame
 * emitted, nested. */
static void test_deep(void)
{
	const uint64_t n = 1000000;
	struct sink s = { 0 };
	struct recon r;
	int nested = 1;

	recon_init(&r, record, &s);
	for (uint64_t i = 0; i < n; i++)
		recon_feed(&r, 1 + i, 0x1000 + (i & 7));
	ASSERT_EQ_U64(r.depth, n, "deep: a million open frames");
	recon_finish(&r, 5 * n);
	ASSERT_EQ_U64(s.n, n, "deep: a million events");
	for (size_t i = 0; i + 1 < s.n && nested; i++)
		nested = s.v[i].start > s.v[i + 1].start && s.v[i].end <= s.v[i + 1].end;
	ok(nested, "deep: innermost first, each inside the next");
	recon_free(&r);
	free(s.v);
}

/* Random streams with reordering, unmatched exits and skipped exits: every
 * enter is emitted exactly once and the result nests. */
static void test_random(void)
{
	unsigned seed = 12345;
	int all_nest = 1, all_counted = 1;

	for (int round = 0; round < 200; round++) {
		struct sink s = { 0 };
		struct recon r;
		uint64_t stack[64], ts = 1000, enters = 0;
		size_t depth = 0;
		struct ivl *iv;

		recon_init(&r, record, &s);
		for (int i = 0; i < 2000; i++) {
			unsigned x = rand_r(&seed) % 100;
			/* ts jitters backwards now and then, as across CPUs. */
			ts += rand_r(&seed) % 10;
			uint64_t t = x < 5 && ts > 20 ? ts - rand_r(&seed) % 20 : ts;
			if ((x < 55 && depth < 64) || depth == 0) {
				stack[depth] = 0x100 + rand_r(&seed) % 8;
				recon_feed(&r, t, stack[depth++]);
				enters++;
			} else if (x < 90) {
				recon_feed(&r, t, stack[--depth] | EXIT);
			} else if (x < 95 && depth >= 3) {
				depth -= 3; /* a longjmp: exits of two frames lost */
				recon_feed(&r, t, stack[depth] | EXIT);
			} else {
				recon_feed(&r, t, 0x999 | EXIT); /* never entered */
			}
		}
		recon_finish(&r, ts + 1);
		if (s.n != enters)
			all_counted = 0;
		iv = malloc(s.n * sizeof(*iv));
		for (size_t i = 0; i < s.n; i++) {
			iv[i].start = s.v[i].start;
			iv[i].end = s.v[i].end;
		}
		if (ivl_check_nesting(iv, s.n) >= 0)
			all_nest = 0;
		free(iv);
		recon_free(&r);
		free(s.v);
	}
	ok(all_counted, "random: every enter emitted exactly once");
	ok(all_nest, "random: all intervals nest exactly");
}

static void test_emit_error(void)
{
	struct sink s = { 0 };
	struct recon r;

	s.fail_after = 2;
	recon_init(&r, record, &s);
	recon_feed(&r, 1, 0xa);
	recon_feed(&r, 2, 0xb);
	recon_feed(&r, 3, 0xc);
	ASSERT_EQ_I64(recon_feed(&r, 4, 0xa | EXIT), -EIO, "emit error is returned");
	recon_free(&r);
	free(s.v);
}

int main(void)
{
	plan(36);
	test_simple();
	test_out_of_order();
	test_unmatched_exits();
	test_exit_deeper();
	test_recursion();
	test_never_exited();
	test_deep();
	test_random();
	test_emit_error();
	return exit_status();
}
