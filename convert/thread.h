/* One thread's conversion, which the archive's conversion
 * (convert/pipeline.c) and the early one (convert/early.c) share: its
 * replay, reconstruction and emitter, fed its chunks in one go or a few at
 * a time.  Private to convert/. */
#ifndef FXT_CONVERT_THREAD_H
#define FXT_CONVERT_THREAD_H

#include <stdint.h>

#include <fxt/writer.h>

#include "convert/chunks.h"
#include "convert/counters.h"
#include "convert/emit.h"
#include "convert/loglines.h"
#include "convert/pipeline.h"
#include "convert/prepass.h"
#include "convert/recon.h"
#include "convert/replay.h"
#include "convert/shortcalls.h"
#include "convert/stackchart.h"

/* One conversion: what the threads' passes share. */
struct pipeline {
	const struct conv_input *in;
	struct conv_stats *st;
	struct emit_common em;
	struct prepass pp;
	struct heap_counter heap;
	uint64_t sample_period; /* ticks between samples; 0: no samples */
};

/* One thread: its replay, its frames, its log lines, and its sample
 * track (a thread of its own, with its own stack chart).  Its emitter has
 * a name table of its own: a thread's events register every string they
 * use (the writer forgets its tables before each thread), so that they
 * read the same whether written straight after the archive's opening
 * records or into a file of their own while the process ran and appended
 * (conv_early_new()). */
struct thread_state {
	struct replay d;
	struct emit_ctx ctx;
	struct recon r;
	struct log_lines logs;
	struct emit_ctx sctx;
	struct recon sr;
	struct stackchart sc;
	struct short_calls shorts;
	struct emit_common em;
	uint64_t *buf;	   /* READ_BLOCK bytes */
	uint64_t mark_ts;  /* where the drop mark goes (NO_MARK: none, or placed) */
	uint32_t next_seq; /* early: the seq of the next chunk to feed */
	/* Early: what the replay counted until the thread was handed to the
	 * archive's conversion (conv_stats_add()). */
	struct conv_stats own;
	/* Early: the heap counter's deltas of its chunks fed until then,
	 * which the archive's conversion takes in its own (conv_heap_take()). */
	struct heap_counter own_heap;
};

/* `pl` for a conversion of `in`, written to `w` (may be NULL), counted in
 * `st`: the emitters' settings from `in` (time shift, step), an empty name
 * table. */
void conv_pipeline_init(struct pipeline *pl, struct fxt_writer *w, const struct conv_input *in,
			struct conv_stats *st);
/* A thread's conversion begun, its events written to `w`: the thread
 * record, then nothing until its records come (conv_replay_chunk() on
 * t->d).  0 or -errno (*out then goes to conv_thread_free()). */
int conv_thread_open(struct pipeline *pl, struct fxt_writer *w, uint32_t serial, uint64_t tid,
		     struct thread_state **out);
/* Where the drop instant of thread `th` goes (NO_MARK: none). */
uint64_t conv_drop_mark(const struct conv_input *in, const struct conv_thread *th);
/* What `th` dropped, before the records that may hold the drop mark. */
void conv_thread_drops(struct thread_state *t, const struct conv_input *in,
		       const struct conv_thread *th);
/* The end of a thread's records: its open frames closed at `th`'s end,
 * its summaries; adds its figures to pl->st and frees it.  `err`: an
 * error so far (then only freed).  0 or -errno. */
int conv_thread_close(struct pipeline *pl, struct thread_state *t, const struct conv_thread *th,
		      int err);
void conv_thread_free(struct thread_state *t);
/* Thread `th` whole, written to pl->em.w: `chunks` are its chunks. */
int conv_thread_whole(struct pipeline *pl, const struct conv_thread *th,
		      const struct chunk_ref *chunks, size_t nchunks);

/* The early conversion's side of conv_archive() (convert/early.c):
 * thread `th`'s early state if the archive's conversion can go on from it
 * (its records fed so far are those it would feed, the drop mark not
 * among them) and it is worth it (`first`: the archive's first thread,
 * whose file becomes the archive), else NULL (dropped: the thread is
 * converted whole); `chunks` are the thread's. */
struct early_thread;
struct early_thread *conv_early_take(struct conv_early *e, struct pipeline *pl,
				     const struct conv_thread *th, const struct chunk_ref *chunks,
				     size_t n, bool first);
/* The rest of it (its chunks from the next seq on, its end), its events
 * appended to pl->em.w; `first`: the archive's first thread, whose file
 * then becomes the archive where it can (fxt_writer_move_to_fd()). */
int conv_early_finish(struct pipeline *pl, struct early_thread *et, const struct conv_thread *th,
		      const struct chunk_ref *chunks, size_t n, bool first);

#endif /* FXT_CONVERT_THREAD_H */
