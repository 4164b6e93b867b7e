/* Ticks to ns, floor(ticks * 1e9 / tps), in exact 64-bit arithmetic
 * without a division: 1e9 / tps reduced to a / b once per clock, then a
 * multiplication by a and one by ceil(2^64 / b), corrected by one
 * comparison; and for a clock faster than 1 GHz (a < b: TSC ticks), below
 * a bound of some months of ticks, one multiplication by a 64-bit
 * reciprocal of b / a and a shift (tickconv_fast()).  The profile
 * engine's to_ns() takes it first, and recpipe.c's reading thread
 * converts plain events with it before they go over, so that both say
 * the same ns.
 *
 * Private to tools/profile/. */
#ifndef FXT_TOOLS_TICKCONV_H
#define FXT_TOOLS_TICKCONV_H

#include <stdbool.h>
#include <stdint.h>

struct tickconv {
	uint64_t tps; /* 0: none set */
	/* 1e9 / tps = a / b, for ticks below lim (ticks * a + b fits in 64
	 * bits; 0: none), and m = ceil(2^64 / b) for b > 1. */
	uint64_t a, b, m, lim;
	/* For a < b: floor(ticks * a / b) is the high half of ticks * r
	 * shifted right by sh, for ticks with no bit in rmask; r = 0: not
	 * this way.  With r = ceil(2^(64+sh) * a / b) = (a 2^(64+sh) + d) /
	 * b, 0 <= d < b: ticks * r / 2^(64+sh) = ticks * a / b + ticks * d /
	 * (b 2^(64+sh)), whose floor is that of ticks * a / b (a fraction at
	 * most (b - 1) / b) while ticks * d < 2^(64+sh); rmask keeps ticks
	 * below the greatest power of 2 that holds. */
	uint64_t r, rmask;
	unsigned sh;
};

/* c's r, sh and rmask (a and b set, coprime). */
static inline void tickconv_set_fast(struct tickconv *c)
{
	unsigned __int128 q, d, lim;
	unsigned sh = 0, bits = 0;

	c->r = 0;
	c->rmask = UINT64_MAX;
	c->sh = 0;
	if (c->b < 2 || c->a >= c->b)
		return;
	while (sh < 63 && ((unsigned __int128)c->a << (sh + 1)) < c->b)
		sh++;
	/* r = ceil(a 2^sh 2^64 / b), below 2^64 as a 2^sh < b */
	q = ((unsigned __int128)(c->a << sh) << 64) / c->b;
	d = ((unsigned __int128)(c->a << sh) << 64) % c->b;
	if (d) {
		q++;
		d = c->b - d; /* r b - a 2^(64+sh) */
	}
	if (q > UINT64_MAX)
		return;
	/* ticks * d < 2^(64+sh) for ticks < 2^bits: bits = 64 + sh - the
	 * bits of d (2^(bits of d) > d) */
	if (d) {
		lim = d;
		while (lim) {
			lim >>= 1;
			bits++;
		}
		bits = 64 + sh - bits;
		if (bits < 20) /* too few ticks to be worth it */
			return;
		c->rmask = bits >= 64 ? 0 : ~((UINT64_C(1) << bits) - 1);
	} else {
		c->rmask = 0;
	}
	c->r = (uint64_t)q;
	c->sh = sh;
}

/* ticks * a / b by c's r and sh (ticks & c->rmask == 0, c->r set). */
static inline __attribute__((always_inline)) uint64_t tickconv_fast(const struct tickconv *c,
								    uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * c->r) >> 64) >> c->sh;
}

static inline void tickconv_set(struct tickconv *c, uint64_t tps)
{
	uint64_t g = UINT64_C(1000000000), h = tps;

	c->tps = tps;
	c->lim = 0;
	c->a = 0;
	c->b = 1;
	c->m = 0;
	c->r = 0;
	c->rmask = UINT64_MAX;
	c->sh = 0;
	if (!tps)
		return;
	while (h) {
		uint64_t t = g % h;

		g = h;
		h = t;
	}
	c->a = UINT64_C(1000000000) / g;
	c->b = tps / g;
	c->m = c->b > 1 ? UINT64_MAX / c->b + 1 : 0;
	c->lim = (UINT64_MAX - c->b) / c->a + 1;
	tickconv_set_fast(c);
}

/* ticks in ns into *ns, or false when this way cannot say (ticks too
 * large for it, no clock set). */
static inline __attribute__((always_inline)) bool tickconv_ns(const struct tickconv *c,
							      uint64_t ticks, uint64_t *ns)
{
	if (c->tps == UINT64_C(1000000000)) {
		*ns = ticks;
		return true;
	}
	if (c->r && !(ticks & c->rmask)) {
		*ns = tickconv_fast(c, ticks);
		return true;
	}
	if (ticks < c->lim) {
		/* The high half of n * ceil(2^64 / b) is floor(n / b) or one
		 * more (n < 2^64), and one comparison tells which. */
		uint64_t n = ticks * c->a, q;

		if (c->b == 1) {
			*ns = n;
			return true;
		}
		q = (uint64_t)(((unsigned __int128)n * c->m) >> 64);
		*ns = q - (q * c->b > n);
		return true;
	}
	return false;
}

#endif /* FXT_TOOLS_TICKCONV_H */
