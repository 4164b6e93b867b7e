/* A process's ticks -> the archive's nanoseconds: the one owner of that
 * conversion.  Private to convert/.
 *
 * Archives are written in nanoseconds (ticks per second 10^9), whatever
 * the spool's clock (spool/clock.h: the TSC, or CLOCK_MONOTONIC ns): many
 * readers ignore FXT's initialization record and take ticks for ns.  The
 * converter keeps raw ticks everywhere (the recon, the marks, the heap
 * counter) and converts each timestamp once, as it is written, with
 * conv_tb_ns(): ns = base_ns + (ticks - base_ticks) * 10^9 / rate, rounded
 * down (below).  The time base (base_ticks, base_ns) is a point known in both
 * (the calibration start), so that the archive's times are
 * CLOCK_MONOTONIC times and processes that measured slightly different
 * rates share one timeline.
 *
 * Rounding down a non-decreasing function keeps it non-decreasing: a
 * later tick never gives an earlier ns, so no two records trade places
 * and nested slices stay nested.  The recon's step (conv_tb_step()) is
 * the fewest ticks that always move the ns on by one, so the times it
 * makes strictly increasing stay so, and instants it places strictly
 * inside a slice stay inside it.
 *
 * ns per tick is kept as a 64.64 fixed-point number (whole + frac/2^64),
 * rounded up: a multiply a timestamp on the hot path of the emitter, no
 * division.  A time that is a whole number of ns comes out exact, any
 * other rounded down or, within 2^-64 of the next ns a tick, up to it:
 * far below the rate's own measurement error (~10^-5, spool/clock.h).
 */
#ifndef FXT_CONVERT_TIMEBASE_H
#define FXT_CONVERT_TIMEBASE_H

#include <stdint.h>

/* The archive's tick rate. */
#define CONV_NS_PER_SECOND 1000000000u

struct conv_tb {
	uint64_t base_ticks, base_ns;
	uint64_t whole, frac; /* ns per tick = whole + frac / 2^64 */
	uint64_t step;	      /* conv_tb_step() */
};

/* The conversion for a clock of `rate` ticks per second (0: taken as
 * ns), whose tick `base_ticks` is CLOCK_MONOTONIC `base_ns` (0, 0: ticks
 * count from 0 ns). */
static inline void conv_tb_init(struct conv_tb *tb, uint64_t rate, uint64_t base_ticks,
				uint64_t base_ns)
{
	unsigned __int128 q;

	if (!rate)
		rate = CONV_NS_PER_SECOND;
	/* Rounded up: a whole number of ns (3 * 10^9 ticks at 3 GHz) stays
	 * whole. */
	q = (((unsigned __int128)CONV_NS_PER_SECOND << 64) + rate - 1) / rate;
	tb->base_ticks = base_ticks;
	tb->base_ns = base_ns;
	tb->whole = (uint64_t)(q >> 64);
	tb->frac = (uint64_t)q;
	/* The least s with s * (ns per tick) >= 1: then floor(x + s * r) >=
	 * floor(x) + 1 for every x. */
	if (tb->whole || !tb->frac)
		tb->step = 1;
	else
		tb->step = (uint64_t)((((unsigned __int128)1 << 64) + tb->frac - 1) / tb->frac);
}

/* A duration of `ticks` in ns, rounded down (as above). */
static inline uint64_t conv_tb_dur(const struct conv_tb *tb, uint64_t ticks)
{
	return ticks * tb->whole + (uint64_t)(((unsigned __int128)ticks * tb->frac) >> 64);
}

/* The archive's time of tick `ticks`: base_ns + (ticks - base_ticks) ns,
 * rounded down (towards earlier also before the base), 0 at the least. */
static inline uint64_t conv_tb_ns(const struct conv_tb *tb, uint64_t ticks)
{
	uint64_t d, up;

	if (__builtin_expect(ticks >= tb->base_ticks, 1))
		return tb->base_ns + conv_tb_dur(tb, ticks - tb->base_ticks);
	d = tb->base_ticks - ticks;
	up = d * tb->whole +
	     (uint64_t)(((unsigned __int128)d * tb->frac + UINT64_MAX) >> 64); /* rounded up */
	return up < tb->base_ns ? tb->base_ns - up : 0;
}

/* Ticks that always move conv_tb_ns() on by at least one ns: the recons'
 * step (recon_set_step()). */
static inline uint64_t conv_tb_step(const struct conv_tb *tb)
{
	return tb->step;
}

#endif /* FXT_CONVERT_TIMEBASE_H */
