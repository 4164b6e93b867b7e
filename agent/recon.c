/* Stack reconstruction (see recon.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "agent/recon.h"
#include "agent/spool.h"

void recon_init(struct recon *r, recon_emit_fn emit, void *ctx)
{
	r->stack = NULL;
	r->depth = r->cap = 0;
	r->last_ts = 0;
	r->unmatched = 0;
	r->emitted = 0;
	r->emit = emit;
	r->ctx = ctx;
}

void recon_free(struct recon *r)
{
	free(r->stack);
	r->stack = NULL;
	r->depth = r->cap = 0;
}

static int push(struct recon *r, uint64_t addr, uint64_t ts)
{
	if (r->depth == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct recon_frame *s = realloc(r->stack, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		r->stack = s;
		r->cap = cap;
	}
	r->stack[r->depth].addr = addr;
	r->stack[r->depth].start = ts;
	r->depth++;
	return 0;
}

/* Pops and emits frames down to (and including) index `to`, all ending at
 * `end`: equal ends still nest. */
static int close_to(struct recon *r, size_t to, uint64_t end)
{
	while (r->depth > to) {
		struct recon_frame *f = &r->stack[--r->depth];
		int err = r->emit(r->ctx, f->addr, f->start, end);
		if (err < 0)
			return err;
		r->emitted++;
	}
	return 0;
}

int recon_feed(struct recon *r, uint64_t ts, uint64_t addr)
{
	uint64_t fn = addr & ~SPOOL_EXIT_BIT;
	size_t i;

	if (r->last_ts && ts <= r->last_ts)
		ts = r->last_ts + 1;
	r->last_ts = ts;
	if (!(addr & SPOOL_EXIT_BIT))
		return push(r, fn, ts);
	/* Exit: the top frame normally; else the nearest matching one. */
	for (i = r->depth; i > 0; i--) {
		if (r->stack[i - 1].addr == fn)
			return close_to(r, i - 1, ts);
	}
	r->unmatched++;
	return 0;
}

int recon_finish(struct recon *r, uint64_t end_ts)
{
	/* Strictly after the last record, so no frame ends where it starts. */
	if (r->depth && end_ts <= r->last_ts)
		end_ts = r->last_ts + 1;
	return close_to(r, 0, end_ts);
}
