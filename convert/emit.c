/* The conversion's event emission (see emit.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/utf8.h>

#include "convert/emit.h"
#include "convert/shortcalls.h"
#include "fxt/counts.h"
#include "spool/format.h"
#include "spool/libc_table.h"

#define LOG_NAME_MAX  200u
#define ARG_WORDS_MAX 3000u /* per event, under FXT_MAX_RECORD_WORDS */

/* ------------------------------------------------------------ strings */

static const char *key_name(unsigned key, char *buf, size_t cap)
{
	const char *name;

	if (key == KEY_ERROR)
		return "error";
	if (key == KEY_STREAM_OFFSET)
		return "stream_offset";
	if (key == KEY_START_OVERWRITTEN)
		return "start_overwritten";
	name = agent_key_name(key);
	if (name)
		return name;
	snprintf(buf, cap, "arg%u", key);
	return buf;
}

/* "ENOENT" for 2; "E<n>" when the C library has no name for it. */
static size_t errno_name(char *buf, size_t cap, int64_t e)
{
	const char *name = NULL;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	if (e > 0 && e < 4096)
		name = strerrorname_np((int)e);
#endif
	if (name)
		snprintf(buf, cap, "%s", name);
	else
		snprintf(buf, cap, "E%lld", (long long)e);
	return strlen(buf);
}

/* ------------------------------------------------------------ events */

/* What a drop cause (spool/format.h, SPOOL_CAUSE_*) says, as a phrase
 * fxt-run's summary can follow "because" with; "" for 0 (a size limit).
 * The causes without an errno, by kind (the cause >> 16). */
static const char *const cause_phrase[] = {
	[SPOOL_CAUSE_NO_BUFFER >> 16] = "they were made before their thread had a buffer (in a "
					"signal handler that interrupted its first traced call, "
					"or the agent could not start)",
	[SPOOL_CAUSE_THREAD_END >> 16] = "a signal handler made them while its thread was ending, "
					 "as the thread's buffer was released",
	[SPOOL_CAUSE_VM_CHILD >> 16] = "a child made by clone() with CLONE_VM, no TLS of its own, "
				       "made them on its parent's thread state, unrecordable",
	[SPOOL_CAUSE_RAW_CLONE >> 16] = "a clone system call no wrapper saw made the process: "
					"its first calls went into its parent's buffer",
};

static void cause_text(uint32_t cause, char *buf, size_t cap)
{
	uint32_t kind = cause >> 16;

	if (cause == 0)
		snprintf(buf, cap, "%s", "");
	else if (kind == SPOOL_CAUSE_SPOOL >> 16)
		snprintf(buf, cap, "the spool could not be written (%s)",
			 strerror((int)(cause & SPOOL_CAUSE_ERRNO)));
	else if (kind < sizeof(cause_phrase) / sizeof(cause_phrase[0]) && cause_phrase[kind] &&
		 !(cause & SPOOL_CAUSE_ERRNO))
		snprintf(buf, cap, "%s", cause_phrase[kind]);
	else
		snprintf(buf, cap, "of an unknown cause (%#x)", cause);
}

/* An instant of category "fxt" named `name` (`len` bytes) on the track,
 * with the argument "cause" when `why` is not empty, counted as the
 * archive's counts count it (fxt__counts_drops()). */
static int emit_fxt_instant(struct emit_ctx *ctx, uint64_t ts, const char *name, int len,
			    const char *why)
{
	struct fxt_event ev;
	struct fxt_arg arg;

	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = conv_tb_ns(&ctx->com->tb, ts);
	ev.thread = ctx->ev.thread;
	ev.category = fxt_writer_cstring(ctx->w, "fxt");
	ev.name = fxt_writer_cstring(ctx->w, name);
	if (why[0]) {
		memset(&arg, 0, sizeof(arg));
		arg.type = FXT_ARG_STRING;
		arg.name = fxt_writer_cstring(ctx->w, FXT_DROP_CAUSE_ARG);
		arg.v.str = fxt_sref_inline(why, strlen(why));
		ev.args = &arg;
		ev.nargs = 1;
	}
	ctx->names->epoch++; /* strings registered */
	ctx->events++;
	fxt__counts_drops(&ctx->com->st->counts, name, (size_t)len, why, strlen(why));
	return fxt_writer_event(ctx->w, &ev);
}

