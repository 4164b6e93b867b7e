/* The hot path's clock.  Private to agent/.
 *
 * One timestamp per hook, in raw ticks: rdtsc on x86-64 when CPUID reports
 * an invariant TSC (constant rate, not stopped in deep C-states), else
 * CLOCK_MONOTONIC nanoseconds.  Ticks per second are calibrated against
 * CLOCK_MONOTONIC from the agent's start (spool/clock.h), by the converter
 * or by agent_clock_rate(), so the hot path never converts units.
 */
#ifndef FXT_AGENT_TICKS_H
#define FXT_AGENT_TICKS_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "spool/clock.h"

/* True when ticks come from the TSC; written once by agent_clock_init(). */
extern bool agent_clock_tsc;

static inline uint64_t agent_mono_ns(void)
{
	return spool_mono_ns();
}

/* The fallback, out of line so that the hooks' fast path needs no stack
 * frame for a struct timespec. */
uint64_t agent_mono_ticks(void) __attribute__((noinline));

static inline __attribute__((always_inline)) uint64_t agent_ticks(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(agent_clock_tsc, 1))
		return __rdtsc();
#endif
	return agent_mono_ticks();
}

/* Chooses the tick source (FXT_CLOCK, CPUID) and takes the start point of
 * the calibration.  Called once from the agent's initialisation. */
void agent_clock_init(void);

/* The calibration start point (ticks and CLOCK_MONOTONIC ns), for the
 * spool header. */
void agent_clock_start(uint64_t *ticks, uint64_t *ns);

/* Ticks per second, measured from the start point to now
 * (spool_tsc_rate()).  SPOOL_MONO_RATE for the monotonic clock. */
uint64_t agent_clock_rate(void);

/* Whether the CPU reports an invariant TSC (CPUID 0x80000007 EDX bit 8). */
bool agent_cpu_has_invariant_tsc(void);

#endif /* FXT_AGENT_TICKS_H */
