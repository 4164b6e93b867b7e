/* The calls of every thread in time order: callstream.h's items, each
 * thread's from a stream of its own, merged by time.  Private to tools/
 * (fxt-replay --time-order, fxt-view's replay list).
 *
 * fxt-run writes a thread's records together (convert/pipeline.h: per
 * thread, its thread record, its strings, its slices), so in archive
 * order the threads come one after the other.  To merge them, each thread
 * gets a cursor: a reader over the mapped archive that starts at the
 * thread's first record with the string and thread tables as they were
 * there (fxt_reader_clone_at(), made in one pass over the archive that
 * also notes each thread's last record), and a call stream of its own fed
 * only that thread's records.  A thread's items come in time order (an
 * entry at its start, its children, its exit at its end), so a heap on
 * each thread's next item gives every item in time order, each thread's
 * nesting kept.
 *
 * Costs: the pass before the first item (the whole archive decoded once,
 * ~0.45 s per 700 MB here), which is why fxt-replay streams in archive
 * order by default; then each record is read once more, by its thread's
 * cursor (a thread whose records are scattered, as other writers
 * interleave them, has its cursor skip the others' between its first and
 * last record).  Memory: per thread a copy of the reader's tables (two:
 * callmerge_rewind() starts again from the first copies), its call
 * stream's stack and the items it gave and the merge has not taken; never
 * the records.
 *
 * A plain archive in a file is mapped; a gzip or zstd one is read through
 * its descriptor, each cursor decoding from the member or frame before
 * its place (fxt_reader_clone_at()).  Standard input is refused
 * (-EMEDIUMTYPE with a reason). */
#ifndef FXT_TOOLS_CALLMERGE_H
#define FXT_TOOLS_CALLMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "tools/calls/callstream.h"

struct callmerge;

/* Maps the archive at path and reads it once.  Returns 0, or a negative
 * errno with a one-line reason in err (tool_read_records()'s for a bad
 * archive; damage anywhere is refused, not read up to). */
int callmerge_open(struct callmerge **m, const char *path, char *err, size_t errlen);
void callmerge_free(struct callmerge *m);

/* The next item in time order: 1 with *it (valid until the next call), 0
 * after the last, or -ENOMEM. */
int callmerge_next(struct callmerge *m, const struct callstream_item **it);

/* Starts again from the first item (no new pass over the archive). */
int callmerge_rewind(struct callmerge *m);

/* A second merge over m's mapping and threads, at the first item, with
 * cursors of its own (no pass over the archive): one may run on another
 * thread while m is read.  m must outlive it. */
int callmerge_fork(const struct callmerge *m, struct callmerge **out);

/* Marks: where a merge is, to go back there without reading from the
 * start (fxt-view's index of its replay list).  A mark holds, per thread,
 * its cursor's offset, a copy of the cursor's string and thread tables
 * (shared by the marks made while no record that may change them was
 * read: fxt-run writes a thread's strings before its slices, so one copy
 * a thread), its stream's stacks and the items given but not taken: a
 * few kilobytes a thread, whatever the archive's size, shared by the
 * marks made while the merge took no item from that thread (so threads
 * that wait cost nothing more).
 * callmerge_mark(m) notes where m is (after the item callmerge_next()
 * gave last); callmerge_resume(x, mark) puts x, m itself or a fork of it,
 * there: its next item is the one m gave after the mark.  Marks share
 * their tables' copies, counted in the merge they were made on: make and
 * free them on the thread that reads that merge; resuming only reads a
 * mark, so another thread may (the caller keeps the mark alive). */
struct callmerge_mark;
int callmerge_mark(struct callmerge *m, struct callmerge_mark **mk);
int callmerge_resume(struct callmerge *m, const struct callmerge_mark *mk);
void callmerge_mark_free(struct callmerge_mark *mk);
/* The mark's own bytes (a pointer a thread), and those of the threads'
 * parts and tables' copies that m's marks hold (counted once however many
 * marks share them). */
size_t callmerge_mark_bytes(const struct callmerge_mark *mk);
size_t callmerge_shared_bytes(const struct callmerge *m);

/* The first timestamp of the archive's events and log records (ns), what
 * relative times start from (callstream_start_ns()'s). */
/* The records lost, as the first pass counted them (tool_losses_record()). */
const struct tool_losses *callmerge_losses(const struct callmerge *m);
uint64_t callmerge_start_ns(const struct callmerge *m);
/* The last (the latest an event or log record starts; ns). */
uint64_t callmerge_end_ns(const struct callmerge *m);

/* The threads that have events or log records. */
size_t callmerge_nthreads(const struct callmerge *m);

#endif /* FXT_TOOLS_CALLMERGE_H */
