/* Statistics for fxt-diff (see stats.h): special functions, Welch's t, the
 * false discovery rate, run factors, the family's noise model, verdicts. */
#include "config.h"

#include "tools/profile/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* The median of a chi-square with one degree of freedom. */
#define CHI2_1_MEDIAN 0.454936423119572702

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
	if (df > 1e7) /* INFINITY included: the normal, within 1e-7 */
		return stats_normal_cdf(t);
	/* P(|T| > |t|) = I_(df / (df + t^2))(df / 2, 1 / 2). */
	tail = stats_betai(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail / 2 : tail / 2;
}

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2));
}

double stats_normal_quantile(double p)
{
	double lo = -40, hi = 40;

	if (!(p > 0 && p < 1))
		return NAN;
	while (hi - lo > 1e-12) {
		double mid = (lo + hi) / 2;

		*(stats_normal_cdf(mid) < p ? &lo : &hi) = mid;
	}
	return (lo + hi) / 2;
}

void stats_rank_interval(double q, uint64_t n, double alpha, uint64_t *lo, uint64_t *hi)
{
	double z = stats_normal_quantile(1 - alpha / 2), nq = (double)n * q;
	double s = sqrt(nq * (1 - q)), l = floor(nq - z * s), h = ceil(nq + z * s) + 1;

	*lo = l >= 1 ? (uint64_t)l : 0;
	*hi = h <= (double)n ? (uint64_t)h : 0;
}

/* Both by the recurrence up to x >= 20, then the asymptotic series:
 *   digamma(x)  = ln x - 1/(2x) - 1/(12x^2) + 1/(120x^4) - 1/(252x^6) ...
 *   trigamma(x) = 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7) - 1/(30x^9) ...
 * (the first term left out is under 1e-13 there). */
double stats_digamma(double x)
{
	double r = 0, x2;

	if (!(x > 0))
		return NAN;
	for (; x < 20; x += 1)
		r -= 1 / x;
	x2 = 1 / (x * x);
	return r + log(x) - 0.5 / x - x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 / 252));
}

double stats_trigamma(double x)
{
	double r = 0, x2;

	if (!(x > 0))
		return NAN;
	for (; x < 20; x += 1)
		r += 1 / (x * x);
	x2 = 1 / (x * x);
	return r + 1 / x + x2 / 2 +
	       x2 / x * (1.0 / 6 - x2 * (1.0 / 30 - x2 * (1.0 / 42 - x2 / 30)));
}

double stats_trigamma_inv(double y)
{
	double lo = 1e-8, hi = 1e12;

	if (!(y > 0))
		return NAN;
	/* trigamma falls from +inf to 0: bisection on a log scale. */
	for (int i = 0; i < 200 && hi / lo > 1 + 1e-13; i++) {
		double mid = sqrt(lo * hi);
		if (stats_trigamma(mid) > y)
			lo = mid;
		else
			hi = mid;
	}
	return sqrt(lo * hi);
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

struct weighted {
	double x, w;
};

static int cmp_weighted(const void *a, const void *b)
{
	double x = ((const struct weighted *)a)->x, y = ((const struct weighted *)b)->x;
	return (x > y) - (x < y);
}

int stats_wmedian(const double *x, const double *w, size_t n, double *out)
{
	struct weighted *v;
	double total = 0, below = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		v[i] = (struct weighted){ x[i], w[i] };
		total += w[i];
	}
	qsort(v, n, sizeof(*v), cmp_weighted);
	/* The first value whose weight takes the sum below it past half. */
	for (i = 0; i + 1 < n; i++) {
		below += v[i].w;
		if (below >= total / 2)
			break;
	}
	*out = v[i].x;
	/* Exactly half below it and half above: midway (as the plain median
	 * of an even count is). */
	if (i + 1 < n && fabs(below - total / 2) <= 1e-12 * total)
		*out = (v[i].x + v[i + 1].x) / 2;
	free(v);
	return 0;
}

struct ranked_p {
	double p;
	size_t i;
};

static int cmp_ranked_p(const void *a, const void *b)
{
	const struct ranked_p *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

int stats_bh(const double *p, size_t n, double *q)
{
	struct ranked_p *v;
	double least = 1;
	size_t k;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < n; k++)
		v[k] = (struct ranked_p){ p[k], k };
	qsort(v, n, sizeof(*v), cmp_ranked_p);
	/* From the largest p down: q(k) = min over j >= k of n p(j) / j. */
	for (k = n; k-- > 0;) {
		double x = (double)n * v[k].p / (double)(k + 1);
		if (x < least)
			least = x;
		q[v[k].i] = least;
	}
	free(v);
	return 0;
}

