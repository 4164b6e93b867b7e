/* FXT record encoders (the contract: include/fxt/writer.h).  Each computes
 * the record's size first, validating every field, and writes only if it
 * fits in the caller's capacity. */
#include "config.h"

#include <string.h>

#include <fxt/writer.h>

#include "fxt/encode.h"
#include "fxt/internal.h"

static inline uint64_t header(enum fxt_record_type type, size_t nwords)
{
	return fxt_field(type, 0, 3) | fxt_field(nwords, 4, 15);
}

size_t fxt_arg_words(const struct fxt_arg *a)
{
	size_t n = 1, w;

	if (!a || (unsigned)a->type >= FXT_ARG_TYPE_COUNT)
		return 0;
	w = sref_words(a->name);
	if (w == BAD)
		return 0;
	n += w;
	switch (a->type) {
	case FXT_ARG_INT64:
	case FXT_ARG_UINT64:
	case FXT_ARG_DOUBLE:
	case FXT_ARG_POINTER:
	case FXT_ARG_KOID:
		n += 1;
		break;
	case FXT_ARG_STRING:
		w = sref_words(a->v.str);
		if (w == BAD)
			return 0;
		n += w;
		break;
	default:
		break;
	}
	return n <= FXT_MAX_ARG_WORDS ? n : 0;
}

size_t fxt__args_words(const struct fxt_arg *args, unsigned nargs)
{
	size_t total = 0, n;
	unsigned i;

	if (nargs > FXT_MAX_ARGS || (nargs && !args))
		return BAD;
	for (i = 0; i < nargs; i++) {
		n = fxt_arg_words(&args[i]);
		if (!n)
			return BAD;
		total += n;
	}
	return total;
}

static uint64_t *put_arg(uint64_t *p, const struct fxt_arg *a)
{
	uint64_t *h = p++;
	uint64_t inline_value = 0; /* header bits [32 .. 63] */

	p = put_sref(p, a->name);
	switch (a->type) {
	case FXT_ARG_NULL:
		break;
	case FXT_ARG_INT32:
		inline_value = (uint32_t)a->v.i32;
		break;
	case FXT_ARG_UINT32:
		inline_value = a->v.u32;
		break;
	case FXT_ARG_INT64:
		*p++ = (uint64_t)a->v.i64;
		break;
	case FXT_ARG_UINT64:
		*p++ = a->v.u64;
		break;
	case FXT_ARG_DOUBLE:
		memcpy(p++, &a->v.f64, sizeof(uint64_t));
		break;
	case FXT_ARG_STRING:
		inline_value = a->v.str.ref;
		p = put_sref(p, a->v.str);
		break;
	case FXT_ARG_POINTER:
		*p++ = a->v.ptr;
		break;
	case FXT_ARG_KOID:
		*p++ = a->v.koid;
		break;
	case FXT_ARG_BOOL:
		inline_value = a->v.b ? 1 : 0;
		break;
	case FXT_ARG_TYPE_COUNT:
		break;
	}
	*h = fxt_arg_header(a->type, (uint64_t)(p - h), a->name.ref, (uint32_t)inline_value);
	return p;
}

uint64_t *fxt__put_args(uint64_t *p, const struct fxt_arg *args, unsigned nargs)
{
	for (unsigned i = 0; i < nargs; i++)
		p = put_arg(p, &args[i]);
	return p;
}

size_t fxt_enc_magic(uint64_t *out, size_t cap)
{
	if (cap >= 1)
		out[0] = FXT_MAGIC_RECORD;
	return 1;
}

size_t fxt_enc_provider_info(uint64_t *out, size_t cap, uint32_t provider_id, const char *name,
			     size_t len)
{
	size_t n;

	if (len > 0xff || (len && !name))
		return 0;
	n = 1 + (size_t)fxt_stream_words(len);
	if (n > cap)
		return n;
	out[0] = header(FXT_RECORD_METADATA, n) | fxt_field(FXT_METADATA_PROVIDER_INFO, 16, 19) |
		 fxt_field(provider_id, 20, 51) | fxt_field(len, 52, 59);
	fxt__put_stream(out + 1, name, len);
	return n;
}

size_t fxt_enc_provider_section(uint64_t *out, size_t cap, uint32_t provider_id)
{
	if (cap >= 1)
		out[0] = header(FXT_RECORD_METADATA, 1) |
			 fxt_field(FXT_METADATA_PROVIDER_SECTION, 16, 19) |
			 fxt_field(provider_id, 20, 51);
	return 1;
}

