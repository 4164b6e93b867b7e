/* FXT writer: record encoders and the buffered archive writer.
 *
 * The contract is in include/fxt/writer.h.  This file has three parts:
 *
 *  - encoders: each computes the record's size first (validating every
 *    field), and writes only if it fits in the caller's capacity;
 *  - the output path: one word-aligned buffer, drained to a descriptor
 *    (write loop), to memory, or through deflate;
 *  - the per-provider string and thread tables, with FIFO re-registration
 *    and generation numbers for O(1) caller-side caches.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include <fxt/writer.h>

#include "fxt/internal.h"

/* ============================================================= encoders */

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

static inline uint64_t header(enum fxt_record_type type, size_t nwords)
{
	return fxt_field(type, 0, 3) | fxt_field(nwords, 4, 15);
}

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

static size_t args_words(const struct fxt_arg *args, unsigned nargs)
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
	*h = fxt_field(a->type, 0, 3) | fxt_field((uint64_t)(p - h), 4, 15) |
	     fxt_field(a->name.ref, 16, 31) | fxt_field(inline_value, 32, 63);
	return p;
}

static uint64_t *put_args(uint64_t *p, const struct fxt_arg *args, unsigned nargs)
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
		size_t aw = args_words(ev->args, ev->nargs);

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
		p = put_args(p, ev->args, ev->nargs);
	}
	if (event_extra_words[ev->type])
		*p = ev->extra;
	return n;
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
	size_t nw = sref_words(name), aw = args_words(args, nargs), n;
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
	put_args(p, args, nargs);
	return n;
}

