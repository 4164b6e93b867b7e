/* Unit tests of the stack chart (convert/stackchart.c): stack samples fed
 * through a real recon (convert/recon.c) into a recording sink, and the
 * exact slices compared.
 *
 * Function identities in these tests: fn_of(pc) = pc rounded down to 256
 * (function A covers 0x1000..0x10ff, and so on), except that addresses
 * from 0xf000 up are "unknown" (fn_of returns 0). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "convert/recon.h"
#include "spool/records.h"
#include "convert/stackchart.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"

#define A 0x1000u
#define B 0x2000u
#define C 0x3000u
#define R 0x5000u /* a "root" (main) */

struct sink {
	struct nest_ev *v;
	size_t n, cap;
	int fail; /* an error to return instead of recording */
	unsigned lookups;
};

static int record_slices(void *ctx, const struct recon_slot *v, struct recon_args *const *args,
			 size_t n)
{
	struct sink *s = ctx;

	(void)args; /* samples have none */
	if (s->fail)
		return s->fail;
	for (size_t i = 0; i < n; i++) {
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 64;
			s->v = realloc(s->v, s->cap * sizeof(*s->v));
			if (!s->v)
				abort();
		}
		s->v[s->n++] = (struct nest_ev){ NEST_COMPLETE, v[i].addr, v[i].start, v[i].end };
	}
	return 0;
}

/* Begun frames and marks never happen with the FIFO bound used here. */
static int record_event(void *ctx, enum recon_kind kind, uint64_t addr, uint64_t start,
			uint64_t end, const struct recon_args *args)
{
	(void)args;
	(void)ctx;
	(void)kind;
	(void)addr;
	(void)start;
	(void)end;
	return -EPROTO;
}

static const struct recon_sink test_sink = {
	.slices = record_slices,
	.event = record_event,
};

static uint64_t fn_of(void *ctx, uint64_t pc)
{
	struct sink *s = ctx;

	s->lookups++;
	return pc >= 0xf000 ? 0 : pc & ~0xffull;
}

struct chart {
	struct recon r;
	struct stackchart sc;
	struct sink s;
};

static void chart_init(struct chart *c, uint64_t period)
{
	c->s = (struct sink){ 0 };
	recon_init(&c->r, &test_sink, &c->s, 0);
	stackchart_init(&c->sc, &c->r, fn_of, &c->s, period);
}

static void chart_free(struct chart *c)
{
	stackchart_free(&c->sc);
	recon_free(&c->r);
	free(c->s.v);
}

#define SAMPLE(c, ts, ...)                                                                      \
	do {                                                                                    \
		const uint64_t pcs_[] = { __VA_ARGS__ };                                        \
		ASSERT_EQ_I64(stackchart_sample(&(c)->sc, (ts), pcs_,                           \
						(unsigned)(sizeof(pcs_) / sizeof(pcs_[0])), 0), \
			      0, "sample at %llu", (unsigned long long)(ts));                   \
	} while (0)

/* The recorded slices are exactly `want` (n of them, in start order). */
static void expect(const struct chart *c, const struct nest_ev *want, size_t n, const char *what)
{
	const char *why = NULL;
	size_t i;

	ASSERT_EQ_U64(c->s.n, n, "%s: slice count", what);
	for (i = 0; i < n && i < c->s.n; i++) {
		const struct nest_ev *g = &c->s.v[i], *w = &want[i];

		if (g->addr != w->addr || g->start != w->start || g->end != w->end)
			break;
	}
	if (i < n && i < c->s.n)
		ok(0, "%s: slice %zu is {%#llx, %llu, %llu}, want {%#llx, %llu, %llu}", what, i,
		   (unsigned long long)c->s.v[i].addr, (unsigned long long)c->s.v[i].start,
		   (unsigned long long)c->s.v[i].end, (unsigned long long)want[i].addr,
		   (unsigned long long)want[i].start, (unsigned long long)want[i].end);
	else
		ok(1, "%s: slices as expected", what);
	ASSERT_EQ_I64(nest_check_stream(c->s.v, c->s.n, &why), -1, "%s: nesting (%s)", what,
		      why ? why : "ok");
}

#define SLICE(addr, start, end)                       \
	{                                             \
		NEST_COMPLETE, (addr), (start), (end) \
	}

/* A frame stays open across samples that keep it, the inner frames change;
 * return addresses are looked up at pc - 1, the interrupted pc as is. */
static void test_basic(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(A, 1000, 1400),
		SLICE(B, 1001, 1200), /* starts one tick after its parent (recon) */
		SLICE(C, 1201, 1300),
	};

	chart_init(&c, 100);
	SAMPLE(&c, 1000, 0x2010, 0x1021);
	SAMPLE(&c, 1100, 0x2050, 0x1021); /* other pcs, same functions */
	SAMPLE(&c, 1200, 0x3005, 0x1041); /* A calls C from elsewhere */
	SAMPLE(&c, 1300, 0x1080);	  /* back in A itself */
	ASSERT_EQ_U64(c.s.n, 0, "nothing emitted while the outer frame is open");
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 3, "basic");
	ASSERT_EQ_U64(c.sc.depth, 0, "no frame left open");
	chart_free(&c);
}

