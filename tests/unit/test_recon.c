/* Unit tests of the stack reconstruction (convert/recon.c): exact
 * events, in start order, through both the complete-event path and the
 * forced begin/end path of a full FIFO.  The small scenarios are tables
 * (`scenarios`): what is fed, and the checks between, in order; the
 * large, random and argument ones are code. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/recon.h"
#include "spool/records.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"

#define EXIT SPOOL_EXIT_BIT

/* What an event carried as arguments: their count and the sum of their
 * values and string bytes (enough to tell lists apart). */
struct got_args {
	unsigned n;
	uint64_t sum;
};

struct sink {
	struct nest_ev *v;
	size_t n, cap;
	int fail_after;		  /* > 0: the n-th emit fails with -EIO */
	struct got_args args[64]; /* of the first events */
};

static void keep_args(struct sink *s, size_t i, const struct recon_args *l)
{
	struct got_args *g;

	if (i >= 64 || !l)
		return;
	g = &s->args[i];
	g->n = l->n;
	for (uint32_t k = 0; k < l->n; k++) {
		g->sum += l->v[k].value + l->v[k].key;
		for (uint32_t b = 0; b < l->v[k].len; b++)
			g->sum += (unsigned char)l->bytes[l->v[k].off + b];
	}
}

static int record(void *ctx, enum nest_kind kind, uint64_t addr, uint64_t start, uint64_t end)
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
	s->v[s->n].kind = kind;
	s->v[s->n].addr = addr;
	s->v[s->n].start = start;
	s->v[s->n].end = end;
	s->n++;
	return 0;
}

static int record_slices(void *ctx, const struct recon_slot *v, struct recon_args *const *args,
			 size_t n)
{
	struct sink *s = ctx;

	for (size_t i = 0; i < n; i++) {
		int err = record(ctx, NEST_COMPLETE, v[i].addr, v[i].start, v[i].end);
		if (err < 0)
			return err;
		if (args)
			keep_args(s, s->n - 1, args[i]);
	}
	return 0;
}

static int record_event(void *ctx, enum recon_kind kind, uint64_t addr, uint64_t start,
			uint64_t end, const struct recon_args *args)
{
	static const enum nest_kind kinds[] = {
		[RECON_BEGIN] = NEST_BEGIN,
		[RECON_END] = NEST_END,
		[RECON_MARK] = NEST_INSTANT,
	};

	struct sink *s = ctx;
	int err = record(ctx, kinds[kind], addr, start, end);

	if (!err)
		keep_args(s, s->n - 1, args);
	return err;
}

static const struct recon_sink test_sink = {
	.slices = record_slices,
	.event = record_event,
};

static const char *kind_name(enum nest_kind k)
{
	return k == NEST_COMPLETE ? "complete"
	       : k == NEST_BEGIN  ? "begin"
	       : k == NEST_END	  ? "end"
				  : "instant";
}

/* Event i is exactly (kind, addr, start, end); for a begin only the start
 * and for an end only the end are compared. */
static void expect(const struct sink *s, size_t i, enum nest_kind kind, uint64_t addr,
		   uint64_t start, uint64_t end, const char *what)
{
	const struct nest_ev *e = &s->v[i];
	int same;

	if (i >= s->n) {
		ok(0, "%s: event %zu missing (only %zu)", what, i, s->n);
		return;
	}
	same = e->kind == kind && e->addr == addr && (kind == NEST_END || e->start == start) &&
	       (kind == NEST_BEGIN || e->end == end);
	ok(same, "%s: event %zu is %s %#llx [%llu, %llu]", what, i, kind_name(kind),
	   (unsigned long long)addr, (unsigned long long)start, (unsigned long long)end);
	if (!same)
		diag("  got %s %#llx [%llu, %llu]", kind_name(e->kind), (unsigned long long)e->addr,
		     (unsigned long long)e->start, (unsigned long long)e->end);
}

static void expect_valid(const struct sink *s, const char *what)
{
	const char *why;
	long bad = nest_check_stream(s->v, s->n, &why);

	ok(bad < 0, "%s: start order, exact nesting", what);
	if (bad >= 0)
		diag("  event %ld: %s", bad, why);
}

#define C NEST_COMPLETE
#define B NEST_BEGIN
#define E NEST_END
#define I NEST_INSTANT

/* ------------------------------------------------------------ scenarios */

