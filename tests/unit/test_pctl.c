/* Unit tests of tools/profile/pctl.c (percentiles of call durations:
 * nearest ranks, selection, the bucketed sketch and its error bound, log2
 * histograms, merging) and of the rank interval fxt-diff --metric tests
 * with (stats_rank_interval()). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/profile/pctl.h"
#include "tools/profile/profile.h"
#include "tools/profile/stats.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void test_rank(void)
{
	ok(pctl_rank(500000, 10000) == 5000, "p50 of 10000: rank 5000");
	ok(pctl_rank(999000, 10000) == 9990, "p99.9 of 10000: rank 9990 (no float rounding)");
	ok(pctl_rank(990000, 101) == 100, "p99 of 101: ceil(99.99) = 100");
	ok(pctl_rank(500000, 3) == 2, "p50 of 3: rank 2");
	ok(pctl_rank(500000, 1) == 1 && pctl_rank(0, 7) == 1, "rank at least 1");
	ok(pctl_rank(1000000, 7) == 7, "p100: the last");
}

/* Selects every k of v (copies) and checks against the sorted array. */
static int select_all_ok(const uint64_t *v, size_t n)
{
	uint64_t *s = malloc(n * sizeof(*s)), *w = malloc(n * sizeof(*w));
	int good = 1;

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u64);
	for (size_t k = 0; k < n && good; k++) {
		memcpy(w, v, n * sizeof(*w));
		pctl_select(w, n, k);
		good = w[k] == s[k];
		for (size_t i = 0; i < n && good; i++)
			good = i < k ? w[i] <= w[k] : i > k ? w[i] >= w[k] : 1;
	}
	free(s);
	free(w);
	return good;
}

static void test_select(void)
{
	enum { N = 300 };
	uint64_t v[N];
	size_t i;

	for (i = 0; i < N; i++)
		v[i] = next() % 1000000;
	ok(select_all_ok(v, N), "select: random, every rank");
	for (i = 0; i < N; i++)
		v[i] = next() % 3;
	ok(select_all_ok(v, N), "select: three values, every rank");
	for (i = 0; i < N; i++)
		v[i] = 42;
	ok(select_all_ok(v, N), "select: all equal");
	for (i = 0; i < N; i++)
		v[i] = i;
	ok(select_all_ok(v, N), "select: ascending");
	for (i = 0; i < N; i++)
		v[i] = N - i;
	ok(select_all_ok(v, N), "select: descending");
	/* An organ pipe, a classic bad case for medians of three. */
	for (i = 0; i < N; i++)
		v[i] = i < N / 2 ? i : N - i;
	ok(select_all_ok(v, N), "select: organ pipe");
	ok(select_all_ok(v, 1) && select_all_ok(v, 2), "select: one and two values");
}

