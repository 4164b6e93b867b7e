/* Ticks to ns, floor(ticks * 1e9 / tps), in exact 64-bit arithmetic
 * without a division: 1e9 / tps reduced to a / b once per clock, then a
 * multiplication by a and one by ceil(2^64 / b), corrected by one
 * comparison.  The profile engine's to_ns() takes it first, and
 * recpipe.c's reading thread converts plain events with it before they go
 * over, so that both say the same ns.
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
};

static inline void tickconv_set(struct tickconv *c, uint64_t tps)
{
	uint64_t g = UINT64_C(1000000000), h = tps;

	c->tps = tps;
	c->lim = 0;
	c->a = 0;
	c->b = 1;
	c->m = 0;
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
