/* Log line assembly: the bytes of a thread's LOG records (spool/records.h)
 * cut into lines per stream (stdout, stderr, syslog), each queued for the
 * emitter and marked in the thread's frames (recon_mark(), MARK_LOG) at
 * the time of the record that completed it, so that it is written in
 * stream order among the slices.  A line is ended by '\n', by
 * LOG_LINE_MAX bytes without one, by the end of a syslog message, or by
 * the end of the thread.  Private to convert/. */
#ifndef FXT_CONVERT_LOGLINES_H
#define FXT_CONVERT_LOGLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/recon.h"

struct log_line {
	uint64_t ts;
	unsigned stream, prio;
	size_t len;
	size_t off;	  /* in the text of the lines queued (log_lines.text) */
	const char *text; /* conv_log_pop()'s: valid until a line is queued */
};

/* Bytes of one output stream not yet ended by a newline. */
struct log_stream {
	char *buf;
	size_t len, cap;
	uint64_t ts; /* of the record that brought the last bytes */
	unsigned prio;
};

struct log_lines {
	struct recon *r;	      /* where the lines' marks go */
	struct log_stream streams[4]; /* by enum ev_log_stream */
	struct log_line *q;	      /* lines waiting for their marks, in order */
	size_t head, tail, cap;
	char *text; /* their bytes, one after the other (no allocation per */
	size_t text_len, text_cap; /* line), emptied with the queue */
};

void conv_log_init(struct log_lines *ll, struct recon *r);

/* Bytes of a LOG record of `stream` (1 .. 3) at `ts`: every line they
 * complete is queued and marked.  0 or -errno (the recon's, -ENOMEM). */
int conv_log_bytes(struct log_lines *ll, unsigned stream, unsigned prio, uint64_t ts, const char *s,
		   size_t len);

/* Ends the line `stream` has pending, if any (a syslog message is a line
 * of its own); conv_log_finish() ends every stream's (the thread ends). */
int conv_log_end(struct log_lines *ll, unsigned stream);
int conv_log_finish(struct log_lines *ll);

/* The next queued line, whose mark the emitter met, in *out: its text
 * stays valid until the next line is queued (conv_log_bytes(),
 * conv_log_end()).  False when none is queued. */
bool conv_log_pop(struct log_lines *ll, struct log_line *out);

void conv_log_free(struct log_lines *ll);

#endif /* FXT_CONVERT_LOGLINES_H */
