/* The spool: a per-process MAP_SHARED file the threads' buffers are carved
 * from.  Private to agent/.
 *
 * Layout (little-endian, all offsets in bytes):
 *
 *   0                  struct spool_header (SPOOL_HEADER_SIZE bytes): pid,
 *                      program, clock calibration start, module list.
 *   SPOOL_HEADER_SIZE  chunks, back to back, each starting with a
 *                      struct spool_chunk giving its size and owner; the
 *                      next chunk starts at offset + size.
 *
 * A chunk's records follow its header: 16 bytes each,
 *
 *	struct spool_record {
 *		uint64_t ts;   // raw ticks
 *		uint64_t addr; // function address; bit 63 set = exit hook
 *	};
 *
 * and end at the first record whose addr is 0 (the file is created sparse,
 * so unwritten space reads as zeros) or at the chunk's end.  Because the
 * page cache keeps a MAP_SHARED file's data when the process dies, the same
 * layout lets fxt-run recover the trace of a killed process.
 *
 * Chunks are granted under a mutex (cold path).  Full chunks are unmapped
 * during the run; the unused, page-aligned tail of a retired thread's chunk
 * is split off as a chunk of its own and recycled for the next thread that
 * needs one, so programs that start many short threads do not grow the
 * spool by a chunk per thread.
 */
#ifndef FXT_AGENT_SPOOL_H
#define FXT_AGENT_SPOOL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SPOOL_MAGIC	  0x4c4f4f5053545846ull /* "FXTSPOOL" */
#define SPOOL_VERSION	  1u
#define SPOOL_HEADER_SIZE (64u << 10)
#define SPOOL_CHUNK_MAGIC 0x4b4e554843545846ull /* "FXTCHUNK" */
#define SPOOL_RECORD_SIZE 16u
#define SPOOL_EXIT_BIT	  (1ull << 63)
#define SPOOL_MODULE_PATH 240u
#define SPOOL_MAX_MODULES ((SPOOL_HEADER_SIZE - 512u) / sizeof(struct spool_module))
#define SPOOL_RECYCLE_MIN (16u << 10) /* smaller tails are not worth a chunk */

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
	uint8_t reserved[512 - 8 - 4 - 4 - 8 - 8 - 8 - 4 - 4 - 256 - 8 - 8 - 4 - 4];
	struct spool_module modules[];
};

struct spool_chunk {
	uint64_t magic;
	uint64_t size;	 /* bytes, this header included; a page multiple */
	uint32_t serial; /* the owning thread's serial number in the process */
	uint32_t seq;	 /* the chunk's number in that thread's sequence */
	uint64_t tid;	 /* the owning thread's tid (tids are reused: use serial) */
	uint64_t reserved[4];
};
#define SPOOL_CHUNK_HEADER_SIZE sizeof(struct spool_chunk)

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
	bool closed; /* after the flush: grant nothing */
	bool failed; /* creation failed: grant nothing */
	/* Modules loaded so far, mirrored into the header once it exists.
	 * Last: spool_init() resets everything before it. */
	unsigned nmods;
	struct spool_module mods[SPOOL_MAX_MODULES];
};

/* Initialises `sp` (no file yet).  Sizes come from the caller (the config). */
void spool_init(struct spool *sp, const char *path, uint64_t chunk_size, uint64_t buffer_size,
		uint64_t max_size);

/* Grants, maps (pre-faulted) and stamps a chunk for thread (serial, tid).
 * Returns 0, -ENOSPC past max_size, -ESHUTDOWN after spool_close_grants(),
 * or another -errno. */
int spool_chunk_get(struct spool *sp, uint32_t serial, uint64_t tid, uint32_t seq,
		    struct spool_map *out);

/* Unmaps a chunk.  With `used` < its size (a retiring thread), splits the
 * page-aligned unused tail off for recycling. */
void spool_chunk_put(struct spool *sp, struct spool_map *m, uint64_t used, bool recycle);

/* Records a loaded module (deduplicated by path and bias), in sp->mods and
 * in the header.  Returns 1 when it was new, 0 when known, -ENOSPC. */
int spool_add_module(struct spool *sp, const char *path, uint64_t bias, uint64_t base);

/* Stops granting chunks; returns the spool size at that point. */
uint64_t spool_close_grants(struct spool *sp);

/* Opens the spool for reading (the caller closes it), or -errno. */
int spool_fd(struct spool *sp);

/* Unmaps the header and unlinks the file. */
void spool_destroy(struct spool *sp);

/* After fork, in the child: forgets the parent's spool without touching the
 * file (the parent still uses it) and re-initialises for `path`. */
void spool_forget(struct spool *sp, const char *path);

#endif /* FXT_AGENT_SPOOL_H */
