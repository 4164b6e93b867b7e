/* The conversion's pipeline: spool -> FXT archive (see pipeline.h).  The
 * orchestration: the archive's opening records, the threads' kernel
 * objects, then per thread its chunks replayed into its reconstruction,
 * whose frames the emitter writes, and last the heap counter.  The parts, one
 * job each:
 *
 *   chunks.c    the spool's chunk chain and its blocks of records
 *   prepass.c   before any event: threads with samples, sync pairs
 *   thread.c    one thread's conversion, fed its chunks in one go or a
 *               few at a time
 *   early.c     threads converted while their process runs, which the
 *               archive's conversion goes on from
 *   replay.c    a thread's records -> its frames and their entries
 *   recon.c     frames -> exactly nested slices in start order
 *   stackchart.c  stack samples -> the frames of a sample track
 *   loglines.c  LOG bytes -> lines, marked among the frames
 *   emit.c      slices, flows, marks -> FXT events
 *   symnames.c  function addresses -> names and string refs
 *   counters.c  the heap counter's deltas -> counter events
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/chunks.h"
#include "convert/counters.h"
#include "convert/replay.h"
#include "convert/emit.h"
#include "convert/entries.h"
#include "convert/pipeline.h"
#include "convert/loglines.h"
#include "convert/symnames.h"
#include "convert/prepass.h"
#include "convert/thread.h"
#include "convert/recon.h"
#include "convert/shortcalls.h"
#include "convert/stackchart.h"
#include "run/recording.h"

/* An instant event of category "fxt" on thread `tid` of the process at
 * `ts` (ticks), counted as a reader of the archive counts it. */
static int fxt_instant(struct pipeline *pl, uint64_t tid, uint64_t ts, const char *name,
		       const struct fxt_arg *args, unsigned nargs)
{
	struct fxt_writer *w = pl->em.w;
	struct fxt_event ev;
	int err;

	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = conv_tb_ns(&pl->em.tb, ts);
	ev.thread = fxt_writer_thread(w, pl->in->pid, tid);
	ev.category = fxt_writer_cstring(w, "fxt");
	ev.name = fxt_writer_cstring(w, name);
	ev.args = args;
	ev.nargs = nargs;
	pl->em.names.epoch++; /* strings registered */
	pl->st->counts.events++;
	err = fxt_writer_event(w, &ev);
	if (!err)
		err = fxt__counts_thread(&pl->st->counts, pl->in->pid, tid);
	return err;
}

/* The instant FXT_HOOK_COST_NAME (include/fxt/format.h) on the main
 * thread, before any other event: what tracing adds to a call, against
 * the untraced program's empty hooks (the agent's "extra"), plus the chunk
 * refills spread over the records (two a call) the chunks hold; and
 * "inside" less the empty pair, which the untraced call pays for its own
 * hooks (so it may be below 0). */
