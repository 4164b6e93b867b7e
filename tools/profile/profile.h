/* Profile: per-function aggregates of the duration slices of an FXT archive.
 *
 * Private to tools/ (fxt-report, fxt-diff, and the flame graph's loading).
 * The engine (profile.c) streams records from the reader and rebuilds each
 * thread's call stack; memory grows with the number of distinct rows
 * (function x grouping) and stack depth, not with events (but for the
 * durations opts.percentiles keeps: up to opts.exact_max, then
 * sketches).  Its tables are profile-table.c's, the order of rows for
 * output profile-sort.c's.
 *
 * What it accepts, per thread (pid, tid of the event):
 *  - duration begin / end pairs (an end closes the innermost open begin);
 *  - duration complete events, either in start order (parents before their
 *    children) or in end order (children first, as an exit-time flusher
 *    emits them).  In end order a finished slice has to wait for a parent
 *    that may still come, so memory there grows with the number of finished
 *    siblings whose parent has not been seen yet (see profile.c).
 * Instant, counter, async and flow events only advance the trace's end;
 * instants "fxt: N records dropped" also count drops (profile_dropped()),
 * and "fxt: N records overwritten" what a flight recorder overwrote
 * (profile_overwritten()).
 *
 * Times are nanoseconds (ticks converted per provider by the reader).
 *
 * The slices of stack-sample tracks (fxt-run --sample) go to rows of their
 * own (profile_row.sampled), whatever the grouping: a sampled frame of f
 * is not a call of f.
 *
 * Definitions, per row:
 *  calls     slices (frames) of the function;
 *  total_ns  inclusive time, counting only the outermost active frame of the
 *            function on its thread, so recursion is not counted twice;
 *  self_ns   exclusive time: each frame's duration minus its children's;
 *  sum_ns    the sum of every frame's inclusive duration (recursive frames
 *            included): avg = sum_ns / calls, and min_ns/max_ns are over
 *            the same per-frame durations, and so is their variance
 *            (profile_row_var(), from a running mean and sum of squared
 *            deviations, Welford's, exact whatever the number of calls;
 *            with opts.variance only);
 *  open      frames still open at the end of the trace, counted up to the
 *            trace's last timestamp.
 * With subtract_overhead, the times of the calls of hooked functions are
 * those without the hooks' cost (see struct profile_opts).
 * Calls a writer summarised instead of writing them as slices (the
 * instants of category FXT_SHORT_CATEGORY, include/fxt/format.h: fxt-run
 * --min-duration) are added to their function's calls, total, self, sum,
 * min and max, and their time under a function's written calls is taken
 * from its self time, so that the numbers are those of every call.
 */
#ifndef FXT_TOOLS_PROFILE_H
#define FXT_TOOLS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_reader;
struct fxt_record;

/* What a row stands for: a function over the whole archive, a function in
 * one process, or a function in one thread. */
enum profile_by {
	PROFILE_BY_FUNCTION,
	PROFILE_BY_PROCESS,
	PROFILE_BY_THREAD,
};

struct profile_row {
	const char *category; /* NUL-terminated copies owned by the profile */
	const char *name;
	uint64_t pid; /* 0 unless grouped by process or thread */
	uint64_t tid; /* 0 unless grouped by thread */
	/* The row's slices are stack samples (a sample track's, a thread of
	 * koid tid | FXT_SAMPLE_KOID_BIT, include/fxt/format.h), never
	 * merged with the calls of the same function: a function that has
	 * both has two rows.  Its "calls" are frames of the stack chart and
	 * its times estimates of CPU time. */
	bool sampled;
	/* Grouped by thread, for a sampled row: the track's name, "<thread>
	 * (samples)", and tid is the sampled thread's (NULL when the track
	 * was not named).  NULL for every other row. */
	const char *track;
	/* Where the function is in the source, as the archive says once per
	 * function (tools/front/srcloc.h): "src/a.c:12", "(no debug info)";
	 * NULL when it does not say.  Set by profile_finish(). */
	const char *loc;

