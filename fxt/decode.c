/* The FXT reader's record path (see reader_int.h): fxt__next_record()
 * frames each record in the window and hands it to its decoder, one per
 * record type, which reads the record's words through a bounds-checked
 * cursor: string and thread refs, arguments, reserved bits under
 * FXT_READER_VALIDATE.
 *
 * Framing, cursor and decoders share this file on purpose: the compiler
 * inlines the decoders and the per-field helpers into the loop of
 * fxt__next_record(), which is what keeps reading at a few ns a record
 * (fxt_reader_next(), order.c, gives its records on).  The plain events'
 * run (fxt__next_plain(), fxt_reader_next_plain()) is here too, the file
 * past 800 lines on purpose: it reads the string cache and thread table as
 * the decoders do, and must take exactly the events dec_event() reads
 * without a word to say, so it sits beside it.
 */
#include <stdlib.h>
#include <string.h>

#include "fxt/reader_int.h"

const char fxt__empty[] = "";
const char fxt__unregistered[] = FXT_UNREGISTERED_STRING;

/* ----------------------------------------------------------------- cursor */

/* The words of one record (or argument) not consumed yet. */
struct cursor {
	const uint8_t *p;
	uint64_t left; /* words */
	uint64_t off;  /* stream offset of p */
};

/* Why a decoder stopped: it sets the error itself and returns false. */
#define DAMAGE(r, off, ...) (fxt__set_error((r), (off), __VA_ARGS__), false)
#define FAIL(r, off, ...)   (fxt__set_error((r), (off), __VA_ARGS__), -1)

static inline bool cur_word(struct cursor *c, uint64_t *w)
{
	if (c->left == 0)
		return false;
	*w = fxt__load64(c->p);
	c->p += 8;
	c->off += 8;
	c->left--;
	return true;
}

/* A stream of n bytes (padded to words); *data points into the window. */
static inline bool cur_stream(struct cursor *c, uint64_t n, const uint8_t **data)
{
	if (n > c->left * 8) /* not fxt_stream_words(n): n + 7 may wrap */
		return false;
	uint64_t words = fxt_stream_words(n);
	*data = c->p;
	c->p += words * 8;
	c->off += words * 8;
	c->left -= words;
	return true;
}

static inline void cur_skip(struct cursor *c, uint64_t words)
{
	c->p += words * 8;
	c->off += words * 8;
	c->left -= words;
}

/* Why a decoder stopped: it sets the error itself and returns false. */
/* Resolves string ref `ref` of the record at `roff`.  Inline strings come
 * from the cursor; unregistered indices resolve to FXT_UNREGISTERED_STRING
 * with an error. */
static bool read_sref_slow(struct fxt_reader *r, struct cursor *c, uint16_t ref, const char *what,
			   uint64_t roff, struct fxt_string *out)
{
	if (ref == FXT_STRREF_EMPTY) {
		out->data = fxt__empty;
		out->len = 0;
		return true;
	}
	if (fxt_strref_is_inline(ref)) {
		unsigned len = fxt_strref_inline_len(ref);
		const uint8_t *d;
		uint64_t soff = c->off;
		if (!cur_stream(c, len, &d))
			return DAMAGE(r, roff,
				      "inline %s string (%u bytes) runs past the end of its record",
				      what, len);
		out->data = (const char *)d;
		out->len = len;
		if (r->flags & FXT_READER_VALIDATE) {
			if (!fxt_utf8_valid(out->data, len))
				fxt__diag(r, FXT_DIAG_ERROR, soff,
					  "inline %s string is not valid UTF-8", what);
			if (len > FXT_MAX_STRING_LEN)
				fxt__diag(r, FXT_DIAG_ERROR, soff,
					  "inline %s string of %u bytes exceeds the %u-byte limit",
					  what, len, FXT_MAX_STRING_LEN);
		}
		return true;
	}
	const struct str_entry *e = fxt__string_lookup(r->cur, ref);
	if (__builtin_expect(!e, 0)) {
		fxt__diag(r, FXT_DIAG_ERROR, roff, "%s string ref %u used before registration",
			  what, ref);
		out->data = fxt__unregistered;
		out->len = sizeof(fxt__unregistered) - 1;
		return true;
	}
	out->data = e->data;
	out->len = e->len;
	return true;
}

/* The common case, a registered table string, inline in the decoders; the
 * rest (empty, inline, unregistered) out of line. */