static int hook_cost(struct pipeline *pl, const struct chunk_ref *chunks, size_t nchunks)
{
	const struct conv_input *in = pl->in;
	struct fxt_writer *w = pl->em.w;
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
	return fxt_instant(pl, in->pid, in->base_ticks, FXT_HOOK_COST_NAME, a, 2);
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
static int snapshot_mark(struct pipeline *pl)
{
	const struct spool_header *h = pl->in->snapshot;
	struct fxt_writer *w = pl->em.w;
	const struct sym_entry *e;
	char name[512], dur[32], rule[sizeof(h->snap_rule) + 1];
	const char *fn = "?";
	struct fxt_arg a[5];

	e = conv_names_get(&pl->em.names,
			   h->snap_libc_fn ? EV_CALL_ADDR(h->snap_libc_fn - 1) : h->snap_addr);
	if (e && e->name)
		fn = e->name;
	memcpy(rule, h->snap_rule, sizeof(h->snap_rule));
	rule[sizeof(h->snap_rule)] = '\0';
	fmt_duration(dur, sizeof(dur), h->snap_dur_ns);
	if (strchr(rule, '@')) /* a value rule: what the call was given or returned */
		snprintf(name, sizeof(name), FXT_SNAPSHOT_PREFIX "%u: %s (%s)", h->snapshot, fn,
			 strchr(rule, '@') + 1);
	else
		snprintf(name, sizeof(name), FXT_SNAPSHOT_PREFIX "%u: %s took %s", h->snapshot, fn,
			 dur);
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
	return fxt_instant(pl, h->snap_tid, h->snap_end_ts, name, a, 5);
}

/* ------------------------------------------------------------ archive */

uint64_t conv_time_ns(const struct conv_input *in, uint64_t ticks)
{
	struct conv_tb tb;

	conv_tb_init(&tb, in->ticks_per_second, in->base_ticks, in->base_ns);
	return conv_tb_ns(&tb, ticks);
}

int conv_archive(struct fxt_writer *w, const struct conv_input *in, struct conv_stats *st)
{
	struct pipeline pl;
	struct chunk_ref *chunks = NULL;
	size_t nchunks = 0, ci = 0;
	uint32_t max_serial = 0;
	const struct conv_thread **by_serial = NULL;
	struct conv_thread *extra = NULL;
	const char **newest = NULL; /* by serial: its newest chunk's name */
	struct early_thread *early;
	bool first = true; /* no thread written yet */
	int err;

	memset(st, 0, sizeof(*st));
	conv_pipeline_init(&pl, w, in, st);
	err = fxt_writer_magic(w);
	if (!err) /* each thread's chunks, and events in them, come in time order */
		err = fxt_writer_time_ordered(w);
	if (!err)
		err = fxt_writer_provider(w, (uint32_t)in->pid, "fxtrace");
	if (!err)
		err = fxt_writer_initialization(w, CONV_NS_PER_SECOND);
	if (!err)
		err = fxt_writer_process_name(w, in->pid, in->process_name ? in->process_name : "");
	if (!err)
		err = fxt__counts_process(&st->counts, in->pid);
	if (err)
		return err;

	if (in->spool_fd >= 0) {
		err = conv_chunks_scan(in->spool_fd, in->spool_end, &chunks, &nchunks);
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
	pl.em.scratch = malloc(EMIT_SCRATCH);
	if (!by_serial || !extra || !newest || !pl.em.scratch) {
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
	err = conv_prepass(in->spool_fd, chunks, nchunks, max_serial, pl.sample_period != 0,
			   (in->libc_groups & AGENT_G_SYNC) && !in->no_waits, in->pid, &pl.pp);

	/* Kernel objects first: names before any event refers to a thread.
	 * Every thread gets one, named or not: its "process" argument is what
	 * puts the thread under its process in Perfetto.  A thread's name is
	 * the seal's; else (a recovery, or a name that could not be read at
	 * the seal) its newest chunk's (spool/format.h, "Thread names"); else
	 * the main thread is named after the process, the others by tid.  A
	 * thread with samples also gets its sample track. */
	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct conv_thread *th = by_serial[s];
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
		if (!err && pl.pp.sampled && pl.pp.sampled[s]) {
			snprintf(track, sizeof(track), "%s" FXT_SAMPLE_TRACK_SUFFIX, name);
			err = fxt_writer_thread_name(w, in->pid, th->tid | FXT_SAMPLE_KOID_BIT,
						     track);
		}
	}

	if (!err && in->hook_pair_ticks && in->ticks_per_second)
		err = hook_cost(&pl, chunks, nchunks);
	if (!err && in->snapshot)
		err = snapshot_mark(&pl);

	for (uint32_t s = 1; s <= max_serial && !err; s++) {
		const struct conv_thread *th = by_serial[s];
		size_t first_chunk = ci;

		while (ci < nchunks && chunks[ci].serial == s)
			ci++;
		if (!th || (first_chunk == ci && !th->dropped))
			continue;
		st->threads++;
		/* Its events register their own strings (thread_state). */
		fxt_writer_forget(w);
		pl.em.names.epoch++;
		early = in->early ? conv_early_take(in->early, &pl, th, chunks + first_chunk,
						    ci - first_chunk, first)
				  : NULL;
		if (early)
			err = conv_early_finish(&pl, early, th, chunks + first_chunk,
						ci - first_chunk, first);
		else
			err = conv_thread_whole(&pl, th, chunks + first_chunk, ci - first_chunk);
		first = false;
	}
	/* What follows registers its own strings too. */
	fxt_writer_forget(w);
	pl.em.names.epoch++;
	if (!err)
		err = conv_heap_emit(&pl.heap, w, in->pid, &pl.em.tb, &st->counters);
	st->counts.events += st->counters;
	if (!err && st->counters)
		err = fxt__counts_thread(&st->counts, in->pid, in->pid);
	if (!err && in->lost) {
		/* Not in any thread's count: on the main thread, so that the
		 * archive holds every drop its summary says. */
		struct emit_ctx lost;
		conv_emit_init(&lost, &pl.em, in->pid, in->pid, in->lost, NULL);
		lost.drop_cause = in->lost_cause;
		err = conv_emit_drops(&lost, in->now_ts ? in->now_ts : in->lost_ts);
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
	free(pl.em.scratch);
	conv_heap_free(&pl.heap);
	conv_prepass_free(&pl.pp);
	conv_names_free(&pl.em.names);
	return err;
}