size_t fxt_enc_kernel_object(uint64_t *out, size_t cap, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t nw = sref_words(name), aw = args_words(args, nargs), n;
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
	put_args(p, args, nargs);
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

/* A large blob record is written in two parts: everything up to and
 * including the blob size word (the prefix), then the payload stream, which
 * the writer may send straight from the caller's memory.  Returns the
 * prefix's size in words and sets *total to the record's, or returns 0. */
static size_t large_blob_prefix_words(const struct fxt_large_blob *b, uint64_t *total)
{
	size_t cw = sref_words(b->category), nw = sref_words(b->name), n;

	if (cw == BAD || nw == BAD || (b->size && !b->payload))
		return 0;
	n = 2 + cw + nw + 1; /* header, format header, streams, blob size */
	if (b->format == FXT_BLOB_FORMAT_EVENT) {
		size_t aw = args_words(b->args, b->nargs);

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

static uint64_t *put_large_blob_prefix(uint64_t *p, const struct fxt_large_blob *b, uint64_t total)
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
		p = put_args(p, b->args, b->nargs);
	}
	*p++ = b->size;
	return p;
}

uint64_t fxt_enc_large_blob(uint64_t *out, uint64_t cap, const struct fxt_large_blob *b)
{
	uint64_t total = 0;
	uint64_t *p;

	if (!large_blob_prefix_words(b, &total))
		return 0;
	if (total > cap)
		return total;
	p = put_large_blob_prefix(out, b, total);
	fxt__put_stream(p, b->payload, (size_t)b->size);
	return total;
}

/* ========================================================== the writer */

#define OUT_BUF_BYTES  (512u * 1024) /* records are gathered here */
#define ZOUT_BUF_BYTES (256u * 1024) /* deflate's output */
#define GZIP_LEVEL     1	     /* the flusher's speed matters more than size */
#define MEM_MIN_BYTES  (64u * 1024)
#define IO_CHUNK       (1u << 30) /* per write() and per deflate() call */

/* String table of one provider.  ent[], hash[] are indexed by string index
 * (0 unused); bucket[] is an open-addressing table (linear probing) of
 * indices, 0 = free, with twice as many buckets as entries so that probes
 * stay short.  Both grow by doubling until every index 1 .. 0x7fff exists;
 * `next` then wraps and the oldest registration is replaced (FIFO). */
struct strent {
	char *data;   /* owned copy, NULL if the index is unused */
	uint32_t len; /* bytes */
	uint32_t gen; /* the registration's generation, see fxt_writer_string_cached */
};

struct strtab {
	struct strent *ent;
	uint32_t *hash;
	uint16_t *bucket;
	uint32_t cap;  /* entries, buckets = 2 * cap */
	uint16_t next; /* the index the next registration takes */
};

/* Thread table: the same scheme with a fixed size. */
#define THREAD_SLOTS   (FXT_MAX_THREAD_INDEX + 1)
#define THREAD_BUCKETS (2 * THREAD_SLOTS)

struct thrent {
	uint64_t pid, tid;
	uint32_t gen; /* 0 if the index is unused */
};

struct thrtab {
	struct thrent ent[THREAD_SLOTS];
	uint32_t hash[THREAD_SLOTS];
	uint16_t bucket[THREAD_BUCKETS];
	uint16_t next;
};

/* The reader keeps tables per provider, so the writer does too. */
struct provider {
	uint32_t id;
	struct strtab st;
	struct thrtab tt;
};

struct fxt_writer {
	/* Records are gathered in buf (word-aligned) until it is full. */
	uint64_t *buf;
	size_t pos; /* bytes used; a multiple of 8 between records */
	size_t cap; /* bytes */
	size_t reserved;
	uint64_t bytes; /* archive bytes produced, uncompressed */
	int err;	/* first error, sticky */

	/* The sink: a descriptor or memory, behind deflate when gz. */
	int fd;
	bool own_fd;
	bool to_mem;
	unsigned char *mem;
	size_t mem_len, mem_cap;
	bool gz, finished;
	z_stream zs;
	uLong synced_in; /* zs.total_in at the last sync flush */
	unsigned char *zout;

	struct provider **prov;
	size_t nprov;
	struct provider *cur;
	uint32_t gen; /* last generation handed out, across all providers */
};

static int set_error(struct fxt_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Whether records may be added: 0, the sticky error, or -EPIPE after
 * fxt_writer_finish() (not sticky: the archive itself is complete). */
static inline int writable(const struct fxt_writer *w)
{
	return w->err ? w->err : w->finished ? -EPIPE : 0;
}

/* ----------------------------------------------------------------- sink */

static int mem_append(struct fxt_writer *w, const void *data, size_t len)
{
	if (len > w->mem_cap - w->mem_len) {
		size_t want = w->mem_cap ? w->mem_cap : MEM_MIN_BYTES;
		unsigned char *m;

		while (want - w->mem_len < len) {
			if (want > SIZE_MAX / 2)
				return set_error(w, -ENOMEM);
			want *= 2;
		}
		m = realloc(w->mem, want);
		if (!m)
			return set_error(w, -ENOMEM);
		w->mem = m;
		w->mem_cap = want;
	}
	memcpy(w->mem + w->mem_len, data, len);
	w->mem_len += len;
	return 0;
}

static int sink_write(struct fxt_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (w->to_mem)
		return mem_append(w, data, len);
	while (len) {
		ssize_t r = write(w->fd, p, len < IO_CHUNK ? len : IO_CHUNK);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return set_error(w, -errno);
		}
		if (r == 0) /* cannot happen for len > 0; never spin on it */
			return set_error(w, -EIO);
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Sends bytes to the sink, through deflate when compressing; `zflush` is
 * deflate's flush mode (Z_NO_FLUSH, Z_SYNC_FLUSH or Z_FINISH). */
static int emit(struct fxt_writer *w, const void *data, size_t len, int zflush)
{
	const unsigned char *p = data;

	if (w->err)
		return w->err;
	if (!w->gz)
		return len ? sink_write(w, data, len) : 0;
	do {
		size_t chunk = len < IO_CHUNK ? len : IO_CHUNK;
		int flush = chunk == len ? zflush : Z_NO_FLUSH;

		w->zs.next_in = (Bytef *)(uintptr_t)p; /* zlib does not write to it */
		w->zs.avail_in = (uInt)chunk;
		for (;;) {
			int rc;
			size_t have;

			w->zs.next_out = w->zout;
			w->zs.avail_out = ZOUT_BUF_BYTES;
			rc = deflate(&w->zs, flush);
			if (rc == Z_STREAM_ERROR)
				return set_error(w, -EIO);
			have = ZOUT_BUF_BYTES - w->zs.avail_out;
			if (have && sink_write(w, w->zout, have))
				return w->err;
			if (flush == Z_FINISH ? rc == Z_STREAM_END
					      : w->zs.avail_out != 0 && w->zs.avail_in == 0)
				break;
		}
		p += chunk;
		len -= chunk;
	} while (len);
	return 0;
}

/* Empties the output buffer into the sink. */
static int drain(struct fxt_writer *w, int zflush)
{
	int err = emit(w, w->buf, w->pos, zflush);

	w->pos = 0;
	return err;
}

/* Appends raw bytes (whole records, or a large payload and its padding). */
static int put_bytes(struct fxt_writer *w, const void *data, size_t len)
{
	if (writable(w))
		return writable(w);
	if (len > w->cap - w->pos) {
		if (drain(w, Z_NO_FLUSH))
			return w->err;
		if (len > w->cap) { /* bigger than the buffer: send it as it is */
			if (emit(w, data, len, Z_NO_FLUSH))
				return w->err;
			w->bytes += len;
			return 0;
		}
	}
	memcpy((unsigned char *)w->buf + w->pos, data, len);
	w->pos += len;
	w->bytes += len;
	return 0;
}

uint64_t *fxt_writer_reserve(struct fxt_writer *w, size_t nwords)
{
	if (writable(w))
		return NULL;
	if (nwords > w->cap / FXT_WORD_SIZE) {
		set_error(w, -EINVAL);
		return NULL;
	}
	if (nwords * FXT_WORD_SIZE > w->cap - w->pos && drain(w, Z_NO_FLUSH))
		return NULL;
	w->reserved = nwords;
	return w->buf + w->pos / FXT_WORD_SIZE;
}

void fxt_writer_commit(struct fxt_writer *w, size_t nwords)
{
	if (nwords > w->reserved) { /* a caller bug: the tail was never written */
		set_error(w, -EINVAL);
		return;
	}
	w->pos += nwords * FXT_WORD_SIZE;
	w->bytes += nwords * FXT_WORD_SIZE;
	w->reserved = 0;
}

int fxt_writer_words(struct fxt_writer *w, const uint64_t *words, size_t nwords)
{
	return put_bytes(w, words, nwords * FXT_WORD_SIZE);
}

/* ------------------------------------------------------------ open/close */

static struct provider *provider_get(struct fxt_writer *w, uint32_t id);

static int writer_new(struct fxt_writer **out, unsigned flags, int fd, bool own_fd, bool to_mem)
{
	struct fxt_writer *w;
	int err = -ENOMEM;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail_alloc;
	w->fd = fd;
	w->own_fd = own_fd;
	w->to_mem = to_mem;
	w->cap = OUT_BUF_BYTES;
	w->buf = malloc(w->cap);
	if (!w->buf)
		goto fail_buf;
	if (flags & FXT_WRITER_GZIP) {
		w->zout = malloc(ZOUT_BUF_BYTES);
		if (!w->zout)
			goto fail_zout;
		/* windowBits 15 + 16: a gzip wrapper rather than zlib's; memLevel 9
		 * (256 KiB more than the default) deflates a little faster. */
		if (deflateInit2(&w->zs, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) !=
		    Z_OK)
			goto fail_deflate;
		w->gz = true;
	}
	/* Records before any provider record belong to provider 0, for the
	 * reader as for us. */
	w->cur = provider_get(w, 0);
	if (!w->cur)
		goto fail_provider;
	*out = w;
	return 0;

fail_provider:
	free(w->prov);
	if (w->gz)
		deflateEnd(&w->zs);
fail_deflate:
	free(w->zout);
fail_zout:
	free(w->buf);
fail_buf:
	free(w);
fail_alloc:
	return err;
}

int fxt_writer_open_path(struct fxt_writer **w, const char *path, unsigned flags)
{
	size_t len = strlen(path);
	int oflags = O_WRONLY | O_CREAT | O_CLOEXEC;
	int fd, err;

	*w = NULL;
	if (len >= 3 && strcmp(path + len - 3, ".gz") == 0)
		flags |= FXT_WRITER_GZIP;
	oflags |= (flags & FXT_WRITER_NO_CLOBBER) ? O_EXCL : O_TRUNC;
	do
		fd = open(path, oflags, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	err = writer_new(w, flags, fd, true, false);
	if (err)
		close(fd);
	return err;
}

int fxt_writer_open_fd(struct fxt_writer **w, int fd, unsigned flags)
{
	if (fd < 0) {
		*w = NULL;
		return -EBADF;
	}
	return writer_new(w, flags, fd, false, false);
}

int fxt_writer_open_mem(struct fxt_writer **w, unsigned flags)
{
	return writer_new(w, flags, -1, false, true);
}

const void *fxt_writer_mem_data(const struct fxt_writer *w, size_t *len)
{
	*len = w->to_mem ? w->mem_len : 0;
	return w->to_mem ? w->mem : NULL;
}

int fxt_writer_flush(struct fxt_writer *w)
{
	int err;

	if (w->finished)
		return w->err;
	/* A sync flush makes everything so far decodable from the file; each
	 * costs a few bytes, so none when nothing was written since the last. */
	if (w->gz && w->pos == 0 && w->zs.total_in == w->synced_in)
		return w->err;
	err = drain(w, Z_SYNC_FLUSH);
	w->synced_in = w->zs.total_in;
	return err;
}

int fxt_writer_finish(struct fxt_writer *w)
{
	if (!w->finished) {
		drain(w, Z_FINISH);
		w->finished = true;
	}
	return w->err;
}

int fxt_writer_error(const struct fxt_writer *w)
{
	return w->err;
}

static void strtab_reset(struct strtab *t);

void fxt_writer_free(struct fxt_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nprov; i++) {
		strtab_reset(&w->prov[i]->st);
		free(w->prov[i]);
	}
	free(w->prov);
	if (w->gz)
		deflateEnd(&w->zs);
	if (w->own_fd)
		close(w->fd);
	free(w->zout);
	free(w->mem);
	free(w->buf);
	free(w);
}

int fxt_writer_close(struct fxt_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	err = fxt_writer_finish(w);
	if (w->own_fd) {
		/* Linux releases the descriptor even when close() fails: no retry. */
		if (close(w->fd) < 0 && !err)
			err = -errno;
		w->own_fd = false;
	}
	fxt_writer_free(w);
	return err;
}

uint64_t fxt_writer_bytes(const struct fxt_writer *w)
{
	return w->bytes;
}

/* ------------------------------------------------------- record emitters */

/* The emitters below measure the record (encoder with cap 0), reserve its
 * space, then encode into it.  record_begin() does the middle step and
 * tells why it failed: -EINVAL when the record cannot be encoded (not
 * sticky: the archive is still fine), or the sticky I/O error. */
static uint64_t *record_begin(struct fxt_writer *w, size_t nwords, int *err)
{
	uint64_t *out;

	*err = writable(w);
	if (*err)
		return NULL;
	if (!nwords) {
		*err = -EINVAL;
		return NULL;
	}
	out = fxt_writer_reserve(w, nwords);
	if (!out)
		*err = writable(w);
	return out;
}

int fxt_writer_magic(struct fxt_writer *w)
{
	int err;
	uint64_t *out = record_begin(w, 1, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_magic(out, 1));
	return 0;
}

int fxt_writer_provider_section(struct fxt_writer *w, uint32_t provider_id)
{
	struct provider *p;
	uint64_t *out;
	int err;

	out = record_begin(w, fxt_enc_provider_section(NULL, 0, provider_id), &err);
	if (!out)
		return err;
	p = provider_get(w, provider_id);
	if (!p)
		return set_error(w, -ENOMEM);
	w->cur = p;
	fxt_writer_commit(w, fxt_enc_provider_section(out, 1, provider_id));
	return 0;
}

int fxt_writer_provider_event(struct fxt_writer *w, uint32_t provider_id, unsigned event)
{
	int err;
	uint64_t *out = record_begin(w, fxt_enc_provider_event(NULL, 0, provider_id, event), &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_provider_event(out, 1, provider_id, event));
	return 0;
}

int fxt_writer_initialization(struct fxt_writer *w, uint64_t ticks_per_second)
{
	int err;
	uint64_t *out = record_begin(w, fxt_enc_initialization(NULL, 0, ticks_per_second), &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_initialization(out, 2, ticks_per_second));
	return 0;
}

int fxt_writer_kernel_object(struct fxt_writer *w, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t n = fxt_enc_kernel_object(NULL, 0, obj_type, koid, name, args, nargs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_kernel_object(out, n, obj_type, koid, name, args, nargs));
	return 0;
}

int fxt_writer_userspace_object(struct fxt_writer *w, uint64_t pointer, struct fxt_tref process,
				struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t n = fxt_enc_userspace_object(NULL, 0, pointer, process, name, args, nargs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_userspace_object(out, n, pointer, process, name, args, nargs));
	return 0;
}

int fxt_writer_blob(struct fxt_writer *w, struct fxt_sref name, unsigned blob_type,
		    const void *payload, size_t len)
{
	size_t n = fxt_enc_blob(NULL, 0, name, blob_type, payload, len);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_blob(out, n, name, blob_type, payload, len));
	return 0;
}

int fxt_writer_context_switch(struct fxt_writer *w, const struct fxt_context_switch *cs)
{
	size_t n = fxt_enc_context_switch(NULL, 0, cs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_context_switch(out, n, cs));
	return 0;
}

int fxt_writer_log(struct fxt_writer *w, uint64_t ts, struct fxt_tref thread, const char *msg,
		   size_t len)
{
	size_t n = fxt_enc_log(NULL, 0, ts, thread, msg, len);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_log(out, n, ts, thread, msg, len));
	return 0;
}

/* The flusher's hot path: encode straight into the buffer, measuring only
 * when the record does not fit in what is left of it. */
int fxt_writer_event(struct fxt_writer *w, const struct fxt_event *ev)
{
	size_t avail, n;
	uint64_t *out;

	if (writable(w))
		return writable(w);
	out = w->buf + w->pos / FXT_WORD_SIZE;
	avail = (w->cap - w->pos) / FXT_WORD_SIZE;
	n = enc_event(out, avail, ev);
	if (!n)
		return -EINVAL;
	if (n > avail) {
		out = fxt_writer_reserve(w, n);
		if (!out)
			return writable(w);
		fxt_enc_event(out, n, ev);
	}
	w->pos += n * FXT_WORD_SIZE;
	w->bytes += n * FXT_WORD_SIZE;
	return 0;
}

int fxt_writer_large_blob(struct fxt_writer *w, const struct fxt_large_blob *b)
{
	static const uint64_t zero;
	uint64_t total = 0, *prefix, *tmp = NULL;
	size_t n, pad;

	if (writable(w))
		return writable(w);
	n = large_blob_prefix_words(b, &total);
	if (!n)
		return -EINVAL;
	/* The prefix (up to 15 arguments) can outgrow the output buffer. */
	if (n <= w->cap / FXT_WORD_SIZE) {
		prefix = fxt_writer_reserve(w, n);
		if (!prefix)
			return w->err;
		put_large_blob_prefix(prefix, b, total);
		fxt_writer_commit(w, n);
	} else {
		tmp = malloc(n * FXT_WORD_SIZE);
		if (!tmp)
			return -ENOMEM;
		put_large_blob_prefix(tmp, b, total);
		put_bytes(w, tmp, n * FXT_WORD_SIZE);
		free(tmp);
	}
	pad = (size_t)(fxt_stream_words(b->size) * FXT_WORD_SIZE - b->size);
	if (b->size)
		put_bytes(w, b->payload, (size_t)b->size);
	if (pad)
		put_bytes(w, &zero, pad);
	return w->err;
}

/* ------------------------------------------------------------ providers */

static void strtab_reset(struct strtab *t)
{
	if (t->ent)
		for (uint32_t i = 1; i < t->cap; i++)
			free(t->ent[i].data);
	free(t->ent);
	free(t->hash);
	free(t->bucket);
	memset(t, 0, sizeof(*t));
	t->next = 1;
}

static void thrtab_reset(struct thrtab *t)
{
	memset(t, 0, sizeof(*t));
	t->next = 1;
}

/* The context of provider `id`, created (with empty tables) if new. */
static struct provider *provider_get(struct fxt_writer *w, uint32_t id)
{
	struct provider *p, **v;

	for (size_t i = 0; i < w->nprov; i++)
		if (w->prov[i]->id == id)
			return w->prov[i];
	v = realloc(w->prov, (w->nprov + 1) * sizeof(*v));
	if (!v)
		return NULL;
	w->prov = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	strtab_reset(&p->st);
	thrtab_reset(&p->tt);
	w->prov[w->nprov++] = p;
	return p;
}

int fxt_writer_provider(struct fxt_writer *w, uint32_t provider_id, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), 0xff); /* 8-bit length field */
	size_t n = fxt_enc_provider_info(NULL, 0, provider_id, name, len);
	struct provider *p;
	uint64_t *out;
	int err;

	out = record_begin(w, n, &err);
	if (!out)
		return err;
	p = provider_get(w, provider_id);
	if (!p)
		return set_error(w, -ENOMEM);
	/* Provider info tells the reader to start this provider afresh. */
	strtab_reset(&p->st);
	thrtab_reset(&p->tt);
	w->cur = p;
	fxt_writer_commit(w, fxt_enc_provider_info(out, n, provider_id, name, len));
	return 0;
}

