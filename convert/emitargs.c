/* The arguments and return values of patched calls (fxt-run --args,
 * --retval) as FXT arguments of their slices, named and typed by each
 * function's signature (symbolizer/signature.h): part of the emitter
 * (emit.h, conv_fn_args()). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "convert/emit.h"
#include "run/argspec.h"
#include "symbolizer/signature.h"

/* The registers a patched call's frame has (ARGT_REG, ARGT_REGSTR). */
struct frame_regs {
	uint64_t v[FXT_REG_COUNT];
	const struct recon_arg *a[FXT_REG_COUNT]; /* NULL: not read */
	bool entry, ret;			  /* some read at the entry, the return */
};

static bool frame_regs(const struct recon_args *l, struct frame_regs *r)
{
	bool any = false;
	uint32_t i = 0;

	/* Most frames with arguments are libc calls, without registers:
	 * found so before the table is cleared. */
	while (i < l->n && l->v[i].type != ARGT_REG && l->v[i].type != ARGT_REGSTR)
		i++;
	if (i == l->n)
		return false;
	memset(r, 0, sizeof(*r));
	for (; i < l->n; i++) {
		const struct recon_arg *a = &l->v[i];
		unsigned reg = a->key & REG_KEY_REG;

		if ((a->type != ARGT_REG && a->type != ARGT_REGSTR) || reg >= FXT_REG_COUNT)
			continue;
		r->v[reg] = a->value;
		r->a[reg] = a;
		if (reg >= FXT_REG_RAX)
			r->ret = true;
		else
			r->entry = true;
		any = true;
	}
	return any;
}

/* A string argument: its text, "…" after it when it was cut; NULL or
 * "(unreadable 0x...)" when it could not be read. */
static void show_string(const struct recon_args *l, const struct recon_arg *a, char **scratch,
			struct fxt_arg *out)
{
	char buf[64];

	out->type = FXT_ARG_STRING;
	if (a->key & REG_STR_UNREADABLE) {
		int len = a->value ? snprintf(buf, sizeof(buf), "(unreadable %#llx)",
					      (unsigned long long)a->value)
				   : snprintf(buf, sizeof(buf), "NULL");
		out->v.str = conv_inline_value(scratch, buf, (size_t)len, (size_t)len);
		return;
	}
	char *d = *scratch;
	struct fxt_sref v =
	    conv_inline_value(scratch, a->len ? l->bytes + a->off : "", a->len, MESSAGE_MAX);
	if (a->key & REG_STR_TRUNCATED) {
		static const char ellipsis[] = "\xe2\x80\xa6"; /* … */
		memcpy(*scratch, ellipsis, 3);
		*scratch += 3;
		v = fxt_sref_inline(d, (size_t)(*scratch - d));
	}
	out->v.str = v;
}

/* One value by its description: lo, hi its registers' contents. */
static void show_value(const struct fxt_value_desc *d, uint64_t lo, uint64_t hi, char **scratch,
		       struct fxt_arg *out)
{
	char buf[128];
	struct fxt_shown sh;

	fxt_sig_show(d, lo, hi, buf, sizeof(buf), &sh);
	switch (sh.type) {
	case FXT_SHOWN_I64:
		out->type = FXT_ARG_INT64;
		out->v.i64 = sh.v.i64;
		break;
	case FXT_SHOWN_U64:
		out->type = FXT_ARG_UINT64;
		out->v.u64 = sh.v.u64;
		break;
	case FXT_SHOWN_DOUBLE:
		out->type = FXT_ARG_DOUBLE;
		out->v.f64 = sh.v.d;
		break;
	case FXT_SHOWN_BOOL:
		out->type = FXT_ARG_BOOL;
		out->v.b = sh.v.b;
		break;
	case FXT_SHOWN_PTR:
		out->type = FXT_ARG_POINTER;
		out->v.ptr = sh.v.ptr;
		break;
	case FXT_SHOWN_STR:
	default:
		out->type = FXT_ARG_STRING;
		out->v.str = conv_inline_value(scratch, sh.str ? sh.str : "", sh.len, sh.len);
		break;
	}
}

/* A value that was not read: why, as its text. */
static void show_note(char **scratch, const char *why, struct fxt_arg *out)
{
	out->type = FXT_ARG_STRING;
	out->v.str = conv_inline_value(scratch, why, strlen(why), strlen(why));
}

/* The value of d from the frame's registers into out; false when it has
 * none to show (not read). */
