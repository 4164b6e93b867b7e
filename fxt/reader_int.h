/* The FXT reader's state, shared by its parts: private to fxt/.
 *
 * Who does what:
 *   reader.c  the public API (include/fxt/reader.h) but the record path:
 *             opening and freeing a reader, the per-provider contexts
 *             (string and thread tables), errors and diagnostics, getters.
 *   source.c  the byte source (memory, descriptor, a map of a plain file,
 *             inflate, zstd) and the window over it: filling, growing,
 *             skipping a large payload.
 *   decode.c  the record path, fxt__next_record(): framing each record in
 *             the window, the bounds-checked cursor over its words and the
 *             record decoders, one per record type.  They stay in one file
 *             so that the compiler inlines the decoders into the loop.
 *   order.c   fxt_reader_next(): the records in file order, or with
 *             FXT_READER_TIME_ORDER each thread's events in time order.
 *
 * Every read of record content goes through decode.c's struct cursor, which
 * knows how many words of the record are left: a field that would lie past
 * the end of its record (or of its argument) is damage, reported with the
 * offset of the record or argument, and never a read out of bounds.
 */
#ifndef FXT_READER_INT_H
#define FXT_READER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include <fxt/reader.h>

/* The window holds at least one whole normal record (32 KB) and refills in
 * big reads.  Large records up to its size are held whole; bigger ones have
 * their header decoded and their payload skipped. */
#define WINDOW_BYTES (1u << 20)
/* A plain regular file of more than MAP_MIN bytes is read through a map
 * of it, MAP_STEP more of it in the window at a fill (source.c). */
#define MAP_MIN	      (1u << 20)
#define MAP_STEP      (8u << 20)
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

/* The table strings resolved last, by ref (direct-mapped on its low
 * bits): a hit is one load where the table is four dependent ones.  ref 0
 * (the empty string, never looked up) marks a free slot. */
#define SCACHE_SIZE 256u

struct scache_entry {
	uint32_t ref, len;
	const char *data;
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
enum codec { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD };

struct fxt_reader {
	/* The window: unread bytes are win[pos .. end); win[0] is at stream
	 * offset win_off.  For plain memory input win is the caller's buffer. */
	const uint8_t *win;
	size_t pos, end;
	uint64_t win_off;
	uint64_t skip_left; /* payload of a large record still to discard */
	uint64_t skip_off;  /* and that record's offset */

	enum source src;
	bool eof;	  /* the source has no more bytes */
	enum codec codec; /* what the bytes come through, if compressed */
	uint8_t *buf;	  /* window storage (fd or compressed input) */
	size_t cap;
	int fd;	     /* what is read: user_fd, or copy_fd */
	int user_fd; /* the descriptor given (closed at the end if own_fd) */
	bool own_fd;
	int copy_fd; /* FXT_READER_TIME_ORDER: a pipe's bytes, in a file */
	/* A plain regular file read through a map of it (source.c's
	 * map_file()): map_base the stream's first byte in it, map_len the
	 * stream's bytes; the window is map_base[0 .. end), end moved on by
	 * fills; the pages before map_dropped were given back.  map NULL:
	 * read(). */
	void *map;
	size_t map_size;
	const uint8_t *map_base;
	size_t map_len, map_dropped;
	/* The whole file as order.c's pass mapped it (premap_size bytes from
	 * its start), left for map_file() to take rather than map it again;
	 * unmapped by fxt__source_open_fd() when not taken.  NULL: none. */
	void *premap;
	size_t premap_size;
	const uint8_t *mem; /* compressed memory input */
	size_t mem_len, mem_pos;
	const uint8_t *in; /* compressed input not yet taken: in[0 .. in_len) */
	size_t in_len;
	z_stream zs;
	bool zs_init;
	ZSTD_DStream *zd;
	bool in_eof;	  /* no more compressed input */
	bool member_done; /* inflate finished a gzip member */
	bool gz_raw;	  /* inflating raw deflate from a place inside a member */
	unsigned gz_skip; /* the member's trailer bytes still to skip (after gz_raw) */
	bool frame_done;  /* zstd finished a frame, all of it out */
	uint8_t *zin;
	uint64_t zread; /* compressed bytes taken so far (in_len of them not used) */
	/* Where a compressed regular file or memory can be decoded afresh,
	 * shared with clones (fxt_reader_clone_at()); this reader notes them
	 * if seek_own.  A clone reads with pread() and starts decoding at
	 * its first fill (seek_to: the offset it reads first). */
	struct fxt__seekpts *seek;
	bool seek_own, seek_pending;
	uint64_t seek_to;
	/* A clone reading a stretch (between two places) through the shared
	 * cache of decoded stretches (zc_on): the stretch's start and length
	 * in the stream, and the bytes of it given so far. */
	bool zc_on;
	uint64_t zc_u, zc_len, zc_pos;