/* The instant FXT_DROP_PREFIX "N" suffix, with the argument "cause" when
 * `cause` says one. */
static int emit_marker(struct emit_ctx *ctx, uint64_t ts, uint64_t n, const char *suffix,
		       uint32_t cause)
{
	char name[64], why[FXT_DROP_CAUSE_MAX];
	int len =
	    snprintf(name, sizeof(name), FXT_DROP_PREFIX "%llu%s", (unsigned long long)n, suffix);

	cause_text(cause, why, sizeof(why));
	return emit_fxt_instant(ctx, ts, name, len, why);
}

int conv_emit_drops(struct emit_ctx *ctx, uint64_t ts)
{
	return emit_marker(ctx, ts, ctx->dropped, FXT_DROP_SUFFIX, ctx->drop_cause);
}

int conv_emit_overwritten(struct emit_ctx *ctx, uint64_t ts)
{
	return emit_marker(ctx, ts, ctx->overwritten, FXT_OVERWRITE_SUFFIX, 0);
}

/* The instant "fxt: not sampled: REASON" (include/fxt/format.h). */
static int emit_unsampled(struct emit_ctx *ctx, uint64_t ts, unsigned code)
{
	char name[160];
	int len =
	    snprintf(name, sizeof(name), FXT_UNSAMPLED_PREFIX "%s", fxt_unsampled_reason(code));

	return emit_fxt_instant(ctx, ts, name, len, "");
}

/* With loc_args, the argument FXT_LOC_ARG of a function's slice in *a:
 * 1, else 0.  Before conv_function_refs(): interning may evict. */
static unsigned loc_arg(struct emit_ctx *ctx, struct sym_entry *e, struct fxt_arg *a)
{
	if (!ctx->com->loc_args || !e->loc)
		return 0;
	memset(a, 0, sizeof(*a));
	a->type = FXT_ARG_STRING;
	a->name = fxt_writer_string_cached(ctx->w, &ctx->com->loc_key_slot, FXT_LOC_ARG,
					   strlen(FXT_LOC_ARG));
	a->v.str = fxt_writer_string_cached(ctx->w, &e->loc_slot, e->loc, e->loc_len);
	ctx->names->epoch++;
	return 1;
}

/* With loc_args: the refs of the argument "loc" of a function's slices,
 * as one word in e->loc_word (0 when not both indexed).  Whether a slot
 * moved (a string registered: others may be evicted). */
static bool loc_refs(struct emit_ctx *ctx, struct sym_entry *e)
{
	struct fxt_string_slot key = ctx->com->loc_key_slot, val = e->loc_slot;
	struct fxt_sref k, v;

	e->loc_word = 0;
	if (!e->loc)
		return false;
	k = fxt_writer_string_cached(ctx->w, &ctx->com->loc_key_slot, FXT_LOC_ARG,
				     strlen(FXT_LOC_ARG));
	v = fxt_writer_string_cached(ctx->w, &e->loc_slot, e->loc, e->loc_len);
	if (!fxt_strref_is_inline(k.ref) && !fxt_strref_is_inline(v.ref) && k.ref && v.ref)
		e->loc_word = fxt_arg_header(FXT_ARG_STRING, 1, k.ref, v.ref);
	return memcmp(&key, &ctx->com->loc_key_slot, sizeof(key)) != 0 ||
	       memcmp(&val, &e->loc_slot, sizeof(val)) != 0;
}

void conv_function_refs(struct emit_ctx *ctx, struct sym_entry *e)
{
	if (__builtin_expect(!e->loc_done, 0))
		conv_emit_loc(ctx, e);
	if (e->epoch != ctx->names->epoch) {
		/* Interning registers a string when its slot changes, which
		 * may evict other strings: a new epoch then.  The refs of one
		 * event cannot evict each other (writer.h); the location's
		 * come first. */
		bool moved = ctx->com->loc_args && loc_refs(ctx, e);
		struct fxt_string_slot cat = e->cat_slot, name = e->name_slot;
		e->cat_ref = fxt_writer_string_cached(ctx->w, &e->cat_slot, e->cat, e->cat_len);
		e->name_ref = fxt_writer_string_cached(ctx->w, &e->name_slot, e->name, e->name_len);
		if (moved || memcmp(&cat, &e->cat_slot, sizeof(cat)) != 0 ||
		    memcmp(&name, &e->name_slot, sizeof(name)) != 0)
			ctx->names->epoch++;
		e->epoch = ctx->names->epoch;
		e->ref_bits = fxt_event_header_refs(e->cat_ref.ref, e->name_ref.ref);
	}
	ctx->ev.category = e->cat_ref;
	ctx->ev.name = e->name_ref;
}