static inline __attribute__((always_inline)) bool read_sref(struct fxt_reader *r, struct cursor *c,
							    uint16_t ref, const char *what,
							    uint64_t roff, struct fxt_string *out)
{
	if (__builtin_expect(ref != FXT_STRREF_EMPTY && !fxt_strref_is_inline(ref), 1)) {
		struct scache_entry *k = &r->scache[ref & (SCACHE_SIZE - 1)];

		if (__builtin_expect(k->ref == ref, 1)) {
			out->data = k->data;
			out->len = k->len;
			return true;
		}
		if (r->cur->pages) {
			const struct str_page *pg = r->cur->pages[ref >> STR_PAGE_SHIFT];
			if (pg) {
				const struct str_entry *e = &pg->e[ref & (STR_PAGE_SIZE - 1)];
				if (e->data) {
					*k = (struct scache_entry){ ref, e->len, e->data };
					out->data = e->data;
					out->len = e->len;
					return true;
				}
			}
		}
	}
	return read_sref_slow(r, c, ref, what, roff, out);
}

/* Resolves a thread ref: inline pid and tid words, or the thread table. */
static inline __attribute__((always_inline)) bool read_tref(struct fxt_reader *r, struct cursor *c,
							    unsigned ref, uint64_t roff,
							    uint64_t *pid, uint64_t *tid)
{
	if (ref == FXT_THREADREF_INLINE) {
		if (!cur_word(c, pid) || !cur_word(c, tid))
			return DAMAGE(r, roff, "inline thread runs past the end of its record");
		return true;
	}
	const struct thread_entry *t = r->cur->threads ? &r->cur->threads[ref] : NULL;
	if (__builtin_expect(!t || !t->set, 0)) {
		fxt__diag(r, FXT_DIAG_ERROR, roff, "thread ref %u used before registration", ref);
		*pid = *tid = 0;
		return true;
	}
	*pid = t->pid;
	*tid = t->tid;
	return true;
}

static void check_reserved(struct fxt_reader *r, uint64_t w, unsigned lo, unsigned hi, uint64_t off,
			   const char *what)
{
	if (fxt_bits(w, lo, hi) != 0)
		fxt__diag(r, FXT_DIAG_ERROR, off, "reserved bits [%u .. %u] of the %s are set", lo,
			  hi, what);
}

/* Decodes `n` arguments into rec->args.  Unknown argument types are skipped
 * by their size, as the spec says. */
static bool read_args(struct fxt_reader *r, struct cursor *c, unsigned n, struct fxt_record *rec)
{
	bool validate = r->flags & FXT_READER_VALIDATE;
	rec->nargs = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t aoff = c->off, h;
		if (!cur_word(c, &h))
			return DAMAGE(r, aoff, "argument %u of %u runs past the end of its record",
				      i + 1, n);
		uint64_t size = fxt_bits(h, 4, 15);
		if (size == 0)
			return DAMAGE(r, aoff, "argument of size 0");
		if (size - 1 > c->left)
			return DAMAGE(r, aoff,
				      "argument size %llu words exceeds its record (%llu left)",
				      (unsigned long long)size, (unsigned long long)(c->left + 1));
		struct cursor a = { c->p, size - 1, c->off };
		cur_skip(c, size - 1);

		unsigned type = (unsigned)fxt_bits(h, 0, 3);
		if (type >= FXT_ARG_TYPE_COUNT) {
			fxt__diag(r, FXT_DIAG_INFO, aoff, "unknown argument type %u skipped", type);
			continue;
		}
		struct fxt_arg_value *v = &rec->args[rec->nargs];
		v->type = (enum fxt_arg_type)type;
		if (!read_sref(r, &a, (uint16_t)fxt_bits(h, 16, 31), "argument name", aoff,
			       &v->name))
			return DAMAGE(r, aoff,
				      "inline argument name runs past the argument's size");
		uint64_t w;
		switch (type) {
		case FXT_ARG_NULL:
			if (validate)
				check_reserved(r, h, 32, 63, aoff, "null argument");
			break;
		case FXT_ARG_INT32:
			v->v.i = (int32_t)(uint32_t)fxt_bits(h, 32, 63);
			break;
		case FXT_ARG_UINT32:
			v->v.u = fxt_bits(h, 32, 63);
			break;
		case FXT_ARG_BOOL:
			if (validate)
				check_reserved(r, h, 33, 63, aoff, "bool argument");
			v->v.b = fxt_bits(h, 32, 32);
			break;
		case FXT_ARG_STRING:
			if (validate)
				check_reserved(r, h, 48, 63, aoff, "string argument");
			if (!read_sref(r, &a, (uint16_t)fxt_bits(h, 32, 47), "argument value", aoff,
				       &v->v.s))
				return DAMAGE(r, aoff,
					      "string argument value runs past the argument's "
					      "size");
			break;
		default: /* INT64, UINT64, DOUBLE, POINTER, KOID: one value word */
			if (validate)
				check_reserved(r, h, 32, 63, aoff, "argument header");
			if (!cur_word(&a, &w))
				return DAMAGE(r, aoff, "%s argument has no value word",
					      fxt_arg_type_name(type));
			if (type == FXT_ARG_DOUBLE)
				memcpy(&v->v.d, &w, sizeof(w));
			else
				v->v.u = w;
			break;
		}
		rec->nargs++;
	}
	return true;
}

