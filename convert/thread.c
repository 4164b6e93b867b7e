/* One thread's conversion (see thread.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/entries.h"
#include "convert/symnames.h"
#include "convert/thread.h"

static const struct fxt_sym_info *sym_lookup(void *sym, uint64_t addr)
{
	return fxt_sym_lookup(sym, addr);
}

/* The name table of a conversion of `in`, empty. */
static void names_init(struct sym_table *t, const struct conv_input *in)
{
	if (in->lookup)
		conv_names_init(t, in->lookup, in->loc_later, in->lookup_ctx);
	else
		conv_names_init(t, in->sym ? sym_lookup : NULL, NULL, in->sym);
}

/* A thread whose oldest records were overwritten (the circular mode): the
 * frames open where its kept records begin start just before them, and
 * the overwrite instant marks that point. */
static int open_window(struct thread_state *t, const struct conv_thread *th,
		       const struct chunk_ref *chunks, size_t nchunks, uint64_t *buf)
{
	uint64_t *frames = NULL, first_ts = 0, ts;
	size_t n = 0;
	int err = conv_replay_open_frames(t->d.in, chunks, nchunks, buf, &frames, &n, &first_ts);

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

void conv_thread_free(struct thread_state *t)
{
	if (!t)
		return;
	conv_short_free(&t->shorts);
	if (t->d.sampling) {
		stackchart_free(&t->sc);
		recon_free(&t->sr);
	}
	recon_free(&t->r);
	conv_log_free(&t->logs);
	conv_heap_free(&t->own_heap);
	conv_names_free(&t->em.names);
	free(t->em.scratch);
	free(t->buf);
	free(t);
}

/* A thread's conversion begun, its events written to `w`: the thread
 * record, then nothing until its records come (thread_feed()). */
int conv_thread_open(struct pipeline *pl, struct fxt_writer *w, uint32_t serial, uint64_t tid,
		     struct thread_state **out)
{
	const struct conv_input *in = pl->in;
	struct thread_state *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t)
		return -ENOMEM;
	t->em = pl->em;
	t->em.w = w;
	names_init(&t->em.names, in);
	memset(t->em.key_slots, 0, sizeof(t->em.key_slots));
	memset(t->em.key_epoch, 0, sizeof(t->em.key_epoch));
	memset(t->em.arg_names, 0, sizeof(t->em.arg_names));
	memset(&t->em.loc_key_slot, 0, sizeof(t->em.loc_key_slot));
	memset(&t->em.loc_module_slot, 0, sizeof(t->em.loc_module_slot));
	memset(&t->em.loc_file_key_slot, 0, sizeof(t->em.loc_file_key_slot));
	memset(&t->em.loc_line_key_slot, 0, sizeof(t->em.loc_line_key_slot));
	memset(&t->em.loc_inl_key_slot, 0, sizeof(t->em.loc_inl_key_slot));
	memset(&t->em.loc_file_slot, 0, sizeof(t->em.loc_file_slot));
	t->em.loc_file_len = 0;
	t->em.loc_words_ok = false; /* another writer's, or forgotten */
	t->em.sig_addr = 0;
	t->em.sig = NULL;
	t->em.scratch = malloc(EMIT_SCRATCH);
	t->buf = malloc(READ_BLOCK);
	if (!t->em.scratch || !t->buf)
		return -ENOMEM;
	t->mark_ts = NO_MARK;
	conv_log_init(&t->logs, &t->r);
	conv_emit_init(&t->ctx, &t->em, in->pid, tid, 0, &t->logs);
	recon_init(&t->r, &conv_sink, &t->ctx, in->fifo_max);
	recon_set_step(&t->r, conv_tb_step(&t->em.tb));
	if (in->min_duration_ns && in->ticks_per_second) {
		conv_short_init(&t->shorts, &t->em.tb);
		t->ctx.shorts = &t->shorts;
		recon_set_min(&t->r, (uint64_t)((unsigned __int128)in->min_duration_ns *
						in->ticks_per_second / 1000000000u));
	}
	t->d.in = in;
	t->d.st = pl->st;
	t->em.st = pl->st;
	t->d.r = &t->r;
	t->d.logs = &t->logs;
	t->d.pp = &pl->pp;
	t->d.heap = &pl->heap;
	t->d.sc = &t->sc;
	if (pl->pp.sampled && pl->pp.sampled[serial] && pl->sample_period) {
		/* Registered right after the thread's own ref: neither evicts
		 * the other while this thread is written (writer.h). */
		conv_emit_init(&t->sctx, &t->em, in->pid, tid | FXT_SAMPLE_KOID_BIT, 0, NULL);
		recon_init(&t->sr, &conv_sink, &t->sctx, in->fifo_max);
		recon_set_step(&t->sr, conv_tb_step(&t->em.tb));
		stackchart_init(&t->sc, &t->sr, conv_names_fn_of, &t->em.names, pl->sample_period);
		t->d.sampling = true;
	}
	return 0;
}