/* One event without arguments through the writer's general encoder. */
static int emit_one(struct emit_ctx *ctx, enum fxt_event_type type, uint64_t addr, uint64_t ts,
		    uint64_t end)
{
	struct sym_entry *e = conv_names_get(ctx->names, addr);
	struct fxt_arg loc;
	int err;

	if (!e)
		return -ENOMEM;
	if (type != FXT_EVENT_DURATION_END) {
		if (!e->loc_done)
			conv_emit_loc(ctx, e); /* before the slice's own refs */
		ctx->ev.nargs = loc_arg(ctx, e, &loc);
		ctx->ev.args = ctx->ev.nargs ? &loc : NULL;
	}
	conv_function_refs(ctx, e);
	ctx->ev.type = type;
	ctx->ev.ts = conv_tb_ns(&ctx->com->tb, ts);
	ctx->ev.extra = conv_tb_ns(&ctx->com->tb, end);
	ctx->events++;
	err = fxt_writer_event(ctx->w, &ctx->ev);
	ctx->ev.args = NULL;
	ctx->ev.nargs = 0;
	return err;
}

struct fxt_sref conv_arg_name(struct emit_ctx *ctx, unsigned key)
{
	char buf[16];
	const char *name = key_name(key, buf, sizeof(buf));
	uint8_t *len;

	if (key >= KEY_COUNT)
		return fxt_writer_cstring(ctx->w, name);
	/* Measured once: three names a libc call. */
	len = &ctx->com->key_len[key];
	if (!*len)
		*len = (uint8_t)strnlen(name, 255);
	return fxt_writer_string_cached(ctx->w, &ctx->com->key_slots[key], name, *len);
}

struct fxt_sref conv_inline_value(char **scratch, const char *s, size_t len, size_t max)
{
	char *d = *scratch;

	if (len > STR_MAX + MESSAGE_MAX)
		len = STR_MAX + MESSAGE_MAX;
	len = fxt_utf8_cut(d, fxt_utf8_clean(d, s, len), max);
	*scratch += len;
	return fxt_sref_inline(d, len);
}

/* One frame entry as an FXT argument; false for entries that are not
 * arguments (flows). */
static bool to_fxt_arg(struct emit_ctx *ctx, const struct recon_args *l, const struct recon_arg *a,
		       struct fxt_arg *out, char **scratch)
{
	char buf[32];
	size_t len;

	memset(out, 0, sizeof(*out));
	switch (a->type) {
	case ARGT_FLOW:
	case ARGT_REG: /* conv_fn_args() */
	case ARGT_REGSTR:
		return false;
	case EV_ARG_I64:
		out->type = FXT_ARG_INT64;
		out->v.i64 = (int64_t)a->value;
		break;
	case EV_ARG_PTR:
		out->type = FXT_ARG_POINTER;
		out->v.ptr = a->value;
		break;
	case EV_ARG_BOOL:
		out->type = FXT_ARG_BOOL;
		out->v.b = a->value != 0;
		break;
	case EV_ARG_CODE:
	case ARGT_RETURN: {
		/* A function's address, or a return address: the function it
		 * returns into, which holds the call before it.  Named through
		 * the name table: symbolized once, interned in O(1). */
		uint64_t pc = a->type == ARGT_RETURN && a->value ? a->value - 1 : a->value;
		struct sym_entry *e = pc ? conv_names_get(ctx->names, pc) : NULL;
		out->type = FXT_ARG_STRING;
		if (!e)
			out->v.str = fxt_sref_inline(pc ? "?" : "NULL", pc ? 1 : 4);
		else
			out->v.str =
			    fxt_writer_string_cached(ctx->w, &e->name_slot, e->name, e->name_len);
		break;
	}
	case EV_ARG_ERRNO:
		len = errno_name(buf, sizeof(buf), (int64_t)a->value);
		out->type = FXT_ARG_STRING;
		out->v.str = conv_inline_value(scratch, buf, len, len);
		break;
	case ARGT_STR:
		out->type = FXT_ARG_STRING;
		out->v.str = conv_inline_value(scratch, a->len ? l->bytes + a->off : "", a->len,
					       MESSAGE_MAX);
		break;
	case EV_ARG_U64:
	default:
		out->type = FXT_ARG_UINT64;
		out->v.u64 = a->value;
		break;
	}
	out->name = conv_arg_name(ctx, a->key);
	return true;
}

