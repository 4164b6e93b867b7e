/* Merging archives into one: the archives of one run's processes
 * (fxt-run), or archives of different recorders (fxt-merge), side by side.
 *
 * Every traced process's spool becomes an archive of its own
 * (convert/convert.h): the magic record, then provider info with id = its
 * pid, then its records.  FXT aggregates providers in one stream the same
 * way: the merged archive is the magic record once, then each part's
 * records after its own magic record, unchanged.  Each part starts with
 * provider info, which switches a reader to that provider's fresh string
 * and thread tables (and starts a provider afresh when a pid comes twice,
 * as after an exec), so no record needs rewriting; and a cross-process
 * flow (fork -> child, a pipe write -> its read) pairs up, in a viewer,
 * only when both ends are in one file.
 *
 * Parts are read with the reader's framing (fxt/reader.h, FXT_READER_RAW),
 * plain or compressed alike, and copied record by record as they are: a part
 * that ends in a truncated record (its process died writing it), or whose
 * header says size 0, is copied up to its last whole record, so that the
 * merged archive stays readable after it.  The output is compressed as its
 * name says (fxt_writer_path_flags()).
 *
 * The merged archive starts with fxtrace's mark of time order
 * (FXT_TIME_ORDERED_MARK) when every part does and its threads are still
 * each in time order in it: a provider that comes again in a later part
 * (a process's next image) has no event there before its latest of the
 * parts before.  That is followed as the parts are copied, the mark
 * written first and undone in place if not (a compressed archive cannot
 * be: it is marked only when the parts' first providers are each
 * another).
 *
 * Records can also move in time, provider by provider (fxt-merge aligning
 * a kernel trace on another clock with the agent's CLOCK_MONOTONIC): the
 * timestamp word of event, context switch and log records gets the
 * provider's shift, in its own ticks (initialization record).  Large
 * records are copied as they are (no importer writes timed ones).
 * Private to launcher/ and tools/ (libfxtmerge.la).
 */
#ifndef FXT_CONVERT_MERGE_H
#define FXT_CONVERT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What was copied from one part. */
struct merge_part_result {
	uint64_t records;    /* records copied (its magic record not counted) */
	uint64_t bytes;	     /* bytes copied, uncompressed */
	bool truncated;	     /* it ended inside a record, or a record of size 0 */
	bool not_an_archive; /* gone, or not starting with the magic record: skipped */
	uint64_t clamped;    /* timestamps a negative shift would have put before 0 */
};

/* Called at each provider info record of part `part` with the provider's
 * name: sets *shift_ns, what that provider's timestamps move by.  Returns 0,
 * or -errno to fail the merge. */
typedef int merge_shift_fn(void *ctx, size_t part, const char *name, size_t len, int64_t *shift_ns);

/* Writes `out` (replacing it atomically: a temporary file in its directory
 * renamed over it, created with the mode the agent gives archives)
 * from the `nparts` archives at `parts`, in that order.  `out` may itself
 * be one of the parts.  res, if not NULL, has nparts entries.  The parts
 * are left in place.  Returns 0 or -errno (-ENODATA if no part is an
 * archive); on failure `out` is untouched and no temporary file is left. */
int merge_archives(const char *out, const char *const *parts, size_t nparts,
		   struct merge_part_result *res);

/* The same, moving each provider's records by what `shift` says (NULL: as
 * merge_archives()).  Its error fails the merge as any other. */
int merge_archives_shifted(const char *out, const char *const *parts, size_t nparts,
			   merge_shift_fn *shift, void *ctx, struct merge_part_result *res);

/* A part that is a range of a file rather than a whole archive: `len`
 * bytes from `off`, whole records of one provider's (`provider`: its
 * provider info first), in time order, without a magic record (an archive
 * in a batch of fxt-run's, convert/convert.h); copied as they are (no
 * shift).  len 0: the part is the whole file, an archive. */
struct merge_range {
	uint64_t off, len;
	uint32_t provider;
};

/* The same, part i being ranges[i] of its file (ranges NULL: every part
 * whole).  A file may be named by several parts. */
int merge_archives_ranges(const char *out, const char *const *parts, size_t nparts,
			  const struct merge_range *ranges, merge_shift_fn *shift, void *ctx,
			  struct merge_part_result *res);

/* Appending one more part to `out` without rewriting it: the records
 * written to a->w between merge_append_begin() and merge_append_end()
 * (no magic record: the part's provider info first) go at the end of
 * out, which then says what merge_archives(out, {out, part}) would have
 * written: out's records, the part's after them, and out's mark of time
 * order kept only if the part's threads are in time order too, under a
 * provider other than out's first (else undone in place; out's others
 * are not read: a caller that knows them says part_ordered false when
 * the part's provider is one of them).  Only for a
 * plain archive (-ENOTSUP: out is compressed, or does not start with the
 * magic record: merge it instead); -errno if out cannot be opened. */
struct merge_append {
	struct fxt_writer *w;
	int fd;
	uint64_t size;	   /* out's, before */
	bool ordered;	   /* out has the mark, then its first provider's info */
	uint32_t provider; /* with ordered: that provider */
};
int merge_append_begin(struct merge_append *a, const char *out);

/* Closes the writer; with err (or a failure of its own) out is cut back
 * to what it was.  part_ordered: the records written are each thread's
 * in time order, under provider part_provider (their first).  Returns
 * err, or 0 or -errno. */
int merge_append_end(struct merge_append *a, int err, bool part_ordered, uint32_t part_provider);

#endif /* FXT_CONVERT_MERGE_H */