/* -------------------------------------------------------------- tables */

/* FIFO eviction alone would let the refs of one record clobber each other:
 * a string found in the table may be the oldest registration, replaced by
 * the very next string the caller interns for the same record.  So a ref
 * is only handed out if at least GUARD registrations must happen before
 * its index comes round again; one closer to the cursor is registered
 * anew at the cursor.  A record holds at most 2 + 2 * 15 string refs (a
 * large blob too) and 2 thread refs (a context switch). */
#define STRING_GUARD 64
#define THREAD_GUARD 4

/* Registrations before index `ix` is taken again, with `next` the cursor
 * of a ring of indices 1 .. n. */
static inline unsigned fifo_distance(unsigned ix, unsigned next, unsigned n)
{
	return ix >= next ? ix - next : ix + n - next;
}

static uint32_t next_gen(struct fxt_writer *w)
{
	if (++w->gen == 0) /* 0 means "never valid" in slots */
		w->gen = 1;
	return w->gen;
}

static void bucket_insert(uint16_t *bucket, uint32_t mask, uint32_t hash, uint16_t ix)
{
	uint32_t i = hash & mask;

	while (bucket[i])
		i = (i + 1) & mask;
	bucket[i] = ix;
}

/* Removes index `ix` by backward shifting: later members of its probe run
 * move up into the hole unless that would put them before their home
 * bucket, so no tombstones are needed. */
