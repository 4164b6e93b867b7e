/* FXT writer: record encoders and a buffered archive writer.
 *
 * Two layers:
 *
 *  1. Encoders (fxt_enc_*): pure functions that encode one record into a
 *     caller's array of 64-bit words.  Each returns the record's size in
 *     words; it writes only when that size fits in `cap`, so calling with
 *     cap = 0 measures.  0 means the record cannot be encoded (a string
 *     over FXT_MAX_STRING_LEN, more than 15 arguments, a record over 32 KB,
 *     an index of 0 ...).  Words are in host order; fxtrace only targets
 *     little-endian machines, where that is the file order.
 *
 *  2. The writer (struct fxt_writer): buffers records and writes them to a
 *     file descriptor, a path (gzip for ".gz", zstd for ".zst"), or memory.  It
 *     owns the per-provider string and thread tables: fxt_writer_string()
 *     and fxt_writer_thread() hand out indexed refs, emitting string and
 *     thread records the first time and re-registering evicted indices when
 *     the tables (32767 strings, 255 threads) are full, as the spec allows.
 *     Eviction is first-in first-out, and a string (or thread) found close
 *     to eviction is registered again at the newest index, so the refs of
 *     one record (at most 2 + 2 * 15 strings, 2 threads) can never evict
 *     each other.
 *
 * Errors are values: functions return 0 or a negative errno; the first I/O
 * error is sticky and returned again by fxt_writer_close().
 */
#ifndef FXT_WRITER_H
#define FXT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ references */

/* A string ref as it will be encoded.  `ref` is the 16-bit field; when it
 * denotes an inline string, `data` holds its fxt_strref_inline_len(ref) bytes. */
struct fxt_sref {
	uint16_t ref;
	const char *data;
};

static inline struct fxt_sref fxt_sref_empty(void)
{
	struct fxt_sref s = { FXT_STRREF_EMPTY, 0 };
	return s;
}

static inline struct fxt_sref fxt_sref_index(uint16_t index)
{
	struct fxt_sref s = { (uint16_t)(index & 0x7fffu), 0 };
	return s;
}

/* An inline string; len must be <= FXT_MAX_STRING_LEN (encoders refuse more).
 * An empty string becomes the empty ref. */
static inline struct fxt_sref fxt_sref_inline(const char *data, size_t len)
{
	struct fxt_sref s = { len ? FXT_STRREF_INLINE(len) : FXT_STRREF_EMPTY, data };
	if (len > FXT_MAX_STRING_LEN)
		s.ref = 0xffffu; /* encoders refuse it: no silent truncation */
	return s;
}

/* A thread ref: index 1 .. 255, or index 0 with the koids written inline. */
struct fxt_tref {
	uint8_t index;
	uint64_t pid;
	uint64_t tid;
};

static inline struct fxt_tref fxt_tref_index(uint8_t index)
{
	struct fxt_tref t = { index, 0, 0 };
	return t;
}

static inline struct fxt_tref fxt_tref_inline(uint64_t pid, uint64_t tid)
{
	struct fxt_tref t = { FXT_THREADREF_INLINE, pid, tid };
	return t;
}

/* ------------------------------------------------------------- arguments */

struct fxt_arg {
	enum fxt_arg_type type;
	struct fxt_sref name;
	union {
		int32_t i32;
		uint32_t u32;
		int64_t i64;
		uint64_t u64;
		double f64;
		struct fxt_sref str;
		uint64_t ptr;
		uint64_t koid;
		bool b;
	} v;
};

/* ---------------------------------------------------------------- events */

struct fxt_event {
	enum fxt_event_type type;
	uint64_t ts; /* ticks */
	struct fxt_tref thread;
	struct fxt_sref category;
	struct fxt_sref name;
	const struct fxt_arg *args;
	unsigned nargs;
	/* The event-type specific word: the counter id (counter), the end time
	 * in ticks (duration complete), or the correlation id (async, flow).
	 * Ignored for instant, duration begin and duration end. */
	uint64_t extra;
};

struct fxt_context_switch {
	unsigned cpu;	    /* 8 bits */
	unsigned out_state; /* enum fxt_thread_state, 4 bits */
	struct fxt_tref out_thread;
	struct fxt_tref in_thread;
	unsigned out_prio; /* 8 bits */
	unsigned in_prio;  /* 8 bits */
	uint64_t ts;
};

