/* The hooks' own cost (see calib.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "agent/calib.h"
#include "agent/ticks.h"
#include "agent/tbuf.h"

/* The hooks' recording path, called through pointers as the program's
 * calls of the hooks go through its PLT. */
static __attribute__((noinline, no_instrument_function)) void cal_enter(uint64_t addr)
{
	agent_record(&agent_tls, addr);
}

static __attribute__((noinline, no_instrument_function)) void cal_exit(uint64_t addr)
{
	agent_record_exit(&agent_tls, addr);
}

/* The C library's hooks, when nothing traces: they do nothing. */
static __attribute__((noinline, no_instrument_function)) void cal_stub(uint64_t addr)
{
	__asm__ volatile("" : : "r"(addr));
}

/* A small recursion shaped as compiled instrumented code is: a hook at
 * entry and at exit around a body that makes calls, so that the hooks'
 * cost is timed among the work of calls, as a program's is (a processor
 * overlaps part of it with that work), not back to back. */
struct cal_hooks {
	void (*volatile enter)(uint64_t);
	void (*volatile leave)(uint64_t);
};

static __attribute__((noinline, no_instrument_function)) unsigned cal_rec(const struct cal_hooks *h,
									  unsigned n)
{
	unsigned r;

	h->enter((uint64_t)(uintptr_t)cal_rec);
	r = n < 2 ? n : cal_rec(h, n - 1) + cal_rec(h, n - 2);
	h->leave((uint64_t)(uintptr_t)cal_rec);
	return r;
}

/* The calls cal_rec(CAL_DEPTH) makes, 2 F(CAL_DEPTH + 1) - 1, and the
 * buffer their records go to (two 16-byte records a call, and a margin):
 * 700 KB, more than a core's own caches hold, so that the hooks' stores
 * leave them as a run's do (a recursion of 465 calls, whose records stay
 * in the cache, measured 2.6 ns a call less than the run's: bench/README). */
#define CAL_DEPTH 20u
#define CAL_CALLS 21891u
static uint64_t scratch[4 * CAL_CALLS + 64];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Ticks below which the leaves' intervals are counted in a histogram
 * (a leaf's part of its hooks takes tens of ticks). */
#define CAL_BINS 1024u

/* The mean of v[0 .. n) without its lowest and highest tenth, in
 * thousandths of a tick: counted in a histogram (no sort: qsort() of the
 * ~20,000 leaves took 4.5 M instructions and a buffer of 175 KB mapped and
 * faulted in at each seal), sorted in place only when values past the
 * histogram would fall among those kept. */
static uint64_t trimmed_mean(uint64_t *v, unsigned n)
{
	uint32_t bins[CAL_BINS] = { 0 };
	unsigned lo = n / 10, hi = n - n / 10, over = 0, rank = 0;
	uint64_t sum = 0;

	if (hi <= lo)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (v[i] < CAL_BINS)
			bins[v[i]]++;
		else
			over++;
	}
	if (over > n - hi) {
		qsort(v, n, sizeof(v[0]), cmp_u64);
		for (unsigned i = lo; i < hi; i++)
			sum += v[i];
		return sum * 1000 / (hi - lo);
	}
	/* Ranks [rank, rank + bins[b]) hold the value b. */
	for (unsigned b = 0; b < CAL_BINS && rank < hi; b++) {
		unsigned from = rank > lo ? rank : lo,
			 to = rank + bins[b] < hi ? rank + bins[b] : hi;

		if (to > from)
			sum += (uint64_t)b * (to - from);
		rank += bins[b];
	}
	return sum * 1000 / (hi - lo);
}

/* The least over CAL_ROUNDS of the ticks CAL_PAIRS pairs of calls of the
 * empty hook take, in thousandths of a tick per pair. */
static uint64_t time_empty_pairs(void)
{
	void (*volatile f)(uint64_t) = cal_stub;
	uint64_t rounds[CAL_ROUNDS];

	for (unsigned r = 0; r < CAL_ROUNDS; r++) {
		uint64_t t0 = agent_ticks(), t1;

		for (unsigned i = 0; i < CAL_PAIRS; i++) {
			f(i);
			f(i);
		}
		t1 = agent_ticks();
		rounds[r] = (t1 - t0) * 1000 / CAL_PAIRS;
	}
	qsort(rounds, CAL_ROUNDS, sizeof(rounds[0]), cmp_u64);
	return rounds[0];
}

void agent_calibrate(uint64_t *extra_ticks, uint64_t *inside_ticks, uint64_t *stub_ticks)
{
	const struct cal_hooks hooks = { cal_enter, cal_exit }, stubs = { cal_stub, cal_stub };
	struct tstate *t = &agent_tls, saved = *t;
	uint64_t with[CAL_ROUNDS], without[CAL_ROUNDS];
	unsigned n = 0;

	/* The recursion with the hooks (recording into the scratch buffer,
	 * as if it were the thread's chunk: a signal handler's hooks
	 * meanwhile land there too) and with empty ones, in turn: the
	 * difference is what tracing adds to a call. */
	for (unsigned r = 0; r < CAL_ROUNDS; r++) {
		uint64_t t0, t1, t2;

		t->end = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->pos = scratch;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->end = scratch + 4 * CAL_CALLS;
		t0 = agent_ticks();
		cal_rec(&hooks, CAL_DEPTH);
		t1 = agent_ticks();
		cal_rec(&stubs, CAL_DEPTH);
		t2 = agent_ticks();
		with[r] = (t1 - t0) * 1000 / CAL_CALLS;
		without[r] = (t2 - t1) * 1000 / CAL_CALLS;
	}
	t->end = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*t = saved;
	/* "inside": the leaves' intervals (a PAIR, or an enter followed by
	 * its exit), their mean, the tenth at each end left out (an
	 * interrupt), each written over the scratch's first words (the n-th
	 * interval read goes to word n - 1 <= i, after record i's words are
	 * read: 2 i and up). */
	for (unsigned i = 0; i + 1 < 2 * CAL_CALLS && n < CAL_CALLS; i++) {
		uint64_t d;

		if (ev_is_pair(scratch[2 * i + 1]))
			d = ev_pair_dur(scratch[2 * i + 1]);
		else if (!(scratch[2 * i + 1] & SPOOL_EXIT_BIT) &&
			 (scratch[2 * i + 3] & SPOOL_EXIT_BIT))
			d = scratch[2 * i + 2] - scratch[2 * i];
		else
			continue;
		scratch[n++] = d;
	}
	qsort(with, CAL_ROUNDS, sizeof(with[0]), cmp_u64);
	qsort(without, CAL_ROUNDS, sizeof(without[0]), cmp_u64);
	/* The least of each: what the machine adds (an interrupt, another
	 * process on the core) only ever makes a round longer. */
	*extra_ticks = with[0] > without[0] ? with[0] - without[0] : 0;
	*inside_ticks = trimmed_mean(scratch, n);
	*stub_ticks = time_empty_pairs();
}
