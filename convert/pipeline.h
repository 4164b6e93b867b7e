/* The conversion's pipeline: spool -> FXT archive.  Private to convert/.
 *
 * conv_archive() only needs the spool file, the thread metadata and
 * the symbolizer, not the live process (convert.c gives it those from a
 * sealed spool, or none for a killed process's: threads are then known by
 * the tids in the chunk headers and named after the names there, the
 * newest of each thread's chunks; spool/format.h, "Thread names").
 *
 * Archive layout: magic; provider info (id = pid, "fxtrace");
 * initialization (ticks per second 10^9: every timestamp is written in
 * ns, convert/timebase.h); kernel objects naming the process and
 * every thread (with the "process" koid argument Perfetto needs); then, per
 * thread, its thread record, the string records of the names it uses and its
 * slices in start order (a parent before its children, see recon.h): duration
 * complete events (24 bytes each with indexed refs) for nearly all calls, a
 * begin/end pair for the few frames that stay open across a full start-order
 * FIFO; the frames still open at the end close at the thread's exit, at the
 * point it started dropping, or at the seal.  A thread that dropped records
 * gets an instant event "fxt: N records dropped" (category "fxt") at the
 * time it started dropping, in stream order among its slices, with an
 * argument "cause" (a string) when it was not for a size limit; the provider
 * event "buffer full" comes once at the end if any thread dropped.  A
 * thread whose oldest records were overwritten (the circular mode: its
 * first chunk's seq is not 0) gets an instant "fxt: N records overwritten"
 * where its kept records begin, and the frames open there (the exits
 * whose enters were overwritten) start just before it, with an argument
 * "start_overwritten" (true).  Calls
 * lost outside any thread (the seal's `lost`) get a drop instant of their
 * own on the main thread, at the seal's time, before it.
 *
 * Name of a slice: the symbolized function; category: the basename of its
 * module (the executable or shared library).  Each function's source
 * location, when the lookup gives one, comes once per thread, before its
 * first slice (a kernel object record, include/fxt/format.h,
 * FXT_OBJ_FUNCTION); when the lookup said it comes later
 * (FXT_SYM_LOC_LATER: a thread beside the conversion still decodes it),
 * after the thread's events instead, unless every slice carries it
 * (loc_args).
 *
 * Tagged records (spool/records.h) add, per thread:
 *  - libc calls (CALL frames), nested like functions, named after the
 *    wrapped function ("read"), category its group ("libc.io"), with their
 *    arguments (ARG, STR; "caller", "result", "error" for an errno result)
 *    on the slice: such slices go through the general encoder, the rest
 *    keep the 3-word path;
 *  - flow events (FLOW; sync pairs; pipe reads), category "flow", named
 *    after their frame, timestamped strictly inside it so that Perfetto,
 *    which binds a flow event to the innermost slice open at its time,
 *    binds it there (a frame's tagged records each move its thread's time
 *    on by a tick, leaving that room);
 *  - log lines (LOG, assembled per stream at '\n'): a log record and an
 *    instant event, category "log", named after the line, with argument
 *    "stream" (and "message", the whole line, when the name cuts it), in
 *    stream order among the slices;
 *  - a sample track (SAMPLE): a thread of its own (koid tid | 2^30, named
 *    "<thread> (samples)") whose slices are the stack chart of the samples;
 *    time the sampled thread spent in the agent itself (its start-up, a
 *    hook's chunk refill, a wrapper's recording: the agent's frames, and
 *    in a sample the agent marked as its own the C library's frames it
 *    called) is one frame "fxtrace" (category "fxtrace") under the
 *    program's frame that called it.  A thread the agent could not sample
 *    from some time on gets an instant "fxt: not sampled: REASON"
 *    (include/fxt/format.h) there.
 * After every thread, the heap counter (COUNTER deltas of all threads,
 * summed in time order): counter events "heap" (category "libc.mem",
 * argument "bytes_in_use") on the main thread.
 */
#ifndef FXT_CONVERT_PIPELINE_H
#define FXT_CONVERT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "fxt/counts.h"

#include "run/session.h"
#include "spool/format.h"
#include "symbolizer/symbolizer.h"

struct conv_thread {
	uint32_t serial;
	uint64_t tid;
	char name[16]; /* "" = unknown */
	uint64_t dropped;
	uint64_t first_drop_ts;
	uint64_t stop_ts;     /* frames open at the end close here if set ... */
	uint64_t end_ts;      /* ... else here if set ... else at now_ts */
	uint64_t overwritten; /* calls overwritten (circular mode) */
	uint32_t drop_cause;  /* why it dropped, if not for a size limit (SPOOL_CAUSE_*) */
};

