/* The flusher: spool -> FXT archive (see flush.h).  The orchestration:
 * the archive's opening records, the threads' kernel objects, then per
 * thread its chunks through the decoder into its reconstruction, whose
 * frames the emitter writes, and last the heap counter.  The parts, one
 * job each:
 *
 *   chunks.c    the spool's chunk chain and its blocks of records
 *   prepass.c   before any event: threads with samples, sync pairs
 *   decode.c    a thread's records -> its frames and their entries
 *   recon.c     frames -> exactly nested slices in start order
 *   stackchart.c  stack samples -> the frames of a sample track
 *   loglines.c  LOG bytes -> lines, marked among the frames
 *   emit.c      slices, flows, marks -> FXT events
 *   names.c     function addresses -> names and string refs
 *   counters.c  the heap counter's deltas -> counter events
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/chunks.h"
#include "convert/counters.h"
#include "convert/decode.h"
#include "convert/emit.h"
#include "convert/entries.h"
#include "convert/flush.h"
#include "convert/loglines.h"
#include "convert/names.h"
#include "convert/prepass.h"
#include "convert/recon.h"
#include "convert/shortcalls.h"
#include "convert/stackchart.h"
#include "spool/recording.h"

/* One flush: what the threads' passes share. */
struct flusher {
	const struct flush_input *in;
	struct flush_stats *st;
	struct emit_common em;
	struct prepass pp;
	struct heap_counter heap;
	uint64_t sample_period; /* ticks between samples; 0: no samples */
};

/* One thread: its decoding, its frames, its log lines, and its sample
 * track (a thread of its own, with its own stack chart). */
struct thread_state {
	struct decoder d;
	struct emit_ctx ctx;
	struct recon r;
	struct log_lines logs;
	struct emit_ctx sctx;
	struct recon sr;
	struct stackchart sc;
	struct short_calls shorts;
};

static const struct fxt_sym_info *sym_lookup(void *sym, uint64_t addr)
{
	return fxt_sym_lookup(sym, addr);
}

/* A thread whose oldest records were overwritten (the circular mode): the
 * frames open where its kept records begin start just before them, and
 * the overwrite instant marks that point. */
static int open_window(struct thread_state *t, const struct flush_thread *th,
		       const struct chunk_ref *chunks, size_t nchunks, uint64_t *buf)
{
	uint64_t *frames = NULL, first_ts = 0, ts;
	size_t n = 0;
	int err = flush_decode_open_frames(t->d.in, chunks, nchunks, buf, &frames, &n, &first_ts);

	/* Strictly before the first record, one tick apart (the recon moves
	 * times that do not increase; 0 is a time like another). */
	ts = first_ts > n + 1 ? first_ts - n - 1 : 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct recon_arg a = { .key = KEY_START_OVERWRITTEN,
				       .type = EV_ARG_BOOL,
				       .value = 1 };

		err = recon_feed(&t->r, ts++, frames[i]);
		if (!err)
			err = recon_arg(&t->r, &a, NULL);
	}
	free(frames);
	t->ctx.overwritten = th->overwritten;
	if (!err)
		err = recon_mark(&t->r, ts, MARK_OVERWRITTEN);
	return err;
}