	unsigned flags;
	fxt_diag_fn diag_fn;
	void *diag_ctx;

	bool started, saw_magic, failed;
	bool source_failed; /* the error is the source's (read, decompression) */
	unsigned verifying; /* in fxt__source_verify() or a source error */
	char err[160];
	uint64_t err_off;
	int read_errno; /* what stopped us, if not damage: a read error, ENOMEM */

	/* The bytes of the record last returned, while the window holds them
	 * whole (fxt_reader_record_bytes()), else NULL. */
	const uint8_t *rec_bytes;

	/* fxt_reader_keep_strings(): string buffers replaced or cleared,
	 * kept (oldest first) until released; kept_n of them ever, the first
	 * kept_base of those released already, kept_bytes the bytes held. */
	bool keep;
	struct fxt__kept {
		char *data;
		size_t cap;
	} * kept;
	size_t nkept, capkept, kept_bytes;
	uint64_t kept_base;

	/* Table strings of the current provider resolved last (decode.c):
	 * a slot goes when a string record sets its index, all of them when
	 * the current provider changes or starts afresh. */
	struct scache_entry scache[SCACHE_SIZE];

	/* Providers, in an open-addressing hash on the id. */
	struct provider **slots;
	size_t nslots, nproviders;
	struct provider *cur;
	char *provider_name; /* copy of the last provider info name */

