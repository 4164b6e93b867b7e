/* Calls written as no slice, kept per function (see shortcalls.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/emit.h"
#include "convert/shortcalls.h"
#include "fxt/counts.h"

/* The entry of `addr`, added if new; NULL: no memory. */
static struct short_fn *entry(struct short_calls *s, uint64_t addr)
{
	bool added;
	struct short_fn *f = addrtab_get(&s->fns, addr, &added);

	if (f && added)
		f->min = UINT64_MAX;
	return f;
}

int conv_short_call(void *vctx, uint64_t addr, uint64_t dur, uint64_t self, int outer)
{
	struct emit_ctx *ctx = vctx;
	struct short_fn *f = ctx->shorts ? entry(ctx->shorts, addr) : NULL;

	if (!f)
		return ctx->shorts ? -ENOMEM : 0;
	f->calls++;
	f->sum += dur;
	f->total += outer ? dur : 0;
	f->self += self;
	if (dur < f->min)
		f->min = dur;
	if (dur > f->max)
		f->max = dur;
	return 0;
}

int conv_short_children(void *vctx, uint64_t addr, uint64_t ticks)
{
	struct emit_ctx *ctx = vctx;
	struct short_fn *f = ctx->shorts ? entry(ctx->shorts, addr) : NULL;

	if (!f)
		return ctx->shorts ? -ENOMEM : 0;
	f->child += ticks;
	return 0;
}

static uint64_t to_ns(const struct short_calls *s, uint64_t ticks)
{
	return conv_tb_dur(s->tb, ticks);
}

/* One function's summary instant. */
static int emit_one(struct emit_ctx *ctx, const struct short_calls *s, const struct short_fn *f,
		    uint64_t ts)
{
	static const char *const names[8] = { FXT_SHORT_ARG_MODULE, FXT_SHORT_ARG_CALLS,
					      FXT_SHORT_ARG_SUM,    FXT_SHORT_ARG_TOTAL,
					      FXT_SHORT_ARG_SELF,   FXT_SHORT_ARG_MIN,
					      FXT_SHORT_ARG_MAX,    FXT_SHORT_ARG_CHILD };
	const uint64_t v[8] = { 0,
				f->calls,
				to_ns(s, f->sum),
				to_ns(s, f->total),
				to_ns(s, f->self),
				f->calls ? to_ns(s, f->min) : 0,
				to_ns(s, f->max),
				to_ns(s, f->child) };
	struct sym_entry *e = conv_names_get(ctx->names, f->addr);
	struct fxt_arg a[8];
	struct fxt_event ev;

	if (!e)
		return -ENOMEM;
	if (!e->loc_done) /* a function none of whose calls got a slice */
		conv_emit_loc(ctx, e);
	memset(a, 0, sizeof(a));
	for (unsigned k = 0; k < 8; k++) {
		a[k].type = k ? FXT_ARG_UINT64 : FXT_ARG_STRING;
		a[k].name = fxt_writer_cstring(ctx->w, names[k]);
		a[k].v.u64 = v[k];
	}
	a[0].v.str = fxt_writer_string(ctx->w, e->cat, e->cat_len);
	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = conv_tb_ns(&ctx->com->tb, ts);
	ev.thread = ctx->ev.thread;
	ev.category = fxt_writer_cstring(ctx->w, FXT_SHORT_CATEGORY);
	ev.name = fxt_writer_string(ctx->w, e->name, e->name_len);
	ev.args = a;
	ev.nargs = 8;
	ctx->names->epoch++; /* strings registered */
	ctx->events++;
	return fxt_writer_event(ctx->w, &ev);
}

int conv_short_emit(struct emit_ctx *ctx, uint64_t ts)
{
	const struct short_calls *s = ctx->shorts;
	int err = 0;

	for (size_t i = 0; s && i < s->fns.cap && !err; i++) {
		const struct short_fn *f = addrtab_slot(&s->fns, i);

		if (f)
			err = emit_one(ctx, s, f, ts);
	}
	return err;
}

void conv_short_init(struct short_calls *s, const struct conv_tb *tb)
{
	s->fns = ADDRTAB_INIT(struct short_fn);
	s->tb = tb;
}

void conv_short_free(struct short_calls *s)
{
	addrtab_free(&s->fns);
}