/* One step of a scenario: fed to the recon, or checked against what the
 * sink got and what the recon counted. */
enum op_kind {
	O_END,
	O_FEED,	  /* recon_feed(a = ts, b = addr) */
	O_MARK,	  /* recon_mark(a = ts, b = id); desc: check that it returns 0 */
	O_ARG,	  /* recon_arg() with no entry: time moves a step */
	O_STEP,	  /* recon_set_step(a) */
	O_FINISH, /* recon_finish(a); desc: check that it returns 0 */
	O_AGAIN,  /* the sink starts over, the checks say desc */
	O_COUNT,  /* the sink has a events */
	O_EV,	  /* the next event is (kind, a = addr, b = start, c = end) */
	O_FIELD,  /* the recon's counter b is a */
	O_VALID,  /* the events are in start order and nest exactly */
};

enum recon_field { F_UNMATCHED, F_EMITTED, F_BEGUN, F_DEPTH, F_STEP };

struct op {
	enum op_kind k;
	uint64_t a, b, c;
	enum nest_kind kind;
	const char *desc;
};

/* The ops as table entries (clang-format would spread each over four
 * lines, and the tables below over one op a line). */
/* clang-format off */
#define FEED(ts, addr)     { O_FEED, ts, addr, 0, 0, NULL }
#define MARK(ts, id)       { O_MARK, ts, id, 0, 0, NULL }
#define MARK_OK(ts, id, d) { O_MARK, ts, id, 0, 0, d }
#define ARG                { O_ARG, 0, 0, 0, 0, NULL }
#define STEP(n)            { O_STEP, n, 0, 0, 0, NULL }
#define FINISH(ts)         { O_FINISH, ts, 0, 0, 0, NULL }
#define FINISH_OK(ts, d)   { O_FINISH, ts, 0, 0, 0, d }
#define AGAIN(d)           { O_AGAIN, 0, 0, 0, 0, d }
#define COUNT(n, d)        { O_COUNT, n, 0, 0, 0, d }
#define EV(k, addr, s, e)  { O_EV, addr, s, e, k, NULL }
#define FIELD(f, n, d)     { O_FIELD, n, F_##f, 0, 0, d }
#define VALID              { O_VALID, 0, 0, 0, 0, NULL }

struct scenario {
	const char *what; /* the checks' prefix */
	size_t fifo;      /* recon_init()'s bound; 0: the default */
	struct op ops[64];
};