int stats_run_factors(const double *x, const double *w, size_t nf, size_t nbase, size_t nnew,
		      double *g, double *shift)
{
	size_t nr = nbase + nnew, n = 0, f, r, k;
	size_t *rows = malloc((nf + 1) * sizeof(*rows));
	double *v = malloc((nf + 1) * sizeof(*v)), *wt = malloc((nf + 1) * sizeof(*wt));
	int rc = 0;

	for (r = 0; r < nr; r++)
		g[r] = 0;
	*shift = 0;
	if (!rows || !v || !wt) {
		rc = -ENOMEM;
		goto out;
	}
	/* The functions measured in every run. */
	for (f = 0; f < nf; f++) {
		for (r = 0; r < nr && !isnan(x[f * nr + r]); r++)
			;
		if (r == nr && w[f] > 0) {
			wt[n] = w[f];
			rows[n++] = f;
		}
	}
	if (!n)
		goto out;

	/* Within each side: a run's value against the side's mean, per
	 * function; the run's factor is what the functions agree on. */
	for (int side = 0; side < 2 && rc == 0; side++) {
		size_t lo = side ? nbase : 0, hi = side ? nr : nbase;
		double mean = 0;

		if (hi - lo < 2)
			continue;
		for (r = lo; r < hi && rc == 0; r++) {
			for (k = 0; k < n; k++) {
				const double *row = x + rows[k] * nr;
				double m = 0;
				for (size_t j = lo; j < hi; j++)
					m += row[j];
				v[k] = row[r] - m / (double)(hi - lo);
			}
			rc = stats_wmedian(v, wt, n, &g[r]);
			mean += g[r];
		}
		for (r = lo; r < hi; r++)
			g[r] -= mean / (double)(hi - lo);
	}

	/* Between the sides: each function's change once the runs are
	 * normalised; the shift is what the functions agree on. */
	for (k = 0; k < n && rc == 0; k++) {
		const double *row = x + rows[k] * nr;
		double mb = 0, mn = 0;

		for (r = 0; r < nbase; r++)
			mb += row[r] - g[r];
		for (r = nbase; r < nr; r++)
			mn += row[r] - g[r];
		v[k] = mn / (double)nnew - mb / (double)nbase;
	}
	if (rc == 0)
		rc = stats_wmedian(v, wt, n, shift);
	for (r = nbase; r < nr && rc == 0; r++)
		g[r] += *shift;
out:
	free(rows);
	free(v);
	free(wt);
	return rc < 0 ? rc : (int)n;
}

/* What the fit of tau2 solves for: a function of tau2 that falls. */
struct tau2_ctx {
	const struct stats_fn *fn;
	size_t n;
	double k;      /* 1/nbase + 1/nnew */
	double *v, *w; /* scratch, n each (the empirical null) */
	int rc;
};

/* Minus the score (derivative of the log-likelihood) of tau2, with
 * s2 ~ (v + tau2) chi2(df) / df for each function: rises through 0 at
 * the estimate. */
static double neg_score(struct tau2_ctx *c, double tau2)
{
	double sum = 0;

	for (size_t i = 0; i < c->n; i++) {
		double s = c->fn[i].v + tau2;
		if (isfinite(c->fn[i].s2) && isfinite(s) && s > 0)
			sum += (c->fn[i].s2 - s) / (s * s);
	}
	return -sum;
}

/* Minus the median of z^2 = delta^2 / (k (v + tau2)), each function
 * weighted by what it tells of tau2 (its Fisher information, 1 / (v +
 * tau2)^2: a function whose calls alone vary a lot tells little): rises
 * with tau2. */
static double neg_null_median(struct tau2_ctx *c, double tau2)
{
	double m = 0;

	for (size_t i = 0; i < c->n; i++) {
		double s = c->fn[i].v + tau2;
		c->v[i] = c->fn[i].delta * c->fn[i].delta / (c->k * s);
		c->w[i] = isfinite(s) && s > 0 ? 1 / (s * s) : 0;
	}
	if (c->rc == 0)
		c->rc = stats_wmedian(c->v, c->w, c->n, &m);
	return -m;
}

/* The x >= 0 at which f(c, x), rising, crosses target (0 if it is
 * already above it at 0): bisection, from [0, hi] with hi doubled until
 * f(hi) >= target. */