size_t fxt_enc_provider_event(uint64_t *out, size_t cap, uint32_t provider_id, unsigned event)
{
	if (event > 0xf)
		return 0;
	if (cap >= 1)
		out[0] = header(FXT_RECORD_METADATA, 1) |
			 fxt_field(FXT_METADATA_PROVIDER_EVENT, 16, 19) |
			 fxt_field(provider_id, 20, 51) | fxt_field(event, 52, 55);
	return 1;
}

/* Refuses 0 ticks per second: readers would divide by it (Perfetto drops
 * every event). */
size_t fxt_enc_initialization(uint64_t *out, size_t cap, uint64_t ticks_per_second)
{
	if (ticks_per_second == 0)
		return 0;
	if (cap >= 2) {
		out[0] = header(FXT_RECORD_INITIALIZATION, 2);
		out[1] = ticks_per_second;
	}
	return 2;
}

size_t fxt_enc_string(uint64_t *out, size_t cap, uint16_t index, const char *s, size_t len)
{
	size_t n;

	if (index == 0 || index > FXT_MAX_STRING_INDEX || len > FXT_MAX_STRING_LEN || (len && !s))
		return 0;
	n = 1 + (size_t)fxt_stream_words(len);
	if (n > cap)
		return n;
	out[0] = header(FXT_RECORD_STRING, n) | fxt_field(index, 16, 30) | fxt_field(len, 32, 46);
	fxt__put_stream(out + 1, s, len);
	return n;
}

size_t fxt_enc_thread(uint64_t *out, size_t cap, uint8_t index, uint64_t pid, uint64_t tid)
{
	if (index == 0)
		return 0;
	if (cap >= 3) {
		out[0] = header(FXT_RECORD_THREAD, 3) | fxt_field(index, 16, 23);
		out[1] = pid;
		out[2] = tid;
	}
	return 3;
}

size_t fxt_enc_event(uint64_t *out, size_t cap, const struct fxt_event *ev)
{
	return enc_event(out, cap, ev);
}

size_t fxt_enc_blob(uint64_t *out, size_t cap, struct fxt_sref name, unsigned blob_type,
		    const void *payload, size_t len)
{
	size_t nw = sref_words(name), n;
	uint64_t *p;

	/* The payload size field is 15 bits wide. */
	if (nw == BAD || blob_type > 0xff || len > 0x7fff || (len && !payload))
		return 0;
	n = 1 + nw + (size_t)fxt_stream_words(len);
	if (n > FXT_MAX_RECORD_WORDS)
		return 0;
	if (n > cap)
		return n;
	out[0] = header(FXT_RECORD_BLOB, n) | fxt_field(name.ref, 16, 31) | fxt_field(len, 32, 46) |
		 fxt_field(blob_type, 48, 55);
	p = put_sref(out + 1, name);
	fxt__put_stream(p, payload, len);
	return n;
}

size_t fxt_enc_userspace_object(uint64_t *out, size_t cap, uint64_t pointer,
				struct fxt_tref process, struct fxt_sref name,
				const struct fxt_arg *args, unsigned nargs)
{
	size_t nw = sref_words(name), aw = fxt__args_words(args, nargs), n;
	uint64_t *p = out;
	bool inline_process = process.index == FXT_THREADREF_INLINE;

	if (nw == BAD || aw == BAD)
		return 0;
	/* An inline process is one word: the process koid alone. */
	n = 2 + (inline_process ? 1 : 0) + nw + aw;
	if (n > FXT_MAX_RECORD_WORDS)
		return 0;
	if (n > cap)
		return n;
	*p++ = header(FXT_RECORD_USERSPACE_OBJECT, n) | fxt_field(process.index, 16, 23) |
	       fxt_field(name.ref, 24, 39) | fxt_field(nargs, 40, 43);
	*p++ = pointer;
	if (inline_process)
		*p++ = process.pid;
	p = put_sref(p, name);
	fxt__put_args(p, args, nargs);
	return n;
}

size_t fxt_enc_kernel_object(uint64_t *out, size_t cap, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t nw = sref_words(name), aw = fxt__args_words(args, nargs), n;
	uint64_t *p = out;

	if (obj_type > 0xff || nw == BAD || aw == BAD)
		return 0;
	n = 2 + nw + aw;
	if (n > FXT_MAX_RECORD_WORDS)
		return 0;
	if (n > cap)
		return n;
	*p++ = header(FXT_RECORD_KERNEL_OBJECT, n) | fxt_field(obj_type, 16, 23) |
	       fxt_field(name.ref, 24, 39) | fxt_field(nargs, 40, 43);
	*p++ = koid;
	p = put_sref(p, name);
	fxt__put_args(p, args, nargs);
	return n;
}

