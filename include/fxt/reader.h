/* FXT reader: a streaming, bounds-checked decoder for FXT archives.
 *
 * The reader pulls records one at a time from a file (plain or gzip, told
 * apart by their first bytes), a descriptor or memory, through a window of
 * bounded size: a multi-GB archive is never loaded at once.  (A plain
 * regular file of more than 1 MiB is mapped rather than read, 8 MiB more
 * of it at a time, the pages behind given back; cutting it shorter while
 * it is read then kills the reader with SIGBUS.)  It keeps the
 * string and thread tables and the ticks-per-second of each provider, and
 * switches between them on provider info and provider section records, as
 * the spec requires.  Unknown record and argument types are skipped (and
 * reported as FXT_DIAG_INFO).  On damage (a record running past the end, a
 * zero-size record ...) it stops at the last well-formed record and
 * fxt_reader_error() says where and why.  It never reads out of bounds,
 * whatever the bytes; the fuzzer in tests/fuzz holds it to that.
 *
 * Decoded strings point into the reader's tables or its window; they stay
 * valid until the next call to fxt_reader_next().  They are not
 * NUL-terminated: print them with "%.*s".
 *
 * A large record (type 15) bigger than the window (1 MiB) is delivered with
 * its header fields and a NULL payload; the rest of its bytes are skipped
 * by the next call, which fails if the input ends before them.  Without
 * FXT_READER_VALIDATE the reader decodes over 20 million small events per
 * second.
 */
#ifndef FXT_READER_H
#define FXT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/format.h>
#include <fxt/utf8.h> /* fxt_utf8_valid() and its kin */

