/* The comparison behind fxt-diff (see diff.h): runs' functions matched by
 * name, the runs' factors, each function's test, the family's verdicts. */
#include "config.h"

#include "tools/profile/diff.h"
#include "tools/profile/pctl.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Entry for the merge of all runs' rows by (category, name). */
struct entry {
	const struct profile_row *row;
	size_t run;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->row->name, y->row->name);

	if (c)
		return c;
	c = strcmp(x->row->category, y->row->category);
	if (c)
		return c;
	return (x->run > y->run) - (x->run < y->run);
}

/* The side means of f's raw numbers and where it is. */
static void sum_func(const struct diff *d, struct diff_func *f)
{
	bool in_base = false, in_new = false;

	for (size_t i = 0; i < d->nruns; i++) {
		const struct profile_row *r = f->row[i];
		bool base = i < d->nbase;
		double n = (double)(base ? d->nbase : d->nnew);

		if (!r)
			continue;
		*(base ? &in_base : &in_new) = true;
		*(base ? &f->total_base : &f->total_new) += (double)r->total_ns / n;
		*(base ? &f->calls_base : &f->calls_new) += (double)r->calls / n;
		*(base ? &f->self_base : &f->self_new) += (double)r->self_ns / n;
	}
	f->state = in_base && in_new ? 0 : (in_new ? 1 : -1);
}

/* The variance of the log of row r's total that its calls alone give:
 * one call's squared coefficient of variation over the calls.  A single
 * call's spread is not known: NAN. */
static double calls_var(const struct profile_row *r)
{
	if (r->calls < 2 || !(r->dur_mean > 0))
		return NAN;
	return profile_row_var(r) / (r->dur_mean * r->dur_mean) / (double)r->calls;
}

/* f's adjusted totals: their means and spreads, and what the family's
 * test needs, or Welch's t-test when f is missing from some runs. */
static int compare_func(struct diff *d, struct diff_func *f)
{
	size_t nb = d->nbase, nr = d->nruns, i, have = 0;
	double *x = malloc(2 * nr * sizeof(*x)), *y = x + nr, vb, vn, mb = 0, mn = 0, ss = 0;
	double few = 0;
	bool single = false;
	struct stats_cmp *c = &f->cmp;

	if (!x)
		return -ENOMEM;
	f->fn = (struct stats_fn){ 0, 0, 0, NAN };
	for (i = 0; i < nr; i++) {
		const struct profile_row *r = f->row[i];
		double v;

		x[i] = r ? (double)r->total_ns * exp(-d->whole.g[i]) : 0;
		if (!r || !r->total_ns)
			continue;
		have++;
		y[i] = log((double)r->total_ns) - d->whole.g[i];
		v = calls_var(r) / (double)nr;
		f->fn.v += v;
		/* Satterthwaite: v_df = v^2 / sum (v_r^2 / df_r), df_r = calls - 1. */
		if (r->calls > 1)
			few += v * v / (double)(r->calls - 1);
		else
			single = true;
	}
	f->fn.v_df = few > 0 ? f->fn.v * f->fn.v / few : INFINITY;
	stats_mean_var(x, nb, &c->mean_base, &vb);
	stats_mean_var(x + nb, nr - nb, &c->mean_new, &vn);
	c->sd_base = sqrt(vb);
	c->sd_new = sqrt(vn);
	c->delta = c->mean_new - c->mean_base;
	c->pct = c->mean_base != 0 ? 100 * c->delta / c->mean_base
				   : (c->delta == 0 ? 0 : copysign(INFINITY, c->delta));
	c->method = STATS_NONE;
	c->p = c->q = 1;
	/* One run a side: a single call on a side says nothing of its spread. */
	if (f->state == 0 && have == nr && !(nr == 2 && single)) {
		for (i = 0; i < nr; i++)
			*(i < nb ? &mb : &mn) += y[i] / (double)(i < nb ? nb : nr - nb);
		for (i = 0; i < nr; i++)
			ss += (y[i] - (i < nb ? mb : mn)) * (y[i] - (i < nb ? mb : mn));
		f->fn.delta = mn - mb;
		if (nr > 2)
			f->fn.s2 = ss / (double)(nr - 2);
		c->method = STATS_MODERATED;
		c->pct = 100 * expm1(f->fn.delta);
	} else if (f->state == 0 && nb >= 2 && nr - nb >= 2) {
		struct stats_test t;
		int rc = stats_welch(x, nb, x + nb, nr - nb, &t);

		if (rc < 0) {
			free(x);
			return rc;
		}
		c->method = STATS_WELCH;
		c->p = t.p;
	}
	free(x);
	return 0;
}

/* The runs' factors, from the self times of the functions in every run,
 * and the test of the whole run's change.  Returns 0 or -ENOMEM. */