	uint64_t calls;
	uint64_t total_ns;
	uint64_t self_ns;
	uint64_t sum_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t open;

	/* Per-frame durations: their running mean and sum of squared
	 * deviations from it (Welford), for profile_row_var(); kept only
	 * with opts.variance (0 otherwise). */
	double dur_mean;
	double dur_m2;
	/* Calls written as no slice (fxt-run --min-duration) directly under
	 * this function's, which profile_finish() takes from its self time. */
	uint64_t left_out_child_ns;
	/* Of calls, those the summaries of such calls counted, and the
	 * shortest and longest of them (0 when none). */
	uint64_t short_calls, short_min_ns, short_max_ns;
};

/* The variance of the row's per-frame inclusive durations, ns^2 (n - 1 in
 * the denominator; 0 with fewer than two calls). */
static inline double profile_row_var(const struct profile_row *r)
{
	return r->calls > 1 ? r->dur_m2 / (double)(r->calls - 1) : 0;
}

/* A slice whose numbers are final, for exporters (flame graphs, the call
 * tree).  `path` lists the rows of the slice's open ancestors on its
 * thread, outermost first, then the slice's own row (path[depth]); with
 * end-ordered complete events the complete ancestors are not known yet
 * when a slice finishes (end_order).  Valid during the call only. */
struct profile_slice {
	uint64_t pid, tid;
	uint64_t start_ns, end_ns;
	uint64_t self_ns;
	bool open;
	/* The thread's complete events come in end order (children first):
	 * path then holds the frames open below the slice (begin events')
	 * but not its complete ancestors, which come after it. */
	bool end_order;
	unsigned depth;
	const uint32_t *path;
	/* path[0 .. same) is what it was at the last slice given of the same
	 * (pid, tid) (same may be past depth + 1; 0 for its first): a
	 * consumer that keeps each thread's last path need not compare that
	 * part again (a deep recursion would make it quadratic). */
	unsigned same;
};

typedef void (*profile_slice_fn)(void *ctx, const struct profile_slice *s);

/* End order, for a consumer that needs each slice's complete ancestors
 * (fxt-flame, fxt-tree): it keeps the thread's slices, each beginning
 * with its span, until the archive is read, sorts them with
 * profile_span_cmp() (start ascending, end descending, then arrival:
 * parents first) and nests them with a stack, a slice going under the
 * innermost kept one that profile_span_holds(). */
struct profile_span {
	uint64_t start, end;
	uint32_t seq; /* arrival, to order identical intervals */
};

int profile_span_cmp(const void *a, const void *b);

static inline bool profile_span_holds(const struct profile_span *outer,
				      const struct profile_span *inner)
{
	return outer->end > inner->start && outer->end >= inner->end;
}

struct profile_opts {
	enum profile_by by;
	profile_slice_fn on_slice; /* optional */
	void *ctx;
	/* Take the hooks' own cost (an archive's FXT_HOOK_COST_NAME instants,
	 * include/fxt/format.h) from the times of the calls of hooked
	 * functions: from each call "inside", and a pair per call of a hooked
	 * function it made (its descendants); its self time then loses
	 * "inside" and the rest of a pair per child.  Times never go below 0. */
	bool subtract_overhead;
	/* Keep every call's inclusive duration (the per-frame durations of
	 * sum_ns, min_ns, max_ns; not those of sampled rows), for
	 * profile_quantiles() and profile_histogram(). */
	bool percentiles;
	/* Keep each row's running mean and variance of its per-frame
	 * durations (profile_row_var(): fxt-diff's significance).  Off, the
	 * fold saves a division a frame. */
	bool variance;
	/* The durations held at most, over all rows (0: PROFILE_EXACT_MAX);
	 * past it the rows holding the most become sketches (pctl.h) until
	 * half of it is held. */
	uint64_t exact_max;
};

