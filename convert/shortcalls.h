/* Calls written as no slice (FXT_MIN_DURATION, fxt-run --min-duration):
 * the recon leaves out frames shorter than the bound (recon_set_min())
 * and hands their numbers to these sink callbacks, which keep them per
 * function for the thread; at the thread's end, conv_short_emit() writes
 * them as the summary instants include/fxt/format.h defines
 * (FXT_SHORT_CATEGORY), which fxt-report adds back.  Private to convert/. */
#ifndef FXT_CONVERT_SHORTCALLS_H
#define FXT_CONVERT_SHORTCALLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrtab.h"
#include "convert/timebase.h"

struct emit_ctx;

/* One function's calls left out. */
struct short_fn {
	uint64_t addr;
	uint64_t calls, sum, total, self, min, max, child; /* ticks */
};

/* One thread's calls left out, by function (conv_short_init()). */
struct short_calls {
	struct addrtab fns; /* struct short_fn */
	const struct conv_tb *tb; /* their durations in ns */
};

/* The recon sink's callbacks (recon.h); ctx is the thread's emit_ctx,
 * whose `shorts` they fill. */
int conv_short_call(void *ctx, uint64_t addr, uint64_t dur, uint64_t self, int outer);
int conv_short_children(void *ctx, uint64_t addr, uint64_t ticks);

/* The summary instants of ctx->shorts, at `ts` (the thread's end). */
int conv_short_emit(struct emit_ctx *ctx, uint64_t ts);

void conv_short_init(struct short_calls *s, const struct conv_tb *tb);
void conv_short_free(struct short_calls *s);

#endif /* FXT_CONVERT_SHORTCALLS_H */
