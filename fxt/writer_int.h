/* The FXT writer's state, shared by the output path (writer.c) and the
 * string and thread tables (tables.c): private to fxt/. */
#ifndef FXT_WRITER_INT_H
#define FXT_WRITER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "fxt/ahead.h"

/* String table of one provider.  ent[], hash[] are indexed by string index
 * (0 unused); bucket[] is an open-addressing table (linear probing) of
 * indices, 0 = free, with twice as many buckets as entries so that probes
 * stay short.  Both grow by doubling until every index 1 .. 0x7fff exists;
 * `next` then wraps and the oldest registration is replaced (FIFO). */
struct strent {
	char *data;   /* owned copy, NULL if the index is unused */
	uint32_t len; /* bytes */
	uint32_t gen; /* the registration's generation, see fxt_writer_string_cached */
};

struct strtab {
	struct strent *ent;
	uint32_t *hash;
	uint16_t *bucket;
	uint32_t cap;  /* entries, buckets = 2 * cap */
	uint16_t next; /* the index the next registration takes */
};

/* Thread table: the same scheme with a fixed size. */
#define THREAD_SLOTS   (FXT_MAX_THREAD_INDEX + 1)
#define THREAD_BUCKETS (2 * THREAD_SLOTS)

struct thrent {
	uint64_t pid, tid;
	uint32_t gen; /* 0 if the index is unused */
};

struct thrtab {
	struct thrent ent[THREAD_SLOTS];
	uint32_t hash[THREAD_SLOTS];
	uint16_t bucket[THREAD_BUCKETS];
	uint16_t next;
};

/* The reader keeps tables per provider, so the writer does too. */
struct provider {
	uint32_t id;
	struct strtab st;
	struct thrtab tt;
};

struct fxt_writer {
	/* Records are gathered in buf (word-aligned) until it is full. */
	uint64_t *buf;
	size_t pos;  /* bytes used; a multiple of 8 between records */
	size_t cap;  /* bytes */
	size_t full; /* bytes: the buffer goes out when it holds this many */
	size_t reserved;
	uint64_t bytes; /* archive bytes produced, uncompressed */
	int err;	/* first error, sticky */

	/* The sink: a descriptor or memory, behind a compressor if any. */
	int fd;
	bool own_fd;
	bool to_mem;
	unsigned char *mem;
	size_t mem_len, mem_cap;
	bool finished;
	struct fxt__zsink *z; /* compress.h, NULL for plain output */
	/* behind.h, or NULL: a plain file's buffers written by a thread
	 * (started when the buffer fills the behind_in-th time, counted
	 * down; 0: not wanted); behind_off is where the buffer's first byte
	 * goes in the file. */
	struct fxt__behind *behind;
	/* ahead.h: the plain file's blocks allocated ahead of its writes
	 * (the writer's and the behind thread's, one at a time). */
	struct fxt__ahead ahead;
	unsigned behind_in;
	uint64_t behind_off;

	struct provider **prov;
	size_t nprov;
	struct provider *cur;
	uint32_t gen; /* last generation handed out, across all providers */
};

/* Empties a table: index 1 is the next to register (tables.c). */
void fxt__strtab_reset(struct strtab *t);
void fxt__thrtab_reset(struct thrtab *t);

#endif /* FXT_WRITER_INT_H */