static int measure_runs(struct diff *d)
{
	struct diff_whole *w = &d->whole;
	size_t nr = d->nruns;
	double *x = malloc((d->nf * nr + 1) * sizeof(*x));
	double *wt = malloc((d->nf + 1) * sizeof(*wt));
	int rc = -ENOMEM;

	w->g = calloc(nr, sizeof(*w->g));
	w->p = 1;
	if (!x || !wt || !w->g)
		goto out;
	for (size_t f = 0; f < d->nf; f++) {
		uint64_t calls = UINT64_MAX;

		for (size_t r = 0; r < nr; r++) {
			const struct profile_row *row = d->f[f].row[r];

			x[f * nr + r] = row && row->self_ns ? log((double)row->self_ns) : NAN;
			if (row && row->calls < calls)
				calls = row->calls;
		}
		wt[f] = sqrt((double)(calls < 10000 ? calls : 10000));
	}
	rc = stats_run_factors(x, wt, d->nf, d->nbase, d->nnew, w->g, &w->shift);
	if (rc < 0)
		goto out;
	w->gauges = (size_t)rc;
	rc = 0;
	if (w->gauges < DIFF_MIN_GAUGES) {
		memset(w->g, 0, nr * sizeof(*w->g));
		w->shift = 0;
		goto out;
	}
	w->pct = 100 * expm1(w->shift);
	if (d->nbase >= 2 && d->nnew >= 2) {
		struct stats_test t;

		rc = stats_welch(w->g, d->nbase, w->g + d->nbase, d->nnew, &t);
		if (rc < 0)
			goto out;
		w->tested = true;
		w->p = t.p;
		w->flagged = t.p < d->alpha && fabs(w->pct) >= d->threshold;
	}
out:
	free(x);
	free(wt);
	return rc;
}

/* Every function's test, then the verdicts over the family of them. */
static int judge(struct diff *d)
{
	struct stats_fn *fn = malloc((d->nf + 1) * sizeof(*fn));
	double *p = malloc((d->nf + 1) * sizeof(*p)), *q = malloc((d->nf + 1) * sizeof(*q));
	size_t i, n = 0;
	int rc = fn && p && q ? 0 : -ENOMEM;

	for (i = 0; i < d->nf && rc == 0; i++) {
		rc = compare_func(d, &d->f[i]);
		if (rc == 0 && d->f[i].cmp.method == STATS_MODERATED)
			fn[n++] = d->f[i].fn;
	}
	if (rc == 0)
		rc = stats_family_fit(fn, n, d->nbase, d->nnew, &d->fam);
	for (i = 0, n = 0; i < d->nf && rc == 0; i++) {
		struct diff_func *f = &d->f[i];
		struct stats_test t;

		if (f->cmp.method == STATS_MODERATED) {
			stats_family_test(&d->fam, &f->fn, &t);
			f->cmp.p = t.p;
		}
		if (f->cmp.method != STATS_NONE)
			p[n++] = f->cmp.p;
	}
	if (rc == 0)
		rc = stats_bh(p, n, q);
	d->ntested = n;
	for (i = 0, n = 0; i < d->nf && rc == 0; i++) {
		struct diff_func *f = &d->f[i];

		if (f->cmp.method != STATS_NONE)
			f->cmp.q = q[n++];
		stats_judge(&f->cmp, d->alpha, d->threshold);
	}
	free(fn);
	free(p);
	free(q);
	return rc;
}

/* One side of f for --metric pNN.  Returns 0 or -ENOMEM. */
static int side_pct(const struct diff *d, const struct diff_func *f, bool base,
		    struct diff_pct *out)
{
	size_t lo = base ? 0 : d->nbase, hi = base ? d->nbase : d->nruns;
	struct pctl pool = { 0 };
	uint64_t nshort = 0, short_max = 0, max = 0, n, ks[3], rk[3], v[3];
	double *to[3] = { &out->lo, &out->ns, &out->hi };
	size_t nw = 0, map[3];
	int approx = 0;

	*out = (struct diff_pct){ NAN, NAN, NAN, 0, PROFILE_Q_EXACT };
	for (size_t i = lo; i < hi; i++) {
		const struct profile_row *r = f->row[i];
		const struct pctl *src;

		if (!r)
			continue;
		src = profile_durations(d->runs[i], r);
		if (src && pctl_merge(&pool, src) < 0) {
			pctl_free(&pool);
			return -ENOMEM;
		}
		nshort += r->short_calls;
		short_max = r->short_max_ns > short_max ? r->short_max_ns : short_max;
		max = r->max_ns > max ? r->max_ns : max;
	}
	n = pctl_count(&pool) + nshort;
	out->calls = n;
	if (!n)
		goto out;
	if (d->ppm >= 1000000) {
		out->ns = (double)max;
		goto out;
	}
	/* The interval's ranks and the percentile's, ascending (0: open);
	 * those --min-duration summarised rank first, their longest a bound. */
	ks[1] = pctl_rank(d->ppm, n);
	stats_rank_interval(d->ppm / 1e6, n, d->alpha, &ks[0], &ks[2]);
	for (size_t i = 0; i < 3; i++) {
		if (!ks[i])
			continue;
		if (ks[i] <= nshort) {
			*to[i] = (double)short_max;
			if (i == 1)
				out->kind = PROFILE_Q_BOUND;
			continue;
		}
		map[nw] = i;
		rk[nw++] = ks[i] - nshort;
	}
	if (nw && (approx = pctl_at_ranks(&pool, rk, nw, v)) < 0) {
		pctl_free(&pool);
		return -ENOMEM;
	}
	for (size_t j = 0; j < nw; j++) {
		*to[map[j]] = (double)v[j];
		if (map[j] == 1 && approx)
			out->kind = PROFILE_Q_APPROX;
	}
out:
	pctl_free(&pool);
	return 0;
}

