/* The spool's on-disk layout: the file each traced process writes its raw
 * records into (agent/spool.c writes it; convert/ reads it, in fxt-run, in
 * `fxt-run --recover` and in the agent itself when it converts its own).
 * This header is the one owner of that layout.
 *
 * Layout (little-endian, all offsets in bytes):
 *
 *   0                  struct spool_header (SPOOL_HEADER_SIZE bytes): pid,
 *                      program, clock calibration start, identity, seal
 *                      state, module list.
 *   SPOOL_HEADER_SIZE  chunks, back to back, each starting with a
 *                      struct spool_chunk giving its size and owner; the
 *                      next chunk starts at offset + size.
 *   seal_off           once sealed: struct spool_seal and its threads.
 *
 * A thread's chunks are numbered in its sequence (seq), and readers take
 * them in that order, whatever their place in the file.  Two chunks may
 * carry one (serial, seq): a chunk recycled in place is first copied to
 * a chunk reserved for it later in the file, then emptied and re-stamped;
 * a reader keeps the later one in the file.
 *
 * Staged chunks: a thread past its first chunks writes into two chunks
 * that stay mapped (fresh pages cost more than the hooks on some
 * machines), in turn; up to four while fxt-run's drain thread is behind.  When one is full its thread reserves its copy's
 * place at the end of the file (a chunk with serial 0 until the copy is
 * whole), marks it CHUNK_FULL and goes on in the other; fxt-run's drain
 * thread copies it (launcher/drain.c), or the thread itself does when it
 * comes back to it first; then the chunk is CHUNK_COPIED and can be
 * emptied and filled again.  Who copies takes the chunk by compare and
 * swap FULL -> COPYING (spool_chunk_claim()).  The staged chunks are
 * linked from header.first_staged through chunk.next_staged.  Readers
 * need none of this: copies and originals are told apart by the rule
 * above.
 *
 * Creation: the header (its magic 0) and the process's first chunk (at
 * most 64 KiB of zeros) are written (in a spare file of SPOOL_SPARE_SIZE,
 * in place already, the header is stored through the mapping), then the
 * magic stored: a spool whose
 * magic is 0 holds no record, and is at most SPOOL_UNBORN_MAX bytes (a
 * process killed while creating it leaves such a file, which a converter
 * removes once its process is gone).
 *
 * A chunk's records follow its header: 16-byte slots (spool/records.h),
 * ending at the first slot whose second word is 0 (the file is created sparse, so unwritten space
 * reads as zeros) or at the chunk's end.  Because the page cache keeps a MAP_SHARED file's data
 * when the process dies, a killed process's spool is still readable: it is converted like a sealed
 * one, without what only the seal holds (drop counts, calls lost outside threads, the exact end).
 *
 * Thread names: a chunk's header carries its thread's name (its comm),
 * read by the thread when it takes the chunk (a fresh one, or a staged
 * one it fills again), and rewritten in the thread's newest chunk when
 * the program renames the thread (pthread_setname_np(), prctl(PR_SET_NAME):
 * agent/libc/wrap_thread.c).  The seal's thread table names the threads of a
 * sealed spool; a killed process's threads are named after their newest
 * chunk's name (the highest seq), its main thread after the program when
 * that is empty.
 *
 * Rings (the circular mode, header.mode; run/recording.h): each thread's
 * chunks stay mapped as a ring of at most FXT_BUFFER_SIZE bytes; when it
 * is full, the thread's oldest chunk is emptied (its records zeroed) and
 * re-stamped as the thread's next seq, with `overwritten`, the calls the
 * thread had overwritten so far, those of the chunk included.  A thread's
 * kept records are then its chunks from the lowest seq left: a reader
 * that finds a thread's first chunk's seq above 0 knows its start was
 * overwritten (the frames open there are those whose exits come without
 * enters).  The seal's `overwritten` is the thread's final count; a
 * killed process's is its newest chunk's.
 *
 * Names: "OUT.PID.spool" for a process's first image, "OUT.PID.N.spool"
 * for its image N (after N - 1 execs), OUT being the root's archive path.
 */
#ifndef FXT_SPOOL_FORMAT_H
#define FXT_SPOOL_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "spool/records.h"

