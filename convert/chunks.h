/* Reading a spool's chunks (spool/format.h) for the conversion: the chain of
 * chunk headers, sorted into each thread's sequence, and their records in
 * blocks.  Private to convert/. */
#ifndef FXT_CONVERT_CHUNKS_H
#define FXT_CONVERT_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

/* Chunks are read in blocks of this size (pread: cheaper here than
 * mapping each; a spool mapped whole is read in place, a chunk at a
 * time). */
#define READ_BLOCK (256u << 10)

/* A chunk with records: where it is, whose it is. */
struct chunk_ref {
	uint64_t off, size;
	uint32_t serial, seq;
	uint64_t tid;
	char name[16];	      /* its thread's name then, NUL-terminated; "": unknown */
	uint64_t overwritten; /* a ring's chunk: its thread's count then */
};

/* The chunks of the spool open as `fd` whose chunks end at `end`, owned
 * ones only, sorted by thread serial then sequence (malloc'd, or NULL
 * with *n = 0).  Walks the chain from the header on and stops quietly at
 * the first bad chunk header (a spool cut short).  0 or -ENOMEM. */
int conv_chunks_scan(int fd, uint64_t end, struct chunk_ref **out, size_t *n);

/* The block of chunk `c` that starts at `off`: its whole slots, from
 * *start to *stop.  In `map` (the spool's first map_len bytes mapped, or
 * NULL) when it holds them: the rest of the chunk, where it is; else read
 * into `buf` (READ_BLOCK bytes, *start = buf) from the file open as `fd`.
 * 0 or -errno (-EIO when nothing could be read). */
int conv_chunk_read(int fd, const void *map, uint64_t map_len, const struct chunk_ref *c,
		    uint64_t off, uint64_t *buf, const uint64_t **start, const uint64_t **stop);

/* Chunk `c` was read through `map` (as conv_chunk_read() takes it) and is
 * done with: its pages leave the process (they stay in the page cache), so
 * that a converter mapping a spool of gigabytes stays as small as one
 * reading it block by block.  Nothing when it was not in the map. */
void conv_chunk_done(const void *map, uint64_t map_len, const struct chunk_ref *c);

#endif /* FXT_CONVERT_CHUNKS_H */
