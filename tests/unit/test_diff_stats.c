/* Unit tests of tools/profile/stats.c: the special functions, Welch's
 * t-test, the weighted median, Benjamini-Hochberg q-values, run factors,
 * and the family's noise model and moderated test on simulated functions.
 * How fxt-diff uses them on archives is tests/e2e/report-diff.sh's and
 * diff-noise.sh's. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/tap.h"
#include "tools/profile/stats.h"

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
	ASSERT_NEAR(stats_t_cdf(1.959963984540, INFINITY), 0.975, 1e-12,
		    "t cdf with infinite df is the normal's");
	ASSERT_NEAR(stats_normal_cdf(1.959963984540), 0.975, 1e-12, "normal cdf 1.96");

	/* digamma(1) = -gamma, digamma(1/2) = -gamma - 2 ln 2; trigamma(1) =
	 * pi^2/6, trigamma(1/2) = pi^2/2; the recurrences across the switch
	 * to the asymptotic series at 6. */
	ASSERT_NEAR(stats_digamma(1), -0.5772156649015329, 1e-12, "digamma(1)");
	ASSERT_NEAR(stats_digamma(0.5), -1.9635100260214235, 1e-12, "digamma(1/2)");
	ASSERT_NEAR(stats_digamma(6.5) - stats_digamma(5.5), 1 / 5.5, 1e-12,
		    "digamma(x + 1) - digamma(x) = 1/x");
	ASSERT_NEAR(stats_digamma(100), 4.600161852738087, 1e-12, "digamma(100)");
	ASSERT_NEAR(stats_trigamma(1), M_PI * M_PI / 6, 1e-12, "trigamma(1)");
	ASSERT_NEAR(stats_trigamma(0.5), M_PI * M_PI / 2, 1e-11, "trigamma(1/2)");
	ASSERT_NEAR(stats_trigamma(5.5) - stats_trigamma(6.5), 1 / (5.5 * 5.5), 1e-12,
		    "trigamma(x) - trigamma(x + 1) = 1/x^2");
	ASSERT_NEAR(stats_trigamma(100), 0.010050166663333571, 1e-14, "trigamma(100)");
	ASSERT_NEAR(stats_trigamma_inv(stats_trigamma(3.7)), 3.7, 1e-9, "trigamma_inv(3.7)");
	ASSERT_NEAR(stats_trigamma_inv(stats_trigamma(0.02)), 0.02, 1e-11,
		    "trigamma_inv of a small x");
	ASSERT_NEAR(stats_trigamma_inv(stats_trigamma(5e4)), 5e4, 1e-4,
		    "trigamma_inv of a large x");
	ok(isnan(stats_trigamma_inv(0)) && isnan(stats_digamma(0)), "out of domain: NaN");
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

static void wmedian(void)
{
	const double x[] = { 5, 1, 3, 4 }, one[] = { 1, 1, 1, 1 }, heavy[] = { 1, 1, 5, 1 };
	double m;

	ok(stats_wmedian(x, one, 3, &m) == 0 && m == 3, "median of 5 1 3 is 3");
	ok(stats_wmedian(x, one, 4, &m) == 0 && m == 3.5, "even count: midway (3.5)");
	ok(stats_wmedian(x, heavy, 4, &m) == 0 && m == 3, "a weight over half wins (3)");
	ok(stats_wmedian(x, one, 1, &m) == 0 && m == 5, "one value");
	ok(stats_wmedian(x, one, 0, &m) == -EINVAL, "no value: -EINVAL");
}

static void bh(void)
{
	const double p[] = { 0.01, 0.04, 0.03, 0.5 }, tie[] = { 0.02, 0.02 };
	double q[4];

	ok(stats_bh(p, 4, q) == 0, "bh runs");
	/* Sorted 0.01 0.03 0.04 0.5: 4p/rank = 0.04 0.06 0.0533 0.5, then the
	 * running minimum from the top. */
	ASSERT_NEAR(q[0], 0.04, 1e-15, "q of the smallest p");
	ASSERT_NEAR(q[2], 0.16 / 3, 1e-15, "q of 0.03: the minimum above it");
	ASSERT_NEAR(q[1], 0.16 / 3, 1e-15, "q of 0.04");
	ASSERT_NEAR(q[3], 0.5, 1e-15, "q of the largest p is p");
	ok(stats_bh(tie, 2, q) == 0 && q[0] == 0.02 && q[1] == 0.02, "ties share their q");
	ok(stats_bh(p, 0, q) == 0, "an empty family");
}