size_t fxt_enc_context_switch(uint64_t *out, size_t cap, const struct fxt_context_switch *cs)
{
	size_t n;
	uint64_t *p = out;

	if (cs->cpu > 0xff || cs->out_state > 0xf || cs->out_prio > 0xff || cs->in_prio > 0xff)
		return 0;
	n = 2 + tref_words(cs->out_thread) + tref_words(cs->in_thread);
	if (n > cap)
		return n;
	*p++ = header(FXT_RECORD_CONTEXT_SWITCH, n) | fxt_field(cs->cpu, 16, 23) |
	       fxt_field(cs->out_state, 24, 27) | fxt_field(cs->out_thread.index, 28, 35) |
	       fxt_field(cs->in_thread.index, 36, 43) | fxt_field(cs->out_prio, 44, 51) |
	       fxt_field(cs->in_prio, 52, 59);
	*p++ = cs->ts;
	p = put_tref(p, cs->out_thread);
	put_tref(p, cs->in_thread);
	return n;
}

size_t fxt_enc_log(uint64_t *out, size_t cap, uint64_t ts, struct fxt_tref thread, const char *msg,
		   size_t len)
{
	size_t n;
	uint64_t *p = out;

	if (len > FXT_MAX_STRING_LEN || (len && !msg))
		return 0;
	n = 2 + tref_words(thread) + (size_t)fxt_stream_words(len);
	if (n > cap)
		return n;
	*p++ = header(FXT_RECORD_LOG, n) | fxt_field(len, 16, 30) | fxt_field(thread.index, 32, 39);
	*p++ = ts;
	p = put_tref(p, thread);
	fxt__put_stream(p, msg, len);
	return n;
}

/* The large blob's prefix (encode.h). */
size_t fxt__large_blob_prefix_words(const struct fxt_large_blob *b, uint64_t *total)
{
	size_t cw = sref_words(b->category), nw = sref_words(b->name), n;

	if (cw == BAD || nw == BAD || (b->size && !b->payload))
		return 0;
	n = 2 + cw + nw + 1; /* header, format header, streams, blob size */
	if (b->format == FXT_BLOB_FORMAT_EVENT) {
		size_t aw = fxt__args_words(b->args, b->nargs);

		if (aw == BAD)
			return 0;
		n += 1 + tref_words(b->thread) + aw;
	} else if (b->format != FXT_BLOB_FORMAT_ATTACHMENT) {
		return 0;
	}
	if (b->size > (uint64_t)FXT_MAX_LARGE_RECORD_WORDS * FXT_WORD_SIZE)
		return 0;
	*total = n + fxt_stream_words(b->size);
	return *total <= FXT_MAX_LARGE_RECORD_WORDS ? n : 0;
}

uint64_t *fxt__put_large_blob_prefix(uint64_t *p, const struct fxt_large_blob *b, uint64_t total)
{
	bool event = b->format == FXT_BLOB_FORMAT_EVENT;

	*p++ = fxt_field(FXT_RECORD_LARGE, 0, 3) | fxt_field(total, 4, 35) |
	       fxt_field(FXT_LARGE_BLOB, 36, 39) | fxt_field(b->format, 40, 43);
	*p = fxt_field(b->category.ref, 0, 15) | fxt_field(b->name.ref, 16, 31);
	if (event)
		*p |= fxt_field(b->nargs, 32, 35) | fxt_field(b->thread.index, 36, 43);
	p++;
	p = put_sref(p, b->category);
	p = put_sref(p, b->name);
	if (event) {
		*p++ = b->ts;
		p = put_tref(p, b->thread);
		p = fxt__put_args(p, b->args, b->nargs);
	}
	*p++ = b->size;
	return p;
}

uint64_t fxt_enc_large_blob(uint64_t *out, uint64_t cap, const struct fxt_large_blob *b)
{
	uint64_t total = 0;
	uint64_t *p;

	if (!fxt__large_blob_prefix_words(b, &total))
		return 0;
	if (total > cap)
		return total;
	p = fxt__put_large_blob_prefix(out, b, total);
	fxt__put_stream(p, b->payload, (size_t)b->size);
	return total;
}