/* One thread: its records, the frames left open, its drops, its samples. */
static int flush_thread(struct flusher *fl, const struct flush_thread *th,
			const struct chunk_ref *chunks, size_t nchunks)
{
	const struct flush_input *in = fl->in;
	struct flush_stats *st = fl->st;
	struct thread_state *t = calloc(1, sizeof(*t));
	uint64_t end, mark_ts = NO_MARK, *buf = NULL;
	int err = 0;

	if (!t)
		return -ENOMEM;
	flush_log_init(&t->logs, &t->r);
	flush_emit_init(&t->ctx, &fl->em, in->pid, th->tid, th->dropped, &t->logs);
	t->ctx.drop_cause = th->drop_cause;
	recon_init(&t->r, &flush_sink, &t->ctx, in->fifo_max);
	recon_set_step(&t->r, fl->em.step);
	if (in->min_duration_ns && in->ticks_per_second) {
		flush_short_init(&t->shorts, in->ticks_per_second);
		t->ctx.shorts = &t->shorts;
		recon_set_min(&t->r, (uint64_t)((unsigned __int128)in->min_duration_ns *
						in->ticks_per_second / 1000000000u));
	}
	t->d.in = in;
	t->d.st = st;
	t->d.r = &t->r;
	t->d.logs = &t->logs;
	t->d.pp = &fl->pp;
	t->d.heap = &fl->heap;
	t->d.sc = &t->sc;
	if (fl->pp.sampled && fl->pp.sampled[th->serial] && fl->sample_period) {
		/* Registered right after the thread's own ref: neither evicts
		 * the other while this thread is written (writer.h). */
		flush_emit_init(&t->sctx, &fl->em, in->pid, th->tid | FXT_SAMPLE_KOID_BIT, 0, NULL);
		recon_init(&t->sr, &flush_sink, &t->sctx, in->fifo_max);
		recon_set_step(&t->sr, fl->em.step);
		stackchart_init(&t->sc, &t->sr, flush_names_fn_of, &fl->em.names,
				fl->sample_period);
		t->d.sampling = true;
	}
	end = th->stop_ts ? th->stop_ts : th->end_ts ? th->end_ts : in->now_ts;
	/* The drop instant sits where the thread started dropping, inside
	 * the frames open then; for a thread that stopped recording, those
	 * close one tick later (recon_finish() ends frames after the last
	 * timestamp, the instant's included). */
	if (th->dropped)
		mark_ts = th->first_drop_ts ? th->first_drop_ts : end;
	if (nchunks && !(buf = malloc(READ_BLOCK)))
		err = -ENOMEM;
	if (!err && nchunks && chunks[0].seq > 0)
		err = open_window(t, th, chunks, nchunks, buf);
	for (size_t i = 0; i < nchunks && !err; i++)
		err = flush_decode_chunk(&t->d, &chunks[i], buf, &mark_ts);
	free(buf);
	if (!err)
		err = flush_log_finish(&t->logs);
	if (!err && mark_ts != NO_MARK)
		err = recon_mark(&t->r, mark_ts, MARK_DROPS);
	if (!err)
		err = recon_finish(&t->r, end);
	if (!err && t->ctx.shorts)
		err = flush_short_emit(&t->ctx, t->r.last_ts);
	st->left_out += t->r.left_out;
	flush_short_free(&t->shorts);
	if (t->d.sampling) {
		if (!err)
			err = stackchart_finish(&t->sc, end);
		if (!err)
			err = recon_finish(&t->sr, end);
		st->sample_slices += t->sr.emitted;
		stackchart_free(&t->sc);
		recon_free(&t->sr);
	}
	/* Counted as a reader of the archive counts them. */
	st->counts.events += t->ctx.events + t->sctx.events;
	if (!err && t->ctx.events)
		err = fxt__counts_thread(&st->counts, in->pid, th->tid);
	if (!err && t->sctx.events)
		err = fxt__counts_thread(&st->counts, in->pid, th->tid | FXT_SAMPLE_KOID_BIT);
	st->dropped += th->dropped;
	st->overwritten += th->overwritten;
	st->unmatched += t->r.unmatched;
	st->deep += t->r.deep;
	if (t->r.max_depth > st->max_depth) {
		st->max_depth = t->r.max_depth;
		st->deep_tid = th->tid;
	}
	st->events += t->r.emitted;
	st->begun += t->r.begun;
	recon_free(&t->r);
	flush_log_free(&t->logs);
	free(t);
	return err;
}

/* An instant event of category "fxt" on thread `tid` of the process at
 * `ts` (ticks), counted as a reader of the archive counts it. */
static int fxt_instant(struct flusher *fl, uint64_t tid, uint64_t ts, const char *name,
		       const struct fxt_arg *args, unsigned nargs)
{
	struct fxt_writer *w = fl->em.w;
	struct fxt_event ev;
	int err;

	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = ts + fl->em.shift;
	ev.thread = fxt_writer_thread(w, fl->in->pid, tid);
	ev.category = fxt_writer_cstring(w, "fxt");
	ev.name = fxt_writer_cstring(w, name);
	ev.args = args;
	ev.nargs = nargs;
	fl->em.names.epoch++; /* strings registered */
	fl->st->counts.events++;
	err = fxt_writer_event(w, &ev);
	if (!err)
		err = fxt__counts_thread(&fl->st->counts, fl->in->pid, tid);
	return err;
}

/* The instant FXT_HOOK_COST_NAME (include/fxt/format.h) on the main
 * thread, before any other event: what tracing adds to a call, against
 * the untraced program's empty hooks (the agent's "extra"), plus the chunk
 * refills spread over the records (two a call) the chunks hold; and
 * "inside" less the empty pair, which the untraced call pays for its own
 * hooks (so it may be below 0). */
