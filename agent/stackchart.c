/* Stack samples -> stack chart (see stackchart.h).  TODO(owner: sampling). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "agent/stackchart.h"

void stackchart_init(struct stackchart *sc, struct recon *r, stackchart_fn_of *fn_of, void *ctx,
		     uint64_t period)
{
	sc->r = r;
	sc->fn_of = fn_of;
	sc->ctx = ctx;
	sc->stack = NULL;
	sc->depth = sc->cap = 0;
	sc->last_ts = 0;
	sc->period = period;
}

int stackchart_sample(struct stackchart *sc, uint64_t ts, const uint64_t *pcs, unsigned depth)
{
	(void)sc;
	(void)ts;
	(void)pcs;
	(void)depth;
	return -ENOSYS;
}

int stackchart_finish(struct stackchart *sc, uint64_t end_ts)
{
	(void)sc;
	(void)end_ts;
	return 0;
}

void stackchart_free(struct stackchart *sc)
{
	free(sc->stack);
	sc->stack = NULL;
}
