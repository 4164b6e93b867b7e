/* Percentiles and histograms of call durations (see pctl.h): the exact
 * store, selection of nearest ranks, the bucketed sketch. */
#include "config.h"

#include "tools/profile/pctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"

uint64_t pctl_rank(uint32_t ppm, uint64_t n)
{
	unsigned __int128 x = (unsigned __int128)ppm * n;
	uint64_t k = (uint64_t)(x / 1000000) + (x % 1000000 != 0);

	if (k < 1)
		k = 1;
	return k > n ? n : k;
}

void pctl_bucket_bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	unsigned e, j;

	if (b < PCTL_LINEAR) {
		*lo = b;
		*hi = (uint64_t)b + 1;
		return;
	}
	e = PCTL_SUB_BITS + 1 + (b - PCTL_LINEAR) / PCTL_SUB;
	j = (b - PCTL_LINEAR) % PCTL_SUB;
	*lo = (uint64_t)(PCTL_SUB + j) << (e - PCTL_SUB_BITS);
	if (e == 63 && j == PCTL_SUB - 1)
		*hi = UINT64_MAX;
	else
		*hi = (uint64_t)(PCTL_SUB + j + 1) << (e - PCTL_SUB_BITS);
}

uint64_t pctl_bucket_value(uint32_t b)
{
	uint64_t lo, hi;
	long double l, h;

	pctl_bucket_bounds(b, &lo, &hi);
	if (b < PCTL_LINEAR)
		return lo;
	/* The whole ns in it are lo .. hi - 1. */
	l = (long double)lo;
	h = (long double)(hi - 1);
	return (uint64_t)(2 * l * h / (l + h) + 0.5L);
}

/* ------------------------------------------------------------- sketch */

