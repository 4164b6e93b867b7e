/* The spool writer: a per-process MAP_SHARED file the threads' buffers are
 * carved from (its layout: spool/format.h).  Private to agent/.
 *
 * Chunks are granted under a mutex (cold path).  A thread's first two
 * full chunks are unmapped during the run; after that it fills two
 * staged chunks in turn (spool_stage_full()).  The unused,
 * page-aligned tail of a retired thread's chunk is split off as a chunk
 * of its own and recycled for the next thread that needs one, so programs
 * that start many short threads do not grow the spool by a chunk per
 * thread.  At exit (and before exec) the process
 * seals it (spool_seal()).
 */
#ifndef FXT_AGENT_SPOOL_H
#define FXT_AGENT_SPOOL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spool/format.h"

/* A chunk mapped for writing. */
struct spool_map {
	void *base; /* the mapping; the struct spool_chunk is at base */
	uint64_t off;
	uint64_t size;
};

struct spool {
	pthread_mutex_t lock;
	char path[PATH_MAX];
	dev_t dev; /* identity of the spool file, checked at each re-open */
	ino_t ino;
	uint64_t end;	   /* file size: where the next new chunk goes */
	uint64_t granted;  /* bytes handed out, for FXT_MAX_SIZE */
	uint64_t mapped;   /* bytes of chunks mapped now, for FXT_BUFFER_SIZE */
	uint64_t max_size; /* 0 = unlimited */
	uint64_t buffer_size;
	uint64_t chunk_size;
	struct spool_header *hdr; /* mapped header, NULL until opened */
	/* Recycled tails (offset, size), a small LIFO stack. */
	struct {
		uint64_t off, size;
	} free_list[64];
	unsigned nfree;
	/* A descriptor of the spool, held from the moment the process
	 * changes user (spool_hold()), else -1. */
	int held;
	struct run_bell *bell; /* fxt-run's drain doorbell, or NULL */
	bool bell_tried;
	long bell_lpid; /* the fxt-run whose doorbell it is (a fork child keeps it) */
	uint32_t filter_inc, filter_exc; /* for the header (spool_set_filter_counts()) */
	uint32_t drop_cause;		 /* for the header, until it exists */
	uint32_t waited;		 /* likewise (spool_note_waited()) */
	bool closed;			 /* after the seal: grant nothing */
	/* A process other than the run's root (a fork child, an exec'd
	 * image): its first chunk is AGENT_FIRST_CHUNK_SIZE (next_size()). */
	bool small_first;
	int failed; /* creation failed (-errno): grant nothing */
	/* Whether copies' places are allocated (reserve_copy()): known
	 * once the first is reserved. */
	bool fs_known, fs_alloc;
	/* Modules loaded so far, mirrored into the header once it exists.
	 * Last: spool_init() resets everything before it. */
	unsigned nmods;
	struct spool_module mods[SPOOL_MAX_MODULES];
};

/* Initialises `sp` (no file yet).  Sizes come from the caller (the config). */
void spool_init(struct spool *sp, const char *path, uint64_t chunk_size, uint64_t buffer_size,
		uint64_t max_size);

/* Grants, maps (pre-faulted) and stamps a chunk for thread (serial, tid).
 * `cap`, when not 0, bounds its size (what is left of the thread's
 * buffer in the oneshot and circular modes).  Returns 0, -ENOSPC past
 * max_size or when `cap` leaves too little for a chunk, -ESHUTDOWN after
 * spool_close_grants(), or another -errno. */
int spool_chunk_get(struct spool *sp, uint32_t serial, uint64_t tid, uint32_t seq, uint64_t cap,
		    struct spool_map *out);

/* Rings (the circular mode, spool/format.h): the thread's oldest chunk `m`
 * becomes its chunk `seq`: its records are counted (the calls among them)
 * and zeroed, then it is re-stamped with seq and `overwritten` plus those
 * calls.  Returns the calls it held.  Not under the lock: the chunk is the
 * calling thread's. */
uint64_t spool_ring_reuse(struct spool *sp, struct spool_map *m, uint32_t seq,
			  uint64_t overwritten);

/* Staged chunks (spool/format.h): a thread past its first chunks fills
 * two chunks in turn (up to four while fxt-run's drain thread is behind:
 * agent/tbuf.c, spare_slot()) that stay mapped, since faulting fresh
 * pages in for every chunk costs more than the hooks themselves on some
 * machines (bench/README.md).
 *
 * spool_stage_full(): `m` is full: reserves its copy's place at the end
 * of the spool, marks it CHUNK_FULL and rings fxt-run's drain thread.
 * 0, -ENOSPC when the copy would pass max_size (the caller then takes a
 * smaller chunk from spool_chunk_get()), or another -errno; on error `m`
 * is unchanged.
 *
 * spool_stage_take(): makes the staged chunk `m` the thread's chunk `seq`,
 * empty: once copied (by the drain thread, or here when it has not begun),
 * it is emptied and re-stamped.  0, or -errno when it cannot be had (the
 * caller leaves it as it is, its records readable, and takes a fresh
 * chunk). */
