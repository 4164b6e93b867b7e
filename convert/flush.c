/* The flusher: spool -> FXT archive (see flush.h).
 *
 * One job, the translation of one process's spool records into FXT events,
 * in one file because its parts share the per-thread state and the name
 * table on the hot loop (feed_chunk -> tagged -> recon -> emit): the name
 * table, the emitters, the chunk walk, tagged-record decoding, log line
 * assembly, the sync pre-pass and the counters.  Splitting it along those
 * lines is planned (issue 16). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/flush.h"
#include "convert/recon.h"
#include "convert/stackchart.h"
#include "spool/libc_table.h"
#include "spool/recording.h"
#include "spool/records.h"

/* The tag bits of a slot's second word: 0 for a hook record. */
#define TAG_BITS (EV_TAG_MASK << EV_TAG_SHIFT)

/* Koid of a thread's sample track: a thread of its own next to it. */
#define SAMPLE_KOID_BIT (1ull << 30)

/* Flow ids the flusher makes (sync pairs) count from here: above every
 * sequence agent_new_flow_id() hands out. */
#define FLUSH_FLOW_SEQ (1u << 31)

/* Strings shown in arguments and log events are cut here. */
#define MESSAGE_MAX   4096u
#define LOG_NAME_MAX  200u
#define LOG_LINE_MAX  MESSAGE_MAX /* a longer run without '\n' is split */
#define STR_MAX	      (EV_MAX_SLOTS * EV_DATA_BYTES)
#define ARG_WORDS_MAX 3000u /* per event, under FXT_MAX_RECORD_WORDS */

/* ------------------------------------------------------------ name table */

/* Entries of the direct-mapped cache in front of the hash table. */
#define RECENT 256u

/* Per unique function address (symbolized once): its names, the writer's
 * string slots and the refs as header bits, so that an event of a recent
 * function costs one compare and one epoch check. */
struct sym_entry {
	uint64_t addr; /* 0 = free */
	const char *name, *cat;
	char *owned; /* the name when made here ("libc#N"), freed with the table */
	size_t name_len, cat_len;
	struct fxt_string_slot name_slot, cat_slot;
	/* The refs last returned by the writer, valid while table->epoch is
	 * still `epoch`: no string was registered since, so none evicted. */
	struct fxt_sref name_ref, cat_ref;
	uint64_t ref_bits; /* the refs in an event header word, for the same epoch */
	uint64_t epoch;
};

struct sym_table {
	struct sym_entry *v;
	size_t cap, used;	 /* cap is a power of two */
	flush_lookup_fn *lookup; /* symbols: flush_input's lookup, or fxt_sym's */
	void *lookup_ctx;
	uint64_t epoch; /* bumped whenever a string may have been registered */
	/* A direct-mapped cache of recent entries: most events hit it. */
	struct sym_entry *recent[RECENT];
};

static size_t slot_of(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int table_grow(struct sym_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct sym_entry *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;
		if (!t->v[i].addr)
			continue;
		for (j = slot_of(t->v[i].addr, cap); v[j].addr; j = (j + 1) & (cap - 1))
			;
		v[j] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	memset(t->recent, 0, sizeof(t->recent));
	return 0;
}

static const struct fxt_sym_info *sym_lookup(void *sym, uint64_t addr)
{
	return fxt_sym_lookup(sym, addr);
}

static struct sym_entry *table_get_slow(struct sym_table *t, uint64_t addr)
{
	struct sym_entry **r = &t->recent[(addr >> 4) & (RECENT - 1)];
	const struct fxt_sym_info *info;
	struct sym_entry *e;
	size_t j;

	if (t->used * 2 >= t->cap && table_grow(t) < 0)
		return NULL;
	r = &t->recent[(addr >> 4) & (RECENT - 1)];
	for (j = slot_of(addr, t->cap); t->v[j].addr; j = (j + 1) & (t->cap - 1)) {
		if (t->v[j].addr == addr)
			return *r = &t->v[j];
	}
	e = &t->v[j];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	if (ev_tag(addr) == EV_TAG_CALL) {
		/* A libc call: named after the wrapped function. */
		const struct agent_fn_info *fi = agent_fn_lookup(ev_call_fn(addr));
		if (fi) {
			e->name = fi->name;
			e->cat = fi->category;
		} else {
			char buf[32];
			snprintf(buf, sizeof(buf), "libc#%u", ev_call_fn(addr));
			e->owned = strdup(buf);
			e->name = e->owned ? e->owned : "libc#?";
			e->cat = "libc";
		}
	} else if (addr == FLUSH_AGENT_PC) {
		e->name = FLUSH_AGENT_FRAME;
		e->cat = FLUSH_AGENT_FRAME;
	} else {
		info = t->lookup ? t->lookup(t->lookup_ctx, addr) : NULL;
		e->name = info && info->name ? info->name : "?";
		e->cat = info && info->module ? info->module : "";
	}
	e->name_len = strlen(e->name);
	e->cat_len = strlen(e->cat);
	e->epoch = 0; /* epochs start at 1 */
	t->used++;
	return *r = e;
}

static void table_free(struct sym_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].owned);
	free(t->v);
}

/* The entry of `addr`, symbolized on first sight: one compare for the
 * recent ones.  NULL when out of memory. */
static inline struct sym_entry *table_get(struct sym_table *t, uint64_t addr)
{
	struct sym_entry *e = t->recent[(addr >> 4) & (RECENT - 1)];

	if (__builtin_expect(e && e->addr == addr, 1))
		return e;
	return table_get_slow(t, addr);
}

/* ------------------------------------------------------------ state */

/* The types of the entries the flusher attaches to frames (recon_arg):
 * enum ev_arg_type's values for arguments read from the spool, then ours.
 * An entry's key is an agent_key, or one of KEY_* below. */
enum {
	ARGT_STR = 16,	  /* a string: its bytes are the entry's */
	ARGT_FLOW = 17,	  /* a flow event: key = phase | FLOW_AT_END, value = id */
	ARGT_RETURN = 18, /* a return address (a call's caller): symbolized */
};
#define FLOW_AT_END 4u

enum {
	KEY_ERROR = 256,	 /* "error": the name of an errno result */
	KEY_STREAM_OFFSET = 257, /* "stream_offset" of a pipe transfer */
	KEY_COUNT = 258,
};

/* recon_mark() cookies. */
enum { MARK_DROPS = 0, MARK_LOG = 1 };

/* A change of the heap counter, from any thread. */
struct counter_delta {
	uint64_t ts;
	int64_t delta;
	uint64_t seq; /* stable order among equal timestamps */
};

/* A flow event the sync pairing binds to a SYNC record. */
struct sync_action {
	uint64_t pos; /* the SYNC slot's offset in the spool: its identity */
	uint64_t id;
	unsigned phase; /* key of an ARGT_FLOW entry */
};

