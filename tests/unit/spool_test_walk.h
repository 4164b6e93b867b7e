/* Reading back a spool file the agent wrote, for the agent's unit tests:
 * its chain of chunks in file order, from the end of the header, each a
 * chunk header then its slots (spool/format.h).  The chain ends at the
 * end of the file or at the first place that holds no chunk (a short
 * read, no chunk magic, a size of 0).  Private to the tests. */
#ifndef FXT_TESTS_SPOOL_TEST_WALK_H
#define FXT_TESTS_SPOOL_TEST_WALK_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/format.h"
#include "spool/records.h"

struct spool_walk {
	int fd;
	uint64_t file_size;
	uint64_t off;	      /* the current chunk's offset ... */
	struct spool_chunk c; /* ... and its header */
	uint64_t next;	      /* where the next one would start */
};

/* Opens the spool at `path` for a walk: 0, or -1 (nothing to walk). */
static inline int spool_walk_open(struct spool_walk *w, const char *path)
{
	struct stat st;

	w->fd = open(path, O_RDONLY | O_CLOEXEC);
	w->next = SPOOL_HEADER_SIZE;
	if (w->fd < 0 || fstat(w->fd, &st) < 0) {
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
		return -1;
	}
	w->file_size = (uint64_t)st.st_size;
	return 0;
}

/* The next chunk of the chain, in w->off and w->c; false at its end. */
static inline bool spool_walk_next(struct spool_walk *w)
{
	if (w->next >= w->file_size ||
	    pread(w->fd, &w->c, sizeof(w->c), (off_t)w->next) != (ssize_t)sizeof(w->c) ||
	    w->c.magic != SPOOL_CHUNK_MAGIC || !w->c.size)
		return false;
	w->off = w->next;
	w->next += w->c.size;
	return true;
}

static inline void spool_walk_close(struct spool_walk *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* The slots of the chunk of `size` bytes at `off` of `fd`, two words each,
 * in a malloc'd array of *n slots; NULL on a short read (or no memory).
 * Slot i lies at off + SPOOL_CHUNK_HEADER_SIZE + i * SPOOL_RECORD_SIZE. */
static inline uint64_t *spool_chunk_slots(int fd, uint64_t off, uint64_t size, size_t *n)
{
	size_t len = size > SPOOL_CHUNK_HEADER_SIZE ? size - SPOOL_CHUNK_HEADER_SIZE : 0;
	uint64_t *v = malloc(len ? len : 1);

	*n = len / SPOOL_RECORD_SIZE;
	if (v && pread(fd, v, len, (off_t)(off + SPOOL_CHUNK_HEADER_SIZE)) != (ssize_t)len) {
		free(v);
		v = NULL;
	}
	return v;
}

#endif /* FXT_TESTS_SPOOL_TEST_WALK_H */