static const struct scenario scenarios[] = {
	{ "simple", 0, {
		FEED(10, 0xa), FEED(20, 0xb), FEED(30, 0xb | EXIT),
		COUNT(0, "B waits for its parent"),
		FEED(35, 0xc), FEED(37, 0xc | EXIT), FEED(40, 0xa | EXIT),
		COUNT(3, "all three out when A closes"),
		FINISH_OK(50, "finish"),
		COUNT(3, "three events"),
		EV(C, 0xa, 10, 40), EV(C, 0xb, 20, 30), EV(C, 0xc, 35, 37),
		FIELD(UNMATCHED, 0, "no unmatched exit"),
		FIELD(EMITTED, 3, "three slices counted"),
		FIELD(BEGUN, 0, "none begun"),
		VALID } },
	/* Records out of order (a record older than its predecessor) and
	 * equal timestamps become strictly increasing, so no two starts
	 * coincide. */
	{ "out of order", 0, {
		FEED(100, 0xa),
		FEED(90, 0xb),        /* older than the parent's start: 101 */
		FEED(95, 0xb | EXIT), /* 102 */
		FEED(102, 0xc),       /* equal to the previous: 103 */
		FEED(150, 0xc | EXIT), FEED(200, 0xa | EXIT), FINISH(0),
		COUNT(3, "three events"),
		EV(C, 0xa, 100, 200), EV(C, 0xb, 101, 102), EV(C, 0xc, 103, 150) } },
	/* With a step of 3 ticks (a nanosecond of a 2.6 GHz TSC), what is
	 * moved moves by a step: a call whose enter read the TSC of another
	 * CPU, behind the previous call's exit, starts a nanosecond after it,
	 * not a tick (in nanoseconds, where readers place events, it started
	 * where the other ended, and a flow bound to the end of the one
	 * landed in the other). */
	{ "step", 0, {
		STEP(3), FEED(100, 0xa), FEED(110, 0xb), FEED(200, 0xb | EXIT),
		FEED(199, 0xc),        /* behind the exit before it: 203 */
		FEED(199, 0xc | EXIT), /* 206 */
		ARG,                   /* time moves a step: 209 */
		FEED(209, 0xa | EXIT), /* 212 */
		FINISH(0),
		COUNT(3, "three events"),
		EV(C, 0xa, 100, 212), EV(C, 0xb, 110, 200), EV(C, 0xc, 203, 206),
		STEP(0), FIELD(STEP, 1, "0 means a tick") } },
	/* Exits without enters (e.g. a fork child returning through frames
	 * entered in the parent) are counted and ignored, whatever is open. */
	{ "unmatched", 0, {
		FEED(5, 0xf | EXIT), FEED(10, 0xa),
		FEED(20, 0xe | EXIT), /* not on the stack: A stays open */
		FEED(30, 0xb), FEED(40, 0xb | EXIT), FEED(50, 0xa | EXIT), FEED(60, 0xd | EXIT),
		FINISH(100),
		FIELD(UNMATCHED, 3, "three ignored exits"),
		COUNT(2, "two events"),
		EV(C, 0xa, 10, 50), EV(C, 0xb, 30, 40) } },
	/* An exit of a deeper frame (longjmp, or exits skipped) closes the
	 * frames above it at the same time. */
	{ "deeper exit", 0, {
		FEED(10, 0xa), FEED(20, 0xb), FEED(30, 0xc), FEED(40, 0xd),
		FEED(50, 0xb | EXIT), FEED(60, 0xa | EXIT), FINISH(100),
		COUNT(4, "four events"),
		EV(C, 0xa, 10, 60), EV(C, 0xb, 20, 50), EV(C, 0xc, 30, 50), EV(C, 0xd, 40, 50),
		VALID } },
	/* Recursion: an exit matches the innermost frame of that function. */
	{ "recursion", 0, {
		FEED(10, 0xa), FEED(20, 0xa), FEED(30, 0xa | EXIT), FEED(40, 0xa | EXIT),
		FINISH(100),
		COUNT(2, "two events"),
		EV(C, 0xa, 10, 40), EV(C, 0xa, 20, 30) } },
	/* Frames never exited close at the end time, or one tick after the
	 * last record when the end time is earlier (it never moves
	 * backwards). */
	{ "never exited", 0, {
		FEED(10, 0xa), FEED(20, 0xb), FEED(30, 0xc), FEED(40, 0xc | EXIT),
		COUNT(0, "nothing out while A is open"),
		FINISH_OK(1000, "finish"),
		COUNT(3, "three events"),
		EV(C, 0xa, 10, 1000), EV(C, 0xb, 20, 1000), EV(C, 0xc, 30, 40),
		FIELD(DEPTH, 0, "stack empty after finish"),
		AGAIN("end before last record"),
		FEED(2000, 0xd),
		FINISH(5), /* an end before the last record */
		COUNT(1, "one event"),
		EV(C, 0xd, 2000, 2001) } },
	/* A FIFO of two slots: the front frame is forced out as a BEGIN when
	 * a third slot is needed; its descendants follow as complete events,
	 * then its END. */
	{ "forced", 2, {
		FEED(10, 0xa), FEED(20, 0xb),
		COUNT(0, "nothing out with the FIFO just full"),
		FEED(30, 0xc), /* FIFO full: A begins */
		COUNT(1, "A forced out"),
		FEED(35, 0xc | EXIT),
		FEED(40, 0xd), /* full again: B begins, C follows */
		FEED(45, 0xd | EXIT), FEED(50, 0xb | EXIT), FEED(60, 0xa | EXIT), FINISH(100),
		COUNT(6, "six events"),
		EV(B, 0xa, 10, 0), EV(B, 0xb, 20, 0), EV(C, 0xc, 30, 35),
		EV(C, 0xd, 40, 45), EV(E, 0xb, 0, 50), EV(E, 0xa, 0, 60),
		FIELD(EMITTED, 4, "four slices"),
		FIELD(BEGUN, 2, "two of them begun"),
		VALID,
		/* A begun frame open at the end: its descendants, then its
		 * END, at the end time; a deeper exit closing a begun frame
		 * and others. */
		AGAIN("forced, finish"),
		FEED(110, 0xa), FEED(120, 0xb),
		FEED(130, 0xc), /* A begins */
		FINISH(200),
		COUNT(4, "four events"),
		EV(B, 0xa, 110, 0), EV(C, 0xb, 120, 200), EV(C, 0xc, 130, 200), EV(E, 0xa, 0, 200),
		AGAIN("forced, deeper exit"),
		FEED(210, 0xa), FEED(220, 0xb),
		FEED(230, 0xc), /* A begins */
		FEED(240, 0xd), /* B begins */
		FEED(250, 0xa | EXIT),
		COUNT(6, "six events"),
		EV(B, 0xa, 210, 0), EV(B, 0xb, 220, 0), EV(C, 0xc, 230, 250),
		EV(C, 0xd, 240, 250), EV(E, 0xb, 0, 250), EV(E, 0xa, 0, 250),
		VALID } },
	/* A mark lands after the frames open at its time and before later
	 * ones, at a timestamp made strictly later than the last record's. */
	{ "mark", 0, {
		FEED(10, 0xa), FEED(20, 0xb), FEED(30, 0xb | EXIT),
		MARK_OK(25, 77, "placed"),
		FEED(40, 0xc), FEED(50, 0xc | EXIT), FEED(60, 0xa | EXIT),
		MARK(70, 78), /* nothing open: out at once */
		COUNT(5, "five events"),
		EV(C, 0xa, 10, 60), EV(C, 0xb, 20, 30), EV(I, 77, 31, 31), EV(C, 0xc, 40, 50),
		EV(I, 78, 70, 70),
		FIELD(EMITTED, 3, "marks are not slices"),
		VALID,
		/* A mark as the last thing: frames open close after it. */
		AGAIN("mark at the end"),
		FEED(100, 0xa), MARK(90, 79), FINISH(101),
		COUNT(2, "two events"),
		EV(C, 0xa, 100, 102), EV(I, 79, 101, 101) } },
};
/* clang-format on */