/* Large blob record (type 15, large type 0).  For FXT_BLOB_FORMAT_ATTACHMENT
 * only category, name and the payload are written. */
struct fxt_large_blob {
	enum fxt_large_blob_format format;
	struct fxt_sref category;
	struct fxt_sref name;
	uint64_t ts;		/* event format only */
	struct fxt_tref thread; /* event format only */
	const struct fxt_arg *args;
	unsigned nargs; /* event format only */
	const void *payload;
	uint64_t size; /* bytes */
};

/* -------------------------------------------------------------- encoders */

size_t fxt_enc_magic(uint64_t *out, size_t cap);
size_t fxt_enc_provider_info(uint64_t *out, size_t cap, uint32_t provider_id, const char *name,
			     size_t len);
size_t fxt_enc_provider_section(uint64_t *out, size_t cap, uint32_t provider_id);
size_t fxt_enc_provider_event(uint64_t *out, size_t cap, uint32_t provider_id, unsigned event);
size_t fxt_enc_initialization(uint64_t *out, size_t cap, uint64_t ticks_per_second);
size_t fxt_enc_string(uint64_t *out, size_t cap, uint16_t index, const char *s, size_t len);
size_t fxt_enc_thread(uint64_t *out, size_t cap, uint8_t index, uint64_t pid, uint64_t tid);
size_t fxt_enc_event(uint64_t *out, size_t cap, const struct fxt_event *ev);
size_t fxt_enc_blob(uint64_t *out, size_t cap, struct fxt_sref name, unsigned blob_type,
		    const void *payload, size_t len);
size_t fxt_enc_userspace_object(uint64_t *out, size_t cap, uint64_t pointer,
				struct fxt_tref process, struct fxt_sref name,
				const struct fxt_arg *args, unsigned nargs);
size_t fxt_enc_kernel_object(uint64_t *out, size_t cap, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs);
size_t fxt_enc_context_switch(uint64_t *out, size_t cap, const struct fxt_context_switch *cs);
size_t fxt_enc_log(uint64_t *out, size_t cap, uint64_t ts, struct fxt_tref thread, const char *msg,
		   size_t len);
/* Large records may exceed any fixed buffer; this one returns the size in
 * words as a uint64_t and writes only if it fits. */
uint64_t fxt_enc_large_blob(uint64_t *out, uint64_t cap, const struct fxt_large_blob *b);

/* Size in words of one encoded argument, 0 if it cannot be encoded. */
size_t fxt_arg_words(const struct fxt_arg *a);

/* ---------------------------------------------------------------- writer */

struct fxt_writer;

enum fxt_writer_flags {
	FXT_WRITER_GZIP = 1u << 0,	 /* gzip (implied by a ".gz" path) */
	FXT_WRITER_NO_CLOBBER = 1u << 1, /* open_path fails with -EEXIST */
	FXT_WRITER_ZSTD = 1u << 2,	 /* zstd (implied by a ".zst" path) */
	FXT_WRITER_SERIAL = 1u << 3,	 /* compress on the caller's thread only */
};

/* The compression a path's name asks for: FXT_WRITER_GZIP for ".gz",
 * FXT_WRITER_ZSTD for ".zst", else 0.  Either is written as independent
 * gzip members or zstd frames of a few MB, compressed by worker threads
 * (one a core); FXT_WRITER_SERIAL keeps all of it on the caller's
 * thread. */
unsigned fxt_writer_path_flags(const char *path);

/* Opens `path` for writing (created 0644, truncated unless NO_CLOBBER). */
int fxt_writer_open_path(struct fxt_writer **w, const char *path, unsigned flags);
/* Writes to an open descriptor; the writer does not close it. */
int fxt_writer_open_fd(struct fxt_writer **w, int fd, unsigned flags);
/* Collects the archive in memory; see fxt_writer_mem_data(). */
int fxt_writer_open_mem(struct fxt_writer **w, unsigned flags);
/* The bytes written so far to a memory writer (after fxt_writer_flush()). */
const void *fxt_writer_mem_data(const struct fxt_writer *w, size_t *len);

