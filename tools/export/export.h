/* The Chrome trace-event JSON export (export_chrome.c): one pass over an
 * archive's records, each event written as it is read.
 *
 * Private to tools/export/ (fxt-export). */
#ifndef FXT_TOOLS_EXPORT_H
#define FXT_TOOLS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/front/common.h"

/* What was written, per kind of trace event. */
struct export_stats {
	uint64_t slices;    /* "X", "B", "E" of calls */
	uint64_t samples;   /* "X", "B", "E" of stack samples */
	uint64_t instants;  /* "i" from instant events */
	uint64_t counters;  /* "C" */
	uint64_t async;	    /* "b", "n", "e" */
	uint64_t flows;	    /* "s", "t", "f" */
	uint64_t logs;	    /* "i" named "log" from log records */
	uint64_t processes; /* "M" process_name */
	uint64_t threads;   /* "M" thread_name */
	/* The records the archive says were lost (tool_losses_record()). */
	struct tool_losses losses;
};

/* The category a stack sample's slice gets in the export after its own
 * (a Chrome category list, "libc.so.6,fxt.sample"): what tells it from a
 * call in a viewer or a query. */
#define EXPORT_SAMPLE_CATEGORY "fxt.sample"

/* Streams an archive as Chrome trace-event JSON ({"traceEvents":[...]}):
 * times in microseconds with the nanoseconds as decimals, arguments in
 * "args", ids as hex strings (64-bit ids do not fit a JSON double).  The
 * slices of stack samples stay on their track ("NAME (samples)") with
 * EXPORT_SAMPLE_CATEGORY added to their category, or without `samples`
 * are left out with their tracks' names.  Returns 0 or a negative errno
 * with a one-line reason in err; on -EIO the output failed (errno text in
 * err). */
int export_chrome(const struct tool_input *in, FILE *out, bool samples, struct export_stats *st,
		  char *err, size_t errlen);

#endif /* FXT_TOOLS_EXPORT_H */
