/* Measuring the spool's clock rate (see clock.h). */
#include "config.h"

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "spool/clock.h"

#if defined(__x86_64__)
void spool_tsc_sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t a = __rdtsc(), n = spool_mono_ns(), b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
	}
}
#endif

uint64_t spool_tsc_rate(uint64_t start_ticks, uint64_t start_ns)
{
#if defined(__x86_64__)
	uint64_t ticks = 0, ns = spool_mono_ns();

	if (ns >= start_ns && ns - start_ns < SPOOL_CLOCK_MIN_NS) {
		uint64_t left = SPOOL_CLOCK_MIN_NS - (ns - start_ns);
		struct timespec req = { 0, (long)left };
		while (nanosleep(&req, &req) != 0)
			;
	}
	spool_tsc_sample(&ticks, &ns);
	return spool_rate(start_ticks, start_ns, ticks, ns);
#else
	(void)start_ticks;
	(void)start_ns;
	return 0;
#endif
}

uint64_t spool_clock_rate(const struct spool_header *h)
{
	uint64_t rate;

	if (!h->clock_tsc)
		return SPOOL_MONO_RATE;
	rate = spool_tsc_rate(h->start_ticks, h->start_ns);
	if (!rate)
		rate = spool_rate(h->start_ticks, h->start_ns, h->last_ticks, h->last_ns);
	return rate ? rate : SPOOL_MONO_RATE;
}
