/* Statistics for comparing runs: Student's t distribution, Welch's t-test,
 * the Benjamini-Hochberg false discovery rate, run factors (what a whole
 * run shares), the noise model of a family of functions with its
 * moderated t-test, and the verdict of fxt-diff.
 *
 * Private to tools/.  Written from the textbook definitions; the special
 * functions use lgamma() and erfc() from libm.
 */
#ifndef FXT_TOOLS_STATS_H
#define FXT_TOOLS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mean and unbiased variance (n - 1 in the denominator; 0 when n < 2). */
void stats_mean_var(const double *x, size_t n, double *mean, double *var);

/* The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1,
 * by its continued fraction (modified Lentz).  NaN on bad arguments. */
double stats_betai(double a, double b, double x);

/* P(T <= t) for Student's t with df > 0 degrees of freedom (df need not be
 * an integer, as Welch's approximation gives). */
double stats_t_cdf(double t, double df);

/* P(Z <= z) for the standard normal distribution, and the z at which it
 * is P, 0 < P < 1 (by bisection, to 1e-12). */
double stats_normal_cdf(double z);
double stats_normal_quantile(double p);

/* The nearest ranks [*lo, *hi] (1-based) of an order-statistic interval
 * for the quantile q (0 < q < 1) of n draws at confidence about 1 - alpha:
 * the count of draws below the quantile is binomial(n, q), here by its
 * normal approximation, lo = floor(nq - z s), hi = ceil(nq + z s) + 1,
 * s = sqrt(n q (1 - q)), z the two-sided normal quantile of alpha.  A
 * side past the draws (lo < 1, hi > n) is 0: unbounded. */
void stats_rank_interval(double q, uint64_t n, double alpha, uint64_t *lo, uint64_t *hi);

/* The digamma and trigamma functions (the first and second derivatives of
 * lgamma), x > 0; and the x > 0 at which trigamma is y > 0. */
double stats_digamma(double x);
double stats_trigamma(double x);
double stats_trigamma_inv(double y);

enum stats_method {
	STATS_NONE,	 /* not enough data for a test */
	STATS_MODERATED, /* the family's noise model (stats_family_test) */
	STATS_WELCH,	 /* Welch's t-test on per-run values */
	STATS_ORDER,	 /* a percentile's order-statistic intervals (fxt-diff --metric) */
};

struct stats_test {
	double stat; /* t (or z); > 0 when the new side tends to be larger */
	double df;   /* degrees of freedom; INFINITY for z */
	double p;    /* two-sided */
};

/* Welch's unequal-variance t-test of mean(b) vs mean(a); needs na, nb >= 2.
 * Returns 0 or -EINVAL.  Two constant samples give p = 1 if equal, else 0. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_test *out);

/* The weighted median of x[0..n) with weights w > 0: the value at which
 * the weights of the values below it and of those above it are both at
 * most half of all (midway between two values when one side has exactly
 * half).  Returns 0 or -EINVAL (n == 0) / -ENOMEM. */
int stats_wmedian(const double *x, const double *w, size_t n, double *out);

/* Benjamini-Hochberg q-values of the family of p-values p[0..n): q[i] is
 * the smallest false discovery rate at which test i is a discovery,
 * min over the p[j] >= p[i] of n p[j] / rank(j), at most 1.  Calling
 * "q < alpha" significant keeps the expected share of false discoveries
 * among the significant at most alpha.  Returns 0 or -ENOMEM. */
int stats_bh(const double *p, size_t n, double *q);

/* Run factors: how much faster or slower each run's machine was, as the
 * functions measured in every run agree.  x is an nf x (nbase + nnew)
 * matrix, row-major, of the log of a per-run value of each function (its
 * self time; NaN in any run: the function is left out); w[f] > 0 the
 * weight of row f.  Runs [0, nbase) are the base side, the others the new
 * side.  Within a side, each run's factor is the weighted median over the
 * functions of the run's value less the function's mean on that side,
 * then centred on the side; the new side's factors are then moved by the
 * shift between the sides, the weighted median over the functions of the
 * difference of their side means once the runs are normalised.  So
 * g[r] is run r's log factor (the base side's average 0) and *shift the
 * new side's average: a change of a few functions moves neither, a
 * change of all of them (or of the machine) moves *shift.  Returns the
 * number of functions used (0 leaves g and *shift at 0) or -ENOMEM. */