/* The exact store: percentiles of a shuffled 1 .. n. */
static void test_exact(void)
{
	struct pctl d = { 0 };
	uint64_t n = 100000, rank[5], out[5];
	const uint32_t ppm[5] = { 500000, 900000, 990000, 999000, 1000000 };
	int good = 1;

	uint64_t *v = malloc(n * sizeof(*v));

	for (uint64_t i = 0; i < n; i++)
		v[i] = i + 1;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = next() % (i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	for (uint64_t i = 0; i < n; i++)
		pctl_add(&d, v[i]);
	free(v);
	ok(!d.wide, "exact store: durations below 2^32 ns take 4 bytes");
	for (int i = 0; i < 5; i++)
		rank[i] = pctl_rank(ppm[i], n);
	ok(!pctl_at_ranks(&d, rank, 5, out), "exact store: not approximate");
	for (int i = 0; i < 5; i++)
		good &= out[i] == rank[i];
	ok(good, "exact store: 1..100000 gives p50 %llu p90 %llu p99 %llu p99.9 %llu max %llu",
	   (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)out[2],
	   (unsigned long long)out[3], (unsigned long long)out[4]);
	/* The same rank twice. */
	rank[0] = rank[1] = 7;
	pctl_at_ranks(&d, rank, 2, out);
	ok(out[0] == 7 && out[1] == 7, "exact store: a rank asked twice");
	pctl_free(&d);
}

/* Past 65536 durations ranks go through buckets: against a sort, with
 * small values (a bucket each), duplicates and a wide spread. */
static void test_many(void)
{
	enum { N = 150000 };
	struct pctl d = { 0 };
	uint64_t *s = malloc(N * sizeof(*s)), rank[8], out[8];
	const uint32_t ppm[8] = { 1, 100000, 400000, 500000, 500001, 900000, 999000, 999999 };
	int good = 1;

	for (int i = 0; i < N; i++) {
		uint64_t x = i % 3 == 0 ? next() % 200 : i % 3 == 1 ? 5000 : next() % 100000000;

		pctl_add(&d, x);
		s[i] = x;
	}
	qsort(s, N, sizeof(*s), cmp_u64);
	for (int i = 0; i < 8; i++)
		rank[i] = pctl_rank(ppm[i], N);
	pctl_at_ranks(&d, rank, 8, out);
	for (int i = 0; i < 8; i++)
		good &= out[i] == s[rank[i] - 1];
	ok(good, "150000 mixed durations: 8 ranks as a sort gives them");
	pctl_free(&d);
	free(s);
}

/* Durations past 2^32 ns make a store wide: the earlier ones
 * kept, ranks as a sort gives them, on both paths (selection below 65536
 * durations, buckets past); a merge of narrow and wide is wide. */
static void test_wide(void)
{
	const size_t sizes[2] = { 1000, 100000 };

	for (int t = 0; t < 2; t++) {
		size_t n = sizes[t];
		struct pctl d = { 0 }, m = { 0 };
		uint64_t *s = malloc(n * sizeof(*s)), rank[3], out[3];
		int good;

		for (size_t i = 0; i < n; i++) {
			/* The first wide one comes after 100 narrow ones. */
			s[i] = i % 7 == 6 && i > 100 ? (UINT64_C(5) << 32) + next() % 1000
						     : next() % 100000;
			pctl_add(&d, s[i]);
		}
		qsort(s, n, sizeof(*s), cmp_u64);
		rank[0] = pctl_rank(100000, n);
		rank[1] = pctl_rank(500000, n);
		rank[2] = pctl_rank(990000, n);
		good = d.wide && pctl_at_ranks(&d, rank, 3, out) == 0;
		for (int i = 0; i < 3; i++)
			good &= out[i] == s[rank[i] - 1];
		ok(good, "%zu durations, some past 2^32 ns: wide, p10 p50 p99 as a sort's", n);
		pctl_add(&m, 7);
		pctl_merge(&m, &d);
		ok(m.wide && m.n == n + 1 && pctl_get(&m, 0) == 7, "%zu: narrow + wide merge: wide",
		   n);
		pctl_free(&d);
		pctl_free(&m);
		free(s);
	}
}

/* Every bucket: its bounds tile the line, its value lies in it, within
 * PCTL_REL_ERR of its first and last whole ns. */
static void test_buckets(void)
{
	uint64_t prev_hi = 0;
	double worst = 0;
	int tiles = 1, inside = 1;

	for (uint32_t b = 0; b < PCTL_NBUCKETS; b++) {
		uint64_t lo, hi, v;

		pctl_bucket_bounds(b, &lo, &hi);
		v = pctl_bucket_value(b);
		tiles &= lo == prev_hi && pctl_bucket(lo) == b && pctl_bucket(hi - 1) == b;
		inside &= v >= lo && v <= hi - 1 && pctl_bucket(v) == b;
		worst = fmax(worst, fabs((double)v - (double)lo) / (double)lo);
		worst = fmax(worst, fabs((double)(hi - 1) - (double)v) / (double)(hi - 1));
		prev_hi = hi;
	}
	ok(tiles && prev_hi == UINT64_MAX, "buckets tile [0, 2^64)");
	ok(inside, "each bucket's value lies in it");
	ok(worst <= PCTL_REL_ERR, "worst relative error of a bucket's value %.5f <= %g", worst,
	   PCTL_REL_ERR);
	ok(pctl_bucket(UINT64_MAX) == PCTL_NBUCKETS - 1, "2^64 - 1 in the last bucket");
}

/* A sketch of a known distribution against the exact percentiles. */
static void sketch_vs_exact(const char *what, uint64_t (*draw)(void))
{
	enum { N = 200000 };
	struct pctl exact = { 0 }, sk = { 0 };
	const uint32_t ppm[] = { 10000, 250000, 500000, 900000, 990000, 999000, 999900 };
	enum { M = sizeof(ppm) / sizeof(ppm[0]) };
	uint64_t rank[M], a[M], b[M], ha[PCTL_HIST_BUCKETS] = { 0 }, hb[PCTL_HIST_BUCKETS] = { 0 };
	double worst = 0;
	bool approx;

	/* Half the calls before the switch, half after. */
	for (int i = 0; i < N; i++) {
		uint64_t x = draw();

		pctl_add(&exact, x);
		pctl_add(&sk, x);
		if (i == N / 2)
			pctl_to_sketch(&sk);
	}
	for (int i = 0; i < M; i++)
		rank[i] = pctl_rank(ppm[i], N);
	pctl_histogram(&exact, ha);
	pctl_histogram(&sk, hb);
	pctl_at_ranks(&exact, rank, M, a);
	approx = pctl_at_ranks(&sk, rank, M, b);
	for (int i = 0; i < M; i++)
		worst = fmax(worst, fabs((double)b[i] - (double)a[i]) / fmax((double)a[i], 1));
	ok(approx && pctl_count(&sk) == N, "%s: the sketch counts every call", what);
	ok(worst <= PCTL_REL_ERR, "%s: sketch within %.4f of the exact percentiles (bound %g)",
	   what, worst, PCTL_REL_ERR);
	ok(memcmp(ha, hb, sizeof(ha)) == 0, "%s: log2 histogram of the sketch is exact", what);
	pctl_free(&exact);
	pctl_free(&sk);
}

static uint64_t uniform_draw(void)
{
	return 1 + next() % 1000000;
}

/* Exponential, mean 50 us: a long tail. */
static uint64_t expo_draw(void)
{
	double u = (double)(next() >> 11) / 9007199254740992.0;

	return (uint64_t)(-50000.0 * log(1 - u));
}

/* Log-uniform over 1 ns .. ~1 s, small values (exact buckets) included. */
static uint64_t wide_draw(void)
{
	double u = (double)(next() >> 11) / 9007199254740992.0;

	return (uint64_t)exp(u * 21);
}

static void test_merge(void)
{
	struct pctl a = { 0 }, b = { 0 }, c = { 0 };
	uint64_t r = 150, v;

	for (uint64_t i = 1; i <= 100; i++)
		pctl_add(&a, i);
	for (uint64_t i = 101; i <= 200; i++)
		pctl_add(&b, i);
	pctl_merge(&c, &a);
	pctl_merge(&c, &b);
	ok(!c.sk && c.n == 200 && !pctl_at_ranks(&c, &r, 1, &v) && v == 150,
	   "merge exact + exact: exact, rank 150 is 150");
	pctl_to_sketch(&b);
	pctl_merge(&a, &b);
	ok(a.sk && pctl_count(&a) == 200 && pctl_at_ranks(&a, &r, 1, &v) && v == 150,
	   "merge exact + sketch: a sketch of 200, rank 150 is %llu", (unsigned long long)v);
	pctl_free(&a);
	pctl_free(&b);
	pctl_free(&c);
}

/* The engine's durations: every frame of a recursion (end order, as the
 * flusher writes them), a frame never closed up to the trace's end, not
 * a stack sample's slices; past exact_max, sketches. */
static void slice(struct fxt_writer *w, enum fxt_event_type type, uint64_t tid, const char *name,
		  uint64_t ts, uint64_t end)
{
	struct fxt_event ev = { 0 };

	ev.type = type;
	ev.ts = ts;
	ev.thread = fxt_writer_thread(w, 1, tid);
	ev.category = fxt_writer_cstring(w, "function");
	ev.name = fxt_writer_cstring(w, name);
	ev.extra = end;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

static struct profile *engine(uint64_t exact_max)
{
	struct profile_opts o = { 0 };
	struct fxt_writer *w;
	struct fxt_reader *r;
	struct fxt_record rec;
	struct profile *p;
	const void *data;
	size_t len;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, 1000000000);
	slice(w, FXT_EVENT_DURATION_BEGIN, 1, "open", 0, 0);
	slice(w, FXT_EVENT_DURATION_COMPLETE, 1, "r", 20, 30);
	slice(w, FXT_EVENT_DURATION_COMPLETE, 1, "r", 10, 60);
	slice(w, FXT_EVENT_DURATION_COMPLETE, 1, "r", 0, 100);
	slice(w, FXT_EVENT_DURATION_COMPLETE, 1 | FXT_SAMPLE_KOID_BIT, "r", 0, 400);
	fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	o.percentiles = true;
	o.exact_max = exact_max;
	if (profile_new(&p, &o) < 0 || fxt_reader_open_mem(&r, data, len, 0) < 0)
		bail_out("profile_new / fxt_reader_open_mem");
	while (fxt_reader_next(r, &rec) > 0)
		if (profile_add_record(p, r, &rec) < 0)
			bail_out("profile_add_record");
	if (profile_finish(p) < 0)
		bail_out("profile_finish");
	fxt_reader_free(r);
	fxt_writer_free(w);
	return p;
}

static void test_engine(void)
{
	const uint32_t ppm[3] = { 500000, 990000, 1000000 };
	struct profile_q q[3];
	uint64_t h[PCTL_HIST_BUCKETS] = { 0 };
	struct profile *p = engine(0);
	const struct profile_row *r = profile_find(p, NULL, "r", 0, 0), *o;

	ok(r && profile_quantiles(p, r, ppm, 3, q) == 0 && q[0].ns == 50 && q[1].ns == 100 &&
	       q[2].ns == 100 && q[0].kind == PROFILE_Q_EXACT,
	   "recursion, end order: each frame counts (10, 50, 100: p50 50, p99 100, max 100)");
	ok(r && profile_histogram(p, r, h) == 0 && h[4] == 1 && h[6] == 1 && h[7] == 1,
	   "recursion: log2 buckets [8,16) [32,64) [64,128) one each");
	o = profile_find(p, NULL, "open", 0, 0);
	ok(o && profile_quantiles(p, o, ppm, 1, q) == 0 && q[0].ns == 400,
	   "a frame never closed counts up to the trace's end (400 ns, the sample's end)");
	for (size_t i = 0; i < profile_nrows(p); i++) {
		const struct profile_row *s = profile_row(p, i);

		if (s->sampled)
			ok(pctl_count(profile_durations(p, s)) == 0,
			   "a stack sample's slices are not durations of calls");
	}
	profile_free(p);

	p = engine(2);
	r = profile_find(p, NULL, "r", 0, 0);
	ok(r && profile_quantiles(p, r, ppm, 3, q) == 0 && q[0].ns == 50 &&
	       q[0].kind == PROFILE_Q_APPROX && q[2].ns == 100 && q[2].kind == PROFILE_Q_EXACT &&
	       profile_nsketched(p) == 1,
	   "past exact_max 2: r a sketch (p50 50, approximate; max exact)");
	profile_free(p);
}

static void test_interval(void)
{
	uint64_t lo, hi;

	ok(fabs(stats_normal_quantile(0.975) - 1.959964) < 1e-6, "normal quantile of 0.975");
	stats_rank_interval(0.5, 10000, 0.05, &lo, &hi);
	ok(lo == 4902 && hi == 5099, "p50 of 10000 at 95%%: ranks [%llu, %llu] = [4902, 5099]",
	   (unsigned long long)lo, (unsigned long long)hi);
	stats_rank_interval(0.999, 100, 0.05, &lo, &hi);
	ok(hi == 0 && lo > 0, "p99.9 of 100: open above");
	stats_rank_interval(0.5, 1, 0.05, &lo, &hi);
	ok(lo == 0 && hi == 0, "one call: open both ways");
}

int main(void)
{
	plan(46);
	test_rank();
	test_select();
	test_exact();
	test_many();
	test_wide();
	test_buckets();
	sketch_vs_exact("uniform 1 ns .. 1 ms", uniform_draw);
	sketch_vs_exact("exponential, mean 50 us", expo_draw);
	sketch_vs_exact("log-uniform 1 ns .. 1 s", wide_draw);
	test_merge();
	test_engine();
	test_interval();
	return exit_status();
}