static void bucket_remove(uint16_t *bucket, uint32_t mask, const uint32_t *hash, uint16_t ix)
{
	uint32_t i = hash[ix] & mask, j, home;

	while (bucket[i] != ix)
		i = (i + 1) & mask;
	for (j = (i + 1) & mask; bucket[j]; j = (j + 1) & mask) {
		home = hash[bucket[j]] & mask;
		/* Can bucket[j] move to i?  Only if its home is not in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			bucket[i] = bucket[j];
			i = j;
		}
	}
	bucket[i] = 0;
}

static uint16_t strtab_find(const struct strtab *t, const char *s, size_t len, uint32_t h)
{
	uint32_t mask = 2 * t->cap - 1, i;
	uint16_t ix;

	if (!t->cap)
		return 0;
	for (i = h & mask; (ix = t->bucket[i]) != 0; i = (i + 1) & mask)
		if (t->hash[ix] == h && t->ent[ix].len == len &&
		    memcmp(t->ent[ix].data, s, len) == 0)
			return ix;
	return 0;
}

/* Doubles the table (only while `next` has not wrapped: indices are handed
 * out in order, so 1 .. cap-1 are all in use). */
static int strtab_grow(struct strtab *t)
{
	uint32_t cap = t->cap ? 2 * t->cap : 64, mask = 2 * cap - 1;
	struct strent *ent;
	uint32_t *hash;
	uint16_t *bucket;

	ent = realloc(t->ent, cap * sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	memset(ent + t->cap, 0, (cap - t->cap) * sizeof(*ent));
	t->ent = ent;
	hash = realloc(t->hash, cap * sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	t->hash = hash;
	bucket = calloc(2 * (size_t)cap, sizeof(*bucket));
	if (!bucket)
		return -ENOMEM;
	for (uint32_t ix = 1; ix < t->cap; ix++)
		if (ent[ix].data)
			bucket_insert(bucket, mask, hash[ix], (uint16_t)ix);
	free(t->bucket);
	t->bucket = bucket;
	t->cap = cap;
	return 0;
}

/* Forgets the registration at `ix` (it is about to be made again). */
static void strtab_drop(struct strtab *t, uint16_t ix)
{
	bucket_remove(t->bucket, 2 * t->cap - 1, t->hash, ix);
	free(t->ent[ix].data);
	t->ent[ix].data = NULL;
	t->ent[ix].gen = 0;
}

/* Registers s at the next index (replacing its oldest registration once all
 * are in use) and writes the string record.  Returns the index, 0 on error. */
static uint16_t strtab_add(struct fxt_writer *w, struct strtab *t, const char *s, size_t len,
			   uint32_t h)
{
	uint16_t ix;
	uint64_t *rec;
	size_t n;
	char *copy;

	if (t->next >= t->cap && (t->cap > FXT_MAX_STRING_INDEX || strtab_grow(t) < 0))
		return 0;
	ix = t->next;
	copy = malloc(len);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	n = fxt_enc_string(NULL, 0, ix, s, len);
	rec = fxt_writer_reserve(w, n);
	if (!rec) {
		free(copy);
		return 0;
	}
	fxt_enc_string(rec, n, ix, s, len);
	fxt_writer_commit(w, n);

	if (t->ent[ix].data)
		strtab_drop(t, ix);
	t->ent[ix].data = copy;
	t->ent[ix].len = (uint32_t)len;
	t->ent[ix].gen = next_gen(w);
	t->hash[ix] = h;
	bucket_insert(t->bucket, 2 * t->cap - 1, h, ix);
	t->next = ix == FXT_MAX_STRING_INDEX ? 1 : ix + 1;
	return ix;
}

struct fxt_sref fxt_writer_string(struct fxt_writer *w, const char *s, size_t len)
{
	struct strtab *t = &w->cur->st;
	uint32_t h;
	uint16_t ix;

	len = fxt_utf8_cut(s, len, FXT_MAX_STRING_LEN);
	if (len == 0)
		return fxt_sref_empty();
	h = (uint32_t)fxt__hash_bytes(s, len);
	ix = strtab_find(t, s, len, h);
	if (ix && fifo_distance(ix, t->next, FXT_MAX_STRING_INDEX) < STRING_GUARD) {
		strtab_drop(t, ix);
		ix = 0;
	}
	if (!ix)
		ix = strtab_add(w, t, s, len, h);
	return ix ? fxt_sref_index(ix) : fxt_sref_inline(s, len);
}

struct fxt_sref fxt_writer_cstring(struct fxt_writer *w, const char *s)
{
	return fxt_writer_string(w, s, strlen(s));
}

struct fxt_sref fxt_writer_string_cached(struct fxt_writer *w, struct fxt_string_slot *slot,
					 const char *s, size_t len)
{
	const struct strtab *t = &w->cur->st;
	struct fxt_sref r;

	/* Generations are unique per writer, across providers: a match means
	 * this very registration is still in force. */
	if (slot->index < t->cap && slot->generation != 0 &&
	    t->ent[slot->index].gen == slot->generation &&
	    fifo_distance(slot->index, t->next, FXT_MAX_STRING_INDEX) >= STRING_GUARD)
		return fxt_sref_index(slot->index);
	r = fxt_writer_string(w, s, len);
	if (r.ref != FXT_STRREF_EMPTY && !fxt_strref_is_inline(r.ref)) {
		slot->index = r.ref;
		slot->generation = w->cur->st.ent[r.ref].gen;
	}
	return r;
}

static uint8_t thrtab_find(const struct thrtab *t, uint64_t pid, uint64_t tid, uint32_t h)
{
	const uint32_t mask = THREAD_BUCKETS - 1;
	uint32_t i;
	uint16_t ix;

	for (i = h & mask; (ix = t->bucket[i]) != 0; i = (i + 1) & mask)
		if (t->ent[ix].pid == pid && t->ent[ix].tid == tid)
			return (uint8_t)ix;
	return 0;
}

static void thrtab_drop(struct thrtab *t, uint8_t ix)
{
	bucket_remove(t->bucket, THREAD_BUCKETS - 1, t->hash, ix);
	t->ent[ix].gen = 0;
}

static uint8_t thrtab_add(struct fxt_writer *w, struct thrtab *t, uint64_t pid, uint64_t tid,
			  uint32_t h)
{
	uint8_t ix = (uint8_t)t->next;
	uint64_t *rec = fxt_writer_reserve(w, 3);

	if (!rec)
		return 0;
	fxt_enc_thread(rec, 3, ix, pid, tid);
	fxt_writer_commit(w, 3);
	if (t->ent[ix].gen)
		thrtab_drop(t, ix);
	t->ent[ix].pid = pid;
	t->ent[ix].tid = tid;
	t->ent[ix].gen = next_gen(w);
	t->hash[ix] = h;
	bucket_insert(t->bucket, THREAD_BUCKETS - 1, h, ix);
	t->next = ix == FXT_MAX_THREAD_INDEX ? 1 : ix + 1;
	return ix;
}

struct fxt_tref fxt_writer_thread(struct fxt_writer *w, uint64_t pid, uint64_t tid)
{
	struct thrtab *t = &w->cur->tt;
	uint32_t h = (uint32_t)fxt__hash_pair(pid, tid);
	uint8_t ix = thrtab_find(t, pid, tid, h);

	if (ix && fifo_distance(ix, t->next, FXT_MAX_THREAD_INDEX) < THREAD_GUARD) {
		thrtab_drop(t, ix);
		ix = 0;
	}
	if (!ix)
		ix = thrtab_add(w, t, pid, tid, h);
	return ix ? fxt_tref_index(ix) : fxt_tref_inline(pid, tid);
}

struct fxt_tref fxt_writer_thread_cached(struct fxt_writer *w, struct fxt_thread_slot *slot,
					 uint64_t pid, uint64_t tid)
{
	const struct thrtab *t = &w->cur->tt;
	struct fxt_tref r;

	if (slot->generation != 0 && t->ent[slot->index].gen == slot->generation &&
	    fifo_distance(slot->index, t->next, FXT_MAX_THREAD_INDEX) >= THREAD_GUARD)
		return fxt_tref_index(slot->index);
	r = fxt_writer_thread(w, pid, tid);
	if (r.index != FXT_THREADREF_INLINE) {
		slot->index = r.index;
		slot->generation = t->ent[r.index].gen;
	}
	return r;
}

/* -------------------------------------------------------- object names */

int fxt_writer_process_name(struct fxt_writer *w, uint64_t pid, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), FXT_MAX_STRING_LEN);

	return fxt_writer_kernel_object(w, FXT_OBJ_PROCESS, pid, fxt_sref_inline(name, len), NULL,
					0);
}

int fxt_writer_thread_name(struct fxt_writer *w, uint64_t pid, uint64_t tid, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), FXT_MAX_STRING_LEN);
	struct fxt_arg process = {
		.type = FXT_ARG_KOID, /* not u64: Perfetto rejects that */
		.name = fxt_writer_cstring(w, "process"),
		.v.koid = pid,
	};

	return fxt_writer_kernel_object(w, FXT_OBJ_THREAD, tid, fxt_sref_inline(name, len),
					&process, 1);
}