/* ------------------------------------------------------- record decoders */

/* Each returns 1 (record delivered), 0 (record skipped) or -1 (damage). */

static int dec_metadata(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	bool validate = r->flags & FXT_READER_VALIDATE;
	unsigned type = (unsigned)fxt_bits(h, 16, 19);
	uint32_t id = (uint32_t)fxt_bits(h, 20, 51);
	bool created;

	rec->u.meta.type = (enum fxt_metadata_type)type;
	rec->u.meta.provider_id = 0;
	rec->u.meta.name.data = fxt__empty;
	rec->u.meta.name.len = 0;
	rec->u.meta.event = 0;
	rec->u.meta.trace_info_type = 0;
	switch (type) {
	case FXT_METADATA_PROVIDER_INFO: {
		unsigned len = (unsigned)fxt_bits(h, 52, 59);
		const uint8_t *d;
		if (validate)
			check_reserved(r, h, 60, 63, rec->offset, "provider info header");
		if (!cur_stream(c, len, &d))
			return FAIL(r, rec->offset,
				    "provider name runs past the end of its record");
		if (!fxt_utf8_valid((const char *)d, len))
			fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
				  "provider name is not valid UTF-8");
		/* A provider info record starts the provider afresh. */
		struct provider *p = fxt__provider_get(r, id, &created);
		if (!p)
			return FAIL(r, rec->offset, "out of memory");
		memset(r->scache, 0, sizeof(r->scache));
		if (!created && fxt__provider_clear(r, p) < 0)
			return FAIL(r, rec->offset, "out of memory");
		r->cur = p;
		char *name = realloc(r->provider_name, len + 1);
		if (!name)
			return FAIL(r, rec->offset, "out of memory");
		memcpy(name, d, len);
		name[len] = '\0';
		r->provider_name = name;
		rec->u.meta.provider_id = id;
		rec->u.meta.name.data = name;
		rec->u.meta.name.len = len;
		break;
	}
	case FXT_METADATA_PROVIDER_SECTION: {
		if (validate)
			check_reserved(r, h, 52, 63, rec->offset, "provider section header");
		struct provider *p = fxt__provider_get(r, id, &created);
		if (!p)
			return FAIL(r, rec->offset, "out of memory");
		if (created)
			fxt__diag(r, FXT_DIAG_WARNING, rec->offset,
				  "provider section for provider %u, never announced", id);
		if (p != r->cur)
			memset(r->scache, 0, sizeof(r->scache));
		r->cur = p;
		rec->u.meta.provider_id = id;
		break;
	}
	case FXT_METADATA_PROVIDER_EVENT:
		if (validate)
			check_reserved(r, h, 56, 63, rec->offset, "provider event header");
		rec->u.meta.provider_id = id;
		rec->u.meta.event = (unsigned)fxt_bits(h, 52, 55);
		break;
	case FXT_METADATA_TRACE_INFO: {
		unsigned ti = (unsigned)fxt_bits(h, 20, 23);
		rec->u.meta.trace_info_type = ti;
		if (ti != FXT_TRACE_INFO_MAGIC) {
			fxt__diag(r, FXT_DIAG_INFO, rec->offset, "unknown trace info type %u", ti);
			break;
		}
		if (fxt_bits(h, 24, 55) != FXT_MAGIC_NUMBER)
			fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
				  "magic record with a wrong magic number 0x%08llx",
				  (unsigned long long)fxt_bits(h, 24, 55));
		if (fxt_bits(h, 56, 63) != 0)
			fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
				  "magic record with bits [56 .. 63] set");
		if (rec->nwords != 1)
			fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
				  "magic record of %llu words: it must be the header word alone",
				  (unsigned long long)rec->nwords);
		break;
	}
	case FXT_METADATA_PADDING: /* nothing to say */
		return 0;
	default:
		fxt__diag(r, FXT_DIAG_INFO, rec->offset, "unknown metadata type %u skipped", type);
		return 0;
	}
	return 1;
}

static int dec_init(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	uint64_t tps;
	if (r->flags & FXT_READER_VALIDATE)
		check_reserved(r, h, 16, 63, rec->offset, "initialization header");
	if (!cur_word(c, &tps))
		return FAIL(r, rec->offset, "initialization record without its ticks word");
	rec->u.init.ticks_per_second = tps;
	if (tps == 0)
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "0 ticks per second (ignored)");
	else
		r->cur->ticks_per_second = tps;
	return 1;
}