/* A return address at the very start of the next function (the call was
 * the last instruction of its function, e.g. to a noreturn function)
 * belongs to the function before it; the interrupted pc is exact.  At the
 * end, the parent closes one tick after its child: a recon's timestamps
 * strictly increase, and the child is closed first. */
static void test_return_address(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(0x1f00, 500, 601),
		SLICE(C, 501, 600),
	};

	chart_init(&c, 100);
	SAMPLE(&c, 500, 0x3000, 0x2000);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 2, "return address at a function's end");
	chart_free(&c);
}

/* Recursion: one frame per level; a shallower sample closes the deeper
 * levels only. */
static void test_recursion(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(R, 10, 41),
		SLICE(A, 11, 40),
		SLICE(A, 12, 30),
		SLICE(A, 13, 20),
	};

	chart_init(&c, 10);
	SAMPLE(&c, 10, 0x1010, 0x1021, 0x1021, 0x5001);
	SAMPLE(&c, 20, 0x1030, 0x1021, 0x5001);
	SAMPLE(&c, 30, 0x1040, 0x5001);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 4, "recursion");
	chart_free(&c);
}

/* The same function under another caller is another frame: the compare
 * goes from the outermost frame and stops at the first difference, even
 * though the innermost function (B) is the same. */
static void test_other_caller(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(R, 100, 302), SLICE(A, 101, 201), SLICE(B, 102, 200),
		SLICE(C, 202, 301), SLICE(B, 203, 300),
	};

	chart_init(&c, 100);
	SAMPLE(&c, 100, 0x2010, 0x1021, 0x5001);
	SAMPLE(&c, 200, 0x2010, 0x3021, 0x5001);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 5, "same function, other caller");
	chart_free(&c);
}

/* finish: one period after the last sample, unless end_ts comes first. */
static void test_finish_end_ts(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(A, 1000, 1031),
		SLICE(B, 1001, 1030),
	};
	static const struct nest_ev want_late[] = {
		SLICE(A, 1000, 1101),
		SLICE(B, 1001, 1100),
	};

	chart_init(&c, 100);
	SAMPLE(&c, 1000, 0x2010, 0x1021);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 1030), 0, "finish at end_ts");
	expect(&c, want, 2, "end_ts before the period's end");
	chart_free(&c);

	chart_init(&c, 100);
	SAMPLE(&c, 1000, 0x2010, 0x1021);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 5000), 0, "finish, end_ts later");
	expect(&c, want_late, 2, "end_ts after the period's end");
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish again: nothing open");
	ASSERT_EQ_U64(c.s.n, 2, "  emits nothing more");
	chart_free(&c);

	chart_init(&c, 100);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish without samples");
	ASSERT_EQ_U64(c.s.n, 0, "  emits nothing");
	chart_free(&c);
}

/* Unknown functions (fn_of gives 0): the looked-up address stands for the
 * function, so two pcs in one unknown function are two frames; an empty
 * sample (no frame) closes everything. */
static void test_unknown_and_empty(void)
{
	struct chart c;
	static const struct nest_ev want[] = {
		SLICE(A, 10, 32),      SLICE(0xf010, 11, 20),
		SLICE(0xf020, 21, 31), /* the return address minus one */
		SLICE(B, 22, 30),      SLICE(B, 40, 50),
	};

	chart_init(&c, 10);
	SAMPLE(&c, 10, 0xf010, 0x1021);
	SAMPLE(&c, 20, 0x2000, 0xf021, 0x1021);
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 30, NULL, 0, 0), 0, "empty sample");
	ASSERT_EQ_U64(c.sc.depth, 0, "  closes every frame");
	SAMPLE(&c, 40, 0x2000);
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 5, "unknown functions, empty sample");
	chart_free(&c);
}

/* A sink error comes back from the sample that made the recon emit. */
static void test_sink_error(void)
{
	struct chart c;
	const uint64_t a[] = { 0x1010 }, b[] = { 0x2010 };

	chart_init(&c, 10);
	c.s.fail = -EIO;
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 10, a, 1, 0), 0, "first sample: nothing emitted");
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 20, b, 1, 0), -EIO, "A closes: the sink's error");
	chart_free(&c);
}

/* A hot/cold loop, as the end-to-end test sees it: 4 samples in hot for 1
 * in cold, 20 times; the widths are exact (each switch costs the next
 * frame one tick). */