/* One flush: what the threads' passes share. */
struct flusher {
	struct fxt_writer *w;
	const struct flush_input *in;
	struct flush_stats *st;
	struct sym_table names;
	struct fxt_string_slot key_slots[KEY_COUNT];
	char *scratch; /* SCRATCH bytes: strings of one event */
	struct counter_delta *deltas;
	size_t ndeltas, deltas_cap;
	struct sync_action *actions;
	size_t nactions;
	unsigned char *sampled; /* by serial: the thread has samples */
	uint64_t sample_period;
	/* Added to every timestamp written (see flush.h, time_base). */
	uint64_t shift;
};
#define SCRATCH (FXT_MAX_ARGS * (STR_MAX + 64) + MESSAGE_MAX)

/* Makes room for `need` elements of `size` bytes in *v (of *cap), by
 * doubling.  Returns 0 or -ENOMEM (*v unchanged). */
static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	void *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* ------------------------------------------------------------ strings */

static const char *key_name(unsigned key, char *buf, size_t cap)
{
	const char *name;

	if (key == KEY_ERROR)
		return "error";
	if (key == KEY_STREAM_OFFSET)
		return "stream_offset";
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

struct log_line {
	uint64_t ts;
	unsigned stream, prio;
	size_t len;
	char *text;
};

struct emit_ctx {
	struct fxt_writer *w;
	struct sym_table *names;
	struct flusher *fl;
	/* A template: type and thread set once; per event only the times
	 * and refs change (zeroing a struct per event is measurable). */
	struct fxt_event ev;
	uint64_t dropped; /* for the drop instant (the recon's mark) */
	/* The header word of this thread's complete events but their refs
	 * (0 when the thread ref is inline: no fast path). */
	uint64_t hdr;
	/* Log lines waiting for their marks, in order (the thread's track). */
	struct log_line *lines;
	size_t lhead, ltail, lcap;
};

static int emit_drops(struct fxt_writer *w, struct fxt_tref thread, uint64_t ts, uint64_t n)
{
	char name[64];
	struct fxt_event ev;

	snprintf(name, sizeof(name), FXT_DROP_PREFIX "%llu" FXT_DROP_SUFFIX, (unsigned long long)n);
	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = ts;
	ev.thread = thread;
	ev.category = fxt_writer_cstring(w, "fxt");
	ev.name = fxt_writer_cstring(w, name);
	return fxt_writer_event(w, &ev);
}

/* The refs of a function's name and category, interned on first use and
 * after any possible eviction, in ctx->ev and as header bits in the entry. */
static void function_refs(struct emit_ctx *ctx, struct sym_entry *e)
{
	if (e->epoch != ctx->names->epoch) {
		/* Interning registers a string when its slot changes, which
		 * may evict other strings: a new epoch then.  The two refs of
		 * one event cannot evict each other (writer.h). */
		struct fxt_string_slot cat = e->cat_slot, name = e->name_slot;
		e->cat_ref = fxt_writer_string_cached(ctx->w, &e->cat_slot, e->cat, e->cat_len);
		e->name_ref = fxt_writer_string_cached(ctx->w, &e->name_slot, e->name, e->name_len);
		if (memcmp(&cat, &e->cat_slot, sizeof(cat)) != 0 ||
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
	struct sym_entry *e = table_get(ctx->names, addr);

	if (!e)
		return -ENOMEM;
	function_refs(ctx, e);
	ctx->ev.type = type;
	ctx->ev.ts = ts + ctx->fl->shift;
	ctx->ev.extra = end + ctx->fl->shift;
	return fxt_writer_event(ctx->w, &ctx->ev);
}

/* An argument's name, interned once per key. */
static struct fxt_sref arg_name(struct emit_ctx *ctx, unsigned key)
{
	char buf[16];
	const char *name = key_name(key, buf, sizeof(buf));

	if (key >= KEY_COUNT)
		return fxt_writer_cstring(ctx->w, name);
	return fxt_writer_string_cached(ctx->w, &ctx->fl->key_slots[key], name, strlen(name));
}

/* A string value: cleaned into *scratch (advanced), cut at `max` bytes,
 * as an inline ref (paths and log lines are mostly unique). */
static struct fxt_sref inline_value(char **scratch, const char *s, size_t len, size_t max)
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
		struct sym_entry *e = pc ? table_get(ctx->names, pc) : NULL;
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
		out->v.str = inline_value(scratch, buf, len, len);
		break;
	case ARGT_STR:
		out->type = FXT_ARG_STRING;
		out->v.str =
		    inline_value(scratch, a->len ? l->bytes + a->off : "", a->len, MESSAGE_MAX);
		break;
	case EV_ARG_U64:
	default:
		out->type = FXT_ARG_UINT64;
		out->v.u64 = a->value;
		break;
	}
	out->name = arg_name(ctx, a->key);
	return true;
}

/* The flow events of a frame [fstart, fend), strictly inside it: the k-th
 * begin, step or end just after its start (start + 1 + k), the k-th "at
 * end" one just before its end (end - 1 - k).  Perfetto binds a flow
 * event to the innermost slice open at its time: the frame's own, since
 * every entry moved the thread's time on by a tick (recon_arg()). */
static int emit_flows(struct emit_ctx *ctx, struct sym_entry *e, const struct recon_args *l,
		      uint64_t fstart, uint64_t fend)
{
	static const enum fxt_event_type types[] = { FXT_EVENT_FLOW_BEGIN, FXT_EVENT_FLOW_STEP,
						     FXT_EVENT_FLOW_END };
	struct fxt_event ev;
	uint64_t kb = 0, ke = 0;
	int err = 0;

	memset(&ev, 0, sizeof(ev));
	ev.thread = ctx->ev.thread;
	for (uint32_t i = 0; i < l->n && !err; i++) {
		const struct recon_arg *a = &l->v[i];
		unsigned phase = a->key & 3;
		uint64_t ts;

		if (a->type != ARGT_FLOW || phase > EV_FLOW_END)
			continue;
		ts = a->key & FLOW_AT_END ? fend - 1 - ke++ : fstart + 1 + kb++;
		if (ts >= fend)
			ts = fend - 1;
		if (ts <= fstart)
			ts = fend > fstart + 1 ? fstart + 1 : fstart;
		ev.type = types[phase];
		ev.ts = ts + ctx->fl->shift;
		ev.extra = a->value;
		ev.category = fxt_writer_cstring(ctx->w, "flow");
		ctx->names->epoch++;
		function_refs(ctx, e);
		ev.name = ctx->ev.name;
		err = fxt_writer_event(ctx->w, &ev);
		ctx->fl->st->flows++;
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
	struct sym_entry *e = table_get(ctx->names, addr);
	char *scratch = ctx->fl->scratch;
	size_t words = 0;
	unsigned n = 0;
	int err;

	if (!e)
		return -ENOMEM;
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
	/* Interning the names may have evicted strings. */
	ctx->names->epoch++;
	function_refs(ctx, e);
	ctx->ev.type = type;
	ctx->ev.ts = (type == FXT_EVENT_DURATION_END ? fend : fstart) + ctx->fl->shift;
	ctx->ev.extra = fend + ctx->fl->shift;
	ctx->ev.args = args;
	ctx->ev.nargs = n;
	err = fxt_writer_event(ctx->w, &ctx->ev);
	ctx->ev.args = NULL;
	ctx->ev.nargs = 0;
	if (!err)
		err = emit_flows(ctx, e, l, fstart, fend);
	return err;
}

static const char *const stream_names[] = { "?", "stdout", "stderr", "syslog" };

/* A log line: an FXT log record (for tools that read them) and an instant
 * event (what Perfetto shows), category "log", named after the line. */
static int emit_log_line(struct emit_ctx *ctx, uint64_t ts, const struct log_line *line)
{
	struct fxt_arg args[3];
	struct fxt_event ev;
	char *text = ctx->fl->scratch;
	size_t len = fxt_utf8_cut(text, fxt_utf8_clean(text, line->text, line->len), MESSAGE_MAX);
	unsigned n = 0;
	int err;

	ts += ctx->fl->shift;
	err = fxt_writer_log(ctx->w, ts, ctx->ev.thread, text, len);
	if (err < 0)
		return err;
	memset(args, 0, sizeof(args));
	args[n].type = FXT_ARG_STRING;
	args[n].name = fxt_writer_cstring(ctx->w, "message");
	args[n++].v.str = fxt_sref_inline(text, len);
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
	ev.name = fxt_sref_inline(text, fxt_utf8_cut(text, len, LOG_NAME_MAX));
	ev.args = args;
	ev.nargs = n;
	ctx->names->epoch++; /* strings registered */
	ctx->fl->st->log_lines++;
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
encode_run(struct sym_table *names, uint64_t hdr, uint64_t shift, const struct recon_slot *v,
	   struct recon_args *const *args, size_t k, uint64_t *out, struct sym_entry **e)
{
	uint64_t *p = out;
	size_t i;

	for (i = 0; i < k; i++) {
		*e = table_get(names, v[i].addr);
		if (__builtin_expect(!*e || (*e)->epoch != names->epoch || (args && args[i]), 0))
			break;
		p[0] = hdr | (*e)->ref_bits;
		p[1] = v[i].start + shift;
		p[2] = v[i].end + shift;
		p += COMPLETE_WORDS;
	}
	return i;
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
			int err = args && args[i]
				      ? emit_rich(ctx, FXT_EVENT_DURATION_COMPLETE, v[i].addr,
						  v[i].start, v[i].end, args[i])
				      : emit_one(ctx, FXT_EVENT_DURATION_COMPLETE, v[i].addr,
						 v[i].start, v[i].end);
			if (err < 0)
				return err;
		}
		return 0;
	}
	while (n) {
		size_t k = n < COMPLETE_PER_RUN ? n : COMPLETE_PER_RUN, i;
		uint64_t *out = fxt_writer_reserve(ctx->w, k * COMPLETE_WORDS);
		struct sym_entry *e = NULL;

		if (!out)
			return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
		/* Two copies of the loop: most runs have no arguments at all. */
		i = args ? encode_run(names, hdr, ctx->fl->shift, v, args, k, out, &e)
			 : encode_run(names, hdr, ctx->fl->shift, v, NULL, k, out, &e);
		fxt_writer_commit(ctx->w, i * COMPLETE_WORDS);
		v += i;
		n -= i;
		if (args)
			args += i;
		if (i < k) {
			/* Writer calls: after the commit. */
			if (!e)
				return -ENOMEM;
			if (args && *args) {
				int err = emit_rich(ctx, FXT_EVENT_DURATION_COMPLETE, v->addr,
						    v->start, v->end, *args);
				if (err < 0)
					return err;
				v++;
				n--;
				args++;
			} else {
				function_refs(ctx, e);
			}
		}
	}
	return 0;
}

static int emit_event(void *vctx, enum recon_kind kind, uint64_t addr, uint64_t start, uint64_t end,
		      const struct recon_args *args)
{
	struct emit_ctx *ctx = vctx;
	int err;

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
		struct log_line *line;
		if (ctx->lhead == ctx->ltail)
			return 0; /* cannot happen: one line per mark */
		line = &ctx->lines[ctx->lhead++];
		err = emit_log_line(ctx, start, line);
		free(line->text);
		if (ctx->lhead == ctx->ltail)
			ctx->lhead = ctx->ltail = 0;
		return err;
	}
	err = emit_drops(ctx->w, ctx->ev.thread, start + ctx->fl->shift, ctx->dropped);
	ctx->names->epoch++; /* it registered strings */
	return err;
}