static int dec_string(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned index = (unsigned)fxt_bits(h, 16, 30);
	unsigned len = (unsigned)fxt_bits(h, 32, 46);
	const uint8_t *d;

	if (fxt_bits(h, 31, 31) || fxt_bits(h, 47, 63))
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "string record with reserved bits set");
	if (!cur_stream(c, len, &d))
		return FAIL(r, rec->offset, "string of %u bytes runs past the end of its record",
			    len);
	if (!fxt_utf8_valid((const char *)d, len))
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "string %u is not valid UTF-8", index);
	if (len > FXT_MAX_STRING_LEN)
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
			  "string %u of %u bytes exceeds the %u-byte limit", index, len,
			  FXT_MAX_STRING_LEN);
	rec->u.string.index = (uint16_t)index;
	rec->u.string.str.data = (const char *)d;
	rec->u.string.str.len = len;
	if (index == 0) {
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "string record with index 0 (ignored)");
		return 1;
	}
	r->scache[index & (SCACHE_SIZE - 1)].ref = 0;
	struct str_entry *e = fxt__string_set(r, r->cur, index, (const char *)d, len);
	if (!e)
		return FAIL(r, rec->offset, "out of memory");
	return 1;
}

static int dec_thread(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned index = (unsigned)fxt_bits(h, 16, 23);
	uint64_t pid, tid;

	if (fxt_bits(h, 24, 63))
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "thread record with reserved bits set");
	if (!cur_word(c, &pid) || !cur_word(c, &tid))
		return FAIL(r, rec->offset, "thread record shorter than 3 words");
	rec->u.thread.index = (uint8_t)index;
	rec->u.thread.pid = pid;
	rec->u.thread.tid = tid;
	if (index == 0) {
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "thread record with index 0 (ignored)");
		return 1;
	}
	struct provider *p = r->cur;
	if (!p->threads && !(p->threads = calloc(FXT_MAX_THREAD_INDEX + 1, sizeof(*p->threads))))
		return FAIL(r, rec->offset, "out of memory");
	struct thread_entry *t = &p->threads[index];
	t->pid = pid;
	t->tid = tid;
	t->set = true;
	return 1;
}

static int dec_event(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned type = (unsigned)fxt_bits(h, 16, 19);
	unsigned nargs = (unsigned)fxt_bits(h, 20, 23);

	rec->u.event.type = (enum fxt_event_type)type;
	rec->u.event.category_ref = (uint16_t)fxt_bits(h, 32, 47);
	rec->u.event.name_ref = (uint16_t)fxt_bits(h, 48, 63);
	if (!cur_word(c, &rec->u.event.ts))
		return FAIL(r, rec->offset, "event record without its timestamp word");
	if (!read_tref(r, c, (unsigned)fxt_bits(h, 24, 31), rec->offset, &rec->u.event.pid,
		       &rec->u.event.tid) ||
	    !read_sref(r, c, (uint16_t)fxt_bits(h, 32, 47), "category", rec->offset,
		       &rec->u.event.category) ||
	    !read_sref(r, c, (uint16_t)fxt_bits(h, 48, 63), "name", rec->offset,
		       &rec->u.event.name))
		return -1;
	if (nargs == 0)
		rec->nargs = 0;
	else if (!read_args(r, c, nargs, rec))
		return -1;

	rec->u.event.extra = 0;
	switch (type) {
	case FXT_EVENT_INSTANT:
	case FXT_EVENT_DURATION_BEGIN:
	case FXT_EVENT_DURATION_END:
		break;
	case FXT_EVENT_DURATION_COMPLETE:
		if (!cur_word(c, &rec->u.event.extra))
			return FAIL(r, rec->offset, "complete event without its end time word");
		if (rec->u.event.extra < rec->u.event.ts)
			fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
				  "complete event ends (%llu) before it starts (%llu)",
				  (unsigned long long)rec->u.event.extra,
				  (unsigned long long)rec->u.event.ts);
		break;
	default:
		if (type >= FXT_EVENT_TYPE_COUNT) {
			fxt__diag(r, FXT_DIAG_INFO, rec->offset, "unknown event type %u", type);
			break;
		}
		/* counter id, async or flow correlation id */
		if (!cur_word(c, &rec->u.event.extra))
			return FAIL(r, rec->offset, "%s event without its id word",
				    fxt_event_type_name(type));
		break;
	}
	return 1;
}

static int dec_blob(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	uint64_t size = fxt_bits(h, 32, 46);
	const uint8_t *d;

	if (r->flags & FXT_READER_VALIDATE) {
		check_reserved(r, h, 47, 47, rec->offset, "blob header");
		check_reserved(r, h, 56, 63, rec->offset, "blob header");
	}
	if (!read_sref(r, c, (uint16_t)fxt_bits(h, 16, 31), "blob name", rec->offset,
		       &rec->u.blob.name))
		return -1;
	if (!cur_stream(c, size, &d))
		return FAIL(r, rec->offset,
			    "blob payload of %llu bytes runs past the end of its record",
			    (unsigned long long)size);
	rec->u.blob.blob_type = (unsigned)fxt_bits(h, 48, 55);
	rec->u.blob.payload = d;
	rec->u.blob.size = size;
	return 1;
}

