/* FXT reader: streams records out of a plain or gzip archive through a
 * bounded window, keeping per-provider string and thread tables.
 *
 * Layout of this file: the byte source (memory, descriptor, inflate) and
 * its window; the per-provider context; the record decoders, one per record
 * type, working on a bounds-checked cursor over the record's words; and the
 * public entry points.
 *
 * Every read of record content goes through struct cursor, which knows how
 * many words of the record are left: a field that would lie past the end of
 * its record (or of its argument) is damage, reported with the offset of the
 * record or argument, and never a read out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include <fxt/reader.h>

/* The window holds at least one whole normal record (32 KB) and refills in
 * big reads.  Large records up to its size are held whole; bigger ones have
 * their header decoded and their payload skipped. */
#define WINDOW_BYTES  (1u << 20)
#define ZIN_BYTES     (256u << 10)
#define NS_PER_SECOND UINT64_C(1000000000)

/* With FXT_READER_RAW the window grows to hold a large record whole, up to
 * this size; a larger one is damage (a copy could not keep it whole). */
#define RAW_MAX_BYTES (64u << 20)

/* ------------------------------------------------------- provider context */

/* The string table is paged so that a provider that registers a few high
 * indices (or a hostile archive with thousands of providers) costs a few
 * KB, not the 512 KB of a flat 32768-entry table. */
#define STR_PAGE_SHIFT 8
#define STR_PAGE_SIZE  (1u << STR_PAGE_SHIFT)
#define STR_PAGES      ((FXT_MAX_STRING_INDEX + 1) / STR_PAGE_SIZE)

struct str_entry {
	char *data; /* NULL: not registered */
	uint32_t len, cap;
};

struct str_page {
	struct str_entry e[STR_PAGE_SIZE];
};

struct thread_entry {
	uint64_t pid, tid;
	bool set;
};

struct provider {
	uint32_t id;
	uint64_t ticks_per_second;
	/* Both allocated on first use: a hostile archive announcing a
	 * provider every 16 bytes must not cost kilobytes per provider. */
	struct str_page **pages;      /* STR_PAGES entries */
	struct thread_entry *threads; /* FXT_MAX_THREAD_INDEX + 1 entries */
};

/* ----------------------------------------------------------------- reader */

enum source { SRC_MEM, SRC_FD };

struct fxt_reader {
	/* The window: unread bytes are win[pos .. end); win[0] is at stream
	 * offset win_off.  For plain memory input win is the caller's buffer. */
	const uint8_t *win;
	size_t pos, end;
	uint64_t win_off;
	uint64_t skip_left; /* payload of a large record still to discard */
	uint64_t skip_off;  /* and that record's offset */

	enum source src;
	bool eof;     /* the source has no more bytes */
	bool gz;      /* bytes come through inflate */
	uint8_t *buf; /* window storage (fd or gzip input) */
	size_t cap;
	int fd;
	bool own_fd;
	const uint8_t *mem; /* compressed memory input */
	size_t mem_len, mem_pos;
	z_stream zs;
	bool zs_init;
	bool in_eof;	  /* no more compressed input */
	bool member_done; /* inflate finished a gzip member */
	uint8_t *zin;

	unsigned flags;
	fxt_diag_fn diag_fn;
	void *diag_ctx;

	bool started, saw_magic, failed;
	char err[160];
	uint64_t err_off;
	int read_errno; /* what stopped us, if not damage: a read error, ENOMEM */

	/* The bytes of the record last returned, while the window holds them
	 * whole (fxt_reader_record_bytes()), else NULL. */
	const uint8_t *rec_bytes;

	/* Providers, in an open-addressing hash on the id. */
	struct provider **slots;
	size_t nslots, nproviders;
	struct provider *cur;
	char *provider_name; /* copy of the last provider info name */
};

