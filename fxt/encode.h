/* The FXT encoders' pieces that the writer inlines too: private to fxt/.
 *
 * The event encoder is inlined into fxt_writer_event() (writer.c), the
 * converter's path for every event it does not encode itself, as well as
 * behind fxt_enc_event() (encode.c).  The helpers it needs come with it.
 */
#ifndef FXT_ENCODE_H
#define FXT_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "fxt/internal.h"

/* Internally, SIZE_MAX marks a part of a record that cannot be encoded; the
 * public encoders turn it into 0.  Valid parts are all far below it, so the
 * sums of a few of them cannot overflow. */
#define BAD SIZE_MAX

/* Extra words after the arguments, by event type: the counter id, the end
 * time, or the async/flow correlation id. */
static const unsigned char event_extra_words[FXT_EVENT_TYPE_COUNT] = {
	[FXT_EVENT_COUNTER] = 1,     [FXT_EVENT_DURATION_COMPLETE] = 1,
	[FXT_EVENT_ASYNC_BEGIN] = 1, [FXT_EVENT_ASYNC_INSTANT] = 1,
	[FXT_EVENT_ASYNC_END] = 1,   [FXT_EVENT_FLOW_BEGIN] = 1,
	[FXT_EVENT_FLOW_STEP] = 1,   [FXT_EVENT_FLOW_END] = 1,
};

/* Words an inline string adds to its record (0 for empty and indexed refs). */
static inline size_t sref_words(struct fxt_sref s)
{
	unsigned len;

	if (!fxt_strref_is_inline(s.ref))
		return 0;
	len = fxt_strref_inline_len(s.ref);
	if (len > FXT_MAX_STRING_LEN || (len && !s.data))
		return BAD;
	return (size_t)fxt_stream_words(len);
}

static inline uint64_t *put_sref(uint64_t *p, struct fxt_sref s)
{
	if (fxt_strref_is_inline(s.ref))
		p += fxt__put_stream(p, s.data, fxt_strref_inline_len(s.ref));
	return p;
}

/* Words an inline thread adds: its process and thread koids. */
static inline size_t tref_words(struct fxt_tref t)
{
	return t.index == FXT_THREADREF_INLINE ? 2 : 0;
}

static inline uint64_t *put_tref(uint64_t *p, struct fxt_tref t)
{
	if (t.index == FXT_THREADREF_INLINE) {
		*p++ = t.pid;
		*p++ = t.tid;
	}
	return p;
}

/* The words of `nargs` arguments, BAD if one cannot be encoded. */
size_t fxt__args_words(const struct fxt_arg *args, unsigned nargs);

/* Writes `nargs` arguments at p; returns the word after them. */
uint64_t *fxt__put_args(uint64_t *p, const struct fxt_arg *args, unsigned nargs);

/* A large blob record is written in two parts: everything up to and
 * including the blob size word (the prefix), then the payload stream, which
 * the writer may send straight from the caller's memory.  The prefix's
 * size in words, *total set to the record's; 0 if it cannot be encoded. */
size_t fxt__large_blob_prefix_words(const struct fxt_large_blob *b, uint64_t *total);

/* Writes the prefix at p; returns the word after it. */
uint64_t *fxt__put_large_blob_prefix(uint64_t *p, const struct fxt_large_blob *b, uint64_t total);

/* The event encoder, inlined into fxt_writer_event().  Most events the
 * flusher writes have indexed refs and no arguments: they skip the stream
 * and argument code (and its validation, which has nothing to check). */
static inline __attribute__((always_inline)) size_t enc_event(uint64_t *out, size_t cap,
							      const struct fxt_event *ev)
{
	bool simple = !ev->nargs && !((ev->category.ref | ev->name.ref) & FXT_STRREF_INLINE_FLAG);
	size_t n;
	uint64_t *p = out;

	if ((unsigned)ev->type >= FXT_EVENT_TYPE_COUNT)
		return 0;
	n = 2 + tref_words(ev->thread) + event_extra_words[ev->type];
	if (!simple) {
		size_t cw = sref_words(ev->category), nw = sref_words(ev->name);
		size_t aw = fxt__args_words(ev->args, ev->nargs);

		if (cw == BAD || nw == BAD || aw == BAD)
			return 0;
		n += cw + nw + aw;
		if (n > FXT_MAX_RECORD_WORDS)
			return 0;
	}
	if (n > cap)
		return n;

	*p++ = fxt_event_header(n, ev->type, ev->nargs, ev->thread.index, ev->category.ref,
				ev->name.ref);
	*p++ = ev->ts;
	p = put_tref(p, ev->thread);
	if (!simple) {
		p = put_sref(p, ev->category);
		p = put_sref(p, ev->name);
		p = fxt__put_args(p, ev->args, ev->nargs);
	}
	if (event_extra_words[ev->type])
		*p = ev->extra;
	return n;
}

#endif /* FXT_ENCODE_H */