static const struct recon_sink flush_sink = {
	.slices = emit_slices,
	.event = emit_event,
};

/* ------------------------------------------------------------ chunks */

struct chunk_ref {
	uint64_t off, size;
	uint32_t serial, seq;
	uint64_t tid;
};

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk_ref *x = a, *y = b;

	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/* Walks the chunk chain of the spool.  Stops quietly at a bad header (a
 * spool cut short). */
static int scan_chunks(int fd, uint64_t end, struct chunk_ref **out, size_t *n)
{
	struct chunk_ref *v = NULL;
	size_t len = 0, cap = 0;
	uint64_t off = SPOOL_HEADER_SIZE;

	while (off + SPOOL_CHUNK_HEADER_SIZE <= end) {
		struct spool_chunk c;
		ssize_t got = pread(fd, &c, sizeof(c), (off_t)off);
		if (got != (ssize_t)sizeof(c) || !spool_chunk_ok(&c, off, end))
			break;
		if (c.serial) {
			if (grow((void **)&v, &cap, len + 1, sizeof(*v)) < 0) {
				free(v);
				return -ENOMEM;
			}
			v[len].off = off;
			v[len].size = c.size;
			v[len].serial = c.serial;
			v[len].seq = c.seq;
			v[len].tid = c.tid;
			len++;
		}
		off += c.size;
	}
	if (len)
		qsort(v, len, sizeof(*v), chunk_cmp);
	*out = v;
	*n = len;
	return 0;
}

/* Chunks are read in blocks (pread: cheaper here than mapping each). */
#define READ_BLOCK (256u << 10)

/* Reads the block of chunk `c` at `off` into buf: the slots from `off` to
 * *stop.  Returns 0 or -errno. */
static int read_block(int fd, const struct chunk_ref *c, uint64_t off, uint64_t *buf,
		      const uint64_t **stop)
{
	uint64_t end = c->off + c->size;
	size_t want = end - off < READ_BLOCK ? (size_t)(end - off) : READ_BLOCK;
	ssize_t got;

	do
		got = pread(fd, buf, want, (off_t)off);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got < 0 ? -errno : -EIO;
	got -= got % SPOOL_RECORD_SIZE;
	if (!got)
		return -EIO;
	*stop = buf + got / 8;
	return 0;
}

/* ------------------------------------------------------------ threads */