static uint64_t field(const struct recon *r, enum recon_field f)
{
	switch (f) {
	case F_UNMATCHED:
		return r->unmatched;
	case F_EMITTED:
		return r->emitted;
	case F_BEGUN:
		return r->begun;
	case F_DEPTH:
		return r->depth;
	case F_STEP:
		return r->step;
	}
	return UINT64_MAX;
}

static void run(const struct scenario *t)
{
	const char *what = t->what;
	struct sink s = { 0 };
	struct recon r;
	size_t ev = 0;

	recon_init(&r, &test_sink, &s, t->fifo);
	for (const struct op *o = t->ops; o->k != O_END; o++) {
		switch (o->k) {
		case O_END:
			break;
		case O_FEED:
			recon_feed(&r, o->a, o->b);
			break;
		case O_MARK:
			if (o->desc)
				ASSERT_EQ_U64(recon_mark(&r, o->a, o->b), 0, "%s: %s", what,
					      o->desc);
			else
				recon_mark(&r, o->a, o->b);
			break;
		case O_ARG:
			recon_arg(&r, NULL, NULL);
			break;
		case O_STEP:
			recon_set_step(&r, o->a);
			break;
		case O_FINISH:
			if (o->desc)
				ASSERT_EQ_U64(recon_finish(&r, o->a), 0, "%s: %s", what, o->desc);
			else
				recon_finish(&r, o->a);
			break;
		case O_AGAIN:
			s.n = 0;
			ev = 0;
			what = o->desc;
			break;
		case O_COUNT:
			ASSERT_EQ_U64(s.n, o->a, "%s: %s", what, o->desc);
			break;
		case O_EV:
			expect(&s, ev++, o->kind, o->a, o->b, o->c, what);
			break;
		case O_FIELD:
			ASSERT_EQ_U64(field(&r, (enum recon_field)o->b), o->a, "%s: %s", what,
				      o->desc);
			break;
		case O_VALID:
			expect_valid(&s, what);
			break;
		}
	}
	recon_free(&r);
	free(s.v);
}

/* 1,000,000 nested frames: no recursion on the C stack, bounded FIFO:
 * all but the FIFO's worth of frames are begun, every frame emitted. */