static void run_factors(void)
{
	/* 20 functions x 4 runs (2 base, 2 new): y = a_f + g_r exactly, but
	 * function 7 is 1.0 slower on the new side and function 9 missing
	 * from run 2. */
	const double g_true[] = { 0.1, -0.1, 0.3, 0.1 };
	double x[20 * 4], w[20], g[4], shift;
	int n;

	for (int f = 0; f < 20; f++) {
		w[f] = 1 + f % 3;
		for (int r = 0; r < 4; r++)
			x[f * 4 + r] = 2 + 0.37 * f + g_true[r] + (f == 7 && r >= 2 ? 1 : 0);
	}
	x[9 * 4 + 2] = NAN;
	n = stats_run_factors(x, w, 20, 2, 2, g, &shift);
	ok(n == 19, "functions in every run: 19 (%d)", n);
	ASSERT_NEAR(g[0], 0.1, 1e-12, "base run 1: +0.1 (the base side's mean is 0)");
	ASSERT_NEAR(g[1], -0.1, 1e-12, "base run 2: -0.1");
	ASSERT_NEAR(shift, 0.2, 1e-12, "the shift between the sides: 0.2, not moved by f7");
	ASSERT_NEAR(g[2], 0.3, 1e-12, "new run 1: 0.3");
	ASSERT_NEAR(g[3], 0.1, 1e-12, "new run 2: 0.1");

	/* One run a side: only the shift. */
	double y[20 * 2];
	for (int f = 0; f < 20; f++) {
		y[f * 2] = 1 + f;
		y[f * 2 + 1] = 1 + f + 0.05 + (f < 4 ? 2 : 0);
	}
	n = stats_run_factors(y, w, 20, 1, 1, g, &shift);
	ok(n == 20 && g[0] == 0, "1v1: the base run's factor is 0");
	ASSERT_NEAR(shift, 0.05, 1e-12, "1v1: the shift, 4 of 20 functions changed");
	ASSERT_NEAR(g[1], 0.05, 1e-12, "1v1: the new run's factor is the shift");
	for (int f = 0; f < 20; f++)
		y[f * 2] = NAN;
	ok(stats_run_factors(y, w, 20, 1, 1, g, &shift) == 0 && shift == 0 && g[1] == 0,
	   "no function in every run: no factor");
}

/* ------------------------------------------------ the family's noise model */

static uint64_t rng = 12345;

static double uniform(void) /* (0, 1) */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((double)((rng * UINT64_C(2685821657736338717)) >> 11) + 0.5) /
	       (double)(UINT64_C(1) << 53);
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* n functions, kb vs kn runs; function f's calls give it variance v[f]
 * (known, from many calls), a run adds tau_f^2 (tau2 for all but the last
 * `wild` functions, which get wild_tau2), and the first `changed` move by
 * `change` on the new side. */
static void simulate(struct stats_fn *fn, size_t n, int kb, int kn, double tau2, size_t wild,
		     double wild_tau2, size_t changed, double change)
{
	for (size_t f = 0; f < n; f++) {
		double v = 1e-4 * (1 + (double)(f % 10)), t2 = f >= n - wild ? wild_tau2 : tau2;
		double mb = 0, mn = 0, ss = 0, y[16];

		for (int r = 0; r < kb + kn; r++) {
			y[r] = sqrt(v + t2) * normal() + (r >= kb && f < changed ? change : 0);
			*(r < kb ? &mb : &mn) += y[r] / (r < kb ? kb : kn);
		}
		for (int r = 0; r < kb + kn; r++)
			ss += (y[r] - (r < kb ? mb : mn)) * (y[r] - (r < kb ? mb : mn));
		fn[f] =
		    (struct stats_fn){ mn - mb, v, 1e4, kb + kn > 2 ? ss / (kb + kn - 2) : NAN };
	}
}