/* Symbols for code addresses, as fxt_sym_lookup() gives them. */
typedef const struct fxt_sym_info *conv_lookup_fn(void *ctx, uint64_t addr);

/* The location of the function at `addr` whose lookup said
 * FXT_SYM_LOC_LATER, as fxt_symview_loc() gives it (it may wait), its
 * parts in *file and *line (fxt_sym_info.loc_file, loc_line; 0: not said). */
typedef const char *conv_loc_fn(void *ctx, uint64_t addr, uint32_t *file, uint32_t *line);

/* Signatures of functions, as fxt_sym_signature() gives them; NULL when
 * there is none. */
struct fxt_signature;
typedef const struct fxt_signature *conv_signature_fn(void *ctx, uint64_t addr);

struct conv_input {
	uint64_t pid;
	const char *process_name;
	uint64_t ticks_per_second; /* the spool's clock: its records' ticks (spool/clock.h) */
	uint64_t now_ts;
	int spool_fd;	    /* read with pread/mmap; not closed */
	uint64_t spool_end; /* bytes of the spool to read */
	/* The spool's first spool_map_len bytes mapped (read-only), where
	 * the chunks are read without a copy; NULL: read with pread. */
	const void *spool_map;
	uint64_t spool_map_len;
	const struct conv_thread *threads;
	size_t nthreads;
	uint64_t lost;	     /* calls lost outside any thread's count */
	uint64_t lost_ts;    /* where their instant goes when now_ts is 0 (a recovery) */
	uint32_t lost_cause; /* why, if not for a size limit (SPOOL_CAUSE_*) */
	struct fxt_sym *sym; /* symbols, unless `lookup` is set; may be NULL */
	/* The agent's own code, [agent_lo, agent_hi) (0, 0: unknown): the
	 * innermost frames of a stack sample that lie in it are the agent's
	 * work, not the program's, and become one frame named "fxtrace". */
	uint64_t agent_lo, agent_hi;
	conv_lookup_fn *lookup;
	void *lookup_ctx;
	/* The locations `lookup` said FXT_SYM_LOC_LATER: their records come
	 * after the thread's events, unless loc_args (NULL: the lookup never
	 * says so). */
	conv_loc_fn *loc_later;
	/* The signature of the function at a code address (--args,
	 * --retval: how its registers show), or NULL; NULL: none known. */
	conv_signature_fn *signature;
	void *signature_ctx;
	size_t fifo_max; /* start-order FIFO bound per thread (recon.h); 0 = default */
	/* What the agent recorded besides hooks (spool header): the FXT_LIBC
	 * groups (AGENT_G_SYNC: pair sync records into flows) and the
	 * FXT_SAMPLE rate (0: no samples). */
	unsigned libc_groups;
	unsigned sample_hz;
	/* The spool says that no acquisition waited (spool/format.h,
	 * `waited` is 0): no sync records to pair, none read for that. */
	bool no_waits;
	/* Every write to a pipe or socket of the trace session, sorted by
	 * (key, off) (run_session_load_writes()): a read gets a flow from each
	 * write whose first byte it consumed.  May be NULL. */
	const struct session_write *pipe_writes;
	size_t npipe_writes;
	/* The time base: a point known both in ticks and in CLOCK_MONOTONIC
	 * ns (the clock calibration start).  Every timestamp is written in ns
	 * from it, base_ns + (ts - base_ticks) * 10^9 / ticks_per_second
	 * (convert/timebase.h), so that the archive's times are
	 * CLOCK_MONOTONIC times: processes that measured slightly different
	 * tick rates still agree (a rate error then only scales the process's
	 * own run time, not the machine's uptime that raw TSC values count).
	 * 0, 0: ticks from 0 ns. */
	uint64_t base_ticks;
	uint64_t base_ns;
	/* FXT_MIN_DURATION: calls shorter than this many ns are written as
	 * no slice, but counted in the thread's summary instants
	 * (FXT_SHORT_CATEGORY, include/fxt/format.h).  0: every call. */
	uint64_t min_duration_ns;
	/* The hooks' own cost (the seal's, agent/calib.h: thousandths of a
	 * tick, refills in ticks); 0: not measured, no FXT_HOOK_COST_NAME
	 * instant. */
	uint64_t hook_pair_ticks, hook_inside_ticks, refill_ticks, hook_stub_ticks;
	/* fxt-run --srcline: each slice of a function whose location is
	 * known also carries it (FXT_LOC_ARG, include/fxt/format.h). */
	bool loc_args;
	/* A snapshot's spool (its header's snapshot is not 0): the header,
	 * whose snap_* fields say what set it off; NULL for a process's own. */
	const struct spool_header *snapshot;
	/* The same spool's threads converted while its process ran
	 * (conv_early_new()), with these same settings, tick rate and time
	 * base; NULL: none.  conv_archive() goes on from where each thread
	 * is and appends its events where the thread's come. */
	struct conv_early *early;
};