#define SPOOL_MAGIC	      0x4c4f4f5053545846ull /* "FXTSPOOL" */
#define SPOOL_VERSION	      10u
#define SPOOL_HEADER_SIZE     (64u << 10)
#define SPOOL_UNBORN_MAX      (SPOOL_HEADER_SIZE + (64u << 10)) /* see "Creation" */
/* fxt-run's spare spool files (run/names.h) are this many bytes, or
 * empty: a header and the first chunk of a process other than the root
 * (AGENT_FIRST_CHUNK_SIZE), in place, the header's first page and the
 * chunk zeros (the module list past its count is never read), so that
 * the process that takes one writes nothing to make its spool (see
 * "Creation"). */
#define SPOOL_SPARE_SIZE      (SPOOL_HEADER_SIZE + (16u << 10))
#define SPOOL_CHUNK_MAGIC     0x4b4e554843545846ull /* "FXTCHUNK" */
#define SPOOL_MODULE_PATH     240u
#define SPOOL_HEADER_FIXED    536u /* the header before its module list */
#define SPOOL_MAX_MODULES     ((SPOOL_HEADER_SIZE - SPOOL_HEADER_FIXED) / sizeof(struct spool_module))
#define SPOOL_RECYCLE_MIN     (16u << 10) /* smaller tails are not worth a chunk */
#define SPOOL_DROPS_PUBLISHED 256u	  /* see spool_header.dropped_floor */

struct spool_module {
	uint64_t bias; /* load bias (l_addr / dlpi_addr) */
	uint64_t base; /* lowest mapped address, for overlap checks */
	char path[SPOOL_MODULE_PATH];
};

struct spool_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint64_t pid;
	uint64_t start_ticks; /* calibration start: ticks and CLOCK_MONOTONIC ns */
	uint64_t start_ns;
	uint32_t clock_tsc; /* 1: ticks are TSC; 0: ns */
	uint32_t nmodules;
	char program[256];
	/* A later calibration point, updated at each chunk grant, so that a
	 * spool recovered after a crash still yields ticks per second. */
	uint64_t last_ticks;
	uint64_t last_ns;
	/* What the agent records besides hooks, for the flusher (and
	 * fxt-run's recovery): the FXT_LIBC groups (AGENT_G_*) and the
	 * FXT_SAMPLE rate in Hz.  0 in spools of older agents. */
	uint32_t libc_groups;
	uint32_t sample_hz;
	/* Who the process is, for the converter and for liveness checks: a
	 * pid is reused, (pid, start_time) is not.  start_time is field 22 of
	 * /proc/PID/stat (clock ticks since boot): a process under fxt-run
	 * leaves it 0, and fxt-run sets it (compare and swap) when it first
	 * sees the spool, its process alive (pids are handed out in turn: one
	 * is not reused that soon). */
	uint64_t root_pid;   /* FXT_ROOT_PID: the run's root process */
	uint64_t start_time; /* the process's start time; 0 = unknown */
	uint32_t image;	     /* 1 = first image of the pid; N after N-1 execs */
	/* The seal (spool_seal()): SPOOL_OPEN while the process records,
	 * SPOOL_SEALED once it wrote its trailer at seal_off: a sealed spool
	 * holds everything the archive needs, and no byte of it changes. */
	uint32_t state;
	uint64_t seal_off;
	/* Who converts it: SPOOL_OWNER_*, changed by compare and swap only
	 * (spool_claim()), by the process and by fxt-run alike. */
	uint32_t owner;
	/* How the process ended when it did not seal the spool: SPOOL_EXITED
	 * and the status (0-255) once it called _exit() or _Exit() (not
	 * exit(): agent/libc/wrap_proc.c), which flush nothing; 0 when not known
	 * (killed, a crash, a raw exit_group, or an older agent's spool). */
	uint32_t exited;
	/* The first staged chunk (see above), 0: none yet. */
	uint64_t first_staged;
	/* The recording mode (enum fxt_mode) and FXT_BUFFER_SIZE. */
	uint32_t mode;
	/* Why calls were dropped, when not for the size limits: the first
	 * such cause (SPOOL_CAUSE_*) in the process, 0: none; for a recovery,
	 * which has no thread's own (the seal's). */
	uint32_t drop_cause;
	uint64_t buffer_size;
	/* The filters (agent/keep/filter.h): the functions FXT_INCLUDE and
	 * FXT_EXCLUDE matched so far, and FXT_MIN_DURATION in ns, which the
	 * converter applies. */
	uint32_t filter_included;
	uint32_t filter_excluded;
	uint64_t min_duration_ns;
	/* A snapshot (fxt-run --snapshot-if; agent/keep/snapshot.h): this spool is
	 * a copy of its process's flight recorder, number `snapshot` of the
	 * run, taken when a call of the function at snap_addr (or of the libc
	 * function snap_libc_fn - 1, spool/libc_table.h) on thread snap_tid
	 * ended at snap_end_ts (ticks) after snap_dur_ns, over the rule's
	 * snap_limit_ns; snap_rule is the rule as given, cut to fit.  0 in a
	 * process's own spool. */
	uint32_t snapshot;
	uint32_t snap_libc_fn;
	uint64_t snap_addr;
	uint64_t snap_tid;
	uint64_t snap_end_ts;
	uint64_t snap_dur_ns;
	uint64_t snap_limit_ns;
	char snap_rule[48];
	/* Calls dropped so far, for a spool that is never sealed (the
	 * process killed): each thread adds its count at its first drop and
	 * every SPOOL_DROPS_PUBLISHED drops after (so a recovery may miss
	 * fewer than that many a thread), calls lost outside any thread one
	 * by one.  A seal's counts are exact and replace it. */
	uint64_t dropped_floor;
	/* 1 once an acquisition had to wait (a SYNC LOCK_WAITED, WOKEN or
	 * SEM_WAITED record, spool/records.h; set before the record is
	 * written): only then are there sync records to pair into flows
	 * (convert/prepass.h), and the converter reads for them. */
	uint32_t waited;
	uint32_t waited_pad;
	/* The archive the spool was converted into: its inode and size,
	 * written by the converter (convert/convert.h) once the archive is
	 * whole and before it gets its name, which is when the spool goes.
	 * A converter killed between the two leaves both; the next one finds
	 * that archive by these and does not convert the spool again, which
	 * would put the process's events into the run twice.  0: none. */
	uint64_t archive_ino;
	uint64_t archive_size;
	struct spool_module modules[];
};

