/* Unit tests of tools/stats.c (t distribution, Welch, Mann-Whitney) and of
 * the verdict of fxt-diff on synthetic runs built with the writer. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/profile.h"
#include "tools/stats.h"

#define ASSERT_NEAR(got, want, tol, ...)                                                       \
	do {                                                                                   \
		double g_ = (got), w_ = (want);                                                \
		if (!ok(fabs(g_ - w_) <= (tol), __VA_ARGS__))                                  \
			diag("  got %.12g, want %.12g (tolerance %g)", g_, w_, (double)(tol)); \
	} while (0)

static void special_functions(void)
{
	/* I_x(a, b) for integers is a binomial tail: I_0.5(2, 3) = P(Bin(4, .5) >= 2). */
	ASSERT_NEAR(stats_betai(2, 3, 0.5), 11.0 / 16, 1e-12, "I_0.5(2,3) = 11/16");
	ASSERT_NEAR(stats_betai(1, 1, 0.3), 0.3, 1e-12, "I_x(1,1) = x");
	ASSERT_NEAR(stats_betai(3, 1, 0.4), 0.064, 1e-12, "I_x(a,1) = x^a");
	ASSERT_NEAR(stats_betai(0.5, 0.5, 0.9), 0.7951672353008666, 1e-10,
		    "I_x(1/2,1/2) = 2/pi asin(sqrt x)");
	ASSERT_NEAR(stats_betai(5, 7, 0.9), 1 - stats_betai(7, 5, 0.1), 1e-12, "symmetry");
	ok(isnan(stats_betai(-1, 2, 0.5)), "I_x with a < 0 is NaN");

	/* Closed forms: df = 1 is Cauchy, df = 2 is t / (2 sqrt(2 + t^2)) + 1/2. */
	ASSERT_NEAR(stats_t_cdf(1, 1), 0.75, 1e-12, "t cdf: t=1 df=1");
	ASSERT_NEAR(stats_t_cdf(3, 1), 0.8975836176504333, 1e-12, "t cdf: t=3 df=1");
	ASSERT_NEAR(stats_t_cdf(1, 2), 0.7886751345948129, 1e-12, "t cdf: t=1 df=2");
	ASSERT_NEAR(stats_t_cdf(-1, 2), 1 - 0.7886751345948129, 1e-12, "t cdf: t=-1 df=2");
	ASSERT_NEAR(stats_t_cdf(0, 7), 0.5, 1e-15, "t cdf: t=0");
	/* Table quantiles. */
	ASSERT_NEAR(stats_t_cdf(2.228138851986, 10), 0.975, 1e-9, "t(0.975, 10) = 2.228139");
	ASSERT_NEAR(stats_t_cdf(2.042272456301, 30), 0.975, 1e-9, "t(0.975, 30) = 2.042272");
	ASSERT_NEAR(stats_t_cdf(4.032142983557, 5), 0.995, 1e-9, "t(0.995, 5) = 4.032143");
	ASSERT_NEAR(stats_t_cdf(-1.812461122811, 10), 0.05, 1e-9, "t(0.05, 10) = -1.812461");
	/* Fractional df, against numerical integration of the density. */
	ASSERT_NEAR(stats_t_cdf(2.0, 10), 0.9633059826146269, 1e-9, "t cdf: t=2 df=10");
	ASSERT_NEAR(stats_t_cdf(2.5, 3.5), 0.9621526780952518, 1e-9, "t cdf: t=2.5 df=3.5");
	ASSERT_NEAR(stats_t_cdf(1e6, 3), 1, 1e-12, "t cdf far right");
	ASSERT_NEAR(stats_normal_cdf(1.959963984540), 0.975, 1e-12, "normal cdf 1.96");
}

