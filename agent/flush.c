/* The flusher: spool -> FXT archive (see flush.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/flush.h"
#include "agent/log.h"
#include "agent/recon.h"

/* ------------------------------------------------------------ name table */

/* Entries of the direct-mapped cache in front of the hash table. */
#define RECENT 256u

/* Per unique function address (symbolized once): its names, the writer's
 * string slots and the refs as header bits, so that an event of a recent
 * function costs one compare and one epoch check. */
struct sym_entry {
	uint64_t addr; /* 0 = free */
	const char *name, *cat;
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
	size_t cap, used; /* cap is a power of two */
	struct fxt_sym *sym;
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
	info = t->sym ? fxt_sym_lookup(t->sym, addr) : NULL;
	e->name = info && info->name ? info->name : "?";
	e->cat = info && info->module ? info->module : "";
	e->name_len = strlen(e->name);
	e->cat_len = strlen(e->cat);
	e->epoch = 0; /* epochs start at 1 */
	t->used++;
	return *r = e;
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
		if (got != (ssize_t)sizeof(c) || c.magic != SPOOL_CHUNK_MAGIC ||
		    c.size < SPOOL_CHUNK_HEADER_SIZE || c.size > end - off || c.size % 16)
			break;
		if (c.serial) {
			if (len == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct chunk_ref *nv = realloc(v, ncap * sizeof(*nv));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = ncap;
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
	qsort(v, len, sizeof(*v), chunk_cmp);
	*out = v;
	*n = len;
	return 0;
}

/* ------------------------------------------------------------ events */

struct emit_ctx {
	struct fxt_writer *w;
	struct sym_table *names;
	/* A template: type and thread set once; per event only the times
	 * and refs change (zeroing a struct per event is measurable). */
	struct fxt_event ev;
	uint64_t dropped; /* for the drop instant (the recon's mark) */
	/* The header word of this thread's complete events but their refs
	 * (0 when the thread ref is inline: no fast path). */
	uint64_t hdr;
};

static int emit_drops(struct fxt_writer *w, struct fxt_tref thread, uint64_t ts, uint64_t n)
{
	char name[64];
	size_t len = agent_fmt(name, sizeof(name), FXT_DROP_PREFIX "%llu" FXT_DROP_SUFFIX,
			       (unsigned long long)n);
	struct fxt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = ts;
	ev.thread = thread;
	ev.category = fxt_writer_cstring(w, "fxt");
	ev.name = fxt_writer_string(w, name, len);
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
		e->ref_bits =
		    fxt_field(e->cat_ref.ref, 32, 47) | fxt_field(e->name_ref.ref, 48, 63);
	}
	ctx->ev.category = e->cat_ref;
	ctx->ev.name = e->name_ref;
}

/* One event through the writer's general encoder. */
static int emit_one(struct emit_ctx *ctx, enum fxt_event_type type, uint64_t addr, uint64_t ts,
		    uint64_t end)
{
	struct sym_entry *e = table_get(ctx->names, addr);

	if (!e)
		return -ENOMEM;
	function_refs(ctx, e);
	ctx->ev.type = type;
	ctx->ev.ts = ts;
	ctx->ev.extra = end;
	return fxt_writer_event(ctx->w, &ctx->ev);
}

/* Complete events of indexed refs and no arguments, 3 words each. */
#define COMPLETE_WORDS	 3u
#define COMPLETE_PER_RUN (FXT_MAX_RECORD_WORDS / COMPLETE_WORDS)

/* The sink's hot path: a run of complete events, encoded straight into
 * the writer's buffer.  A function whose refs must be (re)interned first,
 * which writes string records, ends the reservation.  (After a writer
 * error, refs may be inline, but then nothing is written: the reservation
 * fails.) */
static int emit_slices(void *vctx, const struct recon_slot *v, size_t n)
{
	struct emit_ctx *ctx = vctx;
	struct sym_table *names = ctx->names;
	const uint64_t hdr = ctx->hdr;

	if (!hdr) {
		/* An inline thread ref (the writer failed): the slow way. */
		for (size_t i = 0; i < n; i++) {
			int err = emit_one(ctx, FXT_EVENT_DURATION_COMPLETE, v[i].addr, v[i].start,
					   v[i].end);
			if (err < 0)
				return err;
		}
		return 0;
	}
	while (n) {
		size_t k = n < COMPLETE_PER_RUN ? n : COMPLETE_PER_RUN, i;
		uint64_t *out = fxt_writer_reserve(ctx->w, k * COMPLETE_WORDS), *p = out;
		struct sym_entry *e = NULL;

		if (!out)
			return fxt_writer_error(ctx->w) ? fxt_writer_error(ctx->w) : -EIO;
		for (i = 0; i < k; i++) {
			e = table_get(names, v[i].addr);
			if (__builtin_expect(!e || e->epoch != names->epoch, 0))
				break;
			p[0] = hdr | e->ref_bits;
			p[1] = v[i].start;
			p[2] = v[i].end;
			p += COMPLETE_WORDS;
		}
		fxt_writer_commit(ctx->w, i * COMPLETE_WORDS);
		v += i;
		n -= i;
		if (i < k) {
			if (!e)
				return -ENOMEM;
			function_refs(ctx, e); /* writer calls: after the commit */
		}
	}
	return 0;
}

static int emit_event(void *vctx, enum recon_kind kind, uint64_t addr, uint64_t start, uint64_t end)
{
	struct emit_ctx *ctx = vctx;
	int err;

	switch (kind) {
	case RECON_BEGIN:
		return emit_one(ctx, FXT_EVENT_DURATION_BEGIN, addr, start, 0);
	case RECON_END:
		return emit_one(ctx, FXT_EVENT_DURATION_END, addr, end, 0);
	case RECON_MARK:
		break;
	}
	err = emit_drops(ctx->w, ctx->ev.thread, start, ctx->dropped);
	ctx->names->epoch++; /* it registered strings */
	return err;
}

static const struct recon_sink flush_sink = {
	.slices = emit_slices,
	.event = emit_event,
};

/* Feeds one chunk's records to the reconstruction, reading it in blocks
 * into `buf` (pread: cheaper here than mapping each chunk). */
#define READ_BLOCK (256u << 10)

/* Where the drop instant of a thread goes: before the first record at or
 * after `ts` (NO_MARK once placed or when there is none). */
#define NO_MARK UINT64_MAX

static int feed_chunk(int fd, const struct chunk_ref *c, struct recon *r, uint64_t *buf,
		      uint64_t *records, uint64_t *mark_ts)
{
	uint64_t off = c->off + SPOOL_CHUNK_HEADER_SIZE, end = c->off + c->size;
	int err = 0;

	while (off < end && !err) {
		size_t want = end - off < READ_BLOCK ? (size_t)(end - off) : READ_BLOCK;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		const uint64_t *p, *stop;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		got -= got % SPOOL_RECORD_SIZE;
		stop = buf + got / 8;
		for (p = buf; p < stop; p += 2) {
			/* A zero address: never written (the rest of a chunk
			 * being filled) or a slot reserved by a hook that a
			 * signal handler interrupted for good (exit() in the
			 * handler).  Skip it. */
			if (!p[1])
				continue;
			if (__builtin_expect(p[0] >= *mark_ts, 0)) {
				err = recon_mark(r, *mark_ts, 0);
				*mark_ts = NO_MARK;
				if (err < 0)
					break;
			}
			err = recon_feed(r, p[0], p[1]);
			if (err < 0)
				break;
			++*records;
		}
		off += (uint64_t)got;
	}
	return err;
}

/* One thread: its records, the frames left open, its drops. */
static int flush_thread(struct fxt_writer *w, const struct flush_input *in,
			const struct flush_thread *th, const struct chunk_ref *chunks,
			size_t nchunks, struct sym_table *names, struct flush_stats *st)
{
	struct emit_ctx ctx;
	struct recon r;
	uint64_t end, mark_ts = NO_MARK, *buf = NULL;
	int err = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.w = w;
	ctx.names = names;
	ctx.dropped = th->dropped;
	ctx.ev.type = FXT_EVENT_DURATION_COMPLETE;
	ctx.ev.thread = fxt_writer_thread(w, in->pid, th->tid);
	names->epoch++; /* registering the thread may have written strings */
	if (ctx.ev.thread.index != FXT_THREADREF_INLINE)
		ctx.hdr = fxt_field(FXT_RECORD_EVENT, 0, 3) | fxt_field(COMPLETE_WORDS, 4, 15) |
			  fxt_field(FXT_EVENT_DURATION_COMPLETE, 16, 19) |
			  fxt_field(ctx.ev.thread.index, 24, 31);
	recon_init(&r, &flush_sink, &ctx, in->fifo_max);
	end = th->stop_ts ? th->stop_ts : th->end_ts ? th->end_ts : in->now_ts;
	/* The drop instant sits where the thread started dropping, inside
	 * the frames open then; for a thread that stopped recording, those
	 * close one tick later (recon_finish() ends frames after the last
	 * timestamp, the instant's included). */
	if (th->dropped)
		mark_ts = th->first_drop_ts ? th->first_drop_ts : end;
	if (nchunks && !(buf = malloc(READ_BLOCK)))
		return -ENOMEM;
	for (size_t i = 0; i < nchunks && !err; i++)
		err = feed_chunk(in->spool_fd, &chunks[i], &r, buf, &st->records, &mark_ts);
	free(buf);
	if (!err && mark_ts != NO_MARK)
		err = recon_mark(&r, mark_ts, 0);
	if (!err)
		err = recon_finish(&r, end);
	st->dropped += th->dropped;
	st->unmatched += r.unmatched;
	st->events += r.emitted;
	st->begun += r.begun;
	recon_free(&r);
	return err;
}

/* ------------------------------------------------------------ archive */

int agent_flush_archive(struct fxt_writer *w, const struct flush_input *in, struct flush_stats *st)
{
	struct sym_table names = { .sym = in->sym, .epoch = 1 };
	struct chunk_ref *chunks = NULL;
	size_t nchunks = 0, ci = 0;
	uint32_t max_serial = 0;
	const struct flush_thread **by_serial = NULL;
	struct flush_thread *extra = NULL;
	int err;

	memset(st, 0, sizeof(*st));
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
	if (!by_serial || !extra) {
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
			agent_fmt(extra[s].name, sizeof(extra[s].name), "thread %llu",
				  (unsigned long long)chunks[i].tid);
			by_serial[s] = &extra[s];
		}
	}