static void test_hot_cold(void)
{
	struct chart c;
	uint64_t hot = 0, cold = 0, main_w = 0;
	unsigned nhot = 0, ncold = 0;

	chart_init(&c, 1000);
	for (unsigned i = 0; i < 100; i++) {
		uint64_t ts = 1000 * (uint64_t)(i + 1);
		const uint64_t h[] = { 0x1000 + (i % 7) * 16, 0x5021 },
			       k[] = { 0x2000 + (i % 5) * 16, 0x5041 };

		if (i % 5 == 4)
			ASSERT_EQ_I64(stackchart_sample(&c.sc, ts, k, 2, 1), 0, "cold sample %u",
				      i);
		else
			ASSERT_EQ_I64(stackchart_sample(&c.sc, ts, h, 2, 1), 0, "hot sample %u", i);
	}
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	for (size_t i = 0; i < c.s.n; i++) {
		uint64_t w = c.s.v[i].end - c.s.v[i].start;

		if (c.s.v[i].addr == A)
			hot += w, nhot++;
		else if (c.s.v[i].addr == B)
			cold += w, ncold++;
		else if (c.s.v[i].addr == R)
			main_w += w;
	}
	ASSERT_EQ_U64(c.s.n, 41, "one main, 20 hot and 20 cold slices");
	ASSERT_EQ_U64(nhot, 20, "hot slices");
	ASSERT_EQ_U64(ncold, 20, "cold slices");
	/* hot k: (5k+1)*1000 + 1 .. (5k+5)*1000 (the first starts one tick
	 * after main, the others one after cold's exit); cold k: (5k+5)*1000
	 * + 1 .. (5k+6)*1000, the last one ending one period after it. */
	ASSERT_EQ_U64(hot, 20 * 3999, "hot width");
	ASSERT_EQ_U64(cold, 20 * 999, "cold width");
	ASSERT_EQ_U64(main_w, 101001 - 1000, "main: first sample to one period after the last");
	chart_free(&c);
}

/* The deepest stacks the agent records, and deeper: the stack grows. */
static void test_deep(void)
{
	struct chart c;
	uint64_t pcs[300];
	size_t i;

	for (i = 0; i < 300; i++)
		pcs[i] = 0x1001 + 0x100 * (i % 200); /* functions 0x1000 .. 0xd700 */
	chart_init(&c, 10);
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 100, pcs, 300, 0), 0, "300 frames");
	ASSERT_EQ_U64(c.sc.depth, 300, "  all open");
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 1000, pcs + 1, 299, 0), 0, "minus the innermost");
	ASSERT_EQ_U64(c.sc.depth, 299, "  one closed");
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	ASSERT_EQ_U64(c.s.n, 300, "300 slices");
	for (i = 0; i < c.s.n; i++)
		if (c.s.v[i].start != 100 + i)
			break;
	ASSERT_EQ_U64(i, 300, "outermost first, one tick apart");
	ASSERT_EQ_U64(c.s.v[299].addr, 0x1000, "innermost: pcs[0] looked up as is");
	ASSERT_EQ_U64(c.s.v[299].end, 1000, "  closed by the second sample");
	ASSERT_EQ_U64(c.s.v[0].addr, (0x1000 + 0x100 * (299 % 200)), "outermost: pcs[299] - 1");
	chart_free(&c);
}

/* A sample stands for CPU time, not for the wait after it: when the time
 * to the next sample is more than the CPU time the thread used meanwhile
 * (its periods) and one period more, the frames close once that CPU time
 * has passed; within that, they stay open (the kernel's tick makes the
 * count one period coarse). */
static void test_waits(void)
{
	struct chart c;
	const uint64_t a[] = { 0x2010, 0x1021 }, b[] = { 0x3010, 0x1021 };
	static const struct nest_ev want[] = {
		SLICE(A, 1000, 1501), /* to one period of CPU after 1400 */
		SLICE(B, 1001, 1500),	  SLICE(A, 100000, 100201), /* after the wait */
		SLICE(B, 100001, 100100), SLICE(C, 100101, 100200),
	};

	chart_init(&c, 100);
	/* Busy: 3 periods counted in 4 periods' time (the tick). */
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 1000, a, 2, 1), 0, "sample 1");
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 1400, a, 2, 3), 0, "sample 2: busy");
	ASSERT_EQ_U64(c.sc.depth, 2, "  frames open");
	/* Then one period of CPU in 98600 ticks: a wait. */
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 100000, a, 2, 1), 0, "sample 3: after a wait");
	ASSERT_EQ_I64(stackchart_sample(&c.sc, 100100, b, 2, 1), 0, "sample 4");
	ASSERT_EQ_I64(stackchart_finish(&c.sc, 0), 0, "finish");
	expect(&c, want, 5, "waits between samples");
	chart_free(&c);
}

int main(void)
{
	test_basic();
	test_waits();
	test_return_address();
	test_recursion();
	test_other_caller();
	test_finish_end_ts();
	test_unknown_and_empty();
	test_sink_error();
	test_hot_cold();
	test_deep();
	done_testing();
	return exit_status();
}
