/* What an archive holds, counted: the one definition of the numbers that
 * `fxt-dump --stats` prints and fxt-run's summary line says, so that the
 * two always agree.  Internal to fxtrace (not installed, not part of the
 * API); names carry the fxt__ prefix of internal symbols.
 *
 *   events     event records, of every type: slices (a complete event,
 *              or each of a begin and its end), instants, counters, flow
 *              events; what `fxt-dump --stats` also calls record.event
 *   threads    (process, thread) pairs with at least one event or log
 *              record; a thread's sample track (fxt-run --sample) is a
 *              thread of its own in the archive, and counts as one
 *   processes  processes with a process kernel object or a thread counted
 *   dropped    calls not recorded: the sum of N over the drop instants
 *              "fxt: N records dropped" (fxt_dropped_in_name())
 *   dropped_cause  the part of `dropped` whose instants say a cause
 *              (FXT_DROP_CAUSE_ARG: not a size limit), and `cause`, the
 *              first of those causes
 *   overwritten  calls a flight recorder overwrote: the sum of N over the
 *              instants "fxt: N records overwritten"
 *              (fxt_overwritten_in_name())
 *   kernel_lost  events the kernel lost: the sum of N over the instants
 *              "fxt: N kernel events lost" (fxt_kernel_lost_in_name())
 *   unsampled  the instants "fxt: not sampled: REASON" (threads that stack
 *              sampling could not sample from some time on), and in
 *              unsampled_why bit i for each REASON fxt_unsampled_reason(i)
 *
 * A reader counts record by record (fxt__counts_record()).  A writer that
 * knows what it wrote (the converter) counts the same things in bulk:
 * fxt__counts_thread() for a thread it wrote events or logs on,
 * fxt__counts_process() for the process it named, `events` and
 * fxt__counts_drops() for the instants; tests/e2e/launcher-counts.sh
 * holds the two to the same numbers.  Counts of several archives add up
 * with fxt__counts_add(), the threads and processes of both counted once,
 * as in the archive merged from them.
 *
 * A zeroed struct is an empty count.
 */
#ifndef FXT_COUNTS_H
#define FXT_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include <fxt/format.h>
#include <fxt/reader.h>

/* A set of (a, b) pairs (open addressing, grows at half full). */
struct fxt__pairs {
	struct fxt__pair {
		uint64_t a, b;
		uint64_t used;
	} * slots;
	size_t cap, n;
};

struct fxt__counts {
	uint64_t events;
	uint64_t dropped;
	uint64_t dropped_cause;
	char cause[FXT_DROP_CAUSE_MAX]; /* "" while dropped_cause is 0 */
	uint64_t overwritten;
	uint64_t kernel_lost;
	uint64_t unsampled;
	unsigned unsampled_why;
	struct fxt__pairs threads;   /* (pid, tid) */
	struct fxt__pairs processes; /* (pid, 0) */
};

void fxt__counts_free(struct fxt__counts *c);

/* Counts one record read from an archive.  0 or -ENOMEM. */
int fxt__counts_record(struct fxt__counts *c, const struct fxt_record *rec);

/* A thread with at least one event or log record, and its process.  0 or
 * -ENOMEM. */
int fxt__counts_thread(struct fxt__counts *c, uint64_t pid, uint64_t tid);

/* A process with its kernel object.  0 or -ENOMEM. */
int fxt__counts_process(struct fxt__counts *c, uint64_t pid);

/* An instant named `name` (`len` bytes) with a cause argument `cause`
 * (`cause_len` bytes; 0: none): a drop marker adds its N to `dropped` (and
 * to `dropped_cause` with a cause), an overwrite marker to `overwritten`. */
void fxt__counts_drops(struct fxt__counts *c, const char *name, size_t len, const char *cause,
		       size_t cause_len);

/* Adds `src` to `dst`: events and drops summed, threads and processes as
 * sets.  0 or -ENOMEM (dst then holds part of src). */
int fxt__counts_add(struct fxt__counts *dst, const struct fxt__counts *src);

static inline uint64_t fxt__counts_threads(const struct fxt__counts *c)
{
	return c->threads.n;
}

static inline uint64_t fxt__counts_processes(const struct fxt__counts *c)
{
	return c->processes.n;
}

#endif /* FXT_COUNTS_H */