/* Bytes of one output stream not yet ended by a newline. */
struct log_stream {
	char *buf;
	size_t len, cap;
	uint64_t ts; /* of the record that brought the last bytes */
	unsigned prio;
};

struct thread_state {
	struct flusher *fl;
	struct emit_ctx ctx;
	struct recon r;
	struct log_stream streams[4]; /* by enum ev_log_stream */
	/* The sample track: its own thread, its own stack chart. */
	bool sampling;
	struct emit_ctx sctx;
	struct recon sr;
	struct stackchart sc;
};

/* A line of `stream`: queued for its mark, which places it among the
 * thread's frames. */
static int log_line(struct thread_state *t, unsigned stream, const char *s, size_t len)
{
	struct emit_ctx *c = &t->ctx;
	struct log_line *l;
	int err;

	err = grow((void **)&c->lines, &c->lcap, c->ltail + 1, sizeof(*c->lines));
	if (err < 0)
		return err;
	l = &c->lines[c->ltail];
	l->text = malloc(len ? len : 1);
	if (!l->text)
		return -ENOMEM;
	memcpy(l->text, s, len);
	l->len = len;
	l->stream = stream;
	l->prio = t->streams[stream].prio;
	l->ts = t->streams[stream].ts;
	c->ltail++;
	return recon_mark(&t->r, l->ts, MARK_LOG);
}

/* Bytes written to `stream` at `ts`: every line they complete is one. */
static int log_bytes(struct thread_state *t, unsigned stream, unsigned prio, uint64_t ts,
		     const char *s, size_t len)
{
	struct log_stream *ls = &t->streams[stream];
	int err = 0;

	ls->ts = ts;
	ls->prio = prio;
	while (len && !err) {
		const char *nl = memchr(s, '\n', len);
		size_t k = nl ? (size_t)(nl - s) : len;

		if (ls->len + k > LOG_LINE_MAX)
			k = LOG_LINE_MAX - ls->len;
		err = grow((void **)&ls->buf, &ls->cap, ls->len + k + 1, 1);
		if (err < 0)
			break;
		memcpy(ls->buf + ls->len, s, k);
		ls->len += k;
		s += k;
		len -= k;
		if (len && *s == '\n') {
			s++;
			len--;
		} else if (ls->len < LOG_LINE_MAX) {
			break; /* the line goes on in a later record */
		}
		err = log_line(t, stream, ls->buf, ls->len);
		ls->len = 0;
	}
	return err;
}

/* The flow events the sync pairing binds to the SYNC slot at `pos`. */
static int sync_flows(struct thread_state *t, uint64_t pos)
{
	const struct sync_action *v = t->fl->actions;
	size_t lo = 0, hi = t->fl->nactions;
	int err = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->fl->nactions && v[lo].pos == pos && !err; lo++) {
		struct recon_arg a = { .key = v[lo].phase, .type = ARGT_FLOW, .value = v[lo].id };
		err = recon_arg(&t->r, &a, NULL);
	}
	return err;
}

/* PIPE: a read gets a flow END ("at end") from each write (in the session
 * log) whose first byte it consumed; a write's own FLOW begin is in the
 * spool already. */
static int pipe_record(struct thread_state *t, const uint64_t *p)
{
	const struct flush_input *in = t->fl->in;
	uint64_t off = p[0], key = ev_pipe_key(p[1]), count = p[2];
	unsigned op = ev_pipe_op(p[1]);
	struct recon_arg a = { .key = KEY_STREAM_OFFSET, .type = EV_ARG_U64, .value = off };
	size_t lo = 0, hi = in->npipe_writes;
	int err = recon_arg(&t->r, &a, NULL);

	if (err < 0 || op != EV_PIPE_READ)
		return err;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct session_write *sw = &in->pipe_writes[mid];
		if (sw->key < key || (sw->key == key && sw->off < off))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < in->npipe_writes && !err; lo++) {
		const struct session_write *sw = &in->pipe_writes[lo];
		struct recon_arg f = { .key = EV_FLOW_END | FLOW_AT_END, .type = ARGT_FLOW };
		if (sw->key != key || sw->off - off >= count)
			break;
		f.value = sw->flow_id;
		err = recon_arg(&t->r, &f, NULL);
	}
	return err;
}

/* A libc call's frame identity for the recon and the name table: its tag
 * and function, and the function again in bits 4.. (payload bits, 0 in
 * the record's identity), where the name table's cache of recent
 * entries looks: without it, every call would share one cache entry. */
static inline uint64_t call_frame(uint64_t w1)
{
	return (w1 & EV_CALL_ADDR_MASK) | ((uint64_t)ev_call_fn(w1) << 4);
}

/* How many of the `want` slots from p are DATA (or FRAME) slots. */
static size_t payload_run(const uint64_t *p, const uint64_t *stop, size_t want, unsigned tag)
{
	size_t n = 0;

	while (n < want && p + 2 * n < stop && ev_tag(p[2 * n + 1]) == tag)
		n++;
	return n;
}

/* A tagged record at p (slots up to `stop`; `more`: the chunk goes on
 * after stop).  Returns the slots it used (at least 1), 0 when it needs
 * slots past `stop` (read again from p), or -errno.  Whatever the slots
 * say, this never reads outside [p, stop): torn records, orphan payload
 * slots and unknown tags are skipped. */