/* The flow events of a frame [fstart, fend), strictly inside it: the k-th
 * begin, step or end just after its start (start + (1 + k) steps), the
 * k-th "at end" one just before its end (end - (1 + k) steps), a step
 * being a nanosecond's ticks (recon_set_step()).  Perfetto binds a flow
 * event to the innermost slice open at its time: the frame's own, since
 * every entry moved the thread's time on by a step (recon_arg()). */
static int emit_flows(struct emit_ctx *ctx, struct sym_entry *e, const struct recon_args *l,
		      uint64_t fstart, uint64_t fend)
{
	static const enum fxt_event_type types[] = { FXT_EVENT_FLOW_BEGIN, FXT_EVENT_FLOW_STEP,
						     FXT_EVENT_FLOW_END };
	struct fxt_event ev;
	uint64_t kb = 0, ke = 0, step = conv_tb_step(&ctx->com->tb);
	int err = 0;

	memset(&ev, 0, sizeof(ev));
	ev.thread = ctx->ev.thread;
	for (uint32_t i = 0; i < l->n && !err; i++) {
		const struct recon_arg *a = &l->v[i];
		unsigned phase = a->key & 3;
		uint64_t ts;

		if (a->type != ARGT_FLOW || phase > EV_FLOW_END)
			continue;
		ts = a->key & FLOW_AT_END ? fend - step * (1 + ke++) : fstart + step * (1 + kb++);
		if (ts >= fend || ts <= fstart) /* a frame too short (it cannot be) */
			ts = fend > fstart + 1 ? fstart + (fend - fstart) / 2 : fstart;
		ev.type = types[phase];
		ev.ts = conv_tb_ns(&ctx->com->tb, ts);
		ev.extra = a->value;
		ev.category = fxt_writer_cstring(ctx->w, "flow");
		ctx->names->epoch++;
		conv_function_refs(ctx, e);
		ev.name = ctx->ev.name;
		err = fxt_writer_event(ctx->w, &ev);
		ctx->com->st->flows++;
		ctx->events++;
	}
	return err;
}

/* A frame with arguments (the few: libc calls): its event through the
 * general encoder, then its flow events.  `type` is a complete event
 * (ts = fstart, extra = fend) or a begun frame's END (ts = fend). */
static int emit_rich(struct emit_ctx *ctx, enum fxt_event_type type, uint64_t addr, uint64_t fstart,
		     uint64_t fend, const struct recon_args *l)
{
	struct fxt_arg args[FXT_MAX_ARGS];
	struct sym_entry *e = conv_names_get(ctx->names, addr);
	char *scratch = ctx->com->scratch;
	size_t words = 0;
	unsigned n = 0, flows = 0;
	uint32_t gen0 = fxt_writer_registrations(ctx->w);
	int err;

	if (!e)
		return -ENOMEM;
	if (type != FXT_EVENT_DURATION_END) {
		if (!e->loc_done)
			conv_emit_loc(ctx, e); /* before the slice's own refs */
		n = loc_arg(ctx, e, &args[0]);
		words = n ? fxt_arg_words(&args[0]) : 0;
	}
	/* A patched call's arguments and return value next. */
	unsigned first = n,
		 nfn = conv_fn_args(ctx, addr, l, args + first, FXT_MAX_ARGS - first, &scratch);
	for (unsigned i = 0; i < nfn; i++) {
		size_t k = fxt_arg_words(&args[first + i]);
		if (!k || words + k > ARG_WORDS_MAX)
			continue; /* too large for the record: left out */
		words += k;
		args[n++] = args[first + i];
	}
	for (uint32_t i = 0; i < l->n && n < FXT_MAX_ARGS; i++) {
		char *mark = scratch;
		size_t k;
		if (!to_fxt_arg(ctx, l, &l->v[i], &args[n], &scratch))
			continue;
		k = fxt_arg_words(&args[n]);
		if (!k || words + k > ARG_WORDS_MAX) {
			scratch = mark; /* too large for the record: left out */
			continue;
		}
		words += k;
		n++;
	}
	/* Interning the names may have evicted strings, if it registered
	 * any. */
	if (fxt_writer_registrations(ctx->w) != gen0)
		ctx->names->epoch++;
	conv_function_refs(ctx, e);
	ctx->ev.type = type;
	ctx->ev.ts = conv_tb_ns(&ctx->com->tb, type == FXT_EVENT_DURATION_END ? fend : fstart);
	ctx->ev.extra = conv_tb_ns(&ctx->com->tb, fend);
	ctx->ev.args = args;
	ctx->ev.nargs = n;
	ctx->events++;
	err = fxt_writer_event(ctx->w, &ctx->ev);
	ctx->ev.args = NULL;
	ctx->ev.nargs = 0;
	/* Most lists have none (emit_flows() clears an event first). */
	for (uint32_t i = 0; i < l->n && !flows; i++)
		flows = l->v[i].type == ARGT_FLOW;
	if (!err && flows)
		err = emit_flows(ctx, e, l, fstart, fend);
	return err;
}