static int hook_cost(struct flusher *fl, const struct chunk_ref *chunks, size_t nchunks)
{
	const struct flush_input *in = fl->in;
	struct fxt_writer *w = fl->em.w;
	double tick_ns = 1e9 / (double)in->ticks_per_second, slots = 0;
	struct fxt_arg a[2];

	for (size_t i = 0; i < nchunks; i++)
		slots += (double)(chunks[i].size - SPOOL_CHUNK_HEADER_SIZE) / SPOOL_RECORD_SIZE;
	memset(a, 0, sizeof(a));
	a[0].type = FXT_ARG_DOUBLE;
	a[0].name = fxt_writer_cstring(w, FXT_HOOK_ARG_PAIR);
	a[0].v.f64 = ((double)in->hook_pair_ticks / 1000 +
		      (slots > 0 ? 2 * (double)in->refill_ticks / slots : 0)) *
		     tick_ns;
	a[1].type = FXT_ARG_DOUBLE;
	a[1].name = fxt_writer_cstring(w, FXT_HOOK_ARG_INSIDE);
	a[1].v.f64 = ((double)in->hook_inside_ticks - (double)in->hook_stub_ticks) / 1000 * tick_ns;
	return fxt_instant(fl, in->pid, in->base_ticks, FXT_HOOK_COST_NAME, a, 2);
}

/* A duration for a name: "12.345 ms". */
static void fmt_duration(char *buf, size_t cap, uint64_t ns)
{
	if (ns >= 1000000000)
		snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
}

/* A snapshot's instant (FXT_SNAPSHOT_PREFIX, include/fxt/format.h) on the
 * thread whose call set it off, at the call's end. */