int stats_run_factors(const double *x, const double *w, size_t nf, size_t nbase, size_t nnew,
		      double *g, double *shift);

/* A family of functions compared between nbase and nnew runs, on the
 * log of each function's per-run value (its total time, each run's
 * divided by the run's factor), y.  The noise model: y varies from run to
 * run with variance v + tau2, where v is what the function's calls alone
 * give (known from their spread within a run: the variance of one call
 * over the square of its mean, divided by the calls), and tau2 what a run
 * adds to every function beyond that, fitted over the family:
 *
 *  - with repeated runs (df = nbase + nnew - 2 > 0), by maximum likelihood
 *    from each function's variance between the runs of a side, s2; and how
 *    far those follow the model sets d0, the weight of the model against a
 *    function's own s2 (Smyth's moderated t: the variance of
 *    log(s2 / (v + tau2)) beyond a chi-square's gives d0, INFINITY when
 *    there is none beyond);
 *  - with one run a side, from how much the functions differ between the
 *    two runs: the tau2 at which the median of delta^2 / (2 (v + tau2))
 *    is a chi-square(1)'s (0.455), so that the functions that changed
 *    (outliers, under half of them) do not count; the median weighs each
 *    function by 1 / (v + tau2)^2, what it tells of tau2.  d0 is
 *    INFINITY. */
struct stats_fn {
	double delta; /* mean of y over the new runs less over the base runs */
	double v;     /* the calls' variance of one run's y (mean over runs);
		       * NAN when unknown (a single call): then the test is
		       * on s2 alone, and needs repeated runs */
	double v_df;  /* degrees of freedom of v, as estimated from the calls */
	double s2;    /* pooled variance of y within the sides (df > 0) */
};

struct stats_family {
	size_t nbase, nnew;
	double df;   /* of s2: nbase + nnew - 2 */
	double tau2; /* variance a run adds, beyond the calls' */
	double d0;   /* prior degrees of freedom; INFINITY: the model alone */
	size_t n;    /* functions it was fitted on */
};

/* Fits the noise model over fn[0..n).  Returns 0 or -ENOMEM. */
int stats_family_fit(const struct stats_fn *fn, size_t n, size_t nbase, size_t nnew,
		     struct stats_family *fam);

/* The test of one function of the family: t = delta / se, where
 * se^2 = (1/nbase + 1/nnew) times the moderated variance
 * (d0' (v + tau2) + df s2) / (d0' + df), with d0' + df degrees of
 * freedom (v + tau2 and a z-test when d0' is INFINITY).  d0' is d0, or
 * less when v is hardly known: the model is no surer than v's estimate
 * from the calls, ((v + tau2) / v)^2 v_df (Satterthwaite), so a function
 * of a few calls needs a larger change; with one run a side that is all
 * there is (df = 0).  A function whose v is unknown is judged on s2
 * alone (Student's t, df degrees of freedom), and not at all with one
 * run a side. */
void stats_family_test(const struct stats_family *fam, const struct stats_fn *fn,
		       struct stats_test *out);

/* The comparison of one function between two sets of runs. */
struct stats_cmp {
	double mean_base, mean_new; /* of the per-run values (normalised totals) */
	double sd_base, sd_new;	    /* standard deviations (0 with one run) */
	double delta;		    /* mean_new - mean_base */
	double pct;		    /* the change in percent (inf if base is 0) */
	enum stats_method method;
	double p;	  /* two-sided p-value of the test (1 when none) */
	double q;	  /* its q-value in the family of all functions */
	bool significant; /* q < alpha */
	bool flagged;	  /* significant and |pct| >= threshold */
};

/* "none", "moderated", "welch", "order": how a function was tested. */
const char *stats_method_name(enum stats_method m);

/* The verdict of a comparison whose q is set: significant when q < alpha,
 * flagged when also |pct| >= threshold_pct. */
void stats_judge(struct stats_cmp *c, double alpha, double threshold_pct);

#endif /* FXT_TOOLS_STATS_H */