/* --metric pNN: every function's sides and verdict. */
static int judge_pct(struct diff *d)
{
	for (size_t i = 0; i < d->nf; i++) {
		struct diff_func *f = &d->f[i];
		struct stats_cmp *c = &f->cmp;
		const struct diff_pct *b = &f->pct[0], *n = &f->pct[1];

		if (side_pct(d, f, true, &f->pct[0]) < 0 || side_pct(d, f, false, &f->pct[1]) < 0)
			return -ENOMEM;
		memset(c, 0, sizeof(*c));
		c->mean_base = isnan(b->ns) ? 0 : b->ns;
		c->mean_new = isnan(n->ns) ? 0 : n->ns;
		c->delta = c->mean_new - c->mean_base;
		c->pct = c->mean_base != 0 ? 100 * c->delta / c->mean_base
					   : (c->delta == 0 ? 0 : copysign(INFINITY, c->delta));
		c->method = STATS_NONE;
		c->p = c->q = 1;
		/* A bound says nothing of where the value is below it. */
		if (f->state != 0 || d->ppm >= 1000000 || b->kind == PROFILE_Q_BOUND ||
		    n->kind == PROFILE_Q_BOUND)
			continue;
		c->method = STATS_ORDER;
		c->significant = (!isnan(b->hi) && !isnan(n->lo) && b->hi < n->lo) ||
				 (!isnan(n->hi) && !isnan(b->lo) && n->hi < b->lo);
		c->p = c->q = c->significant ? 0 : 1;
		c->flagged = c->significant && fabs(c->pct) >= d->threshold;
		d->ntested++;
	}
	return 0;
}

const char *diff_verdict(const struct diff_func *f)
{
	if (f->state > 0)
		return "NEW";
	if (f->state < 0)
		return "GONE";
	if (!f->cmp.flagged)
		return "~";
	return f->cmp.delta > 0 ? "SLOWER" : "FASTER";
}

/* Largest adjusted change in total time first, then by name. */
static int cmp_func(const void *a, const void *b)
{
	const struct diff_func *x = a, *y = b;
	double dx = fabs(x->cmp.delta), dy = fabs(y->cmp.delta);
	int c;

	if (dx != dy)
		return dx < dy ? 1 : -1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->category, y->category);
}

int diff_build(struct diff *d)
{
	struct entry *e;
	size_t n = 0, i, j, r;
	int rc = 0;

	for (r = 0; r < d->nruns; r++)
		n += profile_nrows(d->runs[r]);
	e = malloc((n + 1) * sizeof(*e));
	d->f = calloc(n + 1, sizeof(*d->f));
	if (!e || !d->f) {
		free(e);
		return -ENOMEM;
	}
	n = 0;
	for (r = 0; r < d->nruns; r++) {
		for (i = 0; i < profile_nrows(d->runs[r]); i++) {
			const struct profile_row *row = profile_row(d->runs[r], i);

			if (row->sampled) /* an estimate, not calls: not compared */
				continue;
			e[n++] = (struct entry){ row, r };
		}
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; i < n && rc == 0; i = j) {
		struct diff_func *f = &d->f[d->nf++];

		f->name = e[i].row->name;
		f->category = e[i].row->category;
		f->row = calloc(d->nruns, sizeof(*f->row));
		if (!f->row) {
			rc = -ENOMEM;
			break;
		}
		for (j = i; j < n && strcmp(e[j].row->name, f->name) == 0 &&
			    strcmp(e[j].row->category, f->category) == 0;
		     j++)
			f->row[e[j].run] = e[j].row;
		sum_func(d, f);
	}
	free(e);
	/* A percentile is compared as measured: no run factors. */
	if (rc == 0 && d->ppm)
		rc = (d->whole.g = calloc(d->nruns, sizeof(*d->whole.g))) ? judge_pct(d) : -ENOMEM;
	else if (rc == 0)
		rc = measure_runs(d);
	if (rc == 0 && !d->ppm)
		rc = judge(d);
	if (rc == 0)
		qsort(d->f, d->nf, sizeof(*d->f), cmp_func);
	return rc;
}

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->nf; i++)
		free(d->f[i].row);
	free(d->f);
	free(d->whole.g);
	d->f = NULL;
	d->whole.g = NULL;
	d->nf = 0;
}