static long tagged(struct thread_state *t, const uint64_t *p, const uint64_t *stop, bool more,
		   uint64_t pos)
{
	const uint64_t w0 = p[0], w1 = p[1];
	struct flush_stats *st = t->fl->st;
	struct recon *r = &t->r;
	struct recon_arg a = { 0 };
	char bytes[STR_MAX];
	size_t want, got, len;
	int err = 0;

	switch (ev_tag(w1)) {
	case EV_TAG_CALL: {
		uint64_t frame = call_frame(w1), payload = w1 & EV_PAYLOAD_MASK;
		const struct agent_fn_info *fi = agent_fn_lookup(ev_call_fn(w1));

		if (!(w1 & EV_EXIT_BIT)) {
			st->libc_calls++;
			err = recon_feed(r, w0, frame);
			if (!err && payload) {
				a.key = AGENT_KEY_CALLER;
				a.type = ARGT_RETURN;
				a.value = payload;
				err = recon_arg(r, &a, NULL);
			}
			return err < 0 ? err : 1;
		}
		/* The result, unless an ARG carried it or the frame is not the
		 * innermost one (then it closes frames left open above it). */
		if (fi && fi->res != AGENT_RES_VOID && payload != EV_RESULT_SPILLED &&
		    recon_top(r) == frame) {
			a.key = AGENT_KEY_RESULT;
			a.type = fi->res == AGENT_RES_PTR ? EV_ARG_PTR : EV_ARG_I64;
			a.value =
			    fi->res == AGENT_RES_PTR ? payload : (uint64_t)ev_payload_int(payload);
			err = recon_arg(r, &a, NULL);
			if (!err && fi->res == AGENT_RES_ERRNO && a.value) {
				a.key = KEY_ERROR;
				a.type = EV_ARG_ERRNO;
				err = recon_arg(r, &a, NULL);
			}
		}
		if (!err)
			err = recon_feed(r, w0, frame | SPOOL_EXIT_BIT);
		return err < 0 ? err : 1;
	}
	case EV_TAG_ARG:
		a.key = ev_key(w1);
		a.type = ev_arg_type(w1);
		if (a.type > EV_ARG_BOOL)
			a.type = EV_ARG_U64;
		a.value = w0;
		err = recon_arg(r, &a, NULL);
		return err < 0 ? err : 1;
	case EV_TAG_STR:
		len = w0 < STR_MAX ? (size_t)w0 : STR_MAX;
		want = ev_data_slots(len);
		got = payload_run(p + 2, stop, want, EV_TAG_DATA);
		if (got < want && more && p + 2 + 2 * got >= stop)
			return 0;
		if (len > got * EV_DATA_BYTES)
			len = got * EV_DATA_BYTES; /* torn: what there is */
		ev_get_data(p + 2, bytes, len);
		a.key = ev_key(w1);
		a.type = ARGT_STR;
		a.len = (uint32_t)len;
		err = recon_arg(r, &a, bytes);
		return err < 0 ? err : (long)(1 + got);
	case EV_TAG_FLOW:
		a.key = ev_flow_phase(w1) | (w1 & EV_FLOW_AT_END ? FLOW_AT_END : 0);
		a.type = ARGT_FLOW;
		a.value = w0;
		err = recon_arg(r, (a.key & 3) <= EV_FLOW_END ? &a : NULL, NULL);
		return err < 0 ? err : 1;
	case EV_TAG_SYNC:
		err = recon_arg(r, NULL, NULL);
		if (!err && t->fl->nactions)
			err = sync_flows(t, pos);
		return err < 0 ? err : 1;
	case EV_TAG_LOG: {
		unsigned stream = ev_log_stream(w1), prio = ev_log_prio(w1);
		len = (size_t)ev_log_len(w1);
		if (len > STR_MAX)
			len = STR_MAX;
		want = ev_data_slots(len);
		got = payload_run(p + 2, stop, want, EV_TAG_DATA);
		if (got < want && more && p + 2 + 2 * got >= stop)
			return 0;
		if (len > got * EV_DATA_BYTES)
			len = got * EV_DATA_BYTES;
		if (stream >= EV_LOG_STDOUT && stream <= EV_LOG_SYSLOG) {
			ev_get_data(p + 2, bytes, len);
			err = log_bytes(t, stream, prio, w0, bytes, len);
			/* A syslog message is a line of its own. */
			if (!err && stream == EV_LOG_SYSLOG && t->streams[stream].len) {
				err = log_line(t, stream, t->streams[stream].buf,
					       t->streams[stream].len);
				t->streams[stream].len = 0;
			}
		}
		return err < 0 ? err : (long)(1 + got);
	}
	case EV_TAG_COUNTER:
		if (ev_counter_id(w1) == EV_COUNTER_HEAP) {
			struct flusher *fl = t->fl;
			err = grow((void **)&fl->deltas, &fl->deltas_cap, fl->ndeltas + 1,
				   sizeof(*fl->deltas));
			if (err < 0)
				return err;
			fl->deltas[fl->ndeltas].ts = w0;
			fl->deltas[fl->ndeltas].delta = ev_counter_delta(w1);
			fl->deltas[fl->ndeltas].seq = fl->ndeltas;
			fl->ndeltas++;
		}
		return 1;
	case EV_TAG_SAMPLE: {
		uint64_t pcs[EV_SAMPLE_MAX_DEPTH + 1];
		unsigned depth = ev_sample_depth(w1);
		if (depth > EV_SAMPLE_MAX_DEPTH)
			depth = EV_SAMPLE_MAX_DEPTH;
		want = (depth + 1) / 2;
		got = payload_run(p + 2, stop, want, EV_TAG_FRAME);
		if (got < want && more && p + 2 + 2 * got >= stop)
			return 0;
		if (depth > 2 * got)
			depth = (unsigned)(2 * got);
		for (size_t i = 0; i < got; i++) {
			pcs[2 * i] = p[2 + 2 * i];
			pcs[2 * i + 1] = ev_frame_pc(p[3 + 2 * i]);
		}
		if (t->sampling && depth) {
			const struct flush_input *in = t->fl->in;
			unsigned skip = 0;
			/* The agent's innermost frames: one "fxtrace" frame. */
			while (skip < depth && pcs[skip] >= in->agent_lo &&
			       pcs[skip] < in->agent_hi)
				skip++;
			if (skip) {
				pcs[skip - 1] = FLUSH_AGENT_PC;
				skip--;
			}
			err = stackchart_sample(&t->sc, w0, pcs + skip, depth - skip);
			if (err == -ENOSYS) {
				t->sampling = false; /* no stack charts in this build */
				err = 0;
			}
			st->samples++;
		}
		return err < 0 ? err : (long)(1 + got);
	}
	case EV_TAG_PIPE:
		if (p + 2 >= stop)
			return more ? 0 : 1;
		if (ev_tag(p[3]) != EV_TAG_DATA)
			return 1; /* torn */
		err = pipe_record(t, p);
		return err < 0 ? err : 2;
	default: /* DATA or FRAME without a head, or a tag of a later agent */
		return 1;
	}
}

/* Where the drop instant of a thread goes: before the first record at or
 * after `ts` (NO_MARK once placed or when there is none). */
#define NO_MARK UINT64_MAX

/* Feeds one chunk's records to the reconstruction.  Hook records (tag 0:
 * nearly all) take the first, cheapest branch.  Not inlined: on its own,
 * the loop keeps its state in registers. */
static __attribute__((noinline)) int feed_chunk(struct thread_state *t, const struct chunk_ref *c,
						uint64_t *buf, uint64_t *mark_ts)
{
	uint64_t off = c->off + SPOOL_CHUNK_HEADER_SIZE, end = c->off + c->size;
	/* Locals, not pointers the recon's stores might alias: registers. */
	uint64_t records = 0, mts = *mark_ts;
	struct recon *r = &t->r;
	int err = 0;

	while (off < end && !err) {
		const uint64_t *p, *stop;
		bool more;

		err = read_block(t->fl->in->spool_fd, c, off, buf, &stop);
		if (err < 0)
			break;
		more = off + (uint64_t)((const char *)stop - (const char *)buf) < end;
		for (p = buf; p < stop; p += 2) {
			const uint64_t w1 = p[1];
			/* One compare keeps hook records (an address in
			 * [1, 2^56), maybe with the exit bit) on the fast
			 * path; the rest is rare. */
			if (__builtin_expect((w1 << 1) - 2 >= (1ull << (EV_TAG_SHIFT + 1)) - 2,
					     0)) {
				long n;
				/* A zero second word: never written (the rest
				 * of a chunk being filled) or a slot reserved
				 * by a hook that a signal handler interrupted
				 * for good (exit() in the handler).  Skip it. */
				if (!w1)
					continue;
				if (w1 & TAG_BITS) {
					n = tagged(
					    t, p, stop, more,
					    off + (uint64_t)((const char *)p - (const char *)buf));
					if (n <= 0) {
						/* An error, or the record goes on
						 * past the block: read from p. */
						err = (int)n;
						break;
					}
					records++;
					p += 2 * (n - 1);
					continue;
				}
				/* The exit of address 0: a hook record. */
			}
			if (__builtin_expect(p[0] >= mts, 0)) {
				err = recon_mark(r, mts, MARK_DROPS);
				mts = NO_MARK;
				if (err < 0)
					break;
			}
			err = recon_feed(r, p[0], w1);
			if (err < 0)
				break;
			records++;
		}
		off += (uint64_t)((const char *)p - (const char *)buf);
	}
	t->fl->st->records += records;
	*mark_ts = mts;
	return err;
}

