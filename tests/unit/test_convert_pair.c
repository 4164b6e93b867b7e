/* Unit tests of the PAIR record (spool/records.h): a leaf's enter and
 * exit in one slot convert to what the two plain hook records convert to,
 * the same slices at the same times, with a drop mark before it, inside
 * it or after it, at the longest duration, across chunks, converted early
 * or after.  Spools from spool_test_writer.h, converted and read back by
 * convert_test_archive.h; one thread written plain, one with PAIRs. */
#include <config.h>

#include <stdbool.h>
#include <stddef.h>

#include "spool/records.h"
#include "tests/unit/convert_test_archive.h"

/* A call tree in plain records: {ts, addr}, addr | EXIT at an exit. */
struct rec {
	uint64_t ts, addr;
};

/* The records of a tree of calls of A, B, C: each call lasts as long as
 * its calls and some ticks more; leaves' durations cycle through short
 * ones, EV_PAIR_DUR_MAX and EV_PAIR_DUR_MAX + 1. */
static size_t make_tree(struct rec *v, size_t cap, uint64_t *ts, unsigned depth, unsigned *k)
{
	static const uint64_t fns[] = { A, B, C };
	size_t n = 0;
	uint64_t fn = fns[*k % 3];

	if (n + 2 > cap)
		return 0;
	v[n++] = (struct rec){ *ts, fn };
	*ts += 3;
	if (depth) {
		unsigned kids = 1 + *k % 3;
		for (unsigned i = 0; i < kids; i++) {
			++*k;
			n += make_tree(v + n, cap - n, ts, depth - 1, k);
		}
	} else {
		static const uint64_t durs[] = { 1, 7, EV_PAIR_DUR_MAX, EV_PAIR_DUR_MAX + 1, 40 };
		*ts += durs[*k % 5] - 3;
	}
	v[n++] = (struct rec){ *ts, fn | EXIT };
	*ts += 2;
	return n;
}

/* v written on t plain; on u with a PAIR for each enter whose exit follows
 * at most EV_PAIR_DUR_MAX later; the PAIRs made. */
static size_t put_both(struct test_thread *t, struct test_thread *u, const struct rec *v, size_t n)
{
	size_t pairs = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t w[2] = { v[i].ts, v[i].addr };
		test_record(t, w, 1);
		if (!(v[i].addr & EXIT) && i + 1 < n && v[i + 1].addr == (v[i].addr | EXIT) &&
		    ev_pair_fits(v[i].addr, v[i + 1].ts - v[i].ts)) {
			w[1] = ev_pair_w1(v[i].addr, v[i + 1].ts - v[i].ts);
			i++;
			test_record(t, (uint64_t[]){ v[i].ts, v[i].addr }, 1);
			pairs++;
		}
		test_record(u, w, 1);
	}
	return pairs;
}

/* Whether tid x's events are tid y's: types, names, times. */
static bool same_events(const struct archive *a, uint64_t x, uint64_t y, size_t *nx)
{
	size_t i = 0, j = 0;

	*nx = 0;
	for (;;) {
		while (i < a->nev && a->ev[i].tid != x)
			i++;
		while (j < a->nev && a->ev[j].tid != y)
			j++;
		if (i == a->nev || j == a->nev)
			return i == a->nev && j == a->nev;
		if (a->ev[i].type != a->ev[j].type || strcmp(a->ev[i].name, a->ev[j].name) != 0 ||
		    a->ev[i].ts != a->ev[j].ts || a->ev[i].end != a->ev[j].end) {
			diag("event %zu: %s %llu..%llu against %s %llu..%llu", *nx, a->ev[i].name,
			     (unsigned long long)a->ev[i].ts, (unsigned long long)a->ev[i].end,
			     a->ev[j].name, (unsigned long long)a->ev[j].ts,
			     (unsigned long long)a->ev[j].end);
			return false;
		}
		++*nx;
		i++;
		j++;
	}
}

/* `drop`: the threads' first drop at that time (0: none), a mark the
 * conversion places among the records by time. */
static void check(const char *what, uint64_t chunk, uint64_t drop, unsigned early)
{
	static struct rec v[20000];
	struct test_thread t = { 0 }, u = { 0 };
	struct archive a;
	struct conv_stats st;
	uint64_t ts = 1000;
	unsigned k = 0;
	size_t n = 0, pairs, nev = 0;

	test_spool_reset(chunk, 0);
	for (int r = 0; r < 6; r++)
		n += make_tree(v + n, sizeof(v) / sizeof(v[0]) - n, &ts, 6, &k);
	pairs = put_both(&t, &u, v, n);
	t.tid = 41;
	u.tid = 42;
	if (drop) {
		t.dropped = u.dropped = 1;
		t.first_drop_ts = u.first_drop_ts = drop;
	}
	convert_ok(&a, &(struct conv_opts){ .now = ts + 10, .early = early, .early_step = 1 }, &st,
		   what);
	ok(pairs > n / 6, "%s: %zu PAIRs for %zu records", what, pairs, n);
	ok(same_events(&a, 41, 42, &nev) && nev >= n / 2, "%s: the same %zu events either way",
	   what, nev);
	ASSERT_EQ_I64(nesting(&a, 42), -1, "%s: slices nest", what);
	free(a.ev);
}

int main(void)
{
	plan(6 * 5);
	check("plain", 1 << 20, 0, 0);
	check("chunks", 4096, 0, 0);
	check("early", 4096, 0, 3);
	/* A mark inside the first leaf (entered at 1000 + 6 * 3, below six
	 * levels of 3 ticks; 7 ticks long), one before any record, one
	 * later. */
	check("mark inside", 4096, 1020, 0);
	check("mark first", 4096, 10, 0);
	check("mark late", 4096, 200000, 2);
	test_spool_cleanup();
	return exit_status();
}