/* 2^25 durations, 128 MiB (4 bytes each; 8 in a row with one past
 * 4.29 s; their arrays up to twice that while they grow): exact
 * percentiles for tens of millions of calls on a machine of a few GiB. */
#define PROFILE_EXACT_MAX      (UINT64_C(1) << 25)
#define PROFILE_EXACT_MAX_TEXT "33554432" /* for --help */

/* Counts of things in the input that were tolerated, not fatal. */
struct profile_anomalies {
	uint64_t unmatched_ends; /* duration end with no open begin on its thread */
	uint64_t overlaps;	 /* a slice that only partly overlaps its parent */
	uint64_t reversed;	 /* a complete event ending before it starts */
	uint64_t end_ordered;	 /* threads whose complete events came in end order */
	uint64_t merged;	 /* end order: a parent starting inside merged siblings
				    (memory bound, see profile.c); its self time is high */
};

struct profile;

int profile_new(struct profile **p, const struct profile_opts *opts);
void profile_free(struct profile *p);

/* Replaces opts.on_slice and opts.ctx (before the first record). */
void profile_set_slice_fn(struct profile *p, profile_slice_fn fn, void *ctx);

/* Makes profile_load() read on the caller's thread, for a caller that
 * runs a thread of its own beside it (fxt-tree's walker): otherwise it
 * reads on a second thread where more than one CPU is online
 * (tools/profile/recpipe.c). */
void profile_read_here(struct profile *p);

/* Feeds one record read by `r` (for ticks -> ns).  Returns 0 or -ENOMEM. */
int profile_add_record(struct profile *p, struct fxt_reader *r, const struct fxt_record *rec);

/* Closes what is still open (at the trace's last timestamp) and finalizes
 * the rows.  Call once, after the last record; rows are read after it. */
int profile_finish(struct profile *p);

/* Reads a whole archive (path, "-" for stdin) into `p` and finishes it.
 * Returns 0, or a negative errno with a one-line reason in err (e.g.
 * "not an FXT archive (no magic record)", "truncated record at byte 80"). */
int profile_load(struct profile *p, const char *path, char *err, size_t errlen);

/* Rows, in creation order; valid until profile_free(). */
size_t profile_nrows(const struct profile *p);
const struct profile_row *profile_row(const struct profile *p, size_t i);

/* Looks a row of calls up by category and name (pid/tid too when
 * grouped; sampled rows are not looked up); the category may be NULL to
 * match the first row with that name. */
const struct profile_row *profile_find(const struct profile *p, const char *category,
				       const char *name, uint64_t pid, uint64_t tid);

/* First and last timestamps seen (ns), record and event counts: slices
 * of calls, and apart the slices of sample tracks (sampled rows' frames)
 * and the sample tracks they are on.  The counts are final once finished. */
uint64_t profile_start_ns(const struct profile *p);
uint64_t profile_end_ns(const struct profile *p);
uint64_t profile_nrecords(const struct profile *p);
uint64_t profile_nslices(const struct profile *p);
uint64_t profile_nsampled(const struct profile *p, uint64_t *ntracks);
const struct profile_anomalies *profile_anomalies(const struct profile *p);

/* Calls the tracer could not record: the sum of N over the instant events
 * "fxt: N records dropped" (FXT_DROP_PREFIX, one per thread that dropped,
 * fxt_dropped_in_name()), and in *nthreads (may be NULL) the number of
 * distinct threads they are on.  0: no drops, the totals are complete. */
uint64_t profile_dropped(const struct profile *p, uint64_t *nthreads);

/* Provider event records "a buffer filled up, records were likely
 * dropped" (FXT_PROVIDER_EVENT_BUFFER_FULL, another writer's way of saying
 * it lost records; no count).  Not 0: the totals may be partial. */
uint64_t profile_buffer_full(const struct profile *p);

/* Calls a flight recorder overwrote (fxt-run --mode=circular): the sum of
 * N over the instants "fxt: N records overwritten"
 * (fxt_overwritten_in_name()).  Not 0: the totals are those of the
 * newest calls, the window each thread kept. */
