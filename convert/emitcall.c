/* A libc call's slice, encoded straight into the writer's buffer (emit.h,
 * conv_emit_call()): the complete event of a frame whose entries are all
 * fixed-size arguments, as the general encoder would write it, word for
 * word, without the fxt_arg array, its two passes and its checks; and
 * ONCE records' slices, a run of them at once, from the records' values
 * themselves (conv_emit_once()), with what conv_emit_call() registered. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "convert/emit.h"

/* Arguments a frame may have for this path: a libc call has its caller,
 * one or two arguments and its result (with --libc, at most 5 or so). */
#define CALL_ARGS_MAX 8u
/* The words of a ONCE record's slice at most: the header, two times,
 * "caller", the argument and the result (two words each). */
#define ONCE_WORDS_MAX 8u

/* Whether every entry of `l` is a word or two this encoder writes: no
 * string of its own, errno name, flow, register or unknown key. */
static bool plain_entries(const struct recon_args *l)
{
	if (l->n > CALL_ARGS_MAX)
		return false;
	for (uint32_t i = 0; i < l->n; i++) {
		const struct recon_arg *a = &l->v[i];
		if (a->key >= KEY_COUNT)
			return false;
		switch (a->type) {
		case EV_ARG_I64:
		case EV_ARG_U64:
		case EV_ARG_PTR:
		case EV_ARG_BOOL:
			break;
		case EV_ARG_CODE:
		case ARGT_RETURN:
			if (!a->value)
				return false; /* "NULL", inline */
			break;
		default:
			return false;
		}
	}
	return true;
}

/* The ref of argument name `key`, cached for the table's epoch; 0 when
 * it is not an indexed ref (a writer error). */
static inline __attribute__((always_inline)) uint16_t key_ref(struct emit_ctx *ctx, unsigned key)
{
	struct emit_common *com = ctx->com;
	struct fxt_sref r;

	if (__builtin_expect(com->key_epoch[key] == ctx->names->epoch, 1))
		return com->key_ref[key];
	r = conv_arg_name(ctx, key);
	if (!r.ref || fxt_strref_is_inline(r.ref))
		return 0;
	com->key_ref[key] = r.ref;
	com->key_epoch[key] = ctx->names->epoch;
	return r.ref;
}

/* The name of the function holding `pc` as an argument's value, cached
 * in its entry for the table's epoch; false when it is not indexed or
 * empty (a writer error, no memory). */
static bool pc_name(struct emit_ctx *ctx, uint64_t pc, uint16_t *ref)
{
	struct sym_entry *e = conv_names_get(ctx->names, pc);
	struct fxt_sref r;

	if (!e)
		return false;
	if (e->val_epoch != ctx->names->epoch) {
		r = fxt_writer_string_cached(ctx->w, &e->name_slot, e->name, e->name_len);
		if (fxt_strref_is_inline(r.ref))
			return false;
		e->val_ref = r.ref;
		e->val_epoch = ctx->names->epoch;
	}
	*ref = e->val_ref;
	return true;
}

int conv_emit_call(struct emit_ctx *ctx, const struct recon_slot *v, const struct recon_args *l)
{
	struct sym_entry *e = conv_names_get(ctx->names, v->addr);
	uint64_t hdrs[CALL_ARGS_MAX], *out;
	uint32_t gen0;
	size_t n = 3;

	/* The general encoder's cases: a location on the slice, an inline
	 * thread ref (a writer error). */
	if (!e || (e->loc && ctx->com->loc_args) || !ctx->hdr || !plain_entries(l))
		return 0;
	if (__builtin_expect(!e->loc_done, 0))
		conv_emit_loc(ctx, e); /* as emit_rich(): before the slice's refs */
	gen0 = fxt_writer_registrations(ctx->w);
	/* The arguments' headers, interned in emit_rich()'s order (a value,
	 * then its name), so that the same strings are registered at the
	 * same places; written once no string can be any more. */
	for (uint32_t i = 0; i < l->n; i++) {
		const struct recon_arg *a = &l->v[i];
		uint16_t name, val;

		switch (a->type) {
		case EV_ARG_CODE:
		case ARGT_RETURN:
			if (!pc_name(ctx, a->type == ARGT_RETURN ? a->value - 1 : a->value, &val) ||
			    !(name = key_ref(ctx, a->key)))
				goto general;
			hdrs[i] = fxt_arg_header(FXT_ARG_STRING, 1, name, val);
			n++;
			break;
		case EV_ARG_BOOL:
			if (!(name = key_ref(ctx, a->key)))
				goto general;
			hdrs[i] = fxt_arg_header(FXT_ARG_BOOL, 1, name, a->value != 0);
			n++;
			break;
		default:
			if (!(name = key_ref(ctx, a->key)))
				goto general;
			hdrs[i] = fxt_arg_header(a->type == EV_ARG_I64	 ? FXT_ARG_INT64
						 : a->type == EV_ARG_PTR ? FXT_ARG_POINTER
									 : FXT_ARG_UINT64,
						 2, name, 0);
			n += 2;
			break;
		}
	}
	if (fxt_writer_registrations(ctx->w) != gen0)
		ctx->names->epoch++;
	if (e->epoch != ctx->names->epoch)
		conv_function_refs(ctx, e);
	out = fxt_writer_reserve(ctx->w, n);
	if (!out)
		return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
	out[0] =
	    fxt_event_header(n, FXT_EVENT_DURATION_COMPLETE, l->n, ctx->ev.thread.index, 0, 0) |
	    e->ref_bits;
	out[1] = conv_tb_ns(&ctx->com->tb, v->start);
	for (uint32_t i = 0, k = 2; i < l->n; i++) {
		out[k++] = hdrs[i];
		if (fxt_bits(hdrs[i], 4, 15) == 2)
			out[k++] = l->v[i].value;
	}
	out[n - 1] = conv_tb_ns(&ctx->com->tb, v->end);
	fxt_writer_commit(ctx->w, n);
	ctx->events++;
	return 1;
general:
	/* What was interned stays so: the general encoder finds it. */
	if (fxt_writer_registrations(ctx->w) != gen0)
		ctx->names->epoch++;
	return 0;
}