static double bisect_rising(double (*f)(struct tau2_ctx *, double), struct tau2_ctx *c,
			    double target, double hi)
{
	double lo = 0;

	if (f(c, 0) >= target)
		return 0;
	if (!(hi > 0))
		hi = 1e-12;
	for (int i = 0; i < 400 && f(c, hi) < target; i++) {
		lo = hi;
		hi *= 2;
	}
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double x = (lo + hi) / 2;
		if (f(c, x) < target)
			lo = x;
		else
			hi = x;
	}
	return (lo + hi) / 2;
}

int stats_family_fit(const struct stats_fn *fn, size_t n, size_t nbase, size_t nnew,
		     struct stats_family *fam)
{
	struct tau2_ctx c = { fn, n, 1 / (double)nbase + 1 / (double)nnew, NULL, NULL, 0 };
	double hi = 0, mean, m2, *e;
	size_t used = 0;

	*fam = (struct stats_family){ nbase, nnew, (double)(nbase + nnew) - 2, 0, INFINITY, 0 };
	if (!n)
		return 0;
	if (fam->df <= 0) {
		/* One run a side: the empirical null. */
		c.v = malloc(2 * n * sizeof(*c.v));
		if (!c.v)
			return -ENOMEM;
		c.w = c.v + n;
		for (size_t i = 0; i < n; i++)
			if (fn[i].delta * fn[i].delta / c.k > hi)
				hi = fn[i].delta * fn[i].delta / c.k;
		fam->tau2 = bisect_rising(neg_null_median, &c, -CHI2_1_MEDIAN, hi);
		fam->n = n;
		free(c.v);
		return c.rc;
	}

	/* Repeated runs: maximum likelihood, then d0. */
	for (size_t i = 0; i < n; i++)
		if (isfinite(fn[i].s2) && isfinite(fn[i].v) && fn[i].v + fn[i].s2 > 0) {
			used++;
			if (fn[i].s2 > hi)
				hi = fn[i].s2;
		}
	fam->n = used;
	if (!used)
		return 0;
	fam->tau2 = bisect_rising(neg_score, &c, 0, hi);
	e = malloc(used * sizeof(*e));
	if (!e)
		return -ENOMEM;
	used = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(fn[i].s2) && isfinite(fn[i].v) && fn[i].s2 > 0 &&
		    fn[i].v + fam->tau2 > 0)
			e[used++] = log(fn[i].s2 / (fn[i].v + fam->tau2));
	if (used >= 3) {
		stats_mean_var(e, used, &mean, &m2);
		m2 -= stats_trigamma(fam->df / 2);
		if (m2 > 0)
			fam->d0 = 2 * stats_trigamma_inv(m2);
	}
	free(e);
	return 0;
}

void stats_family_test(const struct stats_family *fam, const struct stats_fn *fn,
		       struct stats_test *out)
{
	double k = 1 / (double)fam->nbase + 1 / (double)fam->nnew;
	double prior = fn->v + fam->tau2, d0 = fam->d0, var;
	bool own = fam->df > 0 && isfinite(fn->s2);

	if (!isfinite(fn->v)) {
		/* The calls' spread is unknown: the runs' alone. */
		if (!own) {
			*out = (struct stats_test){ 0, 0, 1 };
			return;
		}
		prior = 0;
		d0 = 0;
	} else if (fn->v > 0) {
		/* The model is no surer than v, as estimated from the calls
		 * (Satterthwaite's degrees of freedom of v + tau2). */
		double dv = prior / fn->v * (prior / fn->v) * fn->v_df;
		if (dv < d0)
			d0 = dv;
	}
	if (!own) {
		var = prior;
		out->df = d0;
	} else if (isinf(d0)) {
		var = prior;
		out->df = INFINITY;
	} else {
		var = (d0 * prior + fam->df * fn->s2) / (d0 + fam->df);
		out->df = d0 + fam->df;
	}
	if (!(var > 0) || !(out->df > 0)) {
		out->stat = fn->delta == 0 ? 0 : copysign(INFINITY, fn->delta);
		out->p = fn->delta == 0 || !(out->df > 0) ? 1 : 0;
		return;
	}
	out->stat = fn->delta / sqrt(k * var);
	out->p = 2 * stats_t_cdf(-fabs(out->stat), out->df);
	if (out->p > 1)
		out->p = 1;
}

const char *stats_method_name(enum stats_method m)
{
	switch (m) {
	case STATS_WELCH:
		return "welch";
	case STATS_MODERATED:
		return "moderated";
	case STATS_ORDER:
		return "order";
	case STATS_NONE:
		break;
	}
	return "none";
}

void stats_judge(struct stats_cmp *c, double alpha, double threshold_pct)
{
	c->significant = c->method != STATS_NONE && c->q < alpha;
	c->flagged = c->significant && fabs(c->pct) >= threshold_pct;
}
