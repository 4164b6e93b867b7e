/* Tick source selection and calibration (see ticks.h). */
#include <config.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "agent/ticks.h"
#include "agent/cfg.h"
#include "agent/log.h"
#include "agent/sys.h"
#include "spool/clock.h"

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
#if defined(__x86_64__)
	if (agent_clock_tsc) {
		spool_tsc_sample(&start_ticks, &start_ns);
	} else
#endif
	{
		start_ns = agent_mono_ns(); /* ticks are these ns: one read */
		start_ticks = start_ns;
	}
	agent_dbg("clock: %s", agent_clock_tsc ? "tsc" : "monotonic");
}

AGENT_FORK_CODE void agent_clock_start(uint64_t *ticks, uint64_t *ns)
{
	*ticks = start_ticks;
	*ns = start_ns;
}

uint64_t agent_clock_rate(void)
{
	uint64_t rate;

	if (!agent_clock_tsc)
		return SPOOL_MONO_RATE;
	rate = spool_tsc_rate(start_ticks, start_ns);
	return rate ? rate : SPOOL_MONO_RATE;
}