static int snapshot_mark(struct flusher *fl)
{
	const struct spool_header *h = fl->in->snapshot;
	struct fxt_writer *w = fl->em.w;
	const struct sym_entry *e;
	char name[512], dur[32], rule[sizeof(h->snap_rule) + 1];
	const char *fn = "?";
	struct fxt_arg a[5];

	e = flush_names_get(&fl->em.names,
			    h->snap_libc_fn ? EV_CALL_ADDR(h->snap_libc_fn - 1) : h->snap_addr);
	if (e && e->name)
		fn = e->name;
	memcpy(rule, h->snap_rule, sizeof(h->snap_rule));
	rule[sizeof(h->snap_rule)] = '\0';
	fmt_duration(dur, sizeof(dur), h->snap_dur_ns);
	snprintf(name, sizeof(name), FXT_SNAPSHOT_PREFIX "%u: %s took %s", h->snapshot, fn, dur);
	memset(a, 0, sizeof(a));
	a[0].type = FXT_ARG_UINT64;
	a[0].name = fxt_writer_cstring(w, FXT_SNAPSHOT_ARG_NUMBER);
	a[0].v.u64 = h->snapshot;
	a[1].type = FXT_ARG_STRING;
	a[1].name = fxt_writer_cstring(w, FXT_SNAPSHOT_ARG_FUNCTION);
	a[1].v.str = fxt_writer_cstring(w, fn);
	a[2].type = FXT_ARG_UINT64;
	a[2].name = fxt_writer_cstring(w, FXT_SNAPSHOT_ARG_DURATION);
	a[2].v.u64 = h->snap_dur_ns;
	a[3].type = FXT_ARG_UINT64;
	a[3].name = fxt_writer_cstring(w, FXT_SNAPSHOT_ARG_LIMIT);
	a[3].v.u64 = h->snap_limit_ns;
	a[4].type = FXT_ARG_STRING;
	a[4].name = fxt_writer_cstring(w, FXT_SNAPSHOT_ARG_RULE);
	a[4].v.str = fxt_writer_cstring(w, rule);
	return fxt_instant(fl, h->snap_tid, h->snap_end_ts, name, a, 5);
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

int flush_archive(struct fxt_writer *w, const struct flush_input *in, struct flush_stats *st)
{
	struct flusher fl;
	struct chunk_ref *chunks = NULL;
	size_t nchunks = 0, ci = 0;
	uint32_t max_serial = 0;
	const struct flush_thread **by_serial = NULL;
	struct flush_thread *extra = NULL;
	const char **newest = NULL; /* by serial: its newest chunk's name */
	int err;

	memset(st, 0, sizeof(*st));
	memset(&fl, 0, sizeof(fl));
	fl.in = in;
	fl.st = st;
	fl.em.w = w;
	fl.em.st = st;
	if (in->lookup)
		flush_names_init(&fl.em.names, in->lookup, in->lookup_ctx);
	else
		flush_names_init(&fl.em.names, in->sym ? sym_lookup : NULL, in->sym);
	if (in->sample_hz && in->ticks_per_second)
		fl.sample_period = in->ticks_per_second / in->sample_hz;
	fl.em.shift = flush_time_shift(in);
	/* "Later" is a nanosecond later (recon.h): the ticks of one, rounded up. */
	fl.em.step = in->ticks_per_second > 1000000000u
			 ? (in->ticks_per_second + 999999999u) / 1000000000u
			 : 1;
	err = fxt_writer_magic(w);
	if (!err)
		err = fxt_writer_provider(w, (uint32_t)in->pid, "fxtrace");
	if (!err)
		err = fxt_writer_initialization(w, in->ticks_per_second);
	if (!err)
		err = fxt_writer_process_name(w, in->pid, in->process_name ? in->process_name : "");
	if (!err)
		err = fxt__counts_process(&st->counts, in->pid);
	if (err)
		return err;

	if (in->spool_fd >= 0) {
		err = flush_chunks_scan(in->spool_fd, in->spool_end, &chunks, &nchunks);
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
	newest = calloc((size_t)max_serial + 1, sizeof(*newest));
	fl.em.scratch = malloc(EMIT_SCRATCH);
	if (!by_serial || !extra || !newest || !fl.em.scratch) {
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
			by_serial[s] = &extra[s];
		}
		/* A recovered ring: its newest chunk's count. */
		if (by_serial[s] == &extra[s] && chunks[i].overwritten > extra[s].overwritten)
			extra[s].overwritten = chunks[i].overwritten;
		/* In sequence order: the last one named is the newest name. */
		if (chunks[i].name[0])
			newest[s] = chunks[i].name;
	}
	err = flush_prepass(in->spool_fd, chunks, nchunks, max_serial, fl.sample_period != 0,
			    (in->libc_groups & AGENT_G_SYNC) != 0, in->pid, &fl.pp);

	/* Kernel objects first: names before any event refers to a thread.
	 * Every thread gets one, named or not: its "process" argument is what
	 * puts the thread under its process in Perfetto.  A thread's name is
	 * the seal's; else (a recovery, or a name that could not be read at
	 * the seal) its newest chunk's (spool/format.h, "Thread names"); else
	 * the main thread is named after the process, the others by tid.  A
	 * thread with samples also gets its sample track. */
	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct flush_thread *th = by_serial[s];
		char fallback[sizeof(th->name)], track[sizeof(th->name) + 16];
		const char *name;

		if (!th)
			continue;
		name = th->name[0] || !newest[s] ? th->name : newest[s];
		if (!name[0] && th->tid == in->pid && in->process_name && in->process_name[0]) {
			name = in->process_name;
		} else if (!name[0]) {
			snprintf(fallback, sizeof(fallback), "thread %llu",
				 (unsigned long long)th->tid);
			name = fallback;
		}
		err = fxt_writer_thread_name(w, in->pid, th->tid, name);
		if (!err && fl.pp.sampled && fl.pp.sampled[s]) {
			snprintf(track, sizeof(track), "%s" FXT_SAMPLE_TRACK_SUFFIX, name);
			err = fxt_writer_thread_name(w, in->pid, th->tid | FXT_SAMPLE_KOID_BIT,
						     track);
		}
	}

	if (!err && in->hook_pair_ticks && in->ticks_per_second)
		err = hook_cost(&fl, chunks, nchunks);
	if (!err && in->snapshot)
		err = snapshot_mark(&fl);

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
		err = flush_heap_emit(&fl.heap, w, in->pid, fl.em.shift, &st->counters);
	st->counts.events += st->counters;
	if (!err && st->counters)
		err = fxt__counts_thread(&st->counts, in->pid, in->pid);
	if (!err && in->lost) {
		/* Not in any thread's count: on the main thread, so that the
		 * archive holds every drop its summary says. */
		struct emit_ctx lost;
		flush_emit_init(&lost, &fl.em, in->pid, in->pid, in->lost, NULL);
		lost.drop_cause = in->lost_cause;
		err = flush_emit_drops(&lost, in->now_ts ? in->now_ts : in->lost_ts);
		if (!err)
			err = fxt__counts_thread(&st->counts, in->pid, in->pid);
		st->counts.events += lost.events;
	}
	if (!err && (st->dropped || in->lost)) {
		st->dropped += in->lost;
		err =
		    fxt_writer_provider_event(w, (uint32_t)in->pid, FXT_PROVIDER_EVENT_BUFFER_FULL);
	}
out:
	free(by_serial);
	free(extra);
	free(newest);
	free(chunks);
	free(fl.em.scratch);
	flush_heap_free(&fl.heap);
	flush_prepass_free(&fl.pp);
	flush_names_free(&fl.em.names);
	return err;
}