uint64_t profile_overwritten(const struct profile *p);

/* Events the kernel lost (fxt-run --kernel, fxt-import): the sum of N
 * over the instants "fxt: N kernel events lost"
 * (fxt_kernel_lost_in_name()).  Not 0: the threads' states and the
 * kernel's events are partial, the calls are not. */
uint64_t profile_kernel_lost(const struct profile *p);

/* A thread that stack sampling could not sample from `ts_ns` on (an
 * instant FXT_UNSAMPLED_PREFIX "REASON", include/fxt/format.h). */
struct profile_unsampled {
	uint64_t pid, tid, ts_ns;
	char reason[128];
};

/* Those threads (*v: n of them, owned by the profile). */
size_t profile_unsampled(const struct profile *p, const struct profile_unsampled **v);

/* The threads' states from the kernel's context switches (sched.h),
 * final once finished; NULL when the archive has none. */
struct sched;
const struct sched *profile_sched(const struct profile *p);

/* With subtract_overhead: the processes whose hook cost the archive gave,
 * and in *pair_ns and *inside_ns (may be NULL) their mean.  0: none (the
 * times are as measured). */
size_t profile_hook_cost(const struct profile *p, double *pair_ns, double *inside_ns);

/* Percentiles of a row's calls (percentiles: true), ppm[0..m) ascending
 * in parts per million (pctl.h), nearest rank over all its calls.  What
 * each value is: */
enum profile_q_kind {
	PROFILE_Q_EXACT,  /* a measured duration */
	PROFILE_Q_APPROX, /* the row's durations became a sketch: within
			   * PCTL_REL_ERR of the duration at that rank */
	PROFILE_Q_BOUND,  /* the rank falls among the calls fxt-run
			   * --min-duration summarised (shorter than every call
			   * written, taken to rank first): their longest, an
			   * upper bound */
};

struct profile_q {
	uint64_t ns;
	enum profile_q_kind kind;
};

/* Fills out[0..m), m <= 8 (1000000 ppm is max_ns, exact).  May reorder
 * the row's durations.  Returns 0, -EINVAL when not kept, the row has no
 * call or m is larger, or -ENOMEM. */
int profile_quantiles(struct profile *p, const struct profile_row *r, const uint32_t *ppm, size_t m,
		      struct profile_q *out);

/* Adds the row's calls written as slices to log2 buckets hist[0..65)
 * (pctl.h: [0] 0 ns, [k + 1] [2^k, 2^(k+1)) ns), exact even from a
 * sketch; the summarised calls are r->short_calls.  Returns 0 or -EINVAL
 * when not kept. */
int profile_histogram(const struct profile *p, const struct profile_row *r, uint64_t *hist);

/* The store of the row's durations (NULL when not kept), for merging. */
const struct pctl *profile_durations(const struct profile *p, const struct profile_row *r);

/* Rows whose durations became sketches: their percentiles are within
 * PCTL_REL_ERR. */
size_t profile_nsketched(const struct profile *p);

/* Sorting rows for output. */
enum profile_sort {
	PROFILE_SORT_SELF,
	PROFILE_SORT_TOTAL,
	PROFILE_SORT_CALLS,
	PROFILE_SORT_AVG,
	PROFILE_SORT_MAX,
	PROFILE_SORT_NAME,
};

/* Parses --by's "function", "process" or "thread" (fxt-report, fxt-tree).
 * Returns 0 or -EINVAL. */
int profile_by_parse(const char *s, enum profile_by *out);
/* Parses "self", "total" ... Returns 0 or -EINVAL. */
int profile_sort_parse(const char *s, enum profile_sort *out);
/* Sorts an array of row pointers: numbers descending, names ascending; ties
 * by name then pid then tid, so output is deterministic. */
void profile_sort_rows(const struct profile_row **rows, size_t n, enum profile_sort key);

#endif /* FXT_TOOLS_PROFILE_H */