/* Makes room for bucket b in s.  Returns 0 or -ENOMEM. */
static int sketch_cover(struct pctl_sketch *s, uint32_t b)
{
	uint32_t lo = s->lo, hi = s->lo + s->n; /* [lo, hi) */
	uint64_t *c;

	if (s->n && b >= lo && b < hi)
		return 0;
	if (!s->n) {
		lo = b;
		hi = b + 1;
	} else if (b < lo) {
		lo = b;
	} else {
		hi = b + 1;
	}
	/* Grow by whole octaves: a few reallocations per row at most. */
	if (lo > PCTL_SUB && lo < s->lo)
		lo = lo - lo % PCTL_SUB;
	if (s->n && hi > s->lo + s->n)
		hi = hi + (PCTL_SUB - hi % PCTL_SUB) % PCTL_SUB;
	if (hi > PCTL_NBUCKETS)
		hi = PCTL_NBUCKETS;
	c = calloc(hi - lo, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (s->n)
		memcpy(c + (s->lo - lo), s->count, s->n * sizeof(*c));
	free(s->count);
	s->count = c;
	s->lo = lo;
	s->n = hi - lo;
	return 0;
}

static int sketch_add(struct pctl_sketch *s, uint64_t x, uint64_t times)
{
	uint32_t b = pctl_bucket(x);

	if (sketch_cover(s, b) < 0)
		return -ENOMEM;
	s->count[b - s->lo] += times;
	s->total += times;
	return 0;
}

int pctl_to_sketch(struct pctl *d)
{
	struct pctl_sketch *s;
	uint64_t mn = UINT64_MAX, mx = 0;
	size_t i;

	if (d->sk)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < d->n; i++) {
		uint64_t x = pctl_get(d, i);

		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	/* Both ends first: one allocation for the whole range. */
	if (d->n &&
	    (sketch_cover(s, pctl_bucket(mx)) < 0 || sketch_cover(s, pctl_bucket(mn)) < 0)) {
		free(s->count);
		free(s);
		return -ENOMEM;
	}
	for (i = 0; i < d->n; i++) {
		s->count[pctl_bucket(pctl_get(d, i)) - s->lo]++;
		s->total++;
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
	d->wide = false;
	d->sk = s;
	return 0;
}

/* Makes a narrow store wide (a copy: the two widths never share bytes).
 * Returns 0 or -ENOMEM. */
static int widen(struct pctl *d)
{
	uint64_t *w;

	if (d->wide)
		return 0;
	w = d->cap ? malloc(d->cap * sizeof(*w)) : NULL;
	if (d->cap && !w)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		w[i] = ((const uint32_t *)d->v)[i];
	free(d->v);
	d->v = w;
	d->wide = true;
	return 0;
}

/* Room for `need` durations in the store's width.  0 or -ENOMEM. */
static int reserve(struct pctl *d, size_t need)
{
	return tool_grow(&d->v, &d->cap, need, d->wide ? sizeof(uint64_t) : sizeof(uint32_t));
}

int pctl_add_slow(struct pctl *d, uint64_t x)
{
	if (d->sk)
		return sketch_add(d->sk, x, 1);
	if (x > UINT32_MAX && widen(d) < 0)
		return -ENOMEM;
	if (reserve(d, d->n + 1) < 0)
		return -ENOMEM;
	pctl_put(d, x);
	return 0;
}

int pctl_merge(struct pctl *dst, const struct pctl *src)
{
	size_t i;

	if (src->sk && pctl_to_sketch(dst) < 0)
		return -ENOMEM;
	if (dst->sk) {
		if (src->sk) {
			for (i = 0; i < src->sk->n; i++)
				if (src->sk->count[i] &&
				    sketch_add(dst->sk,
					       pctl_bucket_value(src->sk->lo + (uint32_t)i),
					       src->sk->count[i]) < 0)
					return -ENOMEM;
			return 0;
		}
		for (i = 0; i < src->n; i++)
			if (sketch_add(dst->sk, pctl_get(src, i), 1) < 0)
				return -ENOMEM;
		return 0;
	}
	if ((src->wide && widen(dst) < 0) || reserve(dst, dst->n + src->n) < 0)
		return -ENOMEM;
	for (i = 0; i < src->n; i++)
		pctl_put(dst, pctl_get(src, i));
	return 0;
}

void pctl_free(struct pctl *d)
{
	free(d->v);
	if (d->sk)
		free(d->sk->count);
	free(d->sk);
	memset(d, 0, sizeof(*d));
}

/* ---------------------------------------------------------- selection */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static inline void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

void pctl_select(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* k in [lo, hi) */
	unsigned rounds = 0;

	if (k >= n)
		return;
	while (hi - lo > 16) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		uint64_t p;

		/* Past 128 rounds (twice log2 of any n) the pivots are bad,
		 * an order made to defeat them: sort what is left instead. */
		if (++rounds > 128) {
			qsort(v + lo, hi - lo, sizeof(*v), cmp_u64);
			return;
		}
		/* The median of three at v[lo], as Hoare's scheme wants. */
		if (v[mid] < v[lo])
			swap_u64(&v[mid], &v[lo]);
		if (v[hi - 1] < v[lo])
			swap_u64(&v[hi - 1], &v[lo]);
		if (v[hi - 1] < v[mid])
			swap_u64(&v[hi - 1], &v[mid]);
		swap_u64(&v[lo], &v[mid]);
		p = v[lo];
		/* Hoare: [lo, j] <= p <= [j + 1, hi); equal keys split evenly. */
		i = lo - 1;
		j = hi;
		for (;;) {
			do
				i++;
			while (v[i] < p);
			do
				j--;
			while (v[j] > p);
			if (i >= j)
				break;
			swap_u64(&v[i], &v[j]);
		}
		if (k <= j)
			hi = j + 1;
		else
			lo = j + 1;
	}
	/* Insertion sort of the last few. */
	for (size_t i = lo + 1; i < hi; i++) {
		uint64_t x = v[i];
		size_t j = i;

		while (j > lo && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Exact ranks of many durations in two passes instead of selections over
 * all of them (whose compares mispredict): count them per sketch bucket,
 * find each rank's bucket, gather the durations of those buckets only and
 * select within them.  Returns 0, or -ENOMEM to fall back to selection. */
static int ranks_by_buckets(const struct pctl *d, const uint64_t *rank, size_t m, uint64_t *out)
{
	uint32_t *cnt = calloc(PCTL_NBUCKETS, sizeof(*cnt));
	uint32_t *slot = calloc(PCTL_NBUCKETS, sizeof(*slot)); /* target + 1 */
	struct target {
		uint32_t b;
		uint64_t before; /* durations in the buckets below */
		uint64_t *v;
		size_t n;
	} t[8];
	size_t nt = 0, i, total = 0;
	uint64_t seen = 0;
	uint32_t b = 0;
	int rc = -ENOMEM;

	if (!cnt || !slot || m > 8 || d->n >= UINT32_MAX)
		goto out;
	/* Each width its own loop: the width's test stays out of them. */
	if (d->wide)
		for (i = 0; i < d->n; i++)
			cnt[pctl_bucket(((const uint64_t *)d->v)[i])]++;
	else
		for (i = 0; i < d->n; i++)
			cnt[pctl_bucket(((const uint32_t *)d->v)[i])]++;
	for (i = 0; i < m; i++) {
		while (seen + cnt[b] < rank[i])
			seen += cnt[b++];
		if (!slot[b]) {
			t[nt] = (struct target){ b, seen, NULL, 0 };
			/* Buckets below PCTL_LINEAR hold one value: no gathering. */
			if (b >= PCTL_LINEAR)
				total += cnt[b];
			slot[b] = (uint32_t)++nt;
		}
	}
	{
		uint64_t *buf = malloc((total + 1) * sizeof(*buf)), *at = buf;

		if (!buf)
			goto out;
		for (i = 0; i < nt; i++) {
			t[i].v = at;
			if (t[i].b >= PCTL_LINEAR)
				at += cnt[t[i].b];
		}
#define GATHER(T)                                     \
	for (i = 0; i < d->n; i++) {                  \
		uint64_t x = ((const T *)d->v)[i];    \
		uint32_t s = slot[pctl_bucket(x)];    \
                                                      \
		if (s && t[s - 1].b >= PCTL_LINEAR)   \
			t[s - 1].v[t[s - 1].n++] = x; \
	}
		if (total && d->wide)
			GATHER(uint64_t)
		else if (total)
			GATHER(uint32_t)
#undef GATHER
		for (i = 0; i < m; i++) {
			struct target *g;

			for (b = 0; b < nt; b++)
				if (t[b].before < rank[i] && t[b].before + cnt[t[b].b] >= rank[i])
					break;
			g = &t[b];
			if (g->b < PCTL_LINEAR) {
				out[i] = g->b;
			} else {
				size_t k = (size_t)(rank[i] - g->before) - 1;

				pctl_select(g->v, g->n, k);
				out[i] = g->v[k];
			}
		}
		free(buf);
	}
	rc = 0;
out:
	free(cnt);
	free(slot);
	return rc;
}

int pctl_at_ranks(struct pctl *d, const uint64_t *rank, size_t m, uint64_t *out)
{
	size_t i;

	if (d->sk) {
		const struct pctl_sketch *s = d->sk;
		uint64_t seen = 0;
		uint32_t b = 0;

		for (i = 0; i < m; i++) {
			while (b < s->n && seen + s->count[b] < rank[i])
				seen += s->count[b++];
			out[i] = pctl_bucket_value(s->lo + (b < s->n ? b : s->n - 1));
		}
		return 1;
	}
	if (d->n >= 65536 && ranks_by_buckets(d, rank, m, out) == 0)
		return 0;
	/* Selection in place, on durations of 8 bytes. */
	if (widen(d) < 0)
		return -ENOMEM;
	{
		uint64_t *v = d->v;
		size_t from = 0; /* v[0..from) holds the smaller ranks' values */

		for (i = 0; i < m; i++) {
			size_t k = (size_t)rank[i] - 1;

			if (k >= from) {
				pctl_select(v + from, d->n - from, k - from);
				from = k + 1;
			}
			out[i] = v[k];
		}
	}
	return 0;
}

void pctl_histogram(const struct pctl *d, uint64_t *hist)
{
	size_t i;

	if (d->sk) {
		for (i = 0; i < d->sk->n; i++) {
			uint64_t lo, hi;

			pctl_bucket_bounds(d->sk->lo + (uint32_t)i, &lo, &hi);
			hist[pctl_hist_bucket(lo)] += d->sk->count[i];
		}
		return;
	}
	for (i = 0; i < d->n; i++)
		hist[pctl_hist_bucket(pctl_get(d, i))]++;
}
