/* Stack samples -> stack chart (see stackchart.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "convert/stackchart.h"

/* Identities are recon addresses: below 2^56 (the spool's tag bits), so
 * that a garbage pc from a torn record can never pass for an exit. */
#define ID_MASK ((1ull << 56) - 1)

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

/* The function identity of frame `i` of a sample (0 = innermost).  Every
 * frame but the innermost holds a return address, which may be the first
 * byte after the function (a call to a noreturn function ends it): look up
 * the call instruction instead. */
static uint64_t frame_id(const struct stackchart *sc, const uint64_t *pcs, unsigned i)
{
	uint64_t pc = i ? pcs[i] - 1 : pcs[i];
	uint64_t id = sc->fn_of ? sc->fn_of(sc->ctx, pc) : 0;

	/* Unknown: the address itself still tells frames apart. */
	return (id ? id : pc) & ID_MASK;
}

/* Closes the open frames deeper than `keep` at `ts`, innermost first. */
static int close_to(struct stackchart *sc, size_t keep, uint64_t ts)
{
	while (sc->depth > keep) {
		int err = recon_feed(sc->r, ts, sc->stack[sc->depth - 1] | SPOOL_EXIT_BIT);

		if (err < 0)
			return err;
		sc->depth--;
	}
	return 0;
}

static int grow(struct stackchart *sc, size_t need)
{
	size_t cap = sc->cap ? sc->cap : 64;
	uint64_t *v;

	if (need <= sc->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	v = realloc(sc->stack, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sc->stack = v;
	sc->cap = cap;
	return 0;
}

int stackchart_sample(struct stackchart *sc, uint64_t ts, const uint64_t *pcs, unsigned depth,
		      uint64_t periods)
{
	size_t same = 0;
	int err;

	/* The thread waited since the previous sample: that one's frames
	 * last the CPU time it used, not the wait. */
	if (sc->depth && periods && sc->period && ts > sc->last_ts) {
		uint64_t cpu = periods <= UINT64_MAX / sc->period - 1 ? periods * sc->period
								      : UINT64_MAX - sc->period;

		if (ts - sc->last_ts > cpu + sc->period) {
			err = close_to(sc, 0, sc->last_ts + cpu);
			if (err < 0)
				return err;
		}
	}
	/* The frames both stacks share, from the outermost: frame j of the
	 * sample (outermost first) is pcs[depth - 1 - j]. */
	while (same < depth && same < sc->depth &&
	       frame_id(sc, pcs, depth - 1 - (unsigned)same) == sc->stack[same])
		same++;
	err = grow(sc, depth);
	if (err < 0)
		return err;
	err = close_to(sc, same, ts);
	if (err < 0)
		return err;
	for (size_t j = same; j < depth; j++) {
		uint64_t id = frame_id(sc, pcs, depth - 1 - (unsigned)j);

		err = recon_feed(sc->r, ts, id);
		if (err < 0)
			return err;
		sc->stack[sc->depth++] = id;
	}
	sc->last_ts = ts;
	return 0;
}

int stackchart_finish(struct stackchart *sc, uint64_t end_ts)
{
	uint64_t ts = sc->last_ts + sc->period;
	int err;

	if (!sc->depth)
		return 0;
	if (end_ts && end_ts < ts)
		ts = end_ts;
	err = close_to(sc, 0, ts);
	if (err < 0)
		return err;
	/* Everything is closed: this only hands the last slices to the sink. */
	return recon_finish(sc->r, ts);
}

void stackchart_free(struct stackchart *sc)
{
	free(sc->stack);
	sc->stack = NULL;
	sc->depth = sc->cap = 0;
}