static void test_deep(void)
{
	const uint64_t n = 1000000, fifo = RECON_FIFO_MAX;
	struct sink s = { 0 };
	struct recon r;
	int shape = 1;

	recon_init(&r, &test_sink, &s, 0);
	for (uint64_t i = 0; i < n; i++)
		recon_feed(&r, 1 + i, 0x1000 + (i & 7));
	ASSERT_EQ_U64(r.depth, n, "deep: a million open frames");
	ASSERT_EQ_U64(r.fifo_cap, fifo, "deep: the FIFO stayed at its bound");
	ASSERT_EQ_U64(s.n, n - fifo, "deep: the frames beyond the FIFO begun");
	recon_finish(&r, 5 * n);
	ASSERT_EQ_U64(r.emitted, n, "deep: a million slices");
	ASSERT_EQ_U64(r.begun, n - fifo, "deep: begun frames counted");
	ASSERT_EQ_U64(s.n, n + (n - fifo), "deep: events = slices + ends");
	for (uint64_t i = 0; i < s.n && shape; i++) {
		enum nest_kind want = i < n - fifo ? NEST_BEGIN : i < n ? NEST_COMPLETE : NEST_END;
		shape = s.v[i].kind == want;
	}
	ok(shape, "deep: begins, then completes, then ends");
	expect_valid(&s, "deep");
	recon_free(&r);
	free(s.v);
}

/* Random streams with reordering, unmatched exits, skipped exits and
 * marks, with FIFOs from tiny to the default: every enter is emitted
 * exactly once, in start order, nested. */
static void test_random(void)
{
	static const size_t fifos[] = { 2, 4, 16, 0 };
	unsigned seed = 12345;
	int all_valid = 1, all_counted = 1, some_begun = 0;

	for (int round = 0; round < 400; round++) {
		struct sink s = { 0 };
		struct recon r;
		uint64_t stack[64], ts = 1000, enters = 0;
		size_t depth = 0;
		const char *why;
		long bad;

		recon_init(&r, &test_sink, &s, fifos[round % 4]);
		for (int i = 0; i < 2000; i++) {
			unsigned x = rand_r(&seed) % 100;
			/* ts jitters backwards now and then, as across CPUs. */
			ts += rand_r(&seed) % 10;
			uint64_t t = x < 5 && ts > 20 ? ts - rand_r(&seed) % 20 : ts;
			if ((x < 55 && depth < 64) || depth == 0) {
				stack[depth] = 0x100 + rand_r(&seed) % 8;
				recon_feed(&r, t, stack[depth++]);
				enters++;
			} else if (x < 89) {
				recon_feed(&r, t, stack[--depth] | EXIT);
			} else if (x < 94 && depth >= 3) {
				depth -= 3; /* a longjmp: exits of two frames lost */
				recon_feed(&r, t, stack[depth] | EXIT);
			} else if (x < 95) {
				recon_mark(&r, t, 1);
			} else {
				recon_feed(&r, t, 0x999 | EXIT); /* never entered */
			}
		}
		recon_finish(&r, ts + 1);
		if (r.emitted != enters)
			all_counted = 0;
		some_begun |= r.begun > 0;
		bad = nest_check_stream(s.v, s.n, &why);
		if (bad >= 0 && all_valid)
			diag("  round %d, event %ld: %s", round, bad, why);
		all_valid &= bad < 0;
		recon_free(&r);
		free(s.v);
	}
	ok(all_counted, "random: every enter emitted exactly once");
	ok(all_valid, "random: start order, exact nesting, balanced begin/end");
	ok(some_begun, "random: the forced-begin path was taken");
}

/* The checker itself rejects what it must. */
static void test_checker(void)
{
	static const struct nest_ev end_order[] = {
		{ C, 0xb, 20, 30 },
		{ C, 0xa, 10, 40 },
	};
	static const struct nest_ev overlap[] = {
		{ C, 0xa, 10, 40 },
		{ C, 0xb, 20, 50 },
	};
	static const struct nest_ev unbalanced[] = {
		{ B, 0xa, 10, 0 },
		{ C, 0xb, 20, 30 },
	};
	static const struct nest_ev instant_outside[] = {
		{ C, 0xa, 10, 40 },
		{ C, 0xb, 20, 30 },
		{ I, 1, 45, 45 },
		{ C, 0xc, 41, 42 },
	};
	const char *why;

	ok(nest_check_stream(end_order, 2, &why) == 1, "checker: end order rejected");
	ok(nest_check_stream(overlap, 2, &why) == 1, "checker: partial overlap rejected");
	ok(nest_check_stream(unbalanced, 2, &why) == 2, "checker: unbalanced begin rejected");
	ok(nest_check_stream(instant_outside, 4, &why) == 3, "checker: out-of-order rejected");
}

