/* The calls of an archive in archive order, as a stream: each duration
 * slice as a call (a leaf, or an entry and an exit around its children)
 * with its thread, depth, duration and arguments, and the instants and
 * log lines in line.  Private to tools/ (fxt-replay; the interactive view's
 * list).
 *
 * Streaming, in bounded memory: nothing is read ahead but one record.  A
 * complete event has its duration up front; a begin event's comes with its
 * end.  So the stream holds back one call, the latest, until the next
 * record that is shown: if that is the end of the same begin, the two are
 * one CALL (a leaf, its duration known); if it is an event of the same
 * thread inside the call, the call has children and is an ENTER, and an
 * EXIT follows at its end; otherwise it is a CALL.  Each thread keeps the
 * stack of its calls with children (their names, for the EXIT), so memory
 * is the depth of the stacks, never the number of events.
 *
 * Order: the archive's.  Within a thread that is time order (fxtrace's
 * archives and start-ordered writers: a parent before its children); the
 * threads follow one another as the archive has them (fxtrace writes a
 * thread's slices in one run, so the calls of one thread are together).
 * When the archive goes on with another thread, the ENTERs of complete
 * events of the one it leaves get their EXIT then (their ends are known);
 * an ENTER of a begin event gets it at its end event.  Calls still open
 * at the end of the archive get an EXIT with `open` set, their duration
 * counted to the last timestamp seen.  Complete events in end order
 * (children first) come out in that order, each a CALL.
 *
 * Shown: duration begin, end and complete events, instant events, log
 * records.  Counter, flow and async events, and instants of the categories
 * FXT_SHORT_CATEGORY (include/fxt/format.h: summaries of calls left out)
 * are not items and hold nothing back. */
#ifndef FXT_TOOLS_CALLSTREAM_H
#define FXT_TOOLS_CALLSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fxt/reader.h>

enum callstream_kind {
	CALLSTREAM_CALL,    /* a call without children: ts, dur */
	CALLSTREAM_ENTER,   /* a call with children; dur when has_dur */
	CALLSTREAM_EXIT,    /* the end of an ENTER: ts is its end, dur */
	CALLSTREAM_INSTANT, /* an instant event */
	CALLSTREAM_LOG,	    /* a log record: name is its message */
};

struct callstream_item {
	enum callstream_kind kind;
	uint64_t pid, tid;
	uint64_t ts_ns;
	uint64_t dur_ns;
	bool has_dur; /* always but for the ENTER of a begin event */
	bool open;    /* never closed: dur runs to the last timestamp */
	unsigned depth; /* calls with children around it on its thread */
	struct fxt_string category, name;
	/* The arguments: of the slice (a begin/end pair: the begin's, then
	 * the end's; an EXIT: the end event's, if any). */
	unsigned nargs;
	const struct fxt_arg_value *args;
};

/* Receives each item; its strings are valid during the call only.  A
 * negative return stops the stream with that error. */
typedef int (*callstream_fn)(void *ctx, const struct callstream_item *it);

struct callstream;

int callstream_new(struct callstream **cs, callstream_fn fn, void *ctx);
void callstream_free(struct callstream *cs);

/* A copy of cs, in the state cs is (its stacks, the call it holds back),
 * that gives its items to fn(ctx): fed the records cs would be fed next,
 * it gives what cs would.  Returns 0 or -ENOMEM. */
int callstream_clone(const struct callstream *cs, callstream_fn fn, void *ctx,
		     struct callstream **out);

/* The bytes cs holds (its stacks, the call held back). */
size_t callstream_bytes(const struct callstream *cs);

/* Whether the stream shows the record (see above): an event of those
 * kinds, or a log record; the others are ignored by
 * callstream_add_record(). */
bool callstream_takes(const struct fxt_record *rec);

/* Feeds a record (read by r).  Returns 0, the callback's negative return,
 * or -ENOMEM. */
int callstream_add_record(struct callstream *cs, struct fxt_reader *r,
			  const struct fxt_record *rec);

/* After the last record: the call held back, then the EXITs of what is
 * still open, thread by thread.  Returns as callstream_add_record(). */
int callstream_finish(struct callstream *cs);

/* The timestamp of the first event or log record (ns), what relative
 * times start from; false until one was seen. */
bool callstream_start_ns(const struct callstream *cs, uint64_t *ns);

/* Whether the item is the instant of category "log" that the converter
 * writes beside each log record (for Perfetto): the log record is shown,
 * this copy is not. */
bool callstream_log_copy(const struct callstream_item *it);

/* Levels of nesting a line is indented for, two spaces each: a deeper
 * item is indented as the last of them and says its level, "[d=N] " (a
 * recursion 100,000 deep would otherwise print ~20 GB of blanks). */
#define CALLSTREAM_INDENT_MAX 64

/* Writes the item as fxt-replay's line (fxt-replay --help): the time since
 * start_ns (s), the duration, the thread, the call indented by its depth
 * (CALLSTREAM_INDENT_MAX) with its arguments and return value; a newline
 * at the end. */
void callstream_print(FILE *f, const struct callstream_item *it, uint64_t start_ns);

/* A time as fxt-replay's --since and --until and fxt-view's ':' take it:
 * a count is a timestamp (ns), a number with a unit (1.2s, 300ms, 5us,
 * 40ns) a time from the start (the first event).  0 or -EINVAL/-ERANGE. */
struct callstream_when {
	bool set, relative;
	uint64_t ns;
};
int callstream_parse_when(const char *s, struct callstream_when *w);
/* The timestamp (ns) it stands for, with the start at start_ns. */
uint64_t callstream_when_ns(const struct callstream_when *w, uint64_t start_ns);

#endif /* FXT_TOOLS_CALLSTREAM_H */