/* A closed frame with entries: its complete event straight into the
 * buffer when it can be (conv_emit_call()), else through emit_rich(). */
static int emit_closed(struct emit_ctx *ctx, const struct recon_slot *v, const struct recon_args *l)
{
	int err = conv_emit_call(ctx, v, l);

	if (err)
		return err < 0 ? err : 0;
	return emit_rich(ctx, FXT_EVENT_DURATION_COMPLETE, v->addr, v->start, v->end, l);
}

static const char *const stream_names[] = { "?", "stdout", "stderr", "syslog" };

/* A log line: an FXT log record (for tools that read them) and an instant
 * event (what Perfetto shows), category "log", named after the line; the
 * line is its argument "message" too when the name is cut (over
 * LOG_NAME_MAX bytes): a shorter one is in the archive twice, not three
 * times. */
static int emit_log_line(struct emit_ctx *ctx, uint64_t ts, const struct log_line *line)
{
	struct fxt_arg args[3];
	struct fxt_event ev;
	char *text = ctx->com->scratch;
	size_t len = fxt_utf8_cut(text, fxt_utf8_clean(text, line->text, line->len), MESSAGE_MAX);
	size_t name_len = fxt_utf8_cut(text, len, LOG_NAME_MAX);
	uint32_t gen0 = fxt_writer_registrations(ctx->w);
	unsigned n = 0;
	int err;

	ts = conv_tb_ns(&ctx->com->tb, ts);
	err = fxt_writer_log(ctx->w, ts, ctx->ev.thread, text, len);
	if (err < 0)
		return err;
	memset(args, 0, sizeof(args));
	if (name_len < len) {
		args[n].type = FXT_ARG_STRING;
		args[n].name = fxt_writer_cstring(ctx->w, "message");
		args[n++].v.str = fxt_sref_inline(text, len);
	}
	args[n].type = FXT_ARG_STRING;
	args[n].name = fxt_writer_cstring(ctx->w, "stream");
	args[n++].v.str =
	    fxt_writer_cstring(ctx->w, stream_names[line->stream < 4 ? line->stream : 0]);
	if (line->stream == EV_LOG_SYSLOG) {
		args[n].type = FXT_ARG_INT64;
		args[n].name = fxt_writer_cstring(ctx->w, "priority");
		args[n++].v.i64 = line->prio;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = ts;
	ev.thread = ctx->ev.thread;
	ev.category = fxt_writer_cstring(ctx->w, "log");
	ev.name = fxt_sref_inline(text, name_len);
	ev.args = args;
	ev.nargs = n;
	/* Interning the fixed strings may have evicted others, the first
	 * time or after other strings took their slots. */
	if (fxt_writer_registrations(ctx->w) != gen0)
		ctx->names->epoch++;
	ctx->com->st->log_lines++;
	ctx->events++;
	return fxt_writer_event(ctx->w, &ev);
}

/* Complete events of indexed refs and no arguments. */
#define COMPLETE_WORDS	 FXT_COMPLETE_INDEXED_WORDS
#define COMPLETE_PER_RUN (FXT_MAX_RECORD_WORDS / COMPLETE_WORDS)

/* Encodes complete events from v[0 .. k) into `out` up to the first
 * whose refs must be (re)interned (*e: its entry, NULL when out of
 * memory) or that has arguments (`args` NULL: none has).  Returns how
 * many it encoded. */
static inline __attribute__((always_inline)) size_t
encode_run(struct sym_table *names, uint64_t hdr, const struct conv_tb *tb,
	   const struct recon_slot *v, struct recon_args *const *args, size_t k, uint64_t *out,
	   struct sym_entry **e)
{
	uint64_t *p = out;
	size_t i;

	for (i = 0; i < k; i++) {
		*e = conv_names_get(names, v[i].addr);
		if (__builtin_expect(!*e || (*e)->epoch != names->epoch || (args && args[i]), 0))
			break;
		p[0] = hdr | (*e)->ref_bits;
		p[1] = conv_tb_ns(tb, v[i].start);
		p[2] = conv_tb_ns(tb, v[i].end);
		p += COMPLETE_WORDS;
	}
	return i;
}

/* encode_run() with loc_args: 4 words (the argument "loc") for the slices
 * of a function with a location, 3 for the others; stops also at a slice
 * whose location is not one word (the general encoder writes it).  *words:
 * the words encoded. */
static size_t encode_run_loc(struct emit_ctx *ctx, const struct recon_slot *v,
			     struct recon_args *const *args, size_t k, uint64_t *out, size_t *words,
			     struct sym_entry **e)
{
	const uint64_t hdr = ctx->hdr, hdr_loc = ctx->hdr_loc;
	const struct conv_tb *tb = &ctx->com->tb;
	struct sym_table *names = ctx->names;
	uint64_t *p = out;
	size_t i;

	for (i = 0; i < k; i++) {
		*e = conv_names_get(names, v[i].addr);
		if (!*e || (*e)->epoch != names->epoch || (args && args[i]) ||
		    ((*e)->loc && !(*e)->loc_word))
			break;
		p[1] = conv_tb_ns(tb, v[i].start);
		if ((*e)->loc_word) {
			p[0] = hdr_loc | (*e)->ref_bits;
			p[2] = (*e)->loc_word;
			p[3] = conv_tb_ns(tb, v[i].end);
			p += COMPLETE_WORDS + 1;
		} else {
			p[0] = hdr | (*e)->ref_bits;
			p[2] = conv_tb_ns(tb, v[i].end);
			p += COMPLETE_WORDS;
		}
	}
	*words = (size_t)(p - out);
	return i;
}

/* emit_slices() with loc_args. */
static int emit_slices_loc(struct emit_ctx *ctx, const struct recon_slot *v,
			   struct recon_args *const *args, size_t n)
{
	const size_t per_run = FXT_MAX_RECORD_WORDS / (COMPLETE_WORDS + 1);

	while (n) {
		size_t k = n < per_run ? n : per_run, i, words;
		uint64_t *out = fxt_writer_reserve(ctx->w, k * (COMPLETE_WORDS + 1));
		struct sym_entry *e = NULL;
		int err = 0;

		if (!out)
			return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
		i = encode_run_loc(ctx, v, args, k, out, &words, &e);
		fxt_writer_commit(ctx->w, words);
		ctx->events += i;
		v += i;
		n -= i;
		if (args)
			args += i;
		if (i == k)
			continue;
		/* Writer calls: after the commit. */
		if (!e)
			return -ENOMEM;
		if (e->epoch != ctx->names->epoch && !(args && *args)) {
			conv_function_refs(ctx, e); /* then the same slice again */
			continue;
		}
		/* Arguments, or a location that is no word: the general encoder. */
		err = args && *args
			  ? emit_closed(ctx, v, *args)
			  : emit_one(ctx, FXT_EVENT_DURATION_COMPLETE, v->addr, v->start, v->end);
		if (err < 0)
			return err;
		v++;
		n--;
		if (args)
			args++;
	}
	return 0;
}

/* The sink's hot path: a run of complete events, encoded straight into
 * the writer's buffer.  A function whose refs must be (re)interned first,
 * which writes string records, ends the reservation, and so does a frame
 * with arguments (general encoder).  (After a writer error, refs may be
 * inline, but then nothing is written: the reservation fails.) */
static int emit_slices(void *vctx, const struct recon_slot *v, struct recon_args *const *args,
		       size_t n)
{
	struct emit_ctx *ctx = vctx;
	struct sym_table *names = ctx->names;
	const uint64_t hdr = ctx->hdr;

	if (!hdr) {
		/* An inline thread ref (the writer failed): the slow way. */
		for (size_t i = 0; i < n; i++) {
			int err = args && args[i] ? emit_closed(ctx, &v[i], args[i])
						  : emit_one(ctx, FXT_EVENT_DURATION_COMPLETE,
							     v[i].addr, v[i].start, v[i].end);
			if (err < 0)
				return err;
		}
		return 0;
	}
	if (ctx->com->loc_args)
		return emit_slices_loc(ctx, v, args, n);
	/* A libc call on its own (recon_leaf()). */
	if (n == 1 && args && args[0])
		return emit_closed(ctx, v, args[0]);
	while (n) {
		size_t k = n < COMPLETE_PER_RUN ? n : COMPLETE_PER_RUN, i;
		uint64_t *out = fxt_writer_reserve(ctx->w, k * COMPLETE_WORDS);
		struct sym_entry *e = NULL;

		if (!out)
			return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
		/* Two copies of the loop: most runs have no arguments at all. */
		i = args ? encode_run(names, hdr, &ctx->com->tb, v, args, k, out, &e)
			 : encode_run(names, hdr, &ctx->com->tb, v, NULL, k, out, &e);
		fxt_writer_commit(ctx->w, i * COMPLETE_WORDS);
		ctx->events += i;
		v += i;
		n -= i;
		if (args)
			args += i;
		if (i < k) {
			/* Writer calls: after the commit. */
			if (!e)
				return -ENOMEM;
			if (args && *args) {
				int err = emit_closed(ctx, v, *args);
				if (err < 0)
					return err;
				v++;
				n--;
				args++;
			} else {
				conv_function_refs(ctx, e);
			}
		}
	}
	return 0;
}

static int emit_event(void *vctx, enum recon_kind kind, uint64_t addr, uint64_t start, uint64_t end,
		      const struct recon_args *args)
{
	struct emit_ctx *ctx = vctx;

	switch (kind) {
	case RECON_BEGIN:
		return emit_one(ctx, FXT_EVENT_DURATION_BEGIN, addr, start, 0);
	case RECON_END:
		if (args)
			return emit_rich(ctx, FXT_EVENT_DURATION_END, addr, start, end, args);
		return emit_one(ctx, FXT_EVENT_DURATION_END, addr, end, 0);
	case RECON_MARK:
		break;
	}
	if (addr == MARK_LOG) {
		struct log_line line;
		if (!ctx->logs || !conv_log_pop(ctx->logs, &line))
			return 0; /* cannot happen: one line per mark */
		return emit_log_line(ctx, start, &line);
	}
	if (addr == MARK_OVERWRITTEN)
		return conv_emit_overwritten(ctx, start);
	if (addr >= MARK_UNSAMPLED)
		return emit_unsampled(ctx, start, (unsigned)(addr - MARK_UNSAMPLED));
	return conv_emit_drops(ctx, start);
}

const struct recon_sink conv_sink = {
	.slices = emit_slices,
	.event = emit_event,
	.short_call = conv_short_call,
	.short_children = conv_short_children,
	.once = conv_emit_once,
};

void conv_emit_init(struct emit_ctx *ctx, struct emit_common *com, uint64_t pid, uint64_t tid,
		    uint64_t dropped, struct log_lines *logs)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->w = com->w;
	ctx->names = &com->names;
	ctx->com = com;
	ctx->dropped = dropped;
	ctx->logs = logs;
	ctx->ev.type = FXT_EVENT_DURATION_COMPLETE;
	ctx->ev.thread = fxt_writer_thread(com->w, pid, tid);
	com->names.epoch++; /* registering the thread may have written strings */
	if (ctx->ev.thread.index != FXT_THREADREF_INLINE) {
		ctx->hdr = fxt_event_header(COMPLETE_WORDS, FXT_EVENT_DURATION_COMPLETE, 0,
					    ctx->ev.thread.index, 0, 0);
		ctx->hdr_loc = fxt_event_header(COMPLETE_WORDS + 1, FXT_EVENT_DURATION_COMPLETE, 1,
						ctx->ev.thread.index, 0, 0);
	}
}