/* Pushes buffered bytes to the sink.  Returns 0 or -errno. */
int fxt_writer_flush(struct fxt_writer *w);
/* A writer opened FXT_WRITER_SERIAL compresses from now on as one opened
 * without it does, with a worker a core (from the member or frame being
 * filled on; what it says is the same).  An uncompressed writer to a
 * descriptor has its full buffers written from now on by a thread of its
 * own (started when the buffer fills the second time: an archive of a
 * write or two starts none), in order, while the caller
 * fills the next: the same bytes at the same offsets; the descriptor's
 * offset is where it was after fxt_writer_flush() or _finish().  For the
 * ends of fxt-run's conversions, where a core is idle (bench/README.md,
 * "The tail after the exit").  0 or the writer's error. */
int fxt_writer_compress_parallel(struct fxt_writer *w);
/* Flushes and ends the stream (the gzip or zstd trailer) without freeing, e.g. to
 * read a complete gzip stream from a memory writer.  Nothing may be written
 * after it (-EPIPE).  Returns 0 or the first error. */
int fxt_writer_finish(struct fxt_writer *w);
/* The first error (sticky), 0 if none. */
int fxt_writer_error(const struct fxt_writer *w);
/* Flushes, finishes compressing, frees.  Returns 0 or the first error (-errno). */
int fxt_writer_close(struct fxt_writer *w);
/* Frees without flushing (after an error, or for a memory writer's data
 * already taken).  Does not close a caller's fd. */
void fxt_writer_free(struct fxt_writer *w);

/* Bytes of archive produced so far (uncompressed). */
uint64_t fxt_writer_bytes(const struct fxt_writer *w);

/* Forgets every string and thread the current provider registered (writes
 * nothing): what is written next registers each again before its first
 * use, so it reads the same after any records of the provider, such as a
 * part written by another writer that fxt_writer_append_fd() put in
 * between. */
void fxt_writer_forget(struct fxt_writer *w);
/* Appends the `len` bytes from offset `off` of the file open as `fd` as
 * they are, copied by the kernel where it can: whole records that another
 * writer wrote there, starting with no registration of its own
 * (fxt_writer_forget()), or for a compressed writer whole gzip members or
 * zstd frames of such records (another writer's of the same codec,
 * finished: fxt_writer_finish()), after which w starts a new one;
 * `bytes`: what they hold uncompressed (fxt_writer_bytes() of the other
 * writer).  -ENOTSUP for a memory writer.  Returns 0 or -errno. */
int fxt_writer_append_fd(struct fxt_writer *w, int fd, uint64_t off, uint64_t len, uint64_t bytes);
/* The archive moves to the file open as `fd`, which holds `len` bytes from
 * offset `front` on, as fxt_writer_append_fd() takes them (`bytes`
 * uncompressed), and nothing before: what w wrote so far (all of it still
 * in its buffer) is written at the file's start, padding fills the rest
 * up to `front`, and w writes on after the `len` bytes, through a
 * duplicate of `fd` that it owns; its own descriptor is closed if it was
 * its own (the file it named keeps what it had: nothing).  So the records
 * of fd take the place of an append without being copied.  The padding:
 * FXT_METADATA_PADDING records; compressed, w's records go in a member
 * or frame of their own, then empty gzip members (an extra field in the
 * header) or zstd skippable frames.  0, or -errno with w unchanged:
 * -ENOTSUP in memory, -EAGAIN some of it was written out already,
 * -ENOSPC it does not fit in `front` with room for the padding, or the
 * write's error. */
int fxt_writer_move_to_fd(struct fxt_writer *w, int fd, uint64_t front, uint64_t len,
			  uint64_t bytes);
/* The descriptor w writes to (-1: memory). */
int fxt_writer_fd(const struct fxt_writer *w);

/* Raw output: `nwords` already encoded words.  Returns 0 or -errno. */
int fxt_writer_words(struct fxt_writer *w, const uint64_t *words, size_t nwords);
/* Space for `nwords` words in the output buffer, to encode into directly;
 * valid until the next writer call.  NULL after an error.  nwords must be
 * at most FXT_MAX_RECORD_WORDS. */
uint64_t *fxt_writer_reserve(struct fxt_writer *w, size_t nwords);
/* Commits `nwords` (<= the reserved count) of the last reservation. */
void fxt_writer_commit(struct fxt_writer *w, size_t nwords);

/* Writes the magic record.  Call first. */
int fxt_writer_magic(struct fxt_writer *w);
/* Right after the magic record, by a writer that gives each thread's
 * events in time order: FXT_TIME_ORDERED_MARK, a string registered
 * through the writer's own table (so no index of it is taken twice). */