static void set_error(struct fxt_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(struct fxt_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->err_off = off;
	r->failed = true;
}

static void diag(struct fxt_reader *r, enum fxt_diag_level level, uint64_t off, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
static void diag(struct fxt_reader *r, enum fxt_diag_level level, uint64_t off, const char *fmt,
		 ...)
{
	char msg[200];
	va_list ap;
	if (!r->diag_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->diag_fn(r->diag_ctx, level, off, msg);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

/* --------------------------------------------------------------- source */

/* Reads up to n bytes from the descriptor, retrying on EINTR.  Returns the
 * count (0 at end of file) or -errno. */
static ssize_t read_fd(int fd, void *dst, size_t n)
{
	for (;;) {
		ssize_t got = read(fd, dst, n);
		if (got >= 0)
			return got;
		if (errno != EINTR)
			return -errno;
	}
}

/* Pulls more compressed input.  Returns false on a read error. */
static bool gz_refill(struct fxt_reader *r)
{
	if (r->src == SRC_MEM) {
		size_t left = r->mem_len - r->mem_pos;
		size_t take = left > (1u << 30) ? (1u << 30) : left;
		r->zs.next_in = (Bytef *)(uintptr_t)(r->mem + r->mem_pos);
		r->zs.avail_in = (uInt)take;
		r->mem_pos += take;
	} else {
		ssize_t got = read_fd(r->fd, r->zin, ZIN_BYTES);
		if (got < 0) {
			set_error(r, r->win_off + r->end, "read error: %s", strerror((int)-got));
			r->read_errno = (int)-got;
			return false;
		}
		r->zs.next_in = r->zin;
		r->zs.avail_in = (uInt)got;
	}
	if (r->zs.avail_in == 0)
		r->in_eof = true;
	return true;
}

/* Decompresses up to n bytes into dst.  Returns the count (0 at the end of
 * the compressed input) or -1 with the error set. */
static ssize_t read_gz(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	r->zs.next_out = dst;
	r->zs.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
	size_t want = r->zs.avail_out;
	while (r->zs.avail_out > 0) {
		if (r->zs.avail_in == 0 && !r->in_eof && !gz_refill(r))
			return -1;
		if (r->member_done) {
			/* Concatenated gzip members are one stream (gzip -c a b);
			 * only the end of the input after a member is a clean end. */
			if (r->zs.avail_in == 0)
				break;
			if (inflateReset(&r->zs) != Z_OK) {
				set_error(r, r->win_off + r->end, "gzip: cannot reset inflate");
				return -1;
			}
			r->member_done = false;
		}
		uInt before = r->zs.avail_out;
		int zr = inflate(&r->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			r->member_done = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			set_error(r, r->win_off + r->end + (want - r->zs.avail_out), "gzip: %s",
				  r->zs.msg ? r->zs.msg : "data error");
			return -1;
		} else if (r->zs.avail_out == before && r->zs.avail_in == 0 && r->in_eof) {
			/* No progress and no more input, inside a member. */
			size_t got = want - r->zs.avail_out;
			if (got > 0)
				return (ssize_t)got; /* report the cut on the next call */
			set_error(r, r->win_off + r->end,
				  "gzip stream truncated (the compressed file was cut short)");
			return -1;
		}
	}
	return (ssize_t)(want - r->zs.avail_out);
}

/* Makes at least `need` (<= cap) unread bytes available in the window.
 * Returns true if it could, false at the end of input or on error
 * (r->failed tells which). */
static bool fill_slow(struct fxt_reader *r, size_t need)
{
	if (r->failed)
		return false;
	if (r->src == SRC_MEM && !r->gz)
		return false;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->win_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < need && !r->eof) {
		ssize_t got;
		if (r->gz) {
			got = read_gz(r, r->buf + r->end, r->cap - r->end);
			if (got < 0)
				return false;
		} else {
			got = read_fd(r->fd, r->buf + r->end, r->cap - r->end);
			if (got < 0) {
				set_error(r, r->win_off + r->end, "read error: %s",
					  strerror((int)-got));
				r->read_errno = (int)-got;
				return false;
			}
		}
		if (got == 0)
			r->eof = true;
		r->end += (size_t)got;
	}
	return r->end >= need;
}

static inline bool fill(struct fxt_reader *r, size_t need)
{
	if (__builtin_expect(r->end - r->pos >= need, 1))
		return true;
	return fill_slow(r, need);
}

/* Makes the window (of a descriptor or gzip input) hold `need` bytes. */
static bool grow_window(struct fxt_reader *r, size_t need)
{
	uint8_t *nb;

	if (need <= r->cap)
		return true;
	nb = realloc(r->buf, need);
	if (!nb) {
		set_error(r, r->win_off + r->pos, "out of memory for a record of %zu bytes", need);
		r->read_errno = ENOMEM;
		return false;
	}
	r->buf = nb;
	r->win = nb;
	r->cap = need;
	return true;
}

/* Throws away the rest of a large record too big for the window.  The bytes
 * were promised by its size field, so running out is damage. */
static bool skip_payload(struct fxt_reader *r)
{
	while (r->skip_left > 0) {
		size_t avail = r->end - r->pos;
		if (avail == 0) {
			if (!fill(r, 1)) {
				if (!r->failed)
					set_error(r, r->skip_off,
						  "large record runs past the end of the input "
						  "(%llu bytes missing)",
						  (unsigned long long)r->skip_left);
				return false;
			}
			avail = r->end - r->pos;
		}
		size_t take = avail < r->skip_left ? avail : (size_t)r->skip_left;
		r->pos += take;
		r->skip_left -= take;
	}
	return true;
}

/* -------------------------------------------------------------- providers */

static struct provider *provider_new(uint32_t id)
{
	struct provider *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	p->ticks_per_second = NS_PER_SECOND;
	return p;
}

static void provider_clear(struct provider *p)
{
	for (size_t i = 0; p->pages && i < STR_PAGES; i++) {
		if (!p->pages[i])
			continue;
		for (size_t k = 0; k < STR_PAGE_SIZE; k++)
			free(p->pages[i]->e[k].data);
		free(p->pages[i]);
	}
	free(p->pages);
	p->pages = NULL;
	free(p->threads);
	p->threads = NULL;
	p->ticks_per_second = NS_PER_SECOND;
}

static void provider_free(struct provider *p)
{
	if (!p)
		return;
	provider_clear(p);
	free(p);
}

static size_t provider_slot(const struct fxt_reader *r, uint32_t id)
{
	size_t mask = r->nslots - 1;
	size_t i = (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
	while (r->slots[i] && r->slots[i]->id != id)
		i = (i + 1) & mask;
	return i;
}

/* The context of provider `id`, created if new.  NULL when out of memory. */
static struct provider *provider_get(struct fxt_reader *r, uint32_t id, bool *created)
{
	*created = false;
	size_t i = provider_slot(r, id);
	if (r->slots[i])
		return r->slots[i];
	if ((r->nproviders + 1) * 2 > r->nslots) {
		size_t n = r->nslots * 2;
		struct provider **old = r->slots;
		size_t nold = r->nslots;
		struct provider **slots = calloc(n, sizeof(*slots));
		if (!slots)
			return NULL;
		r->slots = slots;
		r->nslots = n;
		for (size_t k = 0; k < nold; k++)
			if (old[k])
				r->slots[provider_slot(r, old[k]->id)] = old[k];
		free(old);
		i = provider_slot(r, id);
	}
	struct provider *p = provider_new(id);
	if (!p)
		return NULL;
	r->slots[i] = p;
	r->nproviders++;
	*created = true;
	return p;
}

static const struct str_entry *string_lookup(const struct provider *p, unsigned index)
{
	if (!p->pages)
		return NULL;
	const struct str_page *pg = p->pages[index >> STR_PAGE_SHIFT];
	if (!pg)
		return NULL;
	const struct str_entry *e = &pg->e[index & (STR_PAGE_SIZE - 1)];
	return e->data ? e : NULL;
}

/* Registers (or replaces) string `index`.  Returns the entry or NULL when
 * out of memory. */
static struct str_entry *string_set(struct provider *p, unsigned index, const char *s, uint32_t len)
{
	if (!p->pages && !(p->pages = calloc(STR_PAGES, sizeof(*p->pages))))
		return NULL;
	struct str_page **pg = &p->pages[index >> STR_PAGE_SHIFT];
	if (!*pg) {
		*pg = calloc(1, sizeof(**pg));
		if (!*pg)
			return NULL;
	}
	struct str_entry *e = &(*pg)->e[index & (STR_PAGE_SIZE - 1)];
	if (!e->data || e->cap < len + 1) {
		/* +1 so that an empty string still has a non-NULL buffer. */
		char *d = realloc(e->data, len + 1);
		if (!d)
			return NULL;
		e->data = d;
		e->cap = len + 1;
	}
	memcpy(e->data, s, len);
	e->data[len] = '\0';
	e->len = len;
	return e;
}

/* ----------------------------------------------------------------- cursor */

/* The words of one record (or argument) not consumed yet. */
struct cursor {
	const uint8_t *p;
	uint64_t left; /* words */
	uint64_t off;  /* stream offset of p */
};

static inline bool cur_word(struct cursor *c, uint64_t *w)
{
	if (c->left == 0)
		return false;
	*w = load64(c->p);
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
#define DAMAGE(r, off, ...) (set_error((r), (off), __VA_ARGS__), false)
#define FAIL(r, off, ...)   (set_error((r), (off), __VA_ARGS__), -1)

static const char empty[] = "";

/* Resolves string ref `ref` of the record at `roff`.  Inline strings come
 * from the cursor; unregistered indices resolve to "" with an error. */
static bool read_sref_slow(struct fxt_reader *r, struct cursor *c, uint16_t ref, const char *what,
			   uint64_t roff, struct fxt_string *out)
{
	if (ref == FXT_STRREF_EMPTY) {
		out->data = empty;
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
				diag(r, FXT_DIAG_ERROR, soff, "inline %s string is not valid UTF-8",
				     what);
			if (len > FXT_MAX_STRING_LEN)
				diag(r, FXT_DIAG_ERROR, soff,
				     "inline %s string of %u bytes exceeds the %u-byte limit", what,
				     len, FXT_MAX_STRING_LEN);
		}
		return true;
	}
	const struct str_entry *e = string_lookup(r->cur, ref);
	if (__builtin_expect(!e, 0)) {
		diag(r, FXT_DIAG_ERROR, roff, "%s string ref %u used before registration", what,
		     ref);
		out->data = empty;
		out->len = 0;
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
	if (__builtin_expect(ref != FXT_STRREF_EMPTY && !fxt_strref_is_inline(ref) && r->cur->pages,
			     1)) {
		const struct str_page *pg = r->cur->pages[ref >> STR_PAGE_SHIFT];
		if (pg) {
			const struct str_entry *e = &pg->e[ref & (STR_PAGE_SIZE - 1)];
			if (e->data) {
				out->data = e->data;
				out->len = e->len;
				return true;
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
		diag(r, FXT_DIAG_ERROR, roff, "thread ref %u used before registration", ref);
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
		diag(r, FXT_DIAG_ERROR, off, "reserved bits [%u .. %u] of the %s are set", lo, hi,
		     what);
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
			diag(r, FXT_DIAG_INFO, aoff, "unknown argument type %u skipped", type);
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
	rec->u.meta.name.data = empty;
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
			diag(r, FXT_DIAG_ERROR, rec->offset, "provider name is not valid UTF-8");
		/* A provider info record starts the provider afresh. */
		struct provider *p = provider_get(r, id, &created);
		if (!p)
			return FAIL(r, rec->offset, "out of memory");
		if (!created)
			provider_clear(p);
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
		struct provider *p = provider_get(r, id, &created);
		if (!p)
			return FAIL(r, rec->offset, "out of memory");
		if (created)
			diag(r, FXT_DIAG_WARNING, rec->offset,
			     "provider section for provider %u, never announced", id);
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
			diag(r, FXT_DIAG_INFO, rec->offset, "unknown trace info type %u", ti);
			break;
		}
		if (fxt_bits(h, 24, 55) != FXT_MAGIC_NUMBER)
			diag(r, FXT_DIAG_ERROR, rec->offset,
			     "magic record with a wrong magic number 0x%08llx",
			     (unsigned long long)fxt_bits(h, 24, 55));
		if (fxt_bits(h, 56, 63) != 0)
			diag(r, FXT_DIAG_ERROR, rec->offset,
			     "magic record with bits [56 .. 63] set");
		if (rec->nwords != 1)
			diag(r, FXT_DIAG_ERROR, rec->offset,
			     "magic record of %llu words: it must be the header word alone",
			     (unsigned long long)rec->nwords);
		break;
	}
	default:
		diag(r, FXT_DIAG_INFO, rec->offset, "unknown metadata type %u skipped", type);
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
		diag(r, FXT_DIAG_ERROR, rec->offset, "0 ticks per second (ignored)");
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
		diag(r, FXT_DIAG_ERROR, rec->offset, "string record with reserved bits set");
	if (!cur_stream(c, len, &d))
		return FAIL(r, rec->offset, "string of %u bytes runs past the end of its record",
			    len);
	if (!fxt_utf8_valid((const char *)d, len))
		diag(r, FXT_DIAG_ERROR, rec->offset, "string %u is not valid UTF-8", index);
	if (len > FXT_MAX_STRING_LEN)
		diag(r, FXT_DIAG_ERROR, rec->offset,
		     "string %u of %u bytes exceeds the %u-byte limit", index, len,
		     FXT_MAX_STRING_LEN);
	rec->u.string.index = (uint16_t)index;
	rec->u.string.str.data = (const char *)d;
	rec->u.string.str.len = len;
	if (index == 0) {
		diag(r, FXT_DIAG_ERROR, rec->offset, "string record with index 0 (ignored)");
		return 1;
	}
	struct str_entry *e = string_set(r->cur, index, (const char *)d, len);
	if (!e)
		return FAIL(r, rec->offset, "out of memory");
	return 1;
}

static int dec_thread(struct fxt_reader *r, struct cursor *c, uint64_t h, struct fxt_record *rec)
{
	unsigned index = (unsigned)fxt_bits(h, 16, 23);
	uint64_t pid, tid;

	if (fxt_bits(h, 24, 63))
		diag(r, FXT_DIAG_ERROR, rec->offset, "thread record with reserved bits set");
	if (!cur_word(c, &pid) || !cur_word(c, &tid))
		return FAIL(r, rec->offset, "thread record shorter than 3 words");
	rec->u.thread.index = (uint8_t)index;
	rec->u.thread.pid = pid;
	rec->u.thread.tid = tid;
	if (index == 0) {
		diag(r, FXT_DIAG_ERROR, rec->offset, "thread record with index 0 (ignored)");
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
			diag(r, FXT_DIAG_ERROR, rec->offset,
			     "complete event ends (%llu) before it starts (%llu)",
			     (unsigned long long)rec->u.event.extra,
			     (unsigned long long)rec->u.event.ts);
		break;
	default:
		if (type >= FXT_EVENT_TYPE_COUNT) {
			diag(r, FXT_DIAG_INFO, rec->offset, "unknown event type %u", type);
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
		diag(r, FXT_DIAG_ERROR, rec->offset, "log message is not valid UTF-8");
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
		diag(r, FXT_DIAG_INFO, rec->offset, "unknown large record type %u skipped", ltype);
		return 0;
	}
	if (format != FXT_BLOB_FORMAT_EVENT && format != FXT_BLOB_FORMAT_ATTACHMENT) {
		diag(r, FXT_DIAG_INFO, rec->offset, "unknown large blob format %u skipped", format);
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
		diag(r, FXT_DIAG_WARNING, rec->offset,
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
		diag(r, FXT_DIAG_INFO, rec->offset, "unknown record type %u (%llu words) skipped",
		     rec->type, (unsigned long long)rec->nwords);
		return 0;
	}
}

/* ------------------------------------------------------------ public API */

static int reader_new(struct fxt_reader **out, unsigned flags)
{
	struct fxt_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->flags = flags;
	r->fd = -1;
	r->nslots = 8;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	bool created;
	if (!r->slots || !(r->cur = provider_get(r, 0, &created))) {
		fxt_reader_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

static int gz_start(struct fxt_reader *r)
{
	if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	r->zs_init = true;
	r->gz = true;
	return 0;
}

int fxt_reader_open_fd(struct fxt_reader **out, int fd, unsigned flags)
{
	struct fxt_reader *r;
	int err = reader_new(&r, flags);
	if (err)
		return err;
	r->src = SRC_FD;
	r->fd = fd;
	r->cap = WINDOW_BYTES;
	r->buf = malloc(r->cap);
	r->zin = malloc(ZIN_BYTES);
	if (!r->buf || !r->zin) {
		err = -ENOMEM;
		goto fail;
	}
	r->win = r->buf;

	/* Peek at the first two bytes for the gzip magic.  They land in zin:
	 * inflate's input if it is gzip, else copied into the window. */
	size_t have = 0;
	while (have < 2) {
		ssize_t got = read_fd(fd, r->zin + have, ZIN_BYTES - have);
		if (got < 0) {
			err = (int)got;
			set_error(r, 0, "read error: %s", strerror(-err));
			r->read_errno = -err;
			goto fail;
		}
		if (got == 0) {
			r->eof = true;
			break;
		}
		have += (size_t)got;
	}
	if (have >= 2 && r->zin[0] == 0x1f && r->zin[1] == 0x8b) {
		err = gz_start(r);
		if (err)
			goto fail;
		r->zs.next_in = r->zin;
		r->zs.avail_in = (uInt)have;
		r->in_eof = r->eof;
		r->eof = false;
	} else {
		memcpy(r->buf, r->zin, have);
		r->end = have;
	}
	*out = r;
	return 0;

fail:
	fxt_reader_free(r);
	return err;
}

int fxt_reader_open_path(struct fxt_reader **out, const char *path, unsigned flags)
{
	if (strcmp(path, "-") == 0)
		return fxt_reader_open_fd(out, STDIN_FILENO, flags);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fxt_reader_open_fd(out, fd, flags);
	if (err) {
		close(fd);
		return err;
	}
	(*out)->own_fd = true;
	return 0;
}

int fxt_reader_open_mem(struct fxt_reader **out, const void *data, size_t len, unsigned flags)
{
	struct fxt_reader *r;
	int err = reader_new(&r, flags);
	if (err)
		return err;
	r->src = SRC_MEM;
	const uint8_t *d = data;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
		r->cap = WINDOW_BYTES;
		r->buf = malloc(r->cap);
		if (!r->buf) {
			fxt_reader_free(r);
			return -ENOMEM;
		}
		err = gz_start(r);
		if (err) {
			fxt_reader_free(r);
			return err;
		}
		r->mem = d;
		r->mem_len = len;
		r->win = r->buf;
	} else {
		/* Plain memory is its own window: no copy. */
		r->win = len ? d : (const uint8_t *)empty;
		r->end = len;
		r->eof = true;
	}
	*out = r;
	return 0;
}

void fxt_reader_free(struct fxt_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nslots; i++)
		provider_free(r->slots[i]);
	free(r->slots);
	if (r->zs_init)
		inflateEnd(&r->zs);
	if (r->own_fd)
		close(r->fd);
	free(r->provider_name);
	free(r->buf);
	free(r->zin);
	free(r);
}

void fxt_reader_set_diag(struct fxt_reader *r, fxt_diag_fn fn, void *ctx)
{
	r->diag_fn = fn;
	r->diag_ctx = ctx;
}

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
	if (r->src == SRC_MEM && !r->gz) {
		held = true;
		take = (size_t)nbytes;
		if (nbytes > left)
			goto truncated;
	} else {
		if (raw && nbytes > RAW_MAX_BYTES)
			return FAIL(r, rec->offset,
				    "large record of %llu bytes: more than the %u MiB held whole",
				    (unsigned long long)nbytes, RAW_MAX_BYTES >> 20);
		if (raw && !grow_window(r, (size_t)nbytes))
			return -1;
		held = nbytes <= r->cap;
		take = held ? (size_t)nbytes : r->cap;
		if (!fill(r, take)) {
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

int fxt_reader_next(struct fxt_reader *r, struct fxt_record *rec)
{
	for (;;) {
		if (r->failed)
			return -1;
		if (r->skip_left && !skip_payload(r))
			return -1;
		if (!fill(r, 8)) {
			if (r->failed)
				return -1;
			size_t left = r->end - r->pos;
			if (left == 0)
				return 0;
			set_error(r, r->win_off + r->pos,
				  "truncated record header: %zu bytes at the end of the input",
				  left);
			return -1;
		}
		const uint8_t *p = r->win + r->pos;
		uint64_t h = load64(p);
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
				diag(r, FXT_DIAG_ERROR, rec->offset,
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
			if (!fill(r, (size_t)nwords * 8)) {
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

const char *fxt_reader_error(const struct fxt_reader *r, uint64_t *offset)
{
	if (!r->failed)
		return NULL;
	if (offset)
		*offset = r->err_off;
	return r->err;
}

int fxt_reader_errno(const struct fxt_reader *r)
{
	return r->failed ? r->read_errno : 0;
}

const void *fxt_reader_record_bytes(const struct fxt_reader *r)
{
	return r->rec_bytes;
}

bool fxt_reader_saw_magic(const struct fxt_reader *r)
{
	return r->saw_magic;
}

uint64_t fxt_reader_ticks_per_second(const struct fxt_reader *r)
{
	return r->cur->ticks_per_second;
}

uint64_t fxt_reader_ticks_to_ns(const struct fxt_reader *r, uint64_t ticks)
{
	uint64_t tps = r->cur->ticks_per_second;
	if (tps == NS_PER_SECOND)
		return ticks;
	unsigned __int128 ns = (unsigned __int128)ticks * NS_PER_SECOND / tps;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

uint64_t fxt_reader_offset(const struct fxt_reader *r)
{
	return r->win_off + r->pos;
}