/* The end of a thread's records and drops: `th` says when it ended,
 * what it dropped and from when, `chunks` were its chunks (for a ring's
 * window: fed already).  Adds its figures to the conversion's and frees
 * it. */
int conv_thread_close(struct pipeline *pl, struct thread_state *t, const struct conv_thread *th,
		      int err)
{
	const struct conv_input *in = pl->in;
	struct conv_stats *st = pl->st;
	uint64_t end = th->stop_ts ? th->stop_ts : th->end_ts ? th->end_ts : in->now_ts;

	if (!err)
		err = conv_log_finish(&t->logs);
	if (!err && t->mark_ts != NO_MARK)
		err = recon_mark(&t->r, t->mark_ts, MARK_DROPS);
	if (!err)
		err = recon_finish(&t->r, end);
	if (!err && t->ctx.shorts)
		err = conv_short_emit(&t->ctx, t->r.last_ts);
	st->left_out += t->r.left_out;
	if (t->d.sampling) {
		if (!err)
			err = stackchart_finish(&t->sc, end);
		if (!err)
			err = recon_finish(&t->sr, end);
		st->sample_slices += t->sr.emitted;
	}
	/* The locations its lookup had later, after the thread's events. */
	for (struct sym_entry *e = err ? NULL : conv_names_take_later(&t->em.names); e;
	     e = e->later)
		conv_emit_loc(&t->ctx, e);
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
	conv_thread_free(t);
	return err;
}

/* The drop instant sits where the thread started dropping, inside the
 * frames open then; for a thread that stopped recording, those close one
 * tick later (recon_finish() ends frames after the last timestamp, the
 * instant's included). */
uint64_t conv_drop_mark(const struct conv_input *in, const struct conv_thread *th)
{
	uint64_t end = th->stop_ts ? th->stop_ts : th->end_ts ? th->end_ts : in->now_ts;

	if (!th->dropped)
		return NO_MARK;
	return th->first_drop_ts ? th->first_drop_ts : end;
}

void conv_thread_drops(struct thread_state *t, const struct conv_input *in,
		       const struct conv_thread *th)
{
	t->ctx.dropped = th->dropped;
	t->ctx.drop_cause = th->drop_cause;
	t->mark_ts = conv_drop_mark(in, th);
}

/* One thread: its records, the frames left open, its drops, its samples. */
int conv_thread_whole(struct pipeline *pl, const struct conv_thread *th,
		      const struct chunk_ref *chunks, size_t nchunks)
{
	struct thread_state *t;
	int err = conv_thread_open(pl, pl->em.w, th->serial, th->tid, &t);

	if (err < 0) {
		conv_thread_free(t);
		return err;
	}
	conv_thread_drops(t, pl->in, th);
	if (nchunks && chunks[0].seq > 0)
		err = open_window(t, th, chunks, nchunks, t->buf);
	for (size_t i = 0; i < nchunks && !err; i++)
		err = conv_replay_chunk(&t->d, &chunks[i], t->buf, &t->mark_ts);
	return conv_thread_close(pl, t, th, err);
}

/* What conv_archive() and the early conversion share of a conversion of
 * `in`, written to `w`, counted in `st`. */
void conv_pipeline_init(struct pipeline *pl, struct fxt_writer *w, const struct conv_input *in,
			struct conv_stats *st)
{
	memset(pl, 0, sizeof(*pl));
	pl->in = in;
	pl->st = st;
	pl->em.w = w;
	pl->em.st = st;
	pl->em.signature = in->signature;
	pl->em.signature_ctx = in->signature_ctx;
	pl->em.loc_args = in->loc_args;
	names_init(&pl->em.names, in);
	if (in->sample_hz && in->ticks_per_second)
		pl->sample_period = in->ticks_per_second / in->sample_hz;
	conv_tb_init(&pl->em.tb, in->ticks_per_second, in->base_ticks, in->base_ns);
}