static bool show_desc(const struct recon_args *l, const struct frame_regs *r,
		      const struct fxt_value_desc *d, bool ret, char **scratch, struct fxt_arg *out)
{
	unsigned base = ret ? (d->loc == FXT_LOC_XMM ? FXT_REG_RET_XMM0 : FXT_REG_RAX)
			    : (d->loc == FXT_LOC_XMM ? FXT_REG_XMM0 : FXT_REG_GPR0);
	unsigned lo = base + d->reg, hi = base + (d->two_regs ? d->reg2 : d->reg);
	char buf[96];

	switch (d->loc) {
	case FXT_LOC_GPR:
	case FXT_LOC_XMM:
		if (lo >= FXT_REG_COUNT || hi >= FXT_REG_COUNT || !r->a[lo])
			return false;
		if (r->a[lo]->type == ARGT_REGSTR)
			show_string(l, r->a[lo], scratch, out);
		else
			show_value(d, r->v[lo], r->v[hi], scratch, out);
		return true;
	case FXT_LOC_MEMORY:
		if (d->kind == FXT_VK_STRUCT)
			snprintf(buf, sizeof(buf), "{...} (%u bytes)", d->size);
		else
			snprintf(buf, sizeof(buf), "(%s, on the stack: not read)",
				 d->type ? d->type : "?");
		show_note(scratch, buf, out);
		return true;
	case FXT_LOC_NONE:
	default:
		return false;
	}
}

/* An argument's name (of a signature, or "retval", "arg1": strings that
 * keep their address), interned once (what it evicts, emit_rich() sees
 * by fxt_writer_registrations()). */
static struct fxt_sref fn_arg_name(struct emit_ctx *ctx, const char *name)
{
	struct emit_common *com = ctx->com;
	size_t h = ((uintptr_t)name >> 3) % (sizeof(com->arg_names) / sizeof(com->arg_names[0]));
	if (com->arg_names[h].name != name) {
		com->arg_names[h].name = name;
		memset(&com->arg_names[h].slot, 0, sizeof(com->arg_names[h].slot));
	}
	return fxt_writer_string_cached(ctx->w, &com->arg_names[h].slot, name, strlen(name));
}

static const char *const reg_names[FXT_REG_COUNT] = {
	"arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "?",	  "?", "xmm0", "xmm1",
	"xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "retval", "?", "?",    "?",
};

/* The arguments and return value of a patched call's frame (fxt-run
 * --args/--retval) as FXT arguments into args (room for `cap`): by the
 * names and types of its function's signature, or, without one (no
 * DWARF: an explicit "NAME@arg1,arg2"), raw ("arg1", "retval").  Returns
 * how many. */
unsigned conv_fn_args(struct emit_ctx *ctx, uint64_t addr, const struct recon_args *l,
		      struct fxt_arg *args, unsigned cap, char **scratch)
{
	struct emit_common *com = ctx->com;
	const struct fxt_signature *sig;
	struct frame_regs r;
	unsigned n = 0;

	if (!frame_regs(l, &r))
		return 0;
	if (com->sig_addr != addr || !com->sig) {
		com->sig = com->signature ? com->signature(com->signature_ctx, addr) : NULL;
		com->sig_addr = addr;
	}
	sig = com->sig;
	if (sig) {
		for (size_t i = 0; r.entry && i < sig->nparams && n < cap; i++) {
			const struct fxt_value_desc *d = &sig->params[i];

			memset(&args[n], 0, sizeof(args[n]));
			if (!show_desc(l, &r, d, false, scratch, &args[n]))
				continue;
			args[n++].name = fn_arg_name(ctx, d->name ? d->name : "?");
		}
		if (r.entry && sig->variadic && n < cap) {
			memset(&args[n], 0, sizeof(args[n]));
			show_note(scratch, "(variadic: not shown)", &args[n]);
			args[n++].name = fn_arg_name(ctx, "...");
		}
		if (r.ret && n < cap) {
			memset(&args[n], 0, sizeof(args[n]));
			if (sig->ret_in_memory) {
				char buf[64];
				snprintf(buf, sizeof(buf), "{...} (%u bytes)", sig->ret.size);
				show_note(scratch, buf, &args[n]);
				args[n++].name = fn_arg_name(ctx, reg_names[FXT_REG_RAX]);
			} else if (show_desc(l, &r, &sig->ret, true, scratch, &args[n])) {
				args[n++].name = fn_arg_name(ctx, reg_names[FXT_REG_RAX]);
			}
		}
	} else {
		/* No signature: the registers as they were (only rax of the
		 * return's: no DWARF says more). */
		for (unsigned reg = 0; reg <= FXT_REG_RAX && n < cap; reg++) {
			const struct recon_arg *a = r.a[reg];

			if (!a)
				continue;
			memset(&args[n], 0, sizeof(args[n]));
			if (a->type == ARGT_REGSTR) {
				show_string(l, a, scratch, &args[n]);
			} else {
				args[n].type = FXT_ARG_UINT64;
				args[n].v.u64 = a->value;
			}
			args[n++].name = fn_arg_name(ctx, reg_names[reg]);
		}
	}
	return n;
}