static void test_emit_error(void)
{
	struct sink s = { 0 };
	struct recon r;

	s.fail_after = 1;
	recon_init(&r, &test_sink, &s, 2);
	recon_feed(&r, 1, 0xa);
	recon_feed(&r, 2, 0xb);
	ASSERT_EQ_I64(recon_feed(&r, 3, 0xc), -EIO, "emit error of a forced begin is returned");
	recon_free(&r);
	s.n = 0;
	recon_init(&r, &test_sink, &s, 0);
	recon_feed(&r, 1, 0xa);
	recon_feed(&r, 2, 0xb);
	ASSERT_EQ_I64(recon_feed(&r, 4, 0xa | EXIT), -EIO, "emit error of a complete is returned");
	recon_free(&r);
	free(s.v);
}

/* Arguments: attached to the innermost open frame, each a tick of the
 * thread's time; handed over with the frame's complete event, or with a
 * begun frame's END; freed once emitted. */
static void test_args(void)
{
	struct sink s = { 0 };
	struct recon r;
	struct recon_arg a = { .key = 1, .type = 0, .value = 100 };
	struct recon_arg str = { .key = 2, .type = 16, .len = 3 };

	recon_init(&r, &test_sink, &s, 0);
	ASSERT_EQ_I64(recon_arg(&r, &a, NULL), 0, "args: none open: only the time moves");
	ASSERT_EQ_U64(r.last_ts, 1, "args: time moved");
	recon_feed(&r, 10, 0xa);
	recon_arg(&r, &a, NULL); /* A: 101 */
	ASSERT_EQ_U64(r.last_ts, 11, "args: a tick per argument");
	ASSERT_EQ_U64(recon_top(&r), 0xa, "args: A on top");
	recon_feed(&r, 11, 0xb); /* at 12: after the argument's tick */
	recon_arg(&r, &str, "xyz");
	recon_feed(&r, 12, 0xb | EXIT); /* at 14 */
	a.value = 5;
	recon_arg(&r, &a, NULL); /* A again, after B closed: 6 */
	recon_feed(&r, 13, 0xc); /* C has none */
	recon_feed(&r, 14, 0xc | EXIT);
	recon_feed(&r, 100, 0xa | EXIT);
	ASSERT_EQ_U64(recon_top(&r), UINT64_MAX, "args: nothing open");
	ASSERT_EQ_I64(recon_finish(&r, 200), 0, "args: finish");
	expect(&s, 0, C, 0xa, 10, 100, "args");
	expect(&s, 1, C, 0xb, 12, 14, "args");
	expect(&s, 2, C, 0xc, 16, 17, "args");
	ok(s.args[0].n == 2 && s.args[0].sum == 1 + 100 + 1 + 5, "args: A's two, in order");
	ok(s.args[1].n == 1 && s.args[1].sum == 2 + 'x' + 'y' + 'z', "args: B's string");
	ok(s.args[2].n == 0, "args: C none");
	ASSERT_EQ_U64(r.nargs, 0, "args: every list freed");
	recon_free(&r);
	free(s.v);

	/* A FIFO of 2: A is forced out as a begin; its arguments, from
	 * before and after, come with its END. */
	memset(&s, 0, sizeof(s));
	recon_init(&r, &test_sink, &s, 2);
	recon_feed(&r, 10, 0xa);
	a.value = 7;
	recon_arg(&r, &a, NULL);
	for (uint64_t i = 0; i < 3; i++) {
		recon_feed(&r, 20 + 10 * i, 0xb);
		recon_arg(&r, &str, "abc");
		recon_feed(&r, 25 + 10 * i, 0xb | EXIT);
	}
	a.value = 8;
	recon_arg(&r, &a, NULL);
	recon_feed(&r, 100, 0xa | EXIT);
	recon_finish(&r, 200);
	expect(&s, 0, B, 0xa, 10, 0, "args begun");
	ok(s.args[0].n == 0, "args begun: the BEGIN carries none");
	expect(&s, s.n - 1, E, 0xa, 10, 100, "args begun");
	ok(s.n <= 64 && s.args[s.n - 1].n == 2 && s.args[s.n - 1].sum == 1 + 7 + 1 + 8,
	   "args begun: both on the END");
	ok(s.args[1].n == 1 && s.args[1].sum == 2 + 'a' + 'b' + 'c', "args begun: B's on B");
	expect_valid(&s, "args begun");
	ASSERT_EQ_U64(r.nargs, 0, "args begun: every list freed");
	recon_free(&r);
	free(s.v);

	/* A list longer than the list's own room: ten entries, 200 bytes. */
	memset(&s, 0, sizeof(s));
	recon_init(&r, &test_sink, &s, 0);
	recon_feed(&r, 10, 0xd);
	{
		char big[100];
		uint64_t want = 0;
		memset(big, 1, sizeof(big));
		str.len = sizeof(big);
		for (uint64_t i = 0; i < 10; i++) {
			a.value = i;
			recon_arg(&r, i % 5 ? &a : &str, big);
			want += i % 5 ? 1 + i : 2 + sizeof(big);
		}
		str.len = 3;
		recon_feed(&r, 100, 0xd | EXIT);
		recon_finish(&r, 200);
		ok(s.n == 1 && s.args[0].n == 10 && s.args[0].sum == want,
		   "args: ten entries and 200 bytes, all kept");
	}
	recon_free(&r);
	free(s.v);

	/* Lists of frames never emitted are freed by recon_free(). */
	memset(&s, 0, sizeof(s));
	recon_init(&r, &test_sink, &s, 0);
	recon_feed(&r, 10, 0xa);
	recon_arg(&r, &str, "abc");
	recon_feed(&r, 20, 0xb);
	recon_arg(&r, &str, "abc");
	ASSERT_EQ_U64(r.nargs, 2, "args: two lists alive");
	recon_free(&r);
	ASSERT_EQ_U64(r.nargs, 0, "args: freed without emitting");
	free(s.v);
}