#define SPOOL_EXITED 0x100u /* spool_header.exited: the low byte is the status */

enum spool_state {
	SPOOL_OPEN = 0,
	SPOOL_SEALED = 1,
};

/* Who converts a sealed spool: the process seals it, then asks whether
 * fxt-run will (run/control.h).  Either side takes it by compare and
 * swap NONE -> LAUNCHER or NONE -> SELF (spool_claim()), so it is
 * converted once; fxt-run takes the spools of dead processes the same way,
 * sealed or not. */
enum spool_owner {
	SPOOL_OWNER_NONE = 0,
	SPOOL_OWNER_LAUNCHER = 1, /* fxt-run (or fxt-run --recover) converts it */
	SPOOL_OWNER_SELF = 2	  /* its process converts it */
};

/* The trailer a sealed spool ends with, at header.seal_off: what the
 * process knew only in memory.  Followed by `nthreads` struct
 * spool_seal_thread. */
#define SPOOL_SEAL_MAGIC 0x4c4145535458462eull /* ".FXTSEAL" */
struct spool_seal {
	uint64_t magic;
	uint64_t size;		   /* bytes, this struct and the threads */
	uint64_t now_ts;	   /* when it was sealed, in ticks */
	uint64_t ticks_per_second; /* its clock rate; 0: measure it (convert.h) */
	uint64_t base_ticks;	   /* its time base (convert/pipeline.h) */
	uint64_t base_ns;
	uint64_t lost; /* calls lost outside any thread's count (never a size limit's) */
	uint64_t nthreads;
	/* The hooks' own cost (agent/calib.h), in thousandths of a tick:
	 * what tracing adds to a call (its hooks against empty ones), the
	 * part of a hook pair inside the call's own interval, a pair of
	 * calls of empty functions (the C library's hooks, when nothing
	 * traces); and the ticks all threads spent taking chunks.  0: not
	 * measured. */
	uint64_t hook_pair_ticks;
	uint64_t hook_inside_ticks;
	uint64_t refill_ticks;
	uint64_t hook_stub_ticks;
};

/* Why calls were dropped, when not for the size limits (FXT_MAX_SIZE,
 * FXT_BUFFER_SIZE: cause 0): the kind, or'ed with an errno where it has
 * one (the low 16 bits).  The converter says it in the drop instant. */
#define SPOOL_CAUSE_ERRNO 0xffffu
#define SPOOL_CAUSE_SPOOL (1u << 16) /* the spool could not be written: | errno */
/* Calls lost outside any thread's count (a sealed spool's `lost`): made
 * before their thread had a buffer.  Never in a spool: the converter's. */
