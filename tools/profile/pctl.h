/* Percentiles and histograms of a function's call durations: the store
 * the profile engine keeps per row (fxt-report --percentiles and
 * --histogram, fxt-diff --metric pNN), its selection of ranks and its
 * streaming sketch.
 *
 * A store holds every duration (exact, 4 or 8 bytes each) until the profile
 * tells it to become a sketch (pctl_to_sketch(): the profile's bound on
 * the durations held, PROFILE_EXACT_MAX), from then on it counts
 * durations in buckets: values below 128 ns each have their own (exact),
 * each octave [2^e, 2^(e+1)) above is cut in PCTL_SUB (64) equal buckets,
 * and a bucket's value is the one whose relative distance to both of its
 * ends is the same, 2 lo hi / (lo + hi).  So any value the sketch gives
 * for a rank is within PCTL_REL_ERR (1%) of the true duration at that
 * rank, relative to it (buckets like an HDR histogram's, a guarantee like
 * DDSketch's).  Buckets nest in the octaves, so log2 histograms of a
 * sketch are exact.
 *
 * Percentiles are nearest-rank: the p-th percentile of n durations is the
 * k-th smallest, k = ceil(p n / 100) (at least 1): a duration that was
 * measured, at or above which lie no more than 100 - p percent of the
 * calls.  p is given in parts per million (PCTL_PPM(99.9) = 999000) so
 * that ranks are exact integers.
 *
 * Private to tools/profile/.
 */
#ifndef FXT_TOOLS_PCTL_H
#define FXT_TOOLS_PCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sub-buckets per octave of the sketch, and its relative error bound:
 * a bucket [lo, hi) of an octave has hi / lo <= 1 + 1 / PCTL_SUB, and
 * its value (pctl_bucket_value()) is within 1 / (2 PCTL_SUB + 1) of every
 * real number in it, relative to that number; within PCTL_REL_ERR of every
 * whole ns in it once rounded to one (tests/unit/test_pctl.c checks every
 * bucket). */
#define PCTL_SUB_BITS 6
#define PCTL_SUB      (1u << PCTL_SUB_BITS)
#define PCTL_REL_ERR  0.01

/* Values below this have a bucket each. */
#define PCTL_LINEAR (2 * PCTL_SUB)

/* Buckets in all: the linear ones, then PCTL_SUB per octave up to 2^64. */
#define PCTL_NBUCKETS (PCTL_LINEAR + (63 - PCTL_SUB_BITS) * PCTL_SUB)

/* Log2 histogram buckets: [0] counts durations of 0 ns, [k + 1] those in
 * [2^k, 2^(k+1)) ns. */
#define PCTL_HIST_BUCKETS 65

struct pctl_sketch {
	uint64_t *count; /* [n]: buckets lo .. lo + n - 1 */
	uint32_t lo, n;
	uint64_t total;
};

/* Exact durations take 4 bytes each while they fit (below 4.29 s), 8
 * once one does not ("wide": the store is copied). */
struct pctl {
	void *v; /* durations, in arrival order until selected */
	size_t n, cap;
	bool wide;		/* v is uint64_t[], else uint32_t[] */
	struct pctl_sketch *sk; /* non-NULL once a sketch: v is then freed */
};

/* The i-th exact duration, and adding one where there is room. */
static inline uint64_t pctl_get(const struct pctl *d, size_t i)
{
	return d->wide ? ((const uint64_t *)d->v)[i] : ((const uint32_t *)d->v)[i];
}

static inline void pctl_put(struct pctl *d, uint64_t x)
{
	if (d->wide)
		((uint64_t *)d->v)[d->n++] = x;
	else
		((uint32_t *)d->v)[d->n++] = (uint32_t)x;
}

/* A percentile in parts per million. */
#define PCTL_PPM(pct) ((uint32_t)((pct)*10000.0 + 0.5))

/* The nearest rank (1-based) of the ppm-th percentile among n > 0. */
uint64_t pctl_rank(uint32_t ppm, uint64_t n);

/* The sketch's bucket of a duration, and a bucket's bounds [lo, hi)
 * (hi saturates at UINT64_MAX) and value. */
static inline uint32_t pctl_bucket(uint64_t x)
{
	unsigned e;

	if (x < PCTL_LINEAR)
		return (uint32_t)x;
	e = 63u - (unsigned)__builtin_clzll(x); /* >= PCTL_SUB_BITS + 1 */
	return PCTL_LINEAR + (e - PCTL_SUB_BITS - 1) * PCTL_SUB +
	       (uint32_t)((x >> (e - PCTL_SUB_BITS)) & (PCTL_SUB - 1));
}
void pctl_bucket_bounds(uint32_t b, uint64_t *lo, uint64_t *hi);
uint64_t pctl_bucket_value(uint32_t b);

/* Adds one duration.  Returns 0 or -ENOMEM. */
int pctl_add_slow(struct pctl *d, uint64_t x);
static inline int pctl_add(struct pctl *d, uint64_t x)
{
	if (__builtin_expect(d->n < d->cap && (d->wide || x <= UINT32_MAX), 1)) {
		pctl_put(d, x);
		return 0;
	}
	return pctl_add_slow(d, x);
}

/* How many durations the store holds, exact or counted. */
static inline uint64_t pctl_count(const struct pctl *d)
{
	return d->sk ? d->sk->total : d->n;
}

/* Makes the store a sketch (its durations counted into it, the array
 * freed).  Returns 0 or -ENOMEM (the store is then unchanged). */
int pctl_to_sketch(struct pctl *d);

/* Adds what src holds to dst (dst becomes a sketch if src is one).
 * Returns 0 or -ENOMEM. */
int pctl_merge(struct pctl *dst, const struct pctl *src);

/* The durations at nearest ranks rank[0..m) (ascending, each in
 * [1, pctl_count(d)], m <= 8) into out[].  Exact stores may be reordered
 * or made wide: past 65536 durations, two passes count them per sketch
 * bucket and gather those of the ranks' buckets, then selection (O(n) per
 * rank on average, a sort past a depth bound) within them; below, or
 * short of memory for that, selection in the store.  Returns 1 when the
 * values are the sketch's (approximate), 0 when exact, or -ENOMEM. */
int pctl_at_ranks(struct pctl *d, const uint64_t *rank, size_t m, uint64_t *out);

/* Counts the durations in log2 buckets (PCTL_HIST_BUCKETS, added to
 * hist[]); exact from either kind of store. */
void pctl_histogram(const struct pctl *d, uint64_t *hist);

/* The log2 bucket of a duration (see PCTL_HIST_BUCKETS). */
static inline unsigned pctl_hist_bucket(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

void pctl_free(struct pctl *d);

/* Places the k-th smallest (0-based) of v[0..n) at v[k], the smaller
 * before it and the larger after (introselect).  For the tests too. */
void pctl_select(uint64_t *v, size_t n, size_t k);

#endif /* FXT_TOOLS_PCTL_H */