static uint64_t sample_fn_of(void *vctx, uint64_t pc)
{
	const struct sym_table *names = vctx;
	const struct fxt_sym_info *info;

	if (pc == FLUSH_AGENT_PC)
		return pc;
	info = names->lookup ? names->lookup(names->lookup_ctx, pc) : NULL;

	/* An identity below 2^56, as hook addresses are: the recon's and the
	 * name table's other bits mean exits and tags. */
	return (info && info->start ? info->start : pc) & EV_ADDR_MASK;
}

static void emit_ctx_init(struct emit_ctx *ctx, struct flusher *fl, uint64_t tid, uint64_t dropped)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->w = fl->w;
	ctx->names = &fl->names;
	ctx->fl = fl;
	ctx->dropped = dropped;
	ctx->ev.type = FXT_EVENT_DURATION_COMPLETE;
	ctx->ev.thread = fxt_writer_thread(fl->w, fl->in->pid, tid);
	fl->names.epoch++; /* registering the thread may have written strings */
	if (ctx->ev.thread.index != FXT_THREADREF_INLINE)
		ctx->hdr = fxt_event_header(COMPLETE_WORDS, FXT_EVENT_DURATION_COMPLETE, 0,
					    ctx->ev.thread.index, 0, 0);
}

static void emit_ctx_free(struct emit_ctx *ctx)
{
	for (size_t i = ctx->lhead; i < ctx->ltail; i++)
		free(ctx->lines[i].text);
	free(ctx->lines);
}

/* One thread: its records, the frames left open, its drops, its samples. */
static int flush_thread(struct flusher *fl, const struct flush_thread *th,
			const struct chunk_ref *chunks, size_t nchunks)
{
	struct flush_stats *st = fl->st;
	struct thread_state *t = calloc(1, sizeof(*t));
	uint64_t end, mark_ts = NO_MARK, *buf = NULL;
	int err = 0;

	if (!t)
		return -ENOMEM;
	t->fl = fl;
	emit_ctx_init(&t->ctx, fl, th->tid, th->dropped);
	recon_init(&t->r, &flush_sink, &t->ctx, fl->in->fifo_max);
	if (fl->sampled && fl->sampled[th->serial] && fl->sample_period) {
		/* Registered right after the thread's own ref: neither evicts
		 * the other while this thread is written (writer.h). */
		emit_ctx_init(&t->sctx, fl, th->tid | SAMPLE_KOID_BIT, 0);
		recon_init(&t->sr, &flush_sink, &t->sctx, fl->in->fifo_max);
		stackchart_init(&t->sc, &t->sr, sample_fn_of, &fl->names, fl->sample_period);
		t->sampling = true;
	}
	end = th->stop_ts ? th->stop_ts : th->end_ts ? th->end_ts : fl->in->now_ts;
	/* The drop instant sits where the thread started dropping, inside
	 * the frames open then; for a thread that stopped recording, those
	 * close one tick later (recon_finish() ends frames after the last
	 * timestamp, the instant's included). */
	if (th->dropped)
		mark_ts = th->first_drop_ts ? th->first_drop_ts : end;
	if (nchunks && !(buf = malloc(READ_BLOCK)))
		err = -ENOMEM;
	for (size_t i = 0; i < nchunks && !err; i++)
		err = feed_chunk(t, &chunks[i], buf, &mark_ts);
	free(buf);
	/* Lines not ended by a newline, at the time of their last bytes. */
	for (unsigned s = EV_LOG_STDOUT; s <= EV_LOG_SYSLOG && !err; s++)
		if (t->streams[s].len)
			err = log_line(t, s, t->streams[s].buf, t->streams[s].len);
	if (!err && mark_ts != NO_MARK)
		err = recon_mark(&t->r, mark_ts, MARK_DROPS);
	if (!err)
		err = recon_finish(&t->r, end);
	if (t->sampling) {
		if (!err)
			err = stackchart_finish(&t->sc, end);
		if (!err)
			err = recon_finish(&t->sr, end);
		st->sample_slices += t->sr.emitted;
		stackchart_free(&t->sc);
		recon_free(&t->sr);
		emit_ctx_free(&t->sctx);
	}
	st->dropped += th->dropped;
	st->unmatched += t->r.unmatched;
	st->deep += t->r.deep;
	if (t->r.max_depth > st->max_depth) {
		st->max_depth = t->r.max_depth;
		st->deep_tid = th->tid;
	}
	st->events += t->r.emitted;
	st->begun += t->r.begun;
	recon_free(&t->r);
	emit_ctx_free(&t->ctx);
	for (unsigned s = 0; s < 4; s++)
		free(t->streams[s].buf);
	free(t);
	return err;
}

/* ------------------------------------------------------------ pre-pass */

/* What a SYNC record did, in the CALL frame around it. */
struct sync_rec {
	uint64_t obj;
	uint64_t pos;	     /* the slot's offset in the spool */
	uint64_t start, end; /* the frame (end UINT64_MAX: never closed) */
	uint32_t serial;
	uint32_t op;
	uint64_t frame; /* which frame of the thread (pre-pass numbering) */
};

struct open_call {
	uint64_t addr, start, id;
	size_t first; /* its thread's first sync_rec made inside it */
};

struct prepass {
	struct sync_rec *recs;
	size_t nrecs, recs_cap;
	struct open_call *stack;
	size_t depth, stack_cap;
	uint64_t next_frame;
	bool want_sync;
};

/* Closes the open calls from index `to` up, at `ts`. */
static void prepass_close(struct prepass *pp, size_t to, uint64_t ts)
{
	while (pp->depth > to) {
		const struct open_call *c = &pp->stack[--pp->depth];
		for (size_t i = c->first; i < pp->nrecs; i++)
			if (pp->recs[i].frame == c->id)
				pp->recs[i].end = ts;
	}
}

/* One slot of the pre-pass: only heads matter (payload slots have tags
 * of their own), so no record boundaries are needed. */