/* What recon_leaf() stands for: the records one by one, the steps
 * without entries after the entries. */
static int leaf_records(struct recon *r, uint64_t ts, uint64_t addr, const struct recon_arg *v,
			size_t n, size_t idle)
{
	int err = recon_feed(r, ts, addr);

	for (size_t i = 0; i < n && !err; i++)
		err = recon_arg(r, &v[i], NULL);
	for (size_t i = 0; i < idle && !err; i++)
		err = recon_arg(r, NULL, NULL);
	return err ? err : recon_feed(r, ts, addr | EXIT);
}

/* recon_leaf() makes what its records make, at once when nothing is
 * queued (no list made), through the FIFO otherwise. */
static void test_leaf(void)
{
	const struct recon_arg x = { .key = 1, .value = 100 }, y = { .key = 2, .value = 7 };
	const struct recon_arg two[] = { x, y }, five[] = { x, y, x, y, x };
	struct sink s[2] = { { 0 } };
	struct recon r[2];
	bool same = true;

	for (int k = 0; k < 2; k++) {
		int (*leaf)(struct recon *, uint64_t, uint64_t, const struct recon_arg *, size_t,
			    size_t) = k ? leaf_records : recon_leaf;
		recon_init(&r[k], &test_sink, &s[k], 0);
		leaf(&r[k], 10, 0xa, two, 2, 1); /* nothing queued */
		leaf(&r[k], 10, 0xb, two, 2, 1); /* the same time: made later */
		if (k == 0)
			ok(r[0].spare == NULL && r[0].nargs == 0, "leaf: no list made");
		recon_feed(&r[k], 20, 0xc);
		leaf(&r[k], 25, 0xd, two, 2, 1); /* queued after C */
		recon_feed(&r[k], 30, 0xc | EXIT);
		leaf(&r[k], 40, 0xe, five, 5, 0); /* more than a list holds in itself */
		leaf(&r[k], 50, 0xf, NULL, 0, 1);
		ASSERT_EQ_I64(recon_finish(&r[k], 100), 0, "leaf: finish");
	}
	ASSERT_EQ_U64(s[0].n, s[1].n, "leaf: as many events");
	for (size_t i = 0; i < s[0].n && i < s[1].n; i++) {
		const struct nest_ev *a = &s[0].v[i], *b = &s[1].v[i];
		if (a->kind != b->kind || a->addr != b->addr || a->start != b->start ||
		    a->end != b->end || s[0].args[i].n != s[1].args[i].n ||
		    s[0].args[i].sum != s[1].args[i].sum) {
			diag("leaf: event %zu differs", i);
			same = false;
		}
	}
	ok(same, "leaf: the same events, times and arguments as the records one by one");
	expect(&s[0], 1, C, 0xb, 15, 19, "leaf");
	for (int k = 0; k < 2; k++) {
		recon_free(&r[k]);
		free(s[k].v);
	}
}

