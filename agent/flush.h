/* The flusher: spool -> FXT archive.  Private to agent/.
 *
 * agent_flush_archive() only needs the spool file, the thread metadata and
 * the symbolizer, not the live process: the same code can turn the spool of
 * a killed process into an archive (launcher/recover.c, in fxt-run), given
 * the thread table or none: threads are then known by the tids in the chunk
 * headers and named "thread TID".
 *
 * Archive layout: magic; provider info (id = pid, "fxtrace");
 * initialization (ticks per second); kernel objects naming the process and
 * every thread (with the "process" koid argument Perfetto needs); then, per
 * thread, its thread record, the string records of the names it uses and its
 * slices in start order (a parent before its children, see recon.h): duration
 * complete events (24 bytes each with indexed refs) for nearly all calls, a
 * begin/end pair for the few frames that stay open across a full start-order
 * FIFO; the frames still open at the end close at the thread's exit, at the
 * point it started dropping, or at the flush.  A thread that dropped records
 * gets an instant event "fxt: N records dropped" (category "fxt") at the
 * time it started dropping, in stream order among its slices; the provider
 * event "buffer full" comes once at the end if any thread dropped.
 *
 * Name of a slice: the symbolized function; category: the basename of its
 * module (the executable or shared library).
 */
#ifndef FXT_AGENT_FLUSH_H
#define FXT_AGENT_FLUSH_H

#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "agent/spool.h"
#include "symbolizer/symbolizer.h"

struct flush_thread {
	uint32_t serial;
	uint64_t tid;
	char name[16]; /* "" = unknown */
	uint64_t dropped;
	uint64_t first_drop_ts;
	uint64_t stop_ts; /* frames open at the end close here if set ... */
	uint64_t end_ts;  /* ... else here if set ... else at now_ts */
};

struct flush_input {
	uint64_t pid;
	const char *process_name;
	uint64_t ticks_per_second;
	uint64_t now_ts;
	int spool_fd;	    /* read with pread/mmap; not closed */
	uint64_t spool_end; /* bytes of the spool to read */
	const struct flush_thread *threads;
	size_t nthreads;
	uint64_t lost; /* calls lost outside any thread's count */
	struct fxt_sym *sym;
	size_t fifo_max; /* start-order FIFO bound per thread (recon.h); 0 = default */
};

struct flush_stats {
	uint64_t events;  /* slices: complete events and begin/end pairs */
	uint64_t begun;	  /* slices written as begin/end pairs */
	uint64_t threads; /* threads with at least one record or drop */
	uint64_t dropped;
	uint64_t unmatched; /* exits without enters, ignored */
	uint64_t records;
};

/* Writes the archive.  Returns 0 or -errno (the writer's first error, a
 * spool read error, -ENOMEM). */
int agent_flush_archive(struct fxt_writer *w, const struct flush_input *in, struct flush_stats *st);

#endif /* FXT_AGENT_FLUSH_H */