int fxt_writer_time_ordered(struct fxt_writer *w);
/* Writes provider info and starts a fresh string/thread table context for
 * this provider (the reader keeps tables per provider). */
int fxt_writer_provider(struct fxt_writer *w, uint32_t provider_id, const char *name);
/* Switches back to a provider announced earlier (provider section). */
int fxt_writer_provider_section(struct fxt_writer *w, uint32_t provider_id);
int fxt_writer_provider_event(struct fxt_writer *w, uint32_t provider_id, unsigned event);
int fxt_writer_initialization(struct fxt_writer *w, uint64_t ticks_per_second);

/* Interning.  Returns an indexed ref, registering the string (or
 * re-registering an evicted index) first when needed; an empty string gives
 * the empty ref; a string longer than FXT_MAX_STRING_LEN is cut at a UTF-8
 * boundary.  On an I/O error returns an inline ref so callers stay simple
 * (the error surfaces at close). */
struct fxt_sref fxt_writer_string(struct fxt_writer *w, const char *s, size_t len);
struct fxt_sref fxt_writer_cstring(struct fxt_writer *w, const char *s);

/* A caller-owned cache for a string interned many times (e.g. one per
 * function name in the flusher): revalidates in O(1) without hashing.
 * Zero a slot before first use; it stays bound to the string it was first
 * used with.  A slot stays valid while its index keeps that registration:
 * eviction and fxt_writer_provider() invalidate it (generations are unique
 * per writer). */
struct fxt_string_slot {
	uint16_t index;
	uint32_t generation;
};
struct fxt_sref fxt_writer_string_cached(struct fxt_writer *w, struct fxt_string_slot *slot,
					 const char *s, size_t len);

/* A count of the writer's registrations (strings, threads) so far, and of
 * the times its tables were reset (fxt_writer_forget(), a provider's
 * start): while it stays the same, nothing was evicted, so every ref and
 * slot valid before still is.  A caller that interns now and then can check it
 * rather than assume the worst. */
uint32_t fxt_writer_registrations(const struct fxt_writer *w);

/* A string ref handed out stays valid through at least this many
 * registrations more (fxt_writer_registrations() counts them) in the
 * same provider, whatever they evict: a caller may keep refs it uses in
 * every record for fewer than that, rather than revalidate each. */
#define FXT_WRITER_REF_LIFE 64u

/* Returns an indexed thread ref for (pid, tid), registering it if needed
 * (or re-registering an evicted index); an inline ref on an I/O error. */
struct fxt_tref fxt_writer_thread(struct fxt_writer *w, uint64_t pid, uint64_t tid);

/* The same with a caller-owned cache, revalidated in O(1) (zero it first). */
struct fxt_thread_slot {
	uint8_t index;
	uint32_t generation;
};
struct fxt_tref fxt_writer_thread_cached(struct fxt_writer *w, struct fxt_thread_slot *slot,
					 uint64_t pid, uint64_t tid);

/* Record emitters: encode and write.  Return 0 or -errno (-EINVAL when the
 * record cannot be encoded). */
int fxt_writer_event(struct fxt_writer *w, const struct fxt_event *ev);
int fxt_writer_kernel_object(struct fxt_writer *w, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs);
int fxt_writer_userspace_object(struct fxt_writer *w, uint64_t pointer, struct fxt_tref process,
				struct fxt_sref name, const struct fxt_arg *args, unsigned nargs);
int fxt_writer_blob(struct fxt_writer *w, struct fxt_sref name, unsigned blob_type,
		    const void *payload, size_t len);
int fxt_writer_context_switch(struct fxt_writer *w, const struct fxt_context_switch *cs);
int fxt_writer_log(struct fxt_writer *w, uint64_t ts, struct fxt_tref thread, const char *msg,
		   size_t len);
int fxt_writer_large_blob(struct fxt_writer *w, const struct fxt_large_blob *b);

/* Convenience: names a process (kernel object type 1, koid = pid). */
int fxt_writer_process_name(struct fxt_writer *w, uint64_t pid, const char *name);
/* Names a thread (kernel object type 2, koid = tid) with the argument
 * "process" of koid type: what Perfetto needs to put it under its process. */
int fxt_writer_thread_name(struct fxt_writer *w, uint64_t pid, uint64_t tid, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* FXT_WRITER_H */