static void welch(void)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 4, 6, 8, 10 };
	const double c[] = { 7, 7, 7 }, d[] = { 9, 9, 9 };
	struct stats_test t;
	double m, v;

	stats_mean_var(a, 5, &m, &v);
	ASSERT_NEAR(m, 3, 1e-15, "mean");
	ASSERT_NEAR(v, 2.5, 1e-15, "sample variance (n - 1)");

	ok(stats_welch(a, 5, b, 5, &t) == 0, "welch runs");
	/* t = 3 / sqrt(2.5 / 5 + 10 / 5); df = 2.5^2 / (0.5^2 / 4 + 2^2 / 4) */
	ASSERT_NEAR(t.stat, 3 / sqrt(2.5), 1e-12, "welch t");
	ASSERT_NEAR(t.df, 6.25 / 1.0625, 1e-12, "welch df (Welch-Satterthwaite)");
	ASSERT_NEAR(t.p, 2 * (1 - 0.9462344025264746), 1e-8, "welch p = 0.10753");
	ok(stats_welch(a, 1, b, 5, &t) < 0, "welch needs two values per side");
	ok(stats_welch(c, 3, c, 3, &t) == 0 && t.p == 1, "equal constants: p = 1");
	ok(stats_welch(c, 3, d, 3, &t) == 0 && t.p == 0, "different constants: p = 0");
}

static void mann_whitney(void)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	const double c[] = { 1, 2, 2, 3 }, d[] = { 2, 3, 4, 5 };
	struct stats_test t;

	ok(stats_mann_whitney(a, 5, b, 5, &t) == 0, "mann-whitney runs");
	/* U = 25, mean 12.5, var 25 * 11 / 12; z = (12.5 - 0.5) / sd */
	ASSERT_NEAR(t.stat, 12 / sqrt(25.0 * 11 / 12), 1e-12, "z, complete separation");
	ASSERT_NEAR(t.p, 0.012185780355, 1e-9, "p, complete separation");
	ok(stats_mann_whitney(b, 5, a, 5, &t) == 0 && t.stat < 0, "z < 0 when b is smaller");
	ok(stats_mann_whitney(c, 4, d, 4, &t) == 0, "mann-whitney with ties");
	ASSERT_NEAR(t.stat, 1.488351394469, 1e-9, "z with the tie correction");
	ASSERT_NEAR(t.p, 0.136658247738, 1e-9, "p with ties");
	ok(stats_mann_whitney(c, 1, c, 1, &t) == 0 && t.p == 1, "one equal value each: p = 1");
}

static void verdicts(void)
{
	/* 3 vs 3 per-run totals: +20% with 1-2% noise, and unchanged. */
	const double hot_b[] = { 1000, 1015, 990 }, hot_n[] = { 1195, 1210, 1188 };
	const double cold_b[] = { 1000, 1012, 991 }, cold_n[] = { 1008, 989, 1003 };
	const double x[] = { 100, 100 }, y[] = { 103, 103.5 };
	struct stats_cmp c;

	stats_compare(hot_b, 3, hot_n, 3, NULL, 0, NULL, 0, 0.05, 5, &c);
	ok(c.method == STATS_WELCH && c.significant && c.flagged, "3v3: +20%% flagged (p=%.2g)",
	   c.p);
	ASSERT_NEAR(c.pct, 100 * (1197.666666666667 - 1001.666666666667) / 1001.666666666667, 1e-9,
		    "3v3: change in percent of the base mean");
	stats_compare(cold_b, 3, cold_n, 3, NULL, 0, NULL, 0, 0.05, 5, &c);
	ok(c.method == STATS_WELCH && !c.significant && !c.flagged,
	   "3v3: unchanged not significant (p=%.2g)", c.p);
	/* Significant but under the threshold: never flagged. */
	stats_compare(x, 2, y, 2, NULL, 0, NULL, 0, 0.05, 5, &c);
	ok(c.significant && !c.flagged,
	   "3%% change, significant, under 5%% threshold: not flagged");
	/* With one run no test without samples. */
	stats_compare(x, 1, y, 1, NULL, 0, NULL, 0, 0.05, 5, &c);
	ok(c.method == STATS_NONE && !c.flagged, "1v1 without samples: no verdict");
}

/* ------------------------------------------------ synthetic runs, end to end */

static uint64_t rng = 12345;

static double uniform(void) /* [-1, 1) */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * UINT64_C(2685821657736338717)) >> 11) / (double)(UINT64_C(1) << 52) *
		   2 -
	       1;
}

/* A run of `calls` iterations of main > hot, main > cold, per-call noise
 * +-10% and a per-run factor +-2%; hot is `slow` times slower. */