static int dec_uobj(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned tref = (unsigned)fxt_bits(h, 16, 23);

	if (r->flags & FXT_READER_VALIDATE)
		check_reserved(r, h, 44, 63, rec->offset, "userspace object header");
	if (!cur_word(c, &rec->u.uobj.pointer))
		return FAIL(r, rec->offset, "userspace object record without its pointer word");
	/* The process is a thread ref, but inline it is the process koid alone. */
	if (tref == FXT_THREADREF_INLINE) {
		if (!cur_word(c, &rec->u.uobj.pid))
			return FAIL(r, rec->offset,
				    "userspace object record without its process word");
	} else {
		uint64_t tid;
		if (!read_tref(r, c, tref, rec->offset, &rec->u.uobj.pid, &tid))
			return -1;
	}
	if (!read_sref(r, c, (uint16_t)fxt_bits(h, 24, 39), "object name", rec->offset,
		       &rec->u.uobj.name) ||
	    !read_args(r, c, (unsigned)fxt_bits(h, 40, 43), rec))
		return -1;
	return 1;
}

static int dec_kobj(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	if (r->flags & FXT_READER_VALIDATE)
		check_reserved(r, h, 44, 63, rec->offset, "kernel object header");
	rec->u.kobj.obj_type = (unsigned)fxt_bits(h, 16, 23);
	if (!cur_word(c, &rec->u.kobj.koid))
		return FAIL(r, rec->offset, "kernel object record without its koid word");
	if (!read_sref(r, c, (uint16_t)fxt_bits(h, 24, 39), "object name", rec->offset,
		       &rec->u.kobj.name) ||
	    !read_args(r, c, (unsigned)fxt_bits(h, 40, 43), rec))
		return -1;
	return 1;
}

static int dec_cswitch(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	if (r->flags & FXT_READER_VALIDATE)
		check_reserved(r, h, 60, 63, rec->offset, "context switch header");
	rec->u.cswitch.cpu = (unsigned)fxt_bits(h, 16, 23);
	rec->u.cswitch.out_state = (unsigned)fxt_bits(h, 24, 27);
	rec->u.cswitch.out_prio = (unsigned)fxt_bits(h, 44, 51);
	rec->u.cswitch.in_prio = (unsigned)fxt_bits(h, 52, 59);
	if (!cur_word(c, &rec->u.cswitch.ts))
		return FAIL(r, rec->offset, "context switch record without its timestamp");
	if (!read_tref(r, c, (unsigned)fxt_bits(h, 28, 35), rec->offset, &rec->u.cswitch.out_pid,
		       &rec->u.cswitch.out_tid) ||
	    !read_tref(r, c, (unsigned)fxt_bits(h, 36, 43), rec->offset, &rec->u.cswitch.in_pid,
		       &rec->u.cswitch.in_tid))
		return -1;
	return 1;
}

static int dec_log(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned len = (unsigned)fxt_bits(h, 16, 30);
	const uint8_t *d;

	if (r->flags & FXT_READER_VALIDATE) {
		check_reserved(r, h, 31, 31, rec->offset, "log header");
		check_reserved(r, h, 40, 63, rec->offset, "log header");
	}
	if (!cur_word(c, &rec->u.log.ts))
		return FAIL(r, rec->offset, "log record without its timestamp");
	if (!read_tref(r, c, (unsigned)fxt_bits(h, 32, 39), rec->offset, &rec->u.log.pid,
		       &rec->u.log.tid))
		return -1;
	if (!cur_stream(c, len, &d))
		return FAIL(r, rec->offset,
			    "log message of %u bytes runs past the end of its record", len);
	if ((r->flags & FXT_READER_VALIDATE) && !fxt_utf8_valid((const char *)d, len))
		fxt__diag(r, FXT_DIAG_ERROR, rec->offset, "log message is not valid UTF-8");
	rec->u.log.msg.data = (const char *)d;
	rec->u.log.msg.len = len;
	return 1;
}

/* A large blob record.  `held` is false when the cursor covers only the
 * part of the record that fits in the window: the payload is then left out
 * (NULL) and skipped by the caller. */