int spool_stage_full(struct spool *sp, struct spool_map *m);
int spool_stage_take(struct spool *sp, struct spool_map *m, uint32_t seq);

/* Whether the staged chunk `m` has been copied (CHUNK_COPIED). */
static inline bool spool_stage_copied(const struct spool_map *m)
{
	return __atomic_load_n(&((const struct spool_chunk *)m->base)->state, __ATOMIC_ACQUIRE) ==
	       CHUNK_COPIED;
}

/* Thread names (spool/format.h, "Thread names").  spool_chunk_name():
 * names the chunk `m` after the calling thread, its owner (its comm), and
 * makes it the thread's newest, the one *name_off gives the offset of.
 * spool_chunk_rename(): the thread whose newest chunk *name_off gives was
 * renamed `name`: writes it into that chunk's header (through the file,
 * since the chunk may be unmapped meanwhile), unless the spool is closed
 * (sealed: the seal names the threads).  Both under the spool lock: a
 * rename lands in the chunk a new chunk's name is read after, or in that
 * new chunk.  0 or -errno. */
void spool_chunk_name(struct spool *sp, const struct spool_map *m, uint64_t *name_off);
int spool_chunk_rename(struct spool *sp, const uint64_t *name_off, const char *name);

/* Unmaps a chunk.  With `used` < its size (a retiring thread), splits the
 * page-aligned unused tail off for recycling. */
void spool_chunk_put(struct spool *sp, struct spool_map *m, uint64_t used, bool recycle);

/* Records a loaded module (deduplicated by path and bias), in sp->mods and
 * in the header.  Returns 1 when it was new, 0 when known, -ENOSPC. */
int spool_add_module(struct spool *sp, const char *path, uint64_t bias, uint64_t base);

/* The functions the filters matched so far, for the header. */
void spool_set_filter_counts(struct spool *sp, uint32_t included, uint32_t excluded);

/* Records `cause` (SPOOL_CAUSE_*) as the process's drop cause (the
 * header's), unless it has one.  No lock: a thread's first drop may come
 * in a signal handler. */
void spool_note_cause(struct spool *sp, uint32_t cause);

/* An acquisition had to wait: marks the header (spool/format.h,
 * `waited`) before its SYNC record is written.  No lock. */
void spool_note_waited(struct spool *sp);

/* Stops granting chunks; returns the spool size at that point. */
uint64_t spool_close_grants(struct spool *sp);

/* Seals the spool (see enum spool_state): writes the trailer `seal` and
 * its threads after the last chunk, then marks the header sealed.  Call
 * after spool_close_grants().  Creates the file if no chunk did.
 * Returns 0 or -errno. */
int spool_seal(struct spool *sp, const struct spool_seal *seal,
	       const struct spool_seal_thread *threads);

/* The process ends through _exit() or _Exit() with `status`, without
 * sealing the spool: says so in its header (spool_header.exited), for the
 * converter.  Async-signal-safe enough for _exit() (a signal handler's):
 * it never waits for the lock, and gives up when the spool is taken. */
void spool_mark_exit(struct spool *sp, int status);

/* Opens the spool for reading (the caller closes it), or -errno. */
int spool_fd(struct spool *sp);

/* Unmaps the header and unlinks the file; if it cannot be unlinked (the
 * process gave up the right to), returns -errno and leaves it as it was. */
int spool_destroy(struct spool *sp);

/* Unmaps the header and leaves the file to whoever converts it. */
void spool_release(struct spool *sp);

/* The process is about to change user (setuid() & co.): after it, it may
 * no longer open its spool by path (root's, mode 0600, in a directory
 * root's too).  So the spool is created now if it is not yet, and a
 * descriptor of it is held (close-on-exec) until the spool is released:
 * the agent opens the spool through it from then on (a dup, checked to be
 * the spool still: a program that closes it, or reuses its number, costs
 * no more than the by-path open).  fxt-run's doorbell is mapped too, its
 * mapping showing fxt-run's state (spool_launcher_state()).  Records
 * nothing; signals may come.  0 or -errno. */
int spool_hold(struct spool *sp);

/* The state of the control file of the fxt-run converting this run
 * (run/control.h): through the mapping of its doorbell if there is one
 * (a process that changed user can no longer open it), else read from the
 * file. */
int spool_launcher_state(struct spool *sp);

/* After fork, in the child: forgets the parent's spool without touching the
 * file (the parent still uses it) and re-initialises for `path`; a held
 * descriptor of the parent's spool is closed. */
void spool_forget(struct spool *sp, const char *path);

#endif /* FXT_AGENT_SPOOL_H */
