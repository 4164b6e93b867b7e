/* Conversion: one process's spool (spool/format.h) -> its FXT archive.
 *
 * The stage between the recording and the archive, outside the traced
 * process whenever fxt-run is there: fxt-run converts each spool once its
 * process sealed it (at exit or exec) or is gone (killed), and `fxt-run
 * --recover` converts spools found later.  The agent links it too, for a
 * process that converts its own spool (no fxt-run, or fxt-run gone).
 *
 * A sealed spool holds everything: records, modules, thread names, drop
 * counts, the clock.  A spool whose process died unsealed (SIGKILL,
 * _exit, a crash) lacks what only the seal holds (its threads' names are
 * in its chunks: spool/format.h, "Thread names"):
 *
 *  - drop counts: no "records dropped" instants;
 *  - the exact end of frames still open when the process died: they close
 *    one tick after their thread's last record.
 *
 * Its ticks per second, unless the seal gives them: spool_clock_rate()
 * (spool/clock.h), measured now on the machine that recorded it.
 */
#ifndef FXT_CONVERT_H
#define FXT_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fxt/counts.h"
#include "spool/format.h"
#include "run/session.h"

struct fxt_symcache;

struct convert_opts {
	/* The run's session file (run/session.h), whose logged pipe
	 * writes give the process's pipe reads their flows; NULL or a
	 * missing file: no pipe flows. */
	const char *session;
	/* Or the writes already loaded from it (run_session_load_writes()), for
	 * a caller that converts many spools of one session: used when
	 * `writes_loaded`, instead of `session`. */
	const struct session_write *writes;
	size_t nwrites;
	bool writes_loaded;
	bool no_clobber; /* -EEXIST rather than replace the archive */
	/* The spool's one conversion, for good: mark its header with the
	 * archive (spool_header.archive_ino) before the archive gets its
	 * name, and remove the spool right after.  A converter killed between
	 * the two leaves both; convert_spool_named() then takes that archive
	 * rather than put the process's events into the run twice. */
	bool consume;
	/* With consume: offered the spool instead of removing it (fxt-run
	 * keeps its inode for the run's next process), with the conversion's
	 * descriptor of it when that is open for writing (else -1: the
	 * callee opens it); 0 when it took it, else the spool is removed.
	 * May be NULL. */
	int (*recycle)(void *ctx, const char *spool_path, int fd);
	void *recycle_ctx;
	/* With consume: given the descriptor of the spool just removed (not
	 * recycled) to close later (its pages are freed at its last close:
	 * 0.1-0.2 s for a few hundred MB on a busy machine); 0 when it took
	 * it, else it is closed here.  Called with recycle_ctx.  May be
	 * NULL. */
	int (*keep_removed)(void *ctx, int fd);
	/* The run's symbol cache (symbolizer/runcache.h), or NULL for one
	 * of this conversion's own. */
	struct fxt_symcache *cache;
	/* fxt-run --srcline: the source location on every slice too
	 * (conv_input.loc_args, convert/pipeline.h). */
	bool srcline;
	/* Compress on the converting thread only (FXT_WRITER_SERIAL): inside
	 * a traced program (convert/self.c), which gets no threads of ours. */
	bool serial;
	/* The spool converted while its process ran (convert_early_open()),
	 * or NULL: convert_spool() goes on from it when it can (the same
	 * spool, modules, time base and no pipe flows), else converts the
	 * spool whole. */
	struct convert_early *early;
	/* Or NULL: the archive goes to the end of this batch (below) rather
	 * than to its own file; archive_path is then not used, and the
	 * spool's mark (consume) is the batch's inode and where the archive
	 * ends in it. */
	struct convert_batch *batch;
	/* NULL, or the spool open for reading and writing (fxt-run opened
	 * it to look at its header): used rather than opened again by
	 * path, and left open, unless given to keep_removed (then *spool_fd
	 * is set to -1). */
	int *spool_fd;
};

/* A batch: the archives of many processes in one file, one after the
 * other, as a merge would put them (convert/merge.h): the magic record and
 * the mark of time order once, then each archive's records from its
 * provider on.  fxt-run converts its short processes into one, so that a
 * process costs no file of its own (a new inode is most of a short
 * process's cost on some file systems); the merge copies each archive
 * from it in its place among the others.  `len` is what is whole in it;
 * `committed`, when not NULL, a copy of it that outlives fxt-run (its
 * control file, run/control.h): a run recovered after fxt-run was killed
 * cuts the batch there (convert_batch_settle()).  The archives of one
 * batch are of distinct processes (convert_batch_has()). */
struct convert_batch_member {
	uint32_t pid;	   /* its process: the archive's provider */
	uint32_t image;	   /* of that pid (1: its first) */
	uint64_t off, end; /* its records, from its provider info on */
};
struct convert_batch {
	int fd;
	uint64_t ino;
	uint64_t len;
	uint64_t *committed;
	void *head;    /* the magic record and the mark: what each archive */
	size_t prefix; /* starts with, and their bytes */
	struct convert_batch_member *v;
	size_t n, cap;
};