#ifdef __cplusplus
extern "C" {
#endif

struct fxt_reader;

enum fxt_reader_flags {
	/* Check what costs time per record: UTF-8 of inline strings, reserved
	 * bits, argument layouts.  Findings go to the diagnostic callback.
	 * String and thread records are always checked (they are rare). */
	FXT_READER_VALIDATE = 1u << 0,
	/* Frame records without decoding them, for a consumer that copies
	 * records as they are (fxt-run merging archives): fxt_reader_next()
	 * fills only offset, type and nwords, returns every record (unknown
	 * types too; metadata switches no provider), and holds each one
	 * whole for fxt_reader_record_bytes() -- a large record up to
	 * 64 MiB; a larger one is damage. */
	FXT_READER_RAW = 1u << 1,
	/* Give each thread's duration begins and ends in time order, as
	 * Perfetto and Tracy order them before they pair them: a stable sort
	 * by timestamp (equal times in file order).  The FXT spec does not
	 * make file order time order (magic-trace writes the begins of the
	 * frames open at its start, at time 0, at its end).  A begin or end
	 * earlier than an event its thread had before it in the file
	 * ("late") comes just before the first event of its thread that is
	 * later than it, with its own offset; every other record comes where
	 * it is (complete events carry both their times; flows pair by id).  Costs a first
	 * pass over the input at open (a memory input, or a regular file
	 * mapped; a pipe's bytes are copied into an unlinked file of $TMPDIR
	 * first) that decodes no event unless some are late (about a third of
	 * a decoding pass on a plain file in time order), and a copy of each
	 * late event (at most 65,536 of them;
	 * later ones stay where they are): see fxt_reader_late().  No effect
	 * with FXT_READER_RAW. */
	FXT_READER_TIME_ORDER = 1u << 2,
};

enum fxt_diag_level {
	FXT_DIAG_INFO,	  /* e.g. an unknown record type, skipped as the spec says */
	FXT_DIAG_WARNING, /* legal but suspicious */
	FXT_DIAG_ERROR,	  /* a spec rule is broken; reading goes on where it can */
};

/* Called for each finding; `offset` is the byte offset (in the decompressed
 * stream) of the record or argument concerned. */
typedef void (*fxt_diag_fn)(void *ctx, enum fxt_diag_level level, uint64_t offset, const char *msg);

struct fxt_string {
	const char *data; /* not NUL-terminated */
	uint32_t len;
};

/* What a string reference to a table index never registered reads as (a
 * damaged archive: the reader also reports "NAME string ref N used before
 * registration"), so that a tool names it rather than printing nothing. */
#define FXT_UNREGISTERED_STRING "(unregistered string)"

struct fxt_arg_value {
	enum fxt_arg_type type;
	struct fxt_string name;
	union {
		int64_t i;	     /* INT32, INT64 */
		uint64_t u;	     /* UINT32, UINT64, POINTER, KOID */
		double d;	     /* DOUBLE */
		struct fxt_string s; /* STRING */
		bool b;		     /* BOOL */
	} v;
};

struct fxt_record {
	uint64_t offset;	   /* of the header word, in the decompressed stream */
	enum fxt_record_type type; /* header bits [0 .. 3] */
	uint64_t nwords;	   /* record size including the header */
	uint32_t provider_id;	   /* the provider whose section this record is in */

	unsigned nargs; /* decoded arguments (unknown types are left out) */
	struct fxt_arg_value args[FXT_MAX_ARGS];

	union {
		struct {
			enum fxt_metadata_type type;
			uint32_t provider_id;	/* provider info, section, event */
			struct fxt_string name; /* provider info */
			unsigned event;		/* provider event id */
			unsigned trace_info_type;
		} meta;
		struct {
			uint64_t ticks_per_second;
		} init;
		struct {
			uint16_t index;
			struct fxt_string str;
		} string;
		struct {
			uint8_t index;
			uint64_t pid, tid;
		} thread;
		struct {
			enum fxt_event_type type;
			uint64_t ts; /* ticks */
			uint64_t pid, tid;
			struct fxt_string category, name;
			/* counter id, end ticks (complete) or correlation id */
			uint64_t extra;
			/* The string refs as written (FXT_STRREF_EMPTY, a table
			 * index, or inline).  What a consumer derives from a table
			 * ref holds until the next string record (which may replace
			 * the entry) or metadata record (which may switch or clear
			 * the provider's table): a cache without comparing bytes. */
			uint16_t category_ref, name_ref;
		} event;
		struct {
			struct fxt_string name;
			unsigned blob_type;
			const void *payload;
			uint64_t size;
		} blob;
		struct {
			uint64_t pointer;
			uint64_t pid;
			struct fxt_string name;
		} uobj;
		struct {
			unsigned obj_type;
			uint64_t koid;
			struct fxt_string name;
		} kobj;
		struct {
			unsigned cpu, out_state, out_prio, in_prio;
			uint64_t ts;
			uint64_t out_pid, out_tid, in_pid, in_tid;
		} cswitch;
		struct {
			uint64_t ts;
			uint64_t pid, tid;
			struct fxt_string msg;
		} log;
		struct {
			unsigned large_type; /* 0 = blob */
			unsigned format;     /* enum fxt_large_blob_format */
			struct fxt_string category, name;
			uint64_t ts, pid, tid; /* event format */
			const void *payload;   /* NULL when too large to hold */
			uint64_t size;
		} large;
	} u;
};

/* Opening.  Return 0 or a negative errno; fxt_reader_error() then says why.
 * A path of "-" reads standard input. */
int fxt_reader_open_path(struct fxt_reader **r, const char *path, unsigned flags);
int fxt_reader_open_fd(struct fxt_reader **r, int fd, unsigned flags);
int fxt_reader_open_mem(struct fxt_reader **r, const void *data, size_t len, unsigned flags);
void fxt_reader_free(struct fxt_reader *r);

/* A second reader over the same plain memory as r (or compressed: below), that reads
 * next the record at `offset` (a record's offset, in r's window: one r
 * returned, or where r is), with a copy of r's string and thread tables,
 * providers and tick rates as they are now: so the record r returned
 * last, if it was an event (which changes no table), and what follows it,
 * decode in the copy as they did in r.  Readers of one archive's parts
 * (fxt-replay --time-order: a cursor per thread) are made so in one pass.
 * With FXT_READER_TIME_ORDER the copy gives what a reader that came to
 * `offset` gives: the late events given before the event at `offset` or
 * after, not those given before an event ahead of it, wherever the file
 * has them (fxt_reader_record_pos() gives the offset to pass for the
 * record r returned last; a late event that no reader of the archive gave
 * yet counts as given when the file has it ahead of `offset`).  The
 * memory must outlive both.
 * A gzip or zstd regular file or memory can be cloned too, at any offset
 * of its stream: the clone decodes from the gzip member or zstd frame
 * before `offset` (r notes where each starts as it reads: those r or the
 * reader it was cloned from met; fxtrace's writer cuts them every 2 MiB;
 * a longer gzip member gets places inside it every 4 MiB) up to it at
 * its first read, reading the file with pread() through a descriptor of
 * its own, and the clones of one reader share what they decoded (32 MiB
 * at most); the caller keeps the tables right for `offset`, as above.
 * Returns 0, -EINVAL (r reads a pipe or a plain file, or is stopped by
 * damage, or offset is not in the window of plain memory), or -ENOMEM. */
int fxt_reader_clone_at(const struct fxt_reader *r, uint64_t offset, struct fxt_reader **out);

/* Keeps the table strings records point to valid past the next call to
 * fxt_reader_next() (on: true), for a consumer of the records on another
 * thread than the reader's: a string buffer that a string record replaces,
 * or a provider info record clears, is kept (not reused) until
 * fxt_reader_release_strings() frees it.  Inline strings and payloads
 * still point into the window (copy them). */
void fxt_reader_keep_strings(struct fxt_reader *r, bool on);

/* How many string buffers r has kept so far (a count that only grows),
 * and in *bytes (if not NULL) the bytes of those not released yet. */
uint64_t fxt_reader_kept_strings(const struct fxt_reader *r, size_t *bytes);

/* Frees the kept string buffers up to count `upto` (a value
 * fxt_reader_kept_strings() returned): no record given before that call
 * may be read past it. */
void fxt_reader_release_strings(struct fxt_reader *r, uint64_t upto);

/* The bytes r's string and thread tables take (what a copy made by
 * fxt_reader_clone_at() costs, for callers that bound what they keep). */
size_t fxt_reader_tables_bytes(const struct fxt_reader *r);

void fxt_reader_set_diag(struct fxt_reader *r, fxt_diag_fn fn, void *ctx);

/* Reads the next record.  Returns 1 with *rec filled, 0 at a clean end of
 * the archive, or -1 on damage or I/O error: fxt_reader_error() tells why,
 * and the reader stays at its last well-formed record. */
int fxt_reader_next(struct fxt_reader *r, struct fxt_record *rec);

/* A plain event: an instant, duration begin, end or complete event
 * without arguments, whose thread is a table entry and whose category and
 * name are table entries or empty: what a profile reads of the records
 * the agent writes, in 72 bytes. */
struct fxt_plain {
	uint8_t record_type; /* FXT_RECORD_EVENT (the caller may mark its own items) */
	uint8_t type;	     /* enum fxt_event_type */
	uint16_t category_ref, name_ref;
	uint32_t category_len, name_len;
	const char *category, *name;
	uint64_t ts, extra, pid, tid; /* extra: the end ticks of a complete event, else 0 */
	const void *aux;	      /* NULL: the caller's */
};

/* Reads the plain events that come next, up to n of them, into ev[0 ..
 * k), each what fxt_reader_next() would have given (its strings valid as
 * long), and returns k: 0 when the next record is no plain event, or when
 * this reader does not take the short way (FXT_READER_RAW, late events to
 * give, a record not held whole in the window, its first record): read
 * it with fxt_reader_next().  For a loop over an archive's records
 * (recpipe.c) at a fraction of fxt_reader_next()'s cost per event. */
size_t fxt_reader_next_plain(struct fxt_reader *r, struct fxt_plain *ev, size_t n);

/* A plain event as the record fxt_reader_next() makes of it, in *rec:
 * its type, event fields and no arguments; where it is in the file
 * (offset, nwords, provider_id) is left as the caller set it. */
static inline const struct fxt_record *fxt_plain_record(struct fxt_record *rec,
							const struct fxt_plain *e)
{
	rec->type = FXT_RECORD_EVENT;
	rec->nargs = 0;
	rec->u.event.type = (enum fxt_event_type)e->type;
	rec->u.event.category_ref = e->category_ref;
	rec->u.event.name_ref = e->name_ref;
	rec->u.event.category.data = e->category;
	rec->u.event.category.len = e->category_len;
	rec->u.event.name.data = e->name;
	rec->u.event.name.len = e->name_len;
	rec->u.event.ts = e->ts;
	rec->u.event.extra = e->extra;
	rec->u.event.pid = e->pid;
	rec->u.event.tid = e->tid;
	return rec;
}

/* The last error (NULL if none) and the byte offset it concerns. */
const char *fxt_reader_error(const struct fxt_reader *r, uint64_t *offset);

/* When fxt_reader_next() failed on something else than damage in the
 * data: its errno (a read error; ENOMEM holding a raw large record), else
 * 0. */
int fxt_reader_errno(const struct fxt_reader *r);

/* The bytes of the record fxt_reader_next() returned last, as they are in
 * the (decompressed) input: rec->nwords little-endian words, the header
 * first.  NULL for a large record bigger than the window, which is not
 * held whole (never with FXT_READER_RAW).  Valid until the next call to
 * fxt_reader_next(); not aligned when the input is unaligned memory. */
const void *fxt_reader_record_bytes(const struct fxt_reader *r);

/* True if the archive began with the magic record. */
bool fxt_reader_saw_magic(const struct fxt_reader *r);

/* Ticks per second of the current provider (1e9 without an initialization
 * record), and a tick count converted to nanoseconds with it. */
uint64_t fxt_reader_ticks_per_second(const struct fxt_reader *r);
uint64_t fxt_reader_ticks_to_ns(const struct fxt_reader *r, uint64_t ticks);

/* Bytes consumed so far (decompressed). */
uint64_t fxt_reader_offset(const struct fxt_reader *r);

/* Where the record fxt_reader_next() returned last was given: its offset,
 * but for a late event given before a later one (FXT_READER_TIME_ORDER)
 * that event's offset.  Non-decreasing from record to record; a clone at
 * it (fxt_reader_clone_at()) gives that record again first.  It is
 * fxt_reader_offset() exactly while r is between a late event it gave and
 * the event it gave it before (which it reads next): a clone at either
 * gives that late event again. */
uint64_t fxt_reader_record_pos(const struct fxt_reader *r);

/* With FXT_READER_TIME_ORDER: how many duration begins and ends the file
 * has out of time order on their thread (the late ones), and in *sorted (if not NULL)
 * whether this reader gives every thread's events in time order (not
 * past the bound of late events it moves). */
uint64_t fxt_reader_late(const struct fxt_reader *r, bool *sorted);

/* With FXT_READER_TIME_ORDER: whether the archive starts with fxtrace's
 * mark that each thread's events are in time order
 * (FXT_TIME_ORDERED_MARK, include/fxt/format.h), so that no pass ran at
 * open.  A begin or end late on its thread after all (an archive with
 * another appended, past its second magic record) is paired in file
 * order, said once as a diagnostic, and counted by fxt_reader_late() as
 * not sorted. */
bool fxt_reader_time_ordered(const struct fxt_reader *r);

/* Whether the archive read by `r` (fresh, at its start) starts with that
 * mark: reads its first two records, so use a reader of its own. */
bool fxt_reader_starts_time_ordered(struct fxt_reader *r);

/* Names for printing. */
const char *fxt_record_type_name(unsigned type);
const char *fxt_event_type_name(unsigned type);
const char *fxt_arg_type_name(unsigned type);

/* N if [name, name + len) is fxtrace's drop marker "fxt: N records
 * dropped" (see FXT_DROP_PREFIX), else 0. */
uint64_t fxt_dropped_in_name(const char *name, size_t len);

/* N if [name, name + len) is fxtrace's flight-recorder marker "fxt: N
 * records overwritten" (see FXT_OVERWRITE_SUFFIX), else 0. */
uint64_t fxt_overwritten_in_name(const char *name, size_t len);

/* N if [name, name + len) is fxtrace's marker of events the kernel lost
 * "fxt: N kernel events lost" (see FXT_KERNEL_LOST_SUFFIX), else 0. */
uint64_t fxt_kernel_lost_in_name(const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* FXT_READER_H */