	/* FXT_READER_TIME_ORDER (order.c): the late events, shared with
	 * clones, NULL when none; which of them this reader gave, its cursor
	 * over them in file order and one per thread over them in time
	 * order. */
	struct fxt__order *order;
	uint8_t *order_done;
	size_t order_next, *order_cur;
	uint64_t late_left; /* late events past the bound: not moved */
	uint64_t rec_pos;   /* fxt_reader_record_pos() */
	bool order_again;   /* decoding a record a second time: said all already */
	/* An archive that starts with FXT_TIME_ORDERED_MARK gets no first
	 * pass: this reader's own follows each thread's latest time (check,
	 * not shared with clones; check_t its last event's thread) and says
	 * once when a begin or end is late after all (check_said), or past a
	 * second magic record, which ends the claim (check_past). */
	bool marked;
	struct fxt__order *check;
	size_t check_t;
	bool check_said, check_past;
	/* check_t's thread as decode.c's plain events compare with it
	 * (fxt__next_plain()): its latest time, NULL until check_order()
	 * set it. */
	uint64_t *check_max;
	uint32_t check_prov;
	uint64_t check_pid, check_tid;
};

static inline uint64_t fxt__load64(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

/* ---------------------------------------------------------------- reader.c */

/* Records the error that stops the reader, at stream offset `off`.  In a
 * compressed stream, damage there is first looked for (fxt__source_verify())
 * and is what is said when found: garbled bytes reach the decoder before
 * the checksum at the end of their gzip member or zstd frame. */
void fxt__set_error(struct fxt_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Passes a diagnostic to the caller's callback, if any. */
void fxt__diag(struct fxt_reader *r, enum fxt_diag_level level, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The context of provider `id`, created if new.  NULL when out of memory. */
struct provider *fxt__provider_get(struct fxt_reader *r, uint32_t id, bool *created);
/* Forgets a provider's strings (kept if r keeps them: r may be NULL when
 * it does not), threads and tick rate.  0, or -ENOMEM keeping them. */
int fxt__provider_clear(struct fxt_reader *r, struct provider *p);
/* String `index` of a provider, NULL if not registered. */
const struct str_entry *fxt__string_lookup(const struct provider *p, unsigned index);
/* Registers (or replaces) string `index` (the replaced buffer kept if r
 * keeps them: r may be NULL when it does not).  Returns the entry or NULL
 * when out of memory. */
struct str_entry *fxt__string_set(struct fxt_reader *r, struct provider *p, unsigned index,
				  const char *s, uint32_t len);

/* ---------------------------------------------------------------- source.c */

/* Sets up reading from a descriptor (plain, gzip or zstd, told by its first
 * bytes) or from memory.  Return 0 or -errno; the caller frees r on error. */
int fxt__source_open_fd(struct fxt_reader *r, int fd);
int fxt__source_open_mem(struct fxt_reader *r, const uint8_t *data, size_t len);
/* Releases the source: decompressor, owned descriptor, buffers. */
void fxt__source_close(struct fxt_reader *r);
/* After an error in what was decompressed: decompresses the rest of a
 * compressed stream, and if its checksum or data turns out damaged, that
 * becomes the reader's error (with its offset).  Nothing for a plain
 * source or an error of the source's own. */
void fxt__source_verify(struct fxt_reader *r);

/* A gzip member longer than ZW_SPAN (gzip's own output is one member)
 * gets a place at a deflate block's end every ZW_SPAN of output, its
 * window saved (32 KiB): at most ZW_MAX of them, 8 MiB. */
#define ZW_SPAN (4u << 20)
#define ZW_MAX	256u

/* The cache of decoded stretches shared by a reader's clones: at most
 * ZC_BYTES held (the least recently used goes first), a stretch of more
 * than ZC_STRETCH_MAX never (a clone decodes it itself, as before). */
#define ZC_BYTES       (32u << 20)
#define ZC_STRETCH_MAX (8u << 20)
#define ZC_SLOTS       64u

/* The places of a compressed stream where decoding can start afresh: its
 * start, and the start of each gzip member and zstd frame after (fxtrace's
 * writer cuts both every few MB), with the stream offset each starts at;
 * and what clones decoded of the stretches between them (zc, under lock):
 * clones at nearby places (the threads' cursors of a merge, marks
 * resumed again) decode each stretch once. */
struct fxt__seekpts {
	unsigned refs; /* atomic */
	int fd;	       /* a descriptor of the file (its own), or -1: memory */
	uint64_t base; /* the file offset of the compressed stream's first byte */
	struct fxt__seekpt {
		uint64_t z, u; /* compressed offset (from base), stream offset */
		/* a place inside a gzip member (win): the bits of the byte
		 * before z not read yet, and the 32 KiB of output before u
		 * (inflate's window) */
		uint8_t *win;
		unsigned wlen, bits;
	} * pt;
	size_t n, cap;
	/* places inside a member: one after each ZW_SPAN of output without
	 * one, at most ZW_MAX of them (then every other goes, the span
	 * doubled) */
	uint64_t zw_span;
	size_t zw_n;
	pthread_mutex_t lock;
	struct fxt__zent {
		uint64_t u, used; /* the stretch's start (0 len: a free slot), last use */
		uint8_t *data;
		size_t len;
	} zc[ZC_SLOTS];
	size_t zc_bytes;
	uint64_t zc_tick;
};

/* Notes that r's compressed source can be cloned (a regular file at its
 * offset `base`, fd >= 0, or memory); 0 or -ENOMEM. */
int fxt__seek_init(struct fxt_reader *r, int fd, uint64_t base);
/* Sets up clone c of r, reading from stream offset `offset` on (decoded
 * from the last place before it at its first fill: a place r or the
 * reader it is a clone of noted): 0, or -EINVAL (r cannot be cloned) or
 * -ENOMEM. */
int fxt__source_clone(const struct fxt_reader *r, struct fxt_reader *c, uint64_t offset);

/* Makes at least `need` (<= cap) unread bytes available in the window.
 * Returns true if it could, false at the end of input or on error
 * (r->failed tells which). */
bool fxt__fill_slow(struct fxt_reader *r, size_t need);

static inline bool fxt__fill(struct fxt_reader *r, size_t need)
{
	if (__builtin_expect(r->end - r->pos >= need, 1))
		return true;
	return fxt__fill_slow(r, need);
}

/* Makes the window (of a descriptor or compressed input) hold `need` bytes. */
bool fxt__grow_window(struct fxt_reader *r, size_t need);
/* Throws away the rest of a large record too big for the window. */
bool fxt__skip_payload(struct fxt_reader *r);

/* ---------------------------------------------------------------- decode.c */

/* The next record in file order: fxt_reader_next()'s contract. */
int fxt__next_record(struct fxt_reader *r, struct fxt_record *rec);

/* The plain events that come next, up to n (fxt_reader_next_plain()),
 * for a reader with no late events to give: their count. */
size_t fxt__next_plain(struct fxt_reader *r, struct fxt_plain *ev, size_t n);

/* ----------------------------------------------------------------- order.c */

struct fxt__order;
/* The first pass of FXT_READER_TIME_ORDER over r's input, before r reads
 * it: the memory `mem` (len bytes), else descriptor `fd` (a regular file
 * read from where it is, and put back there; anything else copied whole
 * into an unlinked temporary file first, r->copy_fd, which r reads then).
 * 0 or -errno. */
int fxt__order_open(struct fxt_reader *r, const void *mem, size_t len, int fd);
/* Gives clone c of r the late events from `offset` on.  0 or -ENOMEM. */
int fxt__order_clone(const struct fxt_reader *r, struct fxt_reader *c, uint64_t offset);
/* Drops a reference. */
void fxt__order_put(struct fxt__order *o);
/* A marked archive's record as the reader gives it: its thread's latest
 * time followed (and r->check_max set to it), a late begin or end said. */
void fxt__check_order(struct fxt_reader *r, const struct fxt_record *rec);

/* "", for empty strings and empty memory input. */
extern const char fxt__empty[];
extern const char fxt__unregistered[]; /* FXT_UNREGISTERED_STRING */

#endif /* FXT_READER_INT_H */