#define SPOOL_CAUSE_NO_BUFFER (2u << 16)
/* Made by a signal handler while its thread was ending: its buffer was
 * being released (agent_tbuf_retire()). */
#define SPOOL_CAUSE_THREAD_END (3u << 16)

struct spool_seal_thread {
	uint32_t serial;
	uint32_t drop_cause; /* why it stopped recording, if not for a size limit */
	uint64_t tid;
	char name[16]; /* "" = unknown */
	uint64_t dropped;
	uint64_t first_drop_ts;
	uint64_t stop_ts;
	uint64_t end_ts;
	uint64_t overwritten; /* calls overwritten (circular mode) */
};

struct spool_chunk {
	uint64_t magic;
	uint64_t size; /* bytes, this header included; a page multiple */
	/* The owning thread's serial in the process; 0: no owner and no
	 * records (a tail recycled by spool_chunk_put()). */
	uint32_t serial;
	uint32_t seq; /* the chunk's number in that thread's sequence */
	uint64_t tid; /* the owning thread's tid (tids are reused: use serial) */
	/* Staged chunks only (see above); 0 in the others. */
	uint64_t dest;	      /* from CHUNK_FULL on: where its copy goes */
	uint64_t next_staged; /* the next staged chunk; 0: the last */
	/* Rings only (see above): the calls its thread had overwritten when
	 * it was stamped; 0 in the others. */
	uint64_t overwritten;
	/* The owning thread's name (see above), NUL-terminated; "": unknown.
	 * Written under the agent's spool lock, so a rename and a new chunk
	 * are never crossed (agent/spool.c). */
	char name[16];
	/* Staged chunks only, 0 in the others; last: the word just before
	 * the first slot, which the exit hook may read for an enter's
	 * (spool/records.h, PAIR), is always below EV_PAIR_FN_MIN. */
	uint32_t state; /* enum chunk_state */
	uint32_t pad;
};
#define SPOOL_CHUNK_HEADER_SIZE sizeof(struct spool_chunk)

enum chunk_state {
	CHUNK_PLAIN = 0,   /* not staged (yet) */
	CHUNK_FILLING = 1, /* its thread writes it */
	CHUNK_FULL = 2,	   /* full; its copy's place is reserved at dest */
	CHUNK_COPYING = 3, /* someone copies it */
	CHUNK_COPIED = 4,  /* the copy at dest is whole: free to refill */
};

_Static_assert(sizeof(struct spool_header) == SPOOL_HEADER_FIXED, "spool header prefix size");
_Static_assert(sizeof(struct spool_chunk) == 80, "chunk header is 80 bytes");

/* Whether a header read from a file is one of a spool this version reads:
 * its magic (written last, so a header being created is not one yet),
 * version, size and module count. */
static inline bool spool_header_ok(const struct spool_header *h)
{
	return h->magic == SPOOL_MAGIC && h->version == SPOOL_VERSION &&
	       h->header_size == SPOOL_HEADER_SIZE && h->nmodules <= SPOOL_MAX_MODULES;
}

/* Whether `c`, read at offset `off` of a spool whose chunks end at `end`,
 * is a chunk header.  Readers stop at the first one that is not: the
 * spool was cut short there. */
static inline bool spool_chunk_ok(const struct spool_chunk *c, uint64_t off, uint64_t end)
{
	return c->magic == SPOOL_CHUNK_MAGIC && c->size >= SPOOL_CHUNK_HEADER_SIZE &&
	       c->size <= end - off && c->size % SPOOL_RECORD_SIZE == 0;
}

/* Whether `s`, read at header.seal_off of a file of `file_size` bytes
 * (which holds the struct itself), is a seal whose threads fit in it. */
static inline bool spool_seal_ok(const struct spool_seal *s, uint64_t seal_off, uint64_t file_size)
{
	return s->magic == SPOOL_SEAL_MAGIC && s->nthreads <= (file_size - seal_off - sizeof(*s)) /
								  sizeof(struct spool_seal_thread);
}

/* Compare and swap of a mapped chunk header's state. */
static inline bool spool_chunk_claim(struct spool_chunk *c, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&c->state, &from, to, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* Compare and swap of a mapped header's owner: true when `from` was there
 * and is now `to`. */
static inline bool spool_claim(struct spool_header *h, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&h->owner, &from, to, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

#endif /* FXT_SPOOL_FORMAT_H */
