/* Tick source selection and calibration (see clock.h). */
#include <config.h>

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "agent/clock.h"
#include "agent/settings.h"
#include "agent/log.h"

bool agent_clock_tsc;

static uint64_t start_ticks, start_ns;

uint64_t agent_mono_ticks(void)
{
	return agent_mono_ns();
}

bool agent_cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1u;
#else
	return false;
#endif
}

void agent_clock_init(void)
{
	agent_clock_tsc = agent_cfg.clock != AGENT_CLOCK_MONOTONIC && agent_cpu_has_invariant_tsc();
	start_ns = agent_mono_ns();
	start_ticks = agent_ticks();
	agent_dbg("clock: %s", agent_clock_tsc ? "tsc" : "monotonic");
}

void agent_clock_start(uint64_t *ticks, uint64_t *ns)
{
	*ticks = start_ticks;
	*ns = start_ns;
}

/* Reads the TSC and the monotonic clock as close together as possible:
 * the pair with the shortest bracketing interval of three tries. */
static void sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t a = agent_ticks(), n = agent_mono_ns(), b = agent_ticks();
		if (b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
	}
}

uint64_t agent_clock_rate(void)
{
	/* 5 ms between the two points bounds the error from one clock read
	 * (~50 ns) to ~1e-5, fine for durations; short runs pay the wait. */
	const uint64_t min_ns = 5000000;
	uint64_t ticks, ns;

	if (!agent_clock_tsc)
		return 1000000000u;
	sample(&ticks, &ns);
	if (ns - start_ns < min_ns) {
		uint64_t left = min_ns - (ns - start_ns);
		struct timespec req = { 0, (long)left };
		while (nanosleep(&req, &req) != 0)
			;
		sample(&ticks, &ns);
	}
	if (ns <= start_ns || ticks <= start_ticks)
		return 1000000000u;
	return (uint64_t)((unsigned __int128)(ticks - start_ticks) * 1000000000u / (ns - start_ns));
}
