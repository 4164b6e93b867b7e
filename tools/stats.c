/* Statistics for fxt-diff: t distribution, Welch, Mann-Whitney, verdicts. */
#include "config.h"

#include "tools/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void stats_mean_var(const double *x, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;
	size_t i;

	/* Welford's update: no catastrophic cancellation on large values. */
	for (i = 0; i < n; i++) {
		double d = x[i] - m;
		m += d / (double)(i + 1);
		s += d * (x[i] - m);
	}
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

/* The continued fraction of I_x(a, b):
 *
 *   I_x(a,b) = x^a (1-x)^b / (a B(a,b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...)))
 *
 *   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
 *   d(2m)   =  m(b-m) x / ((a+2m-1)(a+2m))
 *
 * evaluated front to back with the modified Lentz method.  It converges
 * quickly for x < (a+1)/(a+b+2); the caller uses the symmetry
 * I_x(a,b) = 1 - I_(1-x)(b,a) for the other side. */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double f, c, d, delta, num;
	int i;

	/* f = 0 + 1 / (1 + d1 / (1 + ...)): start from b0 = 0 (as tiny). */
	f = tiny;
	c = f;
	d = 0;
	for (i = 1; i <= 1000; i++) {
		if (i == 1) {
			num = 1;
		} else {
			int k = i - 1; /* the index of d(k) */
			int m = k / 2;
			if (k % 2)
				num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
			else
				num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		}
		d = 1 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		delta = c * d;
		f *= delta;
		if (fabs(delta - 1) < eps)
			break;
	}
	return f;
}

double stats_betai(double a, double b, double x)
{
	double front;

	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	front = exp(a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b)));
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
	double tail;

	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	/* P(|T| > |t|) = I_(df / (df + t^2))(df / 2, 1 / 2). */
	tail = stats_betai(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail / 2 : tail / 2;
}

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2));
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_test *out)
{
	double ma, va, mb, vb, sa, sb, se2;

	if (na < 2 || nb < 2)
		return -EINVAL;
	stats_mean_var(a, na, &ma, &va);
	stats_mean_var(b, nb, &mb, &vb);
	sa = va / (double)na;
	sb = vb / (double)nb;
	se2 = sa + sb;
	if (se2 <= 0) {
		out->df = (double)(na + nb - 2);
		out->stat = mb == ma ? 0 : (mb > ma ? INFINITY : -INFINITY);
		out->p = mb == ma ? 1 : 0;
		return 0;
	}
	out->stat = (mb - ma) / sqrt(se2);
	/* Welch-Satterthwaite degrees of freedom. */
	out->df = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
	out->p = 2 * stats_t_cdf(-fabs(out->stat), out->df);
	if (out->p > 1)
		out->p = 1;
	return 0;
}

struct ranked {
	double v;
	int side; /* 0 = a, 1 = b */
};

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;
	return (a > b) - (a < b);
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out)
{
	size_t n = na + nb, i, j;
	struct ranked *all;
	double ra = 0, ties = 0, u, mu, var, z, nn = (double)n;

	if (!na || !nb)
		return -EINVAL;
	all = malloc(n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < na; i++)
		all[i] = (struct ranked){ a[i], 0 };
	for (i = 0; i < nb; i++)
		all[na + i] = (struct ranked){ b[i], 1 };
	qsort(all, n, sizeof(*all), cmp_ranked);

	/* Ranks 1 .. n; a run of ties shares the mean of its ranks. */
	for (i = 0; i < n; i = j) {
		double rank, t;
		for (j = i + 1; j < n && all[j].v == all[i].v; j++)
			;
		rank = ((double)i + 1 + (double)j) / 2;
		t = (double)(j - i);
		ties += t * t * t - t;
		for (size_t k = i; k < j; k++)
			if (all[k].side == 0)
				ra += rank;
	}
	free(all);

	/* U of sample b: how often a b value beats an a value. */
	u = (double)na * (double)nb + (double)na * ((double)na + 1) / 2 - ra;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
	out->df = 0;
	if (var <= 0) {
		out->stat = 0;
		out->p = 1;
		return 0;
	}
	z = u - mu;
	z = z > 0.5 ? z - 0.5 : (z < -0.5 ? z + 0.5 : 0); /* continuity correction */
	z /= sqrt(var);
	out->stat = z;
	out->p = 2 * stats_normal_cdf(-fabs(z));
	if (out->p > 1)
		out->p = 1;
	return 0;
}

int stats_compare(const double *base, size_t nbase, const double *neu, size_t nnew,
		  const double *base_calls, size_t nbase_calls, const double *new_calls,
		  size_t nnew_calls, double alpha, double threshold_pct, struct stats_cmp *out)
{
	struct stats_test t;
	double vb, vn;
	int rc;

	stats_mean_var(base, nbase, &out->mean_base, &vb);
	stats_mean_var(neu, nnew, &out->mean_new, &vn);
	out->sd_base = sqrt(vb);
	out->sd_new = sqrt(vn);
	out->delta = out->mean_new - out->mean_base;
	if (out->mean_base != 0)
		out->pct = 100 * out->delta / out->mean_base;
	else
		out->pct = out->delta == 0 ? 0 : (out->delta > 0 ? INFINITY : -INFINITY);
	out->method = STATS_NONE;
	out->p = 1;

	if (nbase >= 2 && nnew >= 2) {
		rc = stats_welch(base, nbase, neu, nnew, &t);
		if (rc < 0)
			return rc;
		out->method = STATS_WELCH;
		out->p = t.p;
	} else if (nbase_calls && nnew_calls) {
		rc = stats_mann_whitney(base_calls, nbase_calls, new_calls, nnew_calls, &t);
		if (rc < 0)
			return rc;
		out->method = STATS_MANN_WHITNEY;
		out->p = t.p;
	}
	out->significant = out->method != STATS_NONE && out->p < alpha;
	out->flagged = out->significant && fabs(out->pct) >= threshold_pct;
	return 0;
}
