/* An archive's end state: where fxtrace's writer left each thread near
 * the archive's end, so that a reader can show the archive's last calls,
 * at their depth and with their item numbers, by decoding a few hundred
 * KB per thread instead of the whole archive (fxt-view's End).
 *
 * Layout (docs/design.md, "The end state", owns it): after the last
 * record, blob records (type 5, blob type FXT_BLOB_DATA, inline name
 * FXT_END_STATE_NAME) whose payloads, one after the other, are the state;
 * then the trailer, the archive's last bytes, FXT_END_TRAILER_WORDS words
 * ending the file: in a plain archive the payload of one last blob record
 * named FXT_END_TRAILER_NAME, in a .fxt.gz the end of the extra field of
 * a last gzip member that decompresses to nothing (03 00 and a zero CRC
 * and size after it: 10 bytes), in a .fxt.zst the end of a last skippable
 * frame.  Readers that do not know it skip it: Perfetto's and Tracy's FXT
 * importers skip blobs of a type other than 3 (Perfetto's embedded
 * protos), every gzip and zstd decoder skips the empty member and the
 * skippable frame.  A compressed archive's state starts a member or frame
 * of its own, so that a reader inflates it alone.
 *
 * The trailer: FXT_END_MAGIC, the uncompressed offset of the state's first
 * blob record and the state's bytes (uncompressed), the offset in the file
 * of the member or frame it starts and the file's bytes from there to the
 * trailer's unit (for a plain archive the same two), then a check word of
 * the five (fxt_end_check()).  The state itself ends with a check word of
 * its bytes.  Everything is checked before use: a reader of an archive
 * whose trailer or state is damaged, or that has none (another writer's,
 * an older fxtrace's), reads it as it would without. */
#ifndef FXT_ENDSTATE_H
#define FXT_ENDSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FXT_END_STATE_NAME    "fxtrace.end-state"
#define FXT_END_TRAILER_NAME  "fxtrace.end"
#define FXT_END_MAGIC	      UINT64_C(0x3156444e45545846) /* "FXTENDV1" */
#define FXT_END_STATE_MAGIC   UINT64_C(0x3154415453545846) /* "FXTSTAT1" */
#define FXT_END_TRAILER_WORDS 6u
/* A state's blob payload: at most this many bytes a record. */
#define FXT_END_CHUNK 32000u
/* The state's count of items when its writer did not count them (the
 * threads' counts are then 0): a reader numbers the last items once it
 * has counted the archive's. */
#define FXT_END_ITEMS_UNKNOWN UINT64_MAX

/* A call open on a thread at its place (or the one held back). */
struct fxt_end_frame {
	bool begin;	  /* a duration begin (else a complete event) */
	uint64_t ts, end; /* ns; end: a complete event's */
	const char *category, *name;
	uint32_t category_len, name_len;
};

struct fxt_end_string {
	uint16_t index;
	uint32_t len;
	const char *data;
};

struct fxt_end_threadref {
	uint8_t index;
	uint64_t pid, tid;
};

/* One thread (in the order of its first event or log record). */
struct fxt_end_thread {
	uint64_t pid, tid;
	uint64_t at;	   /* offset of the record the place is before */
	uint64_t last_off; /* offset of its last event or log record */
	uint64_t items;	   /* fxt-view's items (callstream.h's, without the
			    * copies of log records) it gave before `at` */
	bool any_before;   /* it gave items (log copies too) before `at` */
	uint64_t max_ts;   /* the latest time of those (ns) */
	uint64_t last_ns;  /* the latest time its records said before `at` */
	/* The calls with children open at `at`, outermost first, then the
	 * call held back when `held`. */
	bool held;
	size_t nframes;
	const struct fxt_end_frame *frames;
	/* The string and thread tables in effect at `at`. */
	size_t nstrings;
	const struct fxt_end_string *strings;
	size_t nthreadrefs;
	const struct fxt_end_threadref *threadrefs;
};

struct fxt_end_state {
	uint64_t ticks_per_second;
	uint64_t head_end;	   /* where the records before the first event end */
	uint64_t start_ns, end_ns; /* first and last time of an event or log record */
	uint64_t items;		   /* fxt-view's items in the archive, or
				    * FXT_END_ITEMS_UNKNOWN */
	size_t nthreads;
	struct fxt_end_thread *threads;
	void *bytes; /* the state's payload, which the strings point into */
};

/* The state of the archive at path: 0, -ENOENT when it has none (or its
 * trailer or state does not check), -ENOMEM, or an error opening it. */
int fxt_end_state_load(const char *path, struct fxt_end_state **out);
/* The same from a state's payload (the blob records' payloads joined). */
int fxt_end_state_parse(const void *data, size_t len, struct fxt_end_state **out);
void fxt_end_state_free(struct fxt_end_state *st);
/* The check word of n bytes. */
uint64_t fxt_end_check(const void *data, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* FXT_ENDSTATE_H */