static int dec_large(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec,
		     bool held)
{
	bool validate = r->flags & FXT_READER_VALIDATE;
	unsigned ltype = (unsigned)fxt_bits(h, 36, 39);
	unsigned format = (unsigned)fxt_bits(h, 40, 43);
	uint64_t fh, size;

	rec->u.large.large_type = ltype;
	rec->u.large.format = format;
	if (ltype != FXT_LARGE_BLOB) {
		fxt__diag(r, FXT_DIAG_INFO, rec->offset, "unknown large record type %u skipped",
			  ltype);
		return 0;
	}
	if (format != FXT_BLOB_FORMAT_EVENT && format != FXT_BLOB_FORMAT_ATTACHMENT) {
		fxt__diag(r, FXT_DIAG_INFO, rec->offset, "unknown large blob format %u skipped",
			  format);
		return 0;
	}
	if (validate)
		check_reserved(r, h, 44, 63, rec->offset, "large record header");
	if (!cur_word(c, &fh))
		return FAIL(r, rec->offset, "large blob record without its format header");
	rec->u.large.ts = rec->u.large.pid = rec->u.large.tid = 0;
	rec->nargs = 0;
	if (!read_sref(r, c, (uint16_t)fxt_bits(fh, 0, 15), "category", rec->offset,
		       &rec->u.large.category) ||
	    !read_sref(r, c, (uint16_t)fxt_bits(fh, 16, 31), "name", rec->offset,
		       &rec->u.large.name))
		return -1;
	if (format == FXT_BLOB_FORMAT_EVENT) {
		if (validate)
			check_reserved(r, fh, 44, 63, rec->offset, "large blob format header");
		if (!cur_word(c, &rec->u.large.ts))
			return FAIL(r, rec->offset, "large blob record without its timestamp");
		if (!read_tref(r, c, (unsigned)fxt_bits(fh, 36, 43), rec->offset, &rec->u.large.pid,
			       &rec->u.large.tid) ||
		    !read_args(r, c, (unsigned)fxt_bits(fh, 32, 35), rec))
			return -1;
	} else if (validate) {
		check_reserved(r, fh, 32, 63, rec->offset, "large blob format header");
	}
	if (!cur_word(c, &size))
		return FAIL(r, rec->offset, "large blob record without its size word");
	rec->u.large.size = size;
	rec->u.large.payload = NULL;
	/* The payload must fit in what the header said is left of the record. */
	uint64_t consumed = (c->off - rec->offset) / 8;
	if (size > (rec->nwords - consumed) * 8)
		return FAIL(r, rec->offset,
			    "large blob payload of %llu bytes runs past the end of its record",
			    (unsigned long long)size);
	if (held) {
		const uint8_t *d = NULL;
		if (cur_stream(c, size, &d)) /* checked just above */
			rec->u.large.payload = d;
	}
	if (rec->nwords > FXT_MAX_RECORD_WORDS)
		fxt__diag(
		    r, FXT_DIAG_WARNING, rec->offset,
		    "record of %llu words: Perfetto loses its place after records over %u words",
		    (unsigned long long)rec->nwords, FXT_MAX_RECORD_WORDS);
	return 1;
}

/* Decodes a record held whole in the window (any but a large one).
 * Returns 1, 0 for a record skipped (an unknown type), or -1. */
static int dec_record(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	switch (rec->type) {
	case FXT_RECORD_EVENT:
		return dec_event(r, c, h, rec);
	case FXT_RECORD_METADATA:
		return dec_metadata(r, c, h, rec);
	case FXT_RECORD_INITIALIZATION:
		return dec_init(r, c, h, rec);
	case FXT_RECORD_STRING:
		return dec_string(r, c, h, rec);
	case FXT_RECORD_THREAD:
		return dec_thread(r, c, h, rec);
	case FXT_RECORD_BLOB:
		return dec_blob(r, c, h, rec);
	case FXT_RECORD_USERSPACE_OBJECT:
		return dec_uobj(r, c, h, rec);
	case FXT_RECORD_KERNEL_OBJECT:
		return dec_kobj(r, c, h, rec);
	case FXT_RECORD_CONTEXT_SWITCH:
		return dec_cswitch(r, c, h, rec);
	case FXT_RECORD_LOG:
		return dec_log(r, c, h, rec);
	default:
		fxt__diag(r, FXT_DIAG_INFO, rec->offset,
			  "unknown record type %u (%llu words) skipped", rec->type,
			  (unsigned long long)rec->nwords);
		return 0;
	}
}

/* ---------------------------------------------------------------- framing */

/* A large record (type 15): held whole when it fits in the window,
 * otherwise decoded from the part that does and skipped. */
static int next_large(struct fxt_reader *r, uint64_t h, struct fxt_record *rec)
{
	uint64_t nwords = fxt_large_header_size(h);
	rec->nwords = nwords;
	if (nwords == 0)
		return FAIL(r, rec->offset, "large record of size 0");
	uint64_t nbytes = nwords * 8;
	size_t left = r->end - r->pos;
	bool raw = r->flags & FXT_READER_RAW;
	bool held;
	size_t take;
	if (r->src == SRC_MEM && !r->codec) {
		held = true;
		take = (size_t)nbytes;
		if (nbytes > left)
			goto truncated;
	} else {
		if (raw && nbytes > RAW_MAX_BYTES)
			return FAIL(r, rec->offset,
				    "large record of %llu bytes: more than the %u MiB held whole",
				    (unsigned long long)nbytes, RAW_MAX_BYTES >> 20);
		if (raw && !fxt__grow_window(r, (size_t)nbytes))
			return -1;
		held = nbytes <= r->cap;
		take = held ? (size_t)nbytes : r->cap;
		if (!fxt__fill(r, take)) {
			if (r->failed)
				return -1;
			left = r->end - r->pos;
			goto truncated;
		}
	}
	struct cursor c = { r->win + r->pos + 8, take / 8 - 1, rec->offset + 8 };
	r->rec_bytes = held ? r->win + r->pos : NULL;
	r->pos += take;
	r->skip_left = nbytes - take;
	r->skip_off = rec->offset;
	return raw ? 1 : dec_large(r, &c, h, rec, held);

truncated:
	return FAIL(r, rec->offset,
		    "large record runs past the end of the input (header says %llu words, %zu "
		    "bytes left)",
		    (unsigned long long)nwords, left);
}