	/* Kernel objects first: names before any event refers to a thread.
	 * Every thread gets one, named or not: its "process" argument is what
	 * puts the thread under its process in Perfetto.  A thread whose name
	 * could not be read (it exited during the flush, /proc is not
	 * mounted) is named as a recovered one is, the main thread after the
	 * process. */
	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct flush_thread *th = by_serial[s];
		char fallback[sizeof(th->name)];
		const char *name;

		if (!th)
			continue;
		name = th->name;
		if (!name[0] && th->tid == in->pid && in->process_name && in->process_name[0]) {
			name = in->process_name;
		} else if (!name[0]) {
			agent_fmt(fallback, sizeof(fallback), "thread %llu",
				  (unsigned long long)th->tid);
			name = fallback;
		}
		err = fxt_writer_thread_name(w, in->pid, th->tid, name);
	}

	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct flush_thread *th = by_serial[s];
		size_t first = ci;

		while (ci < nchunks && chunks[ci].serial == s)
			ci++;
		if (!th || (first == ci && !th->dropped))
			continue;
		st->threads++;
		err = flush_thread(w, in, th, chunks + first, ci - first, &names, st);
	}
	if (!err && (st->dropped || in->lost)) {
		st->dropped += in->lost;
		err =
		    fxt_writer_provider_event(w, (uint32_t)in->pid, FXT_PROVIDER_EVENT_BUFFER_FULL);
	}
out:
	free(by_serial);
	free(extra);
	free(chunks);
	free(names.v);
	return err;
}