/* Fills `c`, the cache of a ONCE record's function, from what
 * conv_emit_call() left registered for the table's epoch: false when
 * some of it is not (this registers nothing, so that strings are
 * registered where the general way registers them). */
static bool once_fill(struct emit_ctx *ctx, struct emit_once *c, uint64_t addr,
		      const struct recon_once *o)
{
	const struct emit_common *com = ctx->com;
	uint64_t epoch = ctx->names->epoch;
	struct sym_entry *e;
	unsigned nargs, words;

	/* conv_emit_call()'s cases, and a value of two words. */
	if (!ctx->hdr || com->loc_args ||
	    (o->type != EV_ARG_I64 && o->type != EV_ARG_U64 && o->type != EV_ARG_PTR))
		return false;
	e = conv_names_get(ctx->names, addr);
	if (!e || !e->loc_done || e->epoch != epoch || com->key_epoch[o->key] != epoch ||
	    (o->res_type && com->key_epoch[AGENT_KEY_RESULT] != epoch))
		return false;
	c->ref_bits = e->ref_bits;
	c->caller_key =
	    com->key_epoch[AGENT_KEY_CALLER] == epoch ? com->key_ref[AGENT_KEY_CALLER] : 0;
	c->val_key = com->key_ref[o->key];
	c->res_key = o->res_type ? com->key_ref[AGENT_KEY_RESULT] : 0;
	c->res_type = o->res_type;
	/* conv_emit_call()'s words, as it makes them. */
	nargs = 1 + (o->res_type != 0);
	words = 5 + (o->res_type ? 2 : 0);
	c->hdr = fxt_event_header(words, FXT_EVENT_DURATION_COMPLETE, nargs, 0, 0, 0) | e->ref_bits;
	c->hdr_caller =
	    fxt_event_header(words + 1, FXT_EVENT_DURATION_COMPLETE, nargs + 1, 0, 0, 0) |
	    e->ref_bits;
	c->caller_hdr = c->caller_key ? fxt_arg_header(FXT_ARG_STRING, 1, c->caller_key, 0) : 0;
	c->val_hdr = fxt_arg_header(o->type == EV_ARG_I64   ? FXT_ARG_INT64
				    : o->type == EV_ARG_PTR ? FXT_ARG_POINTER
							    : FXT_ARG_UINT64,
				    2, c->val_key, 0);
	c->res_hdr = o->res_type ? fxt_arg_header(o->res_type == EV_ARG_PTR + 1 ? FXT_ARG_POINTER
										: FXT_ARG_INT64,
						  2, c->res_key, 0)
				 : 0;
	c->epoch = epoch;
	return true;
}

int conv_emit_once(void *vctx, const struct recon_slot *s, const struct recon_once *o, size_t n)
{
	struct emit_ctx *ctx = vctx;
	struct emit_common *com = ctx->com;
	/* Locals, not fields the stores to `out` might alias: registers. */
	const uint64_t epoch = ctx->names->epoch;
	const struct conv_tb tb = com->tb;
	const uint64_t thread = fxt_field(ctx->ev.thread.index, 24, 31);
	uint64_t *out, *q;
	size_t i;

	if (!ctx->hdr || !n)
		return 0;
	out = fxt_writer_reserve(ctx->w, n * ONCE_WORDS_MAX);
	if (!out)
		return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
	q = out;
	for (i = 0; i < n; i++) {
		const struct recon_once *x = &o[i];
		const struct emit_once *c = &com->once[x->fn];
		uint64_t caller = x->caller;

		if (__builtin_expect(c->epoch != epoch, 0) &&
		    !once_fill(ctx, &com->once[x->fn], s[i].addr, x))
			break;
		if (x->res_type != c->res_type)
			break;
		if (caller) {
			/* pc_name()'s, registered already. */
			uint64_t pc = caller - 1;
			struct emit_caller *cc =
			    &com->callers[(pc ^ (pc >> 9)) & (EMIT_CALLERS - 1)];
			uint16_t val;

			if (!c->caller_hdr) {
				com->once[x->fn].epoch =
				    0; /* filled before "caller" was registered */
				break;
			}
			if (cc->pc == pc && cc->epoch_ref >> 16 == epoch) {
				val = (uint16_t)cc->epoch_ref;
			} else {
				struct sym_entry *e = conv_names_get(ctx->names, pc);

				if (!e || e->val_epoch != epoch)
					break;
				val = e->val_ref;
				cc->pc = pc;
				cc->epoch_ref = epoch << 16 | val;
			}
			caller = c->caller_hdr | (uint64_t)val << 32;
		}
		/* conv_emit_call()'s words, in its order. */
		q[0] = thread | (caller ? c->hdr_caller : c->hdr);
		q[1] = conv_tb_ns(&tb, s[i].start);
		if (caller) {
			q[2] = caller;
			q++;
		}
		q[2] = c->val_hdr;
		q[3] = x->value;
		if (c->res_hdr) {
			q[4] = c->res_hdr;
			q[5] = x->result;
			q += 2;
		}
		q[4] = conv_tb_ns(&tb, s[i].end);
		q += 5;
	}
	fxt_writer_commit(ctx->w, (size_t)(q - out));
	ctx->events += i;
	return (int)i;
}