int fxt__next_record(struct fxt_reader *r, struct fxt_record *rec)
{
	for (;;) {
		if (r->failed)
			return -1;
		if (r->skip_left && !fxt__skip_payload(r))
			return -1;
		if (!fxt__fill(r, 8)) {
			if (r->failed)
				return -1;
			size_t left = r->end - r->pos;
			if (left == 0)
				return 0;
			fxt__set_error(r, r->win_off + r->pos,
				       "truncated record header: %zu bytes at the end of the input",
				       left);
			return -1;
		}
		const uint8_t *p = r->win + r->pos;
		uint64_t h = fxt__load64(p);
		rec->offset = r->win_off + r->pos;
		rec->type = (enum fxt_record_type)fxt_header_type(h);
		rec->nargs = 0;
		r->rec_bytes = NULL;

		if (__builtin_expect(!r->started, 0)) {
			r->started = true;
			r->saw_magic = h == FXT_MAGIC_RECORD;
			/* The spec lets a big-endian machine write its own byte
			 * order; every word would need swapping, which we do not
			 * do: say so rather than report garbage records. */
			if (h == __builtin_bswap64(FXT_MAGIC_RECORD))
				return FAIL(r, rec->offset,
					    "big-endian FXT archive: only little-endian archives "
					    "are supported");
			if (!r->saw_magic)
				fxt__diag(r, FXT_DIAG_ERROR, rec->offset,
					  "no magic record at offset 0: not an FXT archive");
		}

		int rc;
		if (rec->type == FXT_RECORD_LARGE) {
			rc = next_large(r, h, rec);
		} else {
			unsigned nwords = fxt_header_size(h);
			rec->nwords = nwords;
			if (nwords == 0)
				return FAIL(r, rec->offset, "record of size 0");
			if (!fxt__fill(r, (size_t)nwords * 8)) {
				if (r->failed)
					return -1;
				return FAIL(r, rec->offset,
					    "record runs past the end of the input (header says "
					    "%u words, %zu bytes left)",
					    nwords, r->end - r->pos);
			}
			p = r->win + r->pos;
			r->pos += (size_t)nwords * 8;
			r->rec_bytes = p;
			struct cursor c = { p + 8, nwords - 1, rec->offset + 8 };
			rc = r->flags & FXT_READER_RAW ? 1 /* framed, not decoded */
						       : dec_record(r, &c, h, rec);
		}
		if (rc < 0) {
			/* Stay at the last well-formed record. */
			r->skip_left = 0;
			r->rec_bytes = NULL;
			return -1;
		}
		if (rc > 0) {
			/* After decoding: provider records belong to their provider. */
			rec->provider_id = r->cur->id;
			return 1;
		}
	}
}

/* ----------------------------------------------------------- plain events */

/* A table string of a plain event (read_sref()'s first ways): false when
 * it is inline or not registered, for fxt__next_record() to say. */
static inline __attribute__((always_inline)) bool plain_sref(struct fxt_reader *r, uint16_t ref,
							     const char **data, uint32_t *len)
{
	if (ref == FXT_STRREF_EMPTY) {
		*data = fxt__empty;
		*len = 0;
		return true;
	}
	if (fxt_strref_is_inline(ref))
		return false;
	struct scache_entry *k = &r->scache[ref & (SCACHE_SIZE - 1)];
	if (__builtin_expect(k->ref == ref, 1)) {
		*data = k->data;
		*len = k->len;
		return true;
	}
	if (!r->cur->pages)
		return false;
	const struct str_page *pg = r->cur->pages[ref >> STR_PAGE_SHIFT];
	if (!pg || !pg->e[ref & (STR_PAGE_SIZE - 1)].data)
		return false;
	const struct str_entry *e = &pg->e[ref & (STR_PAGE_SIZE - 1)];
	*k = (struct scache_entry){ ref, e->len, e->data };
	*data = e->data;
	*len = e->len;
	return true;
}

/* What dec_event() makes of the records it takes, without struct
 * fxt_record, the cursor or a call per record: each event held whole in
 * the window, its header, thread and strings as dec_event() reads them.
 * Anything it would say something about (a string or thread not
 * registered, a complete event ending before it starts) or that is not
 * a plain event stops the run, not taken, for fxt__next_record(). */