/* Creates the batch at `path` (exclusively).  0 or -errno. */
int convert_batch_open(struct convert_batch *b, const char *path, uint64_t *committed);
/* Whether process `pid` has an archive in it already. */
bool convert_batch_has(const struct convert_batch *b, uint32_t pid);
/* Closes its file (left in place) and frees it. */
void convert_batch_close(struct convert_batch *b);
/* A batch a killed fxt-run left: cut to `committed` (what it had said was
 * whole), so that a spool whose archive was written but not marked is
 * converted again, and only once.  0 or -errno. */
int convert_batch_settle(const char *path, uint64_t committed);
/* The archives in the batch at `path` (a killed fxt-run's): where each
 * starts and ends, up to its last whole record; their images all `image`
 * (not known).  *v malloc'd.  0, or -errno (-EBADMSG: not a batch). */
int convert_batch_read(const char *path, uint32_t image, struct convert_batch_member **v,
		       size_t *n);

/* Early conversion (conv_early_new(), convert/pipeline.h): a process's
 * threads converted while it runs, so that at its end only its last
 * chunks are left.  convert_early_open() starts it for the spool at
 * `spool_path`, whose archive goes to `archive_path`, when it can be (a
 * process's spool in the stream mode, without samples; with the sync
 * group, the archive's conversion takes it over only if no acquisition
 * waited); 0, -EOPNOTSUPP (not this spool),
 * or -errno.  Its tick rate is measured now (spool_clock_rate()) and is
 * the archive's.  It holds its own symbol cache: one thread at a time
 * uses it. */
struct convert_early;
int convert_early_open(const char *spool_path, const char *archive_path, bool srcline,
		       struct convert_early **out);
/* Converts up to `max_chunks` of its chunks that are whole now; how many,
 * or -errno (-ECANCELED once the spool says that an acquisition waited,
 * with the sync group: the archive's conversion will not take it). */
int convert_early_step(struct convert_early *ce, unsigned max_chunks);
/* A step converts no chunk past its first while *flag is set (it must
 * outlive ce). */
void convert_early_yield(struct convert_early *ce, const uint32_t *flag);
/* Chunks converted so far. */
uint64_t convert_early_fed(const struct convert_early *ce);
void convert_early_free(struct convert_early *ce);

struct convert_result {
	uint64_t pid;	   /* from the spool header */
	uint64_t root_pid; /* the run's root, 0 if unknown */
	uint32_t image;	   /* 1 for the pid's first image */
	bool sealed;	   /* false: its process died without sealing it */
	/* convert_spool_named() found the archive of an earlier conversion
	 * (its converter was killed before it removed the spool): only the
	 * fields above, exit_status and the filters' are set. */
	bool converted_before;
	/* Not sealed: the status its process gave _exit() or _Exit()
	 * (spool_header.exited), or -1 when not known (killed...). */
	int exit_status;
	/* What the archive holds, as fxt/counts.h defines it: event records,
	 * threads with one, calls its drop instants count. */
	uint64_t events;
	uint64_t threads;
	uint64_t dropped;
	uint64_t calls;	  /* slices of calls of instrumented functions (hooks) */
	uint64_t records; /* spool records read */
	uint64_t bytes;	  /* archive bytes, uncompressed */
	uint64_t deep;	  /* slices nested deeper than Perfetto shows (fxt/depth.h) */
	/* The functions the filters matched (spool header). */
	uint32_t filter_included, filter_excluded;
	uint64_t max_depth;
	uint64_t deep_tid;
	/* The same counts, its threads and process as sets, for a caller
	 * that adds up several archives (fxt__counts_add()).  Owned after a
	 * conversion that returned 0: convert_result_free(). */
	struct fxt__counts counts;
};

/* Frees what a convert_result owns. */
void convert_result_free(struct convert_result *res);

/* Reads and checks a spool's fixed header and module list into a malloc'd
 * copy (free() it).  0, -errno, or -EBADMSG: not a spool of this version. */
int convert_read_header(int fd, struct spool_header **out);

/* The name an archive is written under until it is complete: DIR/BASE ->
 * DIR/.fxt-partial.BASE (malloc'd).  0 or -ENOMEM. */
#define CONVERT_PARTIAL_PREFIX ".fxt-partial."
int convert_partial_name(const char *archive_path, char **out);

/* Writes the archive of the spool at `spool_path` to `archive_path`
 * (".gz", ".zst": compressed), through its partial name, so that a conversion
 * killed halfway leaves nothing under the archive's name.  The spool is
 * left in place, and no half archive is: on error there is none.  Returns 0 or -errno; -EBADMSG for
 * a file that is not a spool of this version. */
int convert_spool(const char *spool_path, const char *archive_path, const struct convert_opts *o,
		  struct convert_result *res);

/* convert_spool() into the archive named after the run's output
 * (run/names.h): OUT itself when `n` is 0 (replacing it), else
 * OUT's stem.PID.N..., created exclusively, the first of n, n + 1 ...
 * (up to 100 tries) that is free.  The name used goes into `path` (and
 * its N into *used, unless NULL).  0 or -errno as convert_spool().
 * A spool that a consuming conversion had put under one of those names
 * (its mark says which file) is not converted again: that archive is its
 * result (res->converted_before), and the spool goes with o->consume. */
int convert_spool_named(const char *spool_path, const char *output, long pid, unsigned n,
			struct convert_opts *o, struct convert_result *res, char *path, size_t cap,
			unsigned *used);

#endif /* FXT_CONVERT_H */