static void family(void)
{
	static struct stats_fn fn[400];
	struct stats_family fam;
	struct stats_test t;
	size_t low = 0;

	/* 3 v 3, every function by the model: tau and a large d0. */
	simulate(fn, 400, 3, 3, 0.05 * 0.05, 0, 0, 0, 0);
	ok(stats_family_fit(fn, 400, 3, 3, &fam) == 0 && fam.n == 400 && fam.df == 4,
	   "3v3 fit: 400 functions, 4 degrees of freedom");
	ASSERT_NEAR(sqrt(fam.tau2), 0.05, 0.006, "3v3: the run noise, 5%%");
	ok(fam.d0 > 30, "3v3: the functions follow the model: d0 large (%g)", fam.d0);
	for (size_t f = 0; f < 400; f++) {
		stats_family_test(&fam, &fn[f], &t);
		low += t.p < 0.05;
	}
	ok(low >= 8 && low <= 35, "3v3 unchanged: about 5%% of p < 0.05 (%zu of 400)", low);
	fn[0].delta = 0.2;
	stats_family_test(&fam, &fn[0], &t);
	ok(t.p < 1e-4, "3v3: +20%% with 5%% run noise is clear (p=%.2g)", t.p);

	/* A tenth of the functions vary much more: d0 drops, their own
	 * variance counts, and they are not taken for changes. */
	simulate(fn, 400, 3, 3, 0.02 * 0.02, 40, 0.3 * 0.3, 0, 0);
	stats_family_fit(fn, 400, 3, 3, &fam);
	ok(fam.d0 < 15, "3v3 with wild functions: d0 small (%g)", fam.d0);
	low = 0;
	for (size_t f = 360; f < 400; f++) {
		stats_family_test(&fam, &fn[f], &t);
		low += t.p < 0.01;
	}
	ok(low <= 3, "3v3: the wild functions are rarely below 0.01 (%zu of 40)", low);

	/* One run a side: tau from the spread, which changed functions make
	 * larger (the median moves), never smaller. */
	simulate(fn, 400, 1, 1, 0.05 * 0.05, 0, 0, 20, 1.0);
	ok(stats_family_fit(fn, 400, 1, 1, &fam) == 0 && fam.df == 0 && isinf(fam.d0),
	   "1v1 fit: no degrees of freedom, d0 infinite");
	ASSERT_NEAR(sqrt(fam.tau2), 0.05, 0.008, "1v1: the run noise, 5%% of them changed");
	simulate(fn, 400, 1, 1, 0.05 * 0.05, 0, 0, 80, 1.0);
	stats_family_fit(fn, 400, 1, 1, &fam);
	ok(sqrt(fam.tau2) > 0.045 && sqrt(fam.tau2) < 0.085,
	   "1v1: a fifth changed: the run noise a little larger (%.3f)", sqrt(fam.tau2));
	stats_family_test(&fam, &fn[0], &t);
	ok(t.p < 1e-6, "1v1: a changed function is clear (p=%.2g)", t.p);
	low = 0;
	for (size_t f = 80; f < 400; f++) {
		stats_family_test(&fam, &fn[f], &t);
		low += t.p < 0.05;
	}
	ok(low <= 25, "1v1 unchanged: at most 5%% of p < 0.05 (%zu of 320)", low);

	/* v hardly known (few calls): the model counts less. */
	struct stats_fn few = { 0.1, 0.002, 2, NAN }, many = few;
	struct stats_test tf, tm;
	many.v_df = 1e4;
	fam = (struct stats_family){ 1, 1, 0, 0, INFINITY, 1 };
	stats_family_test(&fam, &few, &tf);
	stats_family_test(&fam, &many, &tm);
	ok(tf.p > tm.p && tf.df < 3, "1v1: v from few calls gives a weaker test (p %.2g > %.2g)",
	   tf.p, tm.p);

	/* v unknown (a single call): s2 alone, and no test with one run. */
	struct stats_fn single = { 0.1, NAN, INFINITY, 0.01 * 0.01 };
	fam = (struct stats_family){ 3, 3, 4, 0.0001, 50, 1 };
	stats_family_test(&fam, &single, &t);
	ASSERT_NEAR(t.stat, 0.1 / sqrt(0.0001 * 2.0 / 3), 1e-9, "v unknown: Student's t on s2");
	ok(t.df == 4, "v unknown: df 4");
	single.s2 = NAN;
	fam = (struct stats_family){ 1, 1, 0, 0, INFINITY, 1 };
	stats_family_test(&fam, &single, &t);
	ok(t.p == 1, "v unknown with one run a side: no test");
}

static void judge(void)
{
	struct stats_cmp c = { 0 };

	c.method = STATS_MODERATED;
	c.q = 0.01;
	c.pct = 20;
	stats_judge(&c, 0.05, 5);
	ok(c.significant && c.flagged, "q < alpha and 20%% >= 5%%: flagged");
	c.pct = -3;
	stats_judge(&c, 0.05, 5);
	ok(c.significant && !c.flagged, "significant, under the threshold: not flagged");
	c.q = 0.2;
	c.pct = 50;
	stats_judge(&c, 0.05, 5);
	ok(!c.significant && !c.flagged, "q above alpha: not significant");
	c.method = STATS_NONE;
	c.q = 0;
	stats_judge(&c, 0.05, 5);
	ok(!c.significant, "no test: never significant");
}

int main(void)
{
	special_functions();
	welch();
	wmedian();
	bh();
	run_factors();
	family();
	judge();
	done_testing();
	return exit_status();
}