size_t fxt__next_plain(struct fxt_reader *r, struct fxt_plain *ev, size_t n)
{
	const struct thread_entry *threads = r->cur->threads;
	const uint8_t *win = r->win, *last = NULL;
	size_t pos = r->pos, end = r->end, k = 0;
	/* The thread r->check follows, in registers (reloaded after a call
	 * to fxt__check_order(), which may change it). */
	bool check = r->check;
	uint64_t *max = check ? r->check_max : NULL, cpid = r->check_pid, ctid = r->check_tid;
	uint64_t mx = max ? *max : 0; /* *max, stored back before a call and at the end */
	bool same_prov = max && r->check_prov == r->cur->id;
	/* The events' thread is the one check follows: only the time to
	 * compare (set where the thread or the followed one changes). */
	bool fast = false;
	/* The last category ref's string (no table string changes in a run):
	 * most events share one. */
	uint16_t lref = FXT_STRREF_EMPTY;
	const char *ldata = fxt__empty;
	uint32_t llen = 0;
	/* The last event header's low half that passed the checks below
	 * (2^32: none yet, which no header's half equals), its size, event
	 * type and thread. */
	uint64_t lo = UINT64_C(1) << 32;
	unsigned nw = 0, et = 0;
	uint64_t pid = 0, tid = 0;

	if (!threads)
		return 0;
	for (; k < n; k++) {
		struct fxt_plain *e = &ev[k];

		size_t left = end - pos;

		if (left < 8)
			break;
		const uint8_t *p = win + pos;
		uint64_t h = fxt__load64(p);
		uint16_t cref = (uint16_t)fxt_bits(h, 32, 47), nref = (uint16_t)fxt_bits(h, 48, 63);

		/* The header's low half as the last event's: the same checks
		 * passed, the same thread (its table does not change in a
		 * run), only the window's bound to test. */
		if ((uint32_t)h != lo) {
			unsigned tref = (unsigned)fxt_bits(h, 24, 31);

			nw = fxt_header_size(h);
			et = (unsigned)fxt_bits(h, 16, 19);
			/* An event (type 4) without arguments (bits 20..23). */
			if ((h & 0xf0000f) != FXT_RECORD_EVENT ||
			    (et != FXT_EVENT_INSTANT && et - FXT_EVENT_DURATION_BEGIN > 2u) ||
			    nw < (et == FXT_EVENT_DURATION_COMPLETE ? 3u : 2u) ||
			    tref == FXT_THREADREF_INLINE || !threads[tref].set)
				break;
			pid = threads[tref].pid;
			tid = threads[tref].tid;
			lo = (uint32_t)h;
			fast = same_prov && cpid == pid && ctid == tid;
		}
		if ((size_t)nw * 8 > left)
			break;
		if (cref != lref) {
			if (!plain_sref(r, cref, &ldata, &llen))
				break;
			lref = cref;
		}
		if (!plain_sref(r, nref, &e->name, &e->name_len))
			break;
		e->category = ldata;
		e->category_len = llen;
		uint64_t ts = fxt__load64(p + 8), extra = 0;
		if (et == FXT_EVENT_DURATION_COMPLETE && (extra = fxt__load64(p + 16)) < ts)
			break;
		e->record_type = FXT_RECORD_EVENT;
		e->type = (uint8_t)et;
		e->category_ref = cref;
		e->name_ref = nref;
		e->ts = ts;
		e->extra = extra;
		e->pid = pid;
		e->tid = tid;
		e->aux = NULL;
		if (__builtin_expect(fast && ts >= mx, 1)) {
			mx = ts;
		} else if (check) {
			struct fxt_record rec;

			rec.type = FXT_RECORD_EVENT;
			rec.offset = r->win_off + pos;
			rec.nwords = nw;
			rec.provider_id = r->cur->id;
			rec.nargs = 0;
			rec.u.event.type = (enum fxt_event_type)et;
			rec.u.event.ts = ts;
			rec.u.event.extra = extra;
			rec.u.event.pid = pid;
			rec.u.event.tid = tid;
			rec.u.event.category_ref = cref;
			rec.u.event.name_ref = nref;
			rec.u.event.category.data = e->category;
			rec.u.event.category.len = e->category_len;
			rec.u.event.name.data = e->name;
			rec.u.event.name.len = e->name_len;
			if (max)
				*max = mx;
			fxt__check_order(r, &rec);
			check = r->check;
			max = check ? r->check_max : NULL;
			mx = max ? *max : 0;
			cpid = r->check_pid;
			ctid = r->check_tid;
			same_prov = max && r->check_prov == r->cur->id;
			fast = same_prov && cpid == pid && ctid == tid;
		}
		last = p;
		pos += (size_t)nw * 8;
	}
	if (max)
		*max = mx;
	if (k) {
		r->rec_pos = r->win_off + (size_t)(last - win);
		r->pos = pos;
		r->rec_bytes = last;
		r->order_again = false;
	}
	return k;
}
