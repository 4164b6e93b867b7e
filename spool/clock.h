/* The spool's clock: what its ticks are, and how many there are per
 * second.  The one owner of that measurement, for the agent and the
 * converter alike.
 *
 * Records carry raw ticks (agent/ticks.h): the TSC when the CPU reports
 * an invariant one (the header's clock_tsc), else CLOCK_MONOTONIC
 * nanoseconds.  The header holds a calibration start point known both in
 * ticks and in CLOCK_MONOTONIC ns, and a later point updated at each chunk
 * grant.  The TSC's rate is measured from the start point to now, on the
 * same machine: the later now, the more precise.  Nothing here runs on
 * the hot path.
 */
#ifndef FXT_SPOOL_CLOCK_H
#define FXT_SPOOL_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "spool/format.h"

/* Ticks per second of the monotonic clock's ticks (nanoseconds). */
#define SPOOL_MONO_RATE 1000000000u

/* Two points at least this far apart bound the error of one clock read
 * (~50 ns) to ~1e-5: a measurement sooner after the start waits. */
#define SPOOL_CLOCK_MIN_NS 5000000u

static inline uint64_t spool_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ticks per second between two points, each known in ticks and in ns;
 * 0 when they do not make an interval. */
static inline uint64_t spool_rate(uint64_t ticks0, uint64_t ns0, uint64_t ticks1, uint64_t ns1)
{
	if (ns1 <= ns0 || ticks1 <= ticks0)
		return 0;
	return (uint64_t)((unsigned __int128)(ticks1 - ticks0) * 1000000000u / (ns1 - ns0));
}

#if defined(__x86_64__)
/* Reads the TSC and the monotonic clock as close together as possible:
 * the pair with the shortest bracketing interval of three tries, so that
 * a preemption between the two reads cannot skew a process's anchor (its
 * timeline would move by as much, over the one before an exec). */
void spool_tsc_sample(uint64_t *ticks, uint64_t *ns);
#endif

/* The TSC's ticks per second, measured from the start point (start_ticks,
 * start_ns) to now, waiting until SPOOL_CLOCK_MIN_NS after the start if
 * it is sooner.  0 when it cannot be measured here (no TSC, a start point
 * in the future). */
uint64_t spool_tsc_rate(uint64_t start_ticks, uint64_t start_ns);

/* Ticks per second of the clock of the spool whose header is `h`, on the
 * machine that recorded it: SPOOL_MONO_RATE for the monotonic clock; for
 * the TSC, measured now, else from the header's later point, else
 * SPOOL_MONO_RATE. */
uint64_t spool_clock_rate(const struct spool_header *h);

#endif /* FXT_SPOOL_CLOCK_H */