/* recon_pair() makes what the enter and exit it stands for make, fed one
 * by one: random streams (times jittering backwards, equal, from 1: a
 * clock never reads 0, and a frame that a time of 0 ends looks open to
 * the recon, whose begin then takes what the stack held above its top;
 * FIFOs tiny to the default, so that pairs meet a full FIFO and an
 * empty one), every enter whose exit comes next given as a pair. */
static void test_pair(void)
{
	static const size_t fifos[] = { 2, 4, 16, 0 };
	unsigned seed = 777;
	bool same = true, deep = false;
	size_t pairs = 0;

	for (int round = 0; round < 200 && same; round++) {
		uint64_t ts[3000], addr[3000], stack[1024], t = round % 2 ? 1 : 1000;
		/* Every fifth round dives past FXT__SHOWN_DEPTH (r.deep). */
		unsigned in = round % 5 ? 52 : 62;
		size_t n = 0, depth = 0;
		struct sink s[2] = { { 0 } };
		struct recon r[2];

		while (n < 3000) {
			unsigned x = rand_r(&seed) % 100;
			t += rand_r(&seed) % 4;
			ts[n] = x < 5 && t > 3 ? t - rand_r(&seed) % 4 : t;
			if ((x < in && depth < 1024) || depth == 0) {
				stack[depth] = 0x100 + rand_r(&seed) % 4;
				addr[n++] = stack[depth++];
			} else {
				addr[n++] = stack[--depth] | EXIT;
			}
		}
		for (int k = 0; k < 2; k++) {
			recon_init(&r[k], &test_sink, &s[k], fifos[round % 4]);
			recon_set_step(&r[k], 1 + round % 3);
			for (size_t i = 0; i < n; i++) {
				if (k && i + 1 < n && !(addr[i] & EXIT) &&
				    addr[i + 1] == (addr[i] | EXIT)) {
					recon_pair(&r[k], ts[i], ts[i + 1], addr[i]);
					pairs++;
					i++;
				} else {
					recon_feed(&r[k], ts[i], addr[i]);
				}
			}
			recon_finish(&r[k], t + 100);
		}
		same = s[0].n == s[1].n && r[0].emitted == r[1].emitted &&
		       r[0].begun == r[1].begun && r[0].deep == r[1].deep &&
		       r[0].max_depth == r[1].max_depth && r[0].last_ts == r[1].last_ts;
		deep |= r[1].deep > 0;
		if (!same)
			diag("pair: round %d: events %zu/%zu emitted %llu/%llu begun %llu/%llu "
			     "deep %llu/%llu max %zu/%zu last %llu/%llu",
			     round, s[0].n, s[1].n, (unsigned long long)r[0].emitted,
			     (unsigned long long)r[1].emitted, (unsigned long long)r[0].begun,
			     (unsigned long long)r[1].begun, (unsigned long long)r[0].deep,
			     (unsigned long long)r[1].deep, r[0].max_depth, r[1].max_depth,
			     (unsigned long long)r[0].last_ts, (unsigned long long)r[1].last_ts);
		for (size_t i = 0; same && i < s[0].n; i++) {
			const struct nest_ev *a = &s[0].v[i], *b = &s[1].v[i];
			same = a->kind == b->kind && a->addr == b->addr && a->start == b->start &&
			       a->end == b->end;
			if (!same)
				diag("pair: round %d, event %zu differs: %d %llx [%llu, %llu] / %d "
				     "%llx [%llu, %llu]",
				     round, i, a->kind, (unsigned long long)a->addr,
				     (unsigned long long)a->start, (unsigned long long)a->end,
				     b->kind, (unsigned long long)b->addr,
				     (unsigned long long)b->start, (unsigned long long)b->end);
		}
		for (int k = 0; k < 2; k++) {
			recon_free(&r[k]);
			free(s[k].v);
		}
	}
	ok(pairs > 1000 && deep, "pair: pairs given, some past the shown depth");
	ok(same, "pair: the same events, times and counts as the records one by one");
}

int main(void)
{
	plan(127);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run(&scenarios[i]);
	test_deep();
	test_random();
	test_checker();
	test_emit_error();
	test_args();
	test_leaf();
	test_pair();
	return exit_status();
}
