/* Other tracers' files -> FXT: what the importers share.  Private to
 * import/ and tools/front/fxt-import.c.
 *
 * An importer reads one file and writes its events into an FXT writer
 * that already holds the magic record, as one provider per stream (a
 * trace.dat's buffer, a ktrace file).  Timestamps are written in
 * nanoseconds (initialization record: 10^9 ticks per second) on the
 * clock the file was recorded with; the provider's name says which:
 *
 *     "<format> <what> [clock=<name>]"       e.g. "trace-cmd top [clock=mono]"
 *
 * import_clock_of_provider() reads it back, for fxt-merge, which aligns
 * archives on CLOCK_MONOTONIC (what the agent's archives use).
 *
 * Each thread's events are written in time order when the input's are:
 * trace.dat's CPUs are merged by time (each CPU's records are in time
 * order as the kernel's ring buffer keeps them), every event written at
 * its record's time or at the stream's latest; ktrace's are written as
 * the file has them.  An importer counts in st.unordered the events
 * that break that (a trace.dat record earlier than the stream's latest,
 * a ktrace event earlier than its thread's latest).  So the caller
 * writes fxtrace's mark of time order (fxt_writer_time_ordered()) after
 * the magic record, and writes the archive again without it when the
 * count is not 0 (fxt-import, fxt-run --kernel): readers of a marked
 * archive make no first pass (fxt/order.c).
 *
 * Errors: an importer returns 0 or -errno and, on failure, leaves one line
 * in ic->err naming the file and the byte offset of the problem.  The
 * caller then discards the output (no partial archive).
 */
#ifndef FXT_IMPORT_H
#define FXT_IMPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

/* The clock tag in a provider's name. */
#define IMPORT_CLOCK_TAG "[clock="

/* What an import counted. */
struct import_stats {
	uint64_t events;     /* input events read */
	uint64_t records;    /* FXT event, context switch and log records written */
	uint64_t lost;	     /* events the recorder lost (its buffer overran) */
	uint64_t skipped;    /* chunks or events not understood and left out */
	uint64_t threads;    /* threads named */
	uint64_t unrecorded; /* switch-ins of the agent's threads not recorded */
	uint64_t unordered;  /* events read before what they must follow (below) */
	unsigned providers;  /* streams (buffers) written */
	char clock[32];	     /* the (first) stream's clock */
};

struct import_ctx {
	struct fxt_writer *w;
	const char *path;	/* the input, for messages */
	int fd;			/* the input, open for reading */
	uint32_t next_provider; /* the id the next stream takes (from 1) */
	bool verbose;
	/* The process (tgid) of thread `tid`, or -1 when unknown (NULL: all
	 * unknown, each thread its own process, as trace.dat has no tgids);
	 * *agent: the thread is the agent's (fxt-run --kernel), whose archive
	 * names its process, and whose track holds the calls: its states
	 * are its context switch records alone (no slices), and its wake-up
	 * a flow from the call its waker (the agent's) was in. */
	int (*tgid_of)(void *arg, int tid, bool *agent);
	void *tgid_arg;
	struct import_stats st;
	char err[512];
};

/* Sets ic->err to "PATH: offset OFF: MESSAGE" and returns `rc` (< 0). */
int import_fail(struct import_ctx *ic, int rc, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Starts a stream: provider info named "<name> [clock=<clock>]", its
 * initialization record (ns), and returns its id in *id.  0 or -errno. */
int import_provider(struct import_ctx *ic, const char *name, const char *clock, uint32_t *id);

/* The clock named in a provider's name (the tag above) into buf; false when
 * the name has none (an archive of the agent's: CLOCK_MONOTONIC). */
bool import_clock_of_provider(const char *name, size_t len, char *buf, size_t cap);

/* The formats, found by their magic numbers. */
enum import_format { IMPORT_UNKNOWN, IMPORT_TRACEDAT, IMPORT_KTRACE, IMPORT_FXT };

/* The format whose magic starts `head` (`len` bytes of the file's start). */
enum import_format import_sniff(const void *head, size_t len);

/* trace-cmd's trace.dat, versions 6 and 7 (libtracecmd).  -ENOTSUP (with
 * ic->err set) when fxtrace was built without libtracecmd. */
int import_tracedat(struct import_ctx *ic);

/* One stream of scheduler events from libtraceevent (a trace.dat's
 * buffer, or a live tracefs instance: launcher/kernel.c), mapped as
 * import_tracedat() maps them.  begin() writes the provider named `name`
 * on `clock`; record() takes the records in time order (non-zero: stop,
 * the error is kept); end(s, err) closes the open slices and frees s,
 * returning the stream's first error (or err).  0 or -errno, ic->err set. */
struct import_stream;
struct tep_handle;
struct tep_record;
int import_stream_begin(struct import_ctx *ic, struct tep_handle *tep, const char *name,
			const char *clock, struct import_stream **s);
int import_stream_record(struct import_stream *s, struct tep_record *rec);
int import_stream_end(struct import_stream *s, int err);
/* Says `n` events lost that no page of the stream said (a ring buffer
 * that drops the newest when full counts them apart): the marker at the
 * stream's last time, on its last event's thread.  0 or -errno. */
int import_stream_lost(struct import_stream *s, uint64_t n);

/* Darwin ktrace, V3 (magic 0x55aa0300), read from ic->fd. */
int import_ktrace(struct import_ctx *ic);

#endif /* FXT_IMPORT_H */
