/* Statistics for comparing runs: Student's t distribution, Welch's t-test,
 * the Mann-Whitney U test, and the regression verdict of fxt-diff.
 *
 * Private to tools/.  Written from the textbook definitions; the special
 * functions use lgamma() and erfc() from libm.
 */
#ifndef FXT_TOOLS_STATS_H
#define FXT_TOOLS_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Mean and unbiased variance (n - 1 in the denominator; 0 when n < 2). */
void stats_mean_var(const double *x, size_t n, double *mean, double *var);

/* The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1,
 * by its continued fraction (modified Lentz).  NaN on bad arguments. */
double stats_betai(double a, double b, double x);

/* P(T <= t) for Student's t with df > 0 degrees of freedom (df need not be
 * an integer, as Welch's approximation gives). */
double stats_t_cdf(double t, double df);

/* P(Z <= z) for the standard normal distribution. */
double stats_normal_cdf(double z);

enum stats_method {
	STATS_NONE,	    /* not enough data for a test */
	STATS_WELCH,	    /* Welch's t-test on per-run values */
	STATS_MANN_WHITNEY, /* Mann-Whitney U, normal approximation, on per-call samples */
};

struct stats_test {
	double stat; /* t, or z for Mann-Whitney; > 0 when b tends to be larger */
	double df;   /* Welch only */
	double p;    /* two-sided */
};

/* Welch's unequal-variance t-test of mean(b) vs mean(a); needs na, nb >= 2.
 * Returns 0 or -EINVAL.  Two constant samples give p = 1 if equal, else 0. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_test *out);

/* Mann-Whitney U test with tie correction, normal approximation with
 * continuity correction; needs na, nb >= 1.  Returns 0 or -EINVAL/-ENOMEM. */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out);

/* The verdict on one function between two sets of runs. */
struct stats_cmp {
	double mean_base, mean_new; /* of the per-run values */
	double sd_base, sd_new;	    /* standard deviations (0 with one run) */
	double delta;		    /* mean_new - mean_base */
	double pct;		    /* 100 * delta / mean_base (inf if base is 0) */
	enum stats_method method;
	double p;	  /* two-sided p-value of the test (1 when none) */
	bool significant; /* p < alpha */
	bool flagged;	  /* significant and |pct| >= threshold */
};

/* Compares per-run values (e.g. a function's inclusive time in each run):
 * with >= 2 runs per side Welch's t-test on them; otherwise the per-call
 * samples (durations of single calls, pooled over the runs of a side) go
 * to the Mann-Whitney test when both sides have at least one.  Returns 0
 * or a negative errno. */
int stats_compare(const double *base, size_t nbase, const double *neu, size_t nnew,
		  const double *base_calls, size_t nbase_calls, const double *new_calls,
		  size_t nnew_calls, double alpha, double threshold_pct, struct stats_cmp *out);

#endif /* FXT_TOOLS_STATS_H */