static int prepass_slot(struct flusher *fl, struct prepass *pp, uint32_t serial, const uint64_t *p,
			uint64_t pos)
{
	unsigned tag = ev_tag(p[1]);

	if (tag == EV_TAG_SAMPLE && fl->sampled)
		fl->sampled[serial] = 1;
	if (!pp->want_sync)
		return 0;
	if (tag == EV_TAG_CALL) {
		uint64_t addr = p[1] & EV_CALL_ADDR_MASK;
		if (!(p[1] & EV_EXIT_BIT)) {
			struct open_call *c;
			if (grow((void **)&pp->stack, &pp->stack_cap, pp->depth + 1,
				 sizeof(*pp->stack)) < 0)
				return -ENOMEM;
			c = &pp->stack[pp->depth++];
			c->addr = addr;
			c->start = p[0];
			c->id = ++pp->next_frame;
			c->first = pp->nrecs;
			return 0;
		}
		for (size_t i = pp->depth; i > 0; i--) {
			if (pp->stack[i - 1].addr == addr) {
				prepass_close(pp, i - 1, p[0]);
				break;
			}
		}
		return 0;
	}
	if (tag == EV_TAG_SYNC && pp->depth) {
		const struct open_call *c = &pp->stack[pp->depth - 1];
		struct sync_rec *s;
		if (grow((void **)&pp->recs, &pp->recs_cap, pp->nrecs + 1, sizeof(*pp->recs)) < 0)
			return -ENOMEM;
		s = &pp->recs[pp->nrecs++];
		s->obj = p[0];
		s->pos = pos;
		s->start = c->start;
		s->end = UINT64_MAX;
		s->serial = serial;
		s->op = ev_sync_op(p[1]);
		s->frame = c->id;
	}
	return 0;
}

static int prepass_thread(struct flusher *fl, struct prepass *pp, const struct chunk_ref *chunks,
			  size_t nchunks, uint64_t *buf)
{
	pp->depth = 0;
	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk_ref *c = &chunks[i];
		uint64_t off = c->off + SPOOL_CHUNK_HEADER_SIZE, end = c->off + c->size;
		while (off < end) {
			const uint64_t *p, *stop;
			int err = read_block(fl->in->spool_fd, c, off, buf, &stop);
			if (err < 0)
				return err;
			for (p = buf; p < stop; p += 2) {
				if (!(p[1] & TAG_BITS))
					continue;
				err = prepass_slot(
				    fl, pp, c->serial, p,
				    off + (uint64_t)((const char *)p - (const char *)buf));
				if (err < 0)
					return err;
			}
			off += (uint64_t)((const char *)stop - (const char *)buf);
		}
	}
	return 0;
}

