/* A pipe of an archive's records from a reading thread to the profile
 * engine: the reader (decoding, and the I/O under it) runs on a second
 * thread, the engine on the caller's, in file order, so that what the
 * engine makes is the same as when it reads the records itself.
 *
 * Records go over in batches: an event without arguments whose strings
 * are table entries as a few words (its strings stay valid:
 * fxt_reader_keep_strings()), what the engine reads of the rare others
 * (events with arguments or inline strings, kernel objects, context
 * switches) as a copy with their strings, any other record as its type
 * and the reader's ticks per second after it.  Records of other types are
 * given with their type alone: the engine reads nothing else of them.
 *
 * Private to tools/ (the profile engine, fxt-waits).  Use: recpipe_start() on a reader that gave
 * no record yet, then recpipe_take() until it returns 0 or less, each
 * item through recpipe_record(), then recpipe_stop() (before anything
 * else touches the reader). */
#ifndef FXT_TOOLS_RECPIPE_H
#define FXT_TOOLS_RECPIPE_H

#include <stdbool.h>
#include <stdint.h>

#include <fxt/reader.h>

#include "tools/profile/tickconv.h"

struct recpipe;

/* A record as it goes over: an event without arguments whose strings are
 * table entries, in place (as fxt_reader_next_plain() gives it); any
 * other, a copy in `aux` (NULL: none).  For a record that is no event,
 * extra is the tick rate.  Private: read it with recpipe_record(). */
struct recpipe_item {
	struct fxt_plain e;
};

/* e.record_type of a duration begin, end or complete event whose ts and
 * extra (a complete event's end) the reading thread made ns (tickconv.h,
 * with the reader's clock then): recpipe_record() does not take it. */
#define RECPIPE_NS 0x80

/* The plain begins', ends' and completes' times in e[0 .. k) made ns
 * where tickconv_ns() with c can say them, and those events marked
 * RECPIPE_NS: the reading thread's with the reader's clock, the engine's
 * own loop (profile.c) with the engine's. */
static inline void recpipe_convert(const struct tickconv *conv, struct fxt_plain *x, size_t k)
{
	/* A copy the events' stores cannot change: in registers. */
	const struct tickconv c = *conv;

	if (c.r) {
		/* tickconv_fast(): a multiplication and a shift a time, the
		 * rest (ticks past its bound, no begin, end or complete)
		 * tickconv_ns()'s. */
		for (size_t i = 0; i < k; i++) {
			struct fxt_plain *e = &x[i];
			uint64_t ts = e->ts, end = e->extra;

			if (__builtin_expect(e->type == FXT_EVENT_DURATION_COMPLETE &&
						 !((ts | end) & c.rmask),
					     1)) {
				e->ts = tickconv_fast(&c, ts);
				e->extra = tickconv_fast(&c, end);
				e->record_type = RECPIPE_NS;
			} else if ((unsigned)e->type - FXT_EVENT_DURATION_BEGIN <= 2u &&
				   tickconv_ns(&c, ts, &ts) &&
				   (e->type != FXT_EVENT_DURATION_COMPLETE ||
				    tickconv_ns(&c, end, &end))) {
				e->ts = ts;
				e->extra = e->type == FXT_EVENT_DURATION_COMPLETE ? end : 0;
				e->record_type = RECPIPE_NS;
			}
		}
		return;
	}
	if (c.tps != UINT64_C(1000000000) && c.b > 1) {
		/* tickconv_ns()'s usual way, its tests out of the loop. */
		for (size_t i = 0; i < k; i++) {
			struct fxt_plain *e = &x[i];
			bool complete = e->type == FXT_EVENT_DURATION_COMPLETE;
			uint64_t n, q, end = 0;

			if ((unsigned)e->type - FXT_EVENT_DURATION_BEGIN > 2u || e->ts >= c.lim ||
			    (complete && e->extra >= c.lim))
				continue;
			if (complete) {
				n = e->extra * c.a;
				q = (uint64_t)(((unsigned __int128)n * c.m) >> 64);
				end = q - (q * c.b > n);
			}
			n = e->ts * c.a;
			q = (uint64_t)(((unsigned __int128)n * c.m) >> 64);
			e->ts = q - (q * c.b > n);
			e->extra = end;
			e->record_type = RECPIPE_NS;
		}
		return;
	}
	for (size_t i = 0; i < k; i++) {
		struct fxt_plain *e = &x[i];
		uint64_t ts, end = 0;

		if ((unsigned)e->type - FXT_EVENT_DURATION_BEGIN <= 2u &&
		    tickconv_ns(&c, e->ts, &ts) &&
		    (e->type != FXT_EVENT_DURATION_COMPLETE || tickconv_ns(&c, e->extra, &end))) {
			e->ts = ts;
			e->extra = end;
			e->record_type = RECPIPE_NS;
		}
	}
}

/* Whether a second thread can run beside this one (more than one CPU
 * online) and FXT_THREADS is not 0 in the environment. */
bool recpipe_worth(void);

/* Starts the reading thread on r.  0, or -errno (then read r directly). */
int recpipe_start(struct recpipe **pp, struct fxt_reader *r);

/* recpipe_start() for an engine that keeps times in ticks (fxt-waits'):
 * no item is made RECPIPE_NS. */
int recpipe_start_ticks(struct recpipe **pp, struct fxt_reader *r);

/* The next batch of records, in file order: *items[0 .. *n), valid until
 * the next call (which gives the batch back to the reading thread).  1, 0
 * at the end, -1 when fxt_reader_next() failed (fxt_reader_error() says
 * why after recpipe_stop()), or -ENOMEM. */
int recpipe_take(struct recpipe *p, const struct recpipe_item **items, size_t *n);

/* The record of item x, in *rec (valid until the next call), and the
 * reader's ticks per second right after it (what
 * fxt_reader_ticks_per_second() said then: for a record that is no
 * event; 0 for an event). */
static inline __attribute__((always_inline)) const struct fxt_record *
recpipe_record(struct fxt_record *rec, const struct recpipe_item *x, uint64_t *tps)
{
	*tps = x->e.record_type == FXT_RECORD_EVENT ? 0 : x->e.extra;
	if (x->e.aux)
		return x->e.aux;
	if (x->e.record_type == FXT_RECORD_EVENT)
		return fxt_plain_record(rec, &x->e);
	rec->type = (enum fxt_record_type)x->e.record_type;
	return rec;
}

/* Whether the archive began with its magic record (fxt_reader_saw_magic()
 * after the first record; for after recpipe_take() gave one). */
bool recpipe_saw_magic(const struct recpipe *p);

/* Stops the reading thread (where it is, if the consumer stopped early),
 * waits for it and frees the pipe. */
void recpipe_stop(struct recpipe *p);

#endif /* FXT_TOOLS_RECPIPE_H */