/* The address a stack sample's agent frames become (CONV_AGENT_FRAME
 * names it): below 2^56 like a code address, in no module. */
#define CONV_AGENT_PC	 ((1ull << 56) - 16)
#define CONV_AGENT_FRAME "fxtrace"

/* The archive's time (ns) of tick `ticks` of `in`, as conv_archive()
 * writes every timestamp (convert/timebase.h). */
uint64_t conv_time_ns(const struct conv_input *in, uint64_t ticks);

struct conv_stats {
	uint64_t events;  /* slices: complete events and begin/end pairs */
	uint64_t begun;	  /* slices written as begin/end pairs */
	uint64_t threads; /* threads with at least one record or drop */
	uint64_t dropped;
	uint64_t overwritten;	 /* calls overwritten (circular mode) */
	uint64_t unmatched;	 /* exits without enters, ignored */
	uint64_t records;	 /* hook records and tagged records */
	uint64_t libc_calls;	 /* CALL frames entered */
	uint64_t fn_args;	 /* registers read at patched entries and returns (--args) */
	uint64_t fn_args_orphan; /* ... whose entry a filter left out: not shown */
	uint64_t flows;		 /* flow events written */
	uint64_t log_lines;
	uint64_t counters;	/* counter events */
	uint64_t samples;	/* stack samples fed to a stack chart */
	uint64_t sample_slices; /* slices of the sample tracks (not in `events`) */
	uint64_t left_out;	/* calls written as no slice (min_duration_ns) */
	uint64_t deep;		/* slices nested deeper than Perfetto shows */
	uint64_t max_depth;	/* the deepest nesting among those, else 0 */
	uint64_t deep_tid;	/* a thread with the deepest */
	/* What the archive holds, as a reader counts it (fxt/counts.h):
	 * every event record, the threads with one, the process, the calls
	 * its drop instants count.  Owned: fxt__counts_free() it, whatever
	 * conv_archive() returned. */
	struct fxt__counts counts;
};

/* Writes the archive.  Returns 0 or -errno (the writer's first error, a
 * spool read error, -ENOMEM). */
int conv_archive(struct fxt_writer *w, const struct conv_input *in, struct conv_stats *st);

/* Early conversion: a process's threads converted while it runs, each
 * thread's events into an unnamed file of its own (O_TMPFILE in `dir`),
 * so that at its end only its last chunks are left (conv_input.early).
 * Of a spool in the stream mode only (it reads a thread's chunks in
 * sequence: a chunk once its thread has a later one, and not while staged,
 * where its copy is read), whose conversion needs nothing that only the
 * whole spool gives (no samples, no sync pairs: the caller checks; a
 * thread's heap counter deltas are its own until it is taken over), with the tick rate and time base fixed now (in).  A thread's
 * events are the bytes that conv_archive() writes for it: it forgets the
 * writer's strings before each thread.  At most 16 threads of a spool
 * are converted early (memory: each holds its state until the end).
 * `flags`: the archive's compression (fxt_writer_path_flags()), which the
 * threads' files get too, on the caller's thread (FXT_WRITER_SERIAL). */
struct conv_early;
int conv_early_new(struct conv_early **e, const struct conv_input *in, const char *dir,
		   unsigned flags);
/* Feeds at most `max_chunks` chunks that are whole now.  Returns how many,
 * or -errno (sticky: conv_archive() then converts the threads itself). */
int conv_early_step(struct conv_early *e, unsigned max_chunks);
/* While *flag is set, a step feeds no chunk past its first (the caller
 * wants the conversion: it waits for the step under way).  NULL: none. */
void conv_early_yield(struct conv_early *e, const uint32_t *flag);
/* Chunks fed so far. */
uint64_t conv_early_fed(const struct conv_early *e);
/* The archive's first thread's file becomes the archive (its events
 * uncopied, padding between the opening records and them) only past
 * `bytes` of events; up to that it is copied as the others are, and the
 * archive has no padding.  CONV_EARLY_COPY_MAX unless set (tests: 0). */
#define CONV_EARLY_COPY_MAX (8ull << 20)
void conv_early_copy_max(struct conv_early *e, uint64_t bytes);
void conv_early_free(struct conv_early *e);

#endif /* FXT_CONVERT_PIPELINE_H */