static int sync_cmp(const void *a, const void *b)
{
	const struct sync_rec *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int action_cmp(const void *a, const void *b)
{
	const struct sync_action *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Candidates examined per acquisition, latest first: bounds the pairing's
 * time on pathological spools (thousands of unlocks in one wait). */
#define PAIR_SCAN 256u

/* The release an acquisition `a` waited for, in the group v[0 .. n) of
 * its object (sorted by start), or NULL:
 *  - a lock acquired after waiting, at its frame's end T: the latest
 *    unlock by another thread whose frame started before T and ended
 *    after the lock's frame started;
 *  - a cond wait that returned: the latest signal or broadcast that
 *    started within the wait's frame;
 *  - a sem_wait that waited: the latest post within it. */
static const struct sync_rec *pair_of(const struct sync_rec *a, const struct sync_rec *v, size_t n)
{
	size_t lo = 0, hi = n;
	unsigned scanned = 0;

	/* The first record that started after the acquisition ended. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= a->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && scanned++ < PAIR_SCAN) {
		const struct sync_rec *r = &v[lo];
		if (r->serial == a->serial)
			continue;
		switch (a->op) {
		case EV_SYNC_LOCK_WAITED:
			if (r->op == EV_SYNC_UNLOCK && r->start < a->end && r->end > a->start)
				return r;
			break;
		case EV_SYNC_WOKEN:
			if (r->start < a->start)
				return NULL;
			if (r->op == EV_SYNC_SIGNAL || r->op == EV_SYNC_BROADCAST)
				return r;
			break;
		case EV_SYNC_SEM_WAITED:
			if (r->start < a->start)
				return NULL;
			if (r->op == EV_SYNC_POST)
				return r;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

/* Pairs releases with the acquisitions that waited for them: a flow from
 * each release's frame (begin) to the acquiring frame's end. */
static int pair_syncs(struct flusher *fl, struct prepass *pp)
{
	uint32_t seq = FLUSH_FLOW_SEQ;
	size_t cap = 0;

	qsort(pp->recs, pp->nrecs, sizeof(*pp->recs), sync_cmp);
	for (size_t g = 0, h; g < pp->nrecs; g = h) {
		for (h = g; h < pp->nrecs && pp->recs[h].obj == pp->recs[g].obj; h++)
			;
		for (size_t i = g; i < h; i++) {
			const struct sync_rec *a = &pp->recs[i], *r;
			uint64_t id;
			if (a->op != EV_SYNC_LOCK_WAITED && a->op != EV_SYNC_WOKEN &&
			    a->op != EV_SYNC_SEM_WAITED)
				continue;
			r = pair_of(a, &pp->recs[g], h - g);
			if (!r)
				continue;
			if (grow((void **)&fl->actions, &cap, fl->nactions + 2,
				 sizeof(*fl->actions)) < 0)
				return -ENOMEM;
			id = ev_flow_id(EV_FLOWID_LOCAL, fl->in->pid, ++seq);
			fl->actions[fl->nactions++] =
			    (struct sync_action){ .pos = r->pos, .id = id, .phase = EV_FLOW_BEGIN };
			fl->actions[fl->nactions++] = (struct sync_action){
				.pos = a->pos, .id = id, .phase = EV_FLOW_END | FLOW_AT_END
			};
		}
	}
	if (fl->nactions)
		qsort(fl->actions, fl->nactions, sizeof(*fl->actions), action_cmp);
	return 0;
}

/* Before any event: which threads have samples (their sample tracks are
 * kernel objects, which come first), and the sync pairs (a release and
 * the acquisition it ended may be on any two threads).  Only when the
 * spool may hold such records. */
static int prepass(struct flusher *fl, const struct chunk_ref *chunks, size_t nchunks,
		   uint32_t max_serial)
{
	struct prepass pp;
	uint64_t *buf;
	int err = 0;

	memset(&pp, 0, sizeof(pp));
	pp.want_sync = (fl->in->libc_groups & AGENT_G_SYNC) != 0;
	if (fl->sample_period) {
		fl->sampled = calloc((size_t)max_serial + 1, 1);
		if (!fl->sampled)
			return -ENOMEM;
	}
	if ((!pp.want_sync && !fl->sampled) || !nchunks)
		return 0;
	buf = malloc(READ_BLOCK);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0, j; i < nchunks && !err; i = j) {
		for (j = i; j < nchunks && chunks[j].serial == chunks[i].serial; j++)
			;
		err = prepass_thread(fl, &pp, chunks + i, j - i, buf);
	}
	if (!err && pp.nrecs)
		err = pair_syncs(fl, &pp);
	free(buf);
	free(pp.recs);
	free(pp.stack);
	return err;
}

/* ------------------------------------------------------------ counters */

static int delta_cmp(const void *a, const void *b)
{
	const struct counter_delta *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The heap counter: every thread's deltas merged by time, summed, as
 * counter events on the main thread. */
static int emit_counters(struct flusher *fl)
{
	struct fxt_arg arg;
	struct fxt_event ev;
	int64_t sum = 0;
	int err = 0;

	if (!fl->ndeltas)
		return 0;
	qsort(fl->deltas, fl->ndeltas, sizeof(*fl->deltas), delta_cmp);
	memset(&ev, 0, sizeof(ev));
	memset(&arg, 0, sizeof(arg));
	ev.type = FXT_EVENT_COUNTER;
	ev.args = &arg;
	ev.nargs = 1;
	ev.extra = 0; /* counter id */
	arg.type = FXT_ARG_INT64;
	for (size_t i = 0; i < fl->ndeltas && !err; i++) {
		sum += fl->deltas[i].delta;
		/* Refs per event: strings may be evicted in between. */
		ev.thread = fxt_writer_thread(fl->w, fl->in->pid, fl->in->pid);
		ev.category = fxt_writer_cstring(fl->w, "libc.mem");
		ev.name = fxt_writer_cstring(fl->w, "heap");
		arg.name = fxt_writer_cstring(fl->w, "bytes_in_use");
		arg.v.i64 = sum;
		ev.ts = fl->deltas[i].ts + fl->shift;
		err = fxt_writer_event(fl->w, &ev);
		fl->st->counters++;
	}
	return err;
}

/* ------------------------------------------------------------ archive */

uint64_t flush_time_shift(const struct flush_input *in)
{
	unsigned __int128 base;

	if (!in->base_ns || !in->ticks_per_second)
		return 0;
	base = (unsigned __int128)in->base_ns * in->ticks_per_second / 1000000000u;
	return (uint64_t)base - in->base_ticks;
}

int agent_flush_archive(struct fxt_writer *w, const struct flush_input *in, struct flush_stats *st)
{
	struct flusher fl;
	struct chunk_ref *chunks = NULL;
	size_t nchunks = 0, ci = 0;
	uint32_t max_serial = 0;
	const struct flush_thread **by_serial = NULL;
	struct flush_thread *extra = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	memset(&fl, 0, sizeof(fl));
	fl.w = w;
	fl.in = in;
	fl.st = st;
	if (in->lookup) {
		fl.names.lookup = in->lookup;
		fl.names.lookup_ctx = in->lookup_ctx;
	} else if (in->sym) {
		fl.names.lookup = sym_lookup;
		fl.names.lookup_ctx = in->sym;
	}
	fl.names.epoch = 1;
	if (in->sample_hz && in->ticks_per_second)
		fl.sample_period = in->ticks_per_second / in->sample_hz;
	fl.shift = flush_time_shift(in);
	err = fxt_writer_magic(w);
	if (!err)
		err = fxt_writer_provider(w, (uint32_t)in->pid, "fxtrace");
	if (!err)
		err = fxt_writer_initialization(w, in->ticks_per_second);
	if (!err)
		err = fxt_writer_process_name(w, in->pid, in->process_name ? in->process_name : "");
	if (err)
		return err;

	if (in->spool_fd >= 0) {
		err = scan_chunks(in->spool_fd, in->spool_end, &chunks, &nchunks);
		if (err)
			return err;
	}

	/* Threads by serial: from the table, else (recovery) from the chunks. */
	for (size_t i = 0; i < in->nthreads; i++)
		if (in->threads[i].serial > max_serial)
			max_serial = in->threads[i].serial;
	if (nchunks && chunks[nchunks - 1].serial > max_serial)
		max_serial = chunks[nchunks - 1].serial;
	by_serial = calloc((size_t)max_serial + 1, sizeof(*by_serial));
	extra = calloc((size_t)max_serial + 1, sizeof(*extra));
	fl.scratch = malloc(SCRATCH);
	if (!by_serial || !extra || !fl.scratch) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < in->nthreads; i++)
		by_serial[in->threads[i].serial] = &in->threads[i];
	for (size_t i = 0; i < nchunks; i++) {
		uint32_t s = chunks[i].serial;
		if (!by_serial[s]) {
			/* Not in the table (a recovery): known by its tid. */
			extra[s].serial = s;
			extra[s].tid = chunks[i].tid;
			snprintf(extra[s].name, sizeof(extra[s].name), "thread %llu",
				 (unsigned long long)chunks[i].tid);
			by_serial[s] = &extra[s];
		}
	}
	err = prepass(&fl, chunks, nchunks, max_serial);

	/* Kernel objects first: names before any event refers to a thread.
	 * Every thread gets one, named or not: its "process" argument is what
	 * puts the thread under its process in Perfetto.  A thread whose name
	 * could not be read (it exited during the flush, /proc is not
	 * mounted) is named as a recovered one is, the main thread after the
	 * process.  A thread with samples also gets its sample track. */
	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct flush_thread *th = by_serial[s];
		char fallback[sizeof(th->name)], track[sizeof(th->name) + 16];
		const char *name;

		if (!th)
			continue;
		name = th->name;
		if (!name[0] && th->tid == in->pid && in->process_name && in->process_name[0]) {
			name = in->process_name;
		} else if (!name[0]) {
			snprintf(fallback, sizeof(fallback), "thread %llu",
				 (unsigned long long)th->tid);
			name = fallback;
		}
		err = fxt_writer_thread_name(w, in->pid, th->tid, name);
		if (!err && fl.sampled && fl.sampled[s]) {
			snprintf(track, sizeof(track), "%s (samples)", name);
			err = fxt_writer_thread_name(w, in->pid, th->tid | SAMPLE_KOID_BIT, track);
		}
	}

	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct flush_thread *th = by_serial[s];
		size_t first = ci;

		while (ci < nchunks && chunks[ci].serial == s)
			ci++;
		if (!th || (first == ci && !th->dropped))
			continue;
		st->threads++;
		err = flush_thread(&fl, th, chunks + first, ci - first);
	}
	if (!err)
		err = emit_counters(&fl);
	if (!err && (st->dropped || in->lost)) {
		st->dropped += in->lost;
		err =
		    fxt_writer_provider_event(w, (uint32_t)in->pid, FXT_PROVIDER_EVENT_BUFFER_FULL);
	}
out:
	free(by_serial);
	free(extra);
	free(chunks);
	free(fl.scratch);
	free(fl.deltas);
	free(fl.actions);
	free(fl.sampled);
	table_free(&fl.names);
	return err;
}