static struct profile *run(double slow, unsigned calls, uint32_t reservoir)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, reservoir, 3, NULL, NULL };
	struct fxt_writer *w;
	struct fxt_reader *r;
	struct fxt_record rec;
	struct profile *p;
	const void *data;
	size_t len;
	double factor = 1 + 0.02 * uniform();
	uint64_t now = 0, s;
	unsigned i;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("writer");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "run");
	fxt_writer_initialization(w, 1000000000);
	for (i = 0; i < calls; i++) {
		struct fxt_event ev = { 0 };
		const char *name = i % 2 ? "cold" : "hot";
		double base = i % 2 ? 1000 : 1000 * slow;

		now += 50;
		s = now;
		now += (uint64_t)(base * factor * (1 + 0.10 * uniform()));
		ev.type = FXT_EVENT_DURATION_COMPLETE;
		ev.ts = s;
		ev.extra = now;
		ev.thread = fxt_writer_thread(w, 1, 2);
		ev.category = fxt_writer_cstring(w, "function");
		ev.name = fxt_writer_cstring(w, name);
		fxt_writer_event(w, &ev);
	}
	fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	if (profile_new(&p, &o) < 0 || fxt_reader_open_mem(&r, data, len, 0) < 0)
		bail_out("profile/reader");
	while (fxt_reader_next(r, &rec) > 0)
		profile_add_record(p, r, &rec);
	profile_finish(p);
	fxt_reader_free(r);
	fxt_writer_free(w);
	return p;
}

static void compare_runs(struct profile **base, size_t nb, struct profile **neu, size_t nn,
			 const char *name, struct stats_cmp *c)
{
	double tb[8], tn[8], *sb = NULL, *sn = NULL;
	size_t i, k, nsb = 0, nsn = 0;

	for (i = 0; i < nb + nn; i++) {
		const struct profile_row *r =
		    profile_find(i < nb ? base[i] : neu[i - nb], "function", name, 0, 0);
		double **s = i < nb ? &sb : &sn;
		size_t *ns = i < nb ? &nsb : &nsn;

		if (i < nb)
			tb[i] = (double)r->total_ns;
		else
			tn[i - nb] = (double)r->total_ns;
		*s = realloc(*s, (*ns + r->nsamples + 1) * sizeof(**s));
		for (k = 0; k < r->nsamples; k++)
			(*s)[(*ns)++] = (double)r->samples[k];
	}
	stats_compare(tb, nb, tn, nn, sb, nsb, sn, nsn, 0.05, 5, c);
	free(sb);
	free(sn);
}

static void synthetic(void)
{
	struct profile *base[3], *neu[3];
	struct stats_cmp c;
	int i;

	for (i = 0; i < 3; i++) {
		base[i] = run(1.0, 2000, 500);
		neu[i] = run(1.2, 2000, 500);
	}
	compare_runs(base, 3, neu, 3, "hot", &c);
	ok(c.method == STATS_WELCH && c.flagged && c.delta > 0,
	   "3v3 archives: hot +20%% flagged (%.1f%%, p=%.2g)", c.pct, c.p);
	ok(c.pct > 15 && c.pct < 25, "3v3 archives: hot change near 20%% (%.1f%%)", c.pct);
	compare_runs(base, 3, neu, 3, "cold", &c);
	ok(c.method == STATS_WELCH && !c.flagged,
	   "3v3 archives: cold unchanged not flagged (%.1f%%, p=%.2g)", c.pct, c.p);

	compare_runs(base, 1, neu, 1, "hot", &c);
	ok(c.method == STATS_MANN_WHITNEY && c.flagged && c.delta > 0,
	   "1v1 archives: hot +20%% flagged on per-call samples (p=%.2g)", c.p);
	compare_runs(base, 1, neu, 1, "cold", &c);
	ok(c.method == STATS_MANN_WHITNEY && !c.flagged,
	   "1v1 archives: cold not flagged (%.1f%%, p=%.2g)", c.pct, c.p);

	for (i = 0; i < 3; i++) {
		profile_free(base[i]);
		profile_free(neu[i]);
	}
}

int main(void)
{
	special_functions();
	welch();
	mann_whitney();
	verdicts();
	synthetic();
	done_testing();
	return exit_status();
}
