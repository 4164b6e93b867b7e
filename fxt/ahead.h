/* A plain archive's disk blocks allocated ahead of its writes (ahead.c),
 * private to fxt/: the writer's own writes and the thread writing behind
 * (behind.c) both go through it.  What it is for: ext4 reserves each 4 KiB
 * block of a buffered write() into new space one at a time (delayed
 * allocation: a reservation, a quota charge, an extent-status entry for
 * every block), which was most of the kernel's side of writing an archive
 * of hundreds of MB; blocks allocated beforehand with fallocate() (one
 * extent a call) are written into as they are (bench/README.md, "Archive
 * blocks allocated ahead"). */
#ifndef FXT_AHEAD_H
#define FXT_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One descriptor's state: zeroed, it knows nothing yet. */
struct fxt__ahead {
	int fd;	      /* the descriptor it was last used with */
	bool known;   /* pos and end are fd's */
	bool off;     /* not a regular file on ext4, or fallocate() failed */
	uint64_t pos; /* where the next write() goes */
	uint64_t end; /* blocks allocated up to here */
};

/* Before a write() of `len` bytes to `fd` at its offset: allocates the
 * blocks past what is allocated, FXT__AHEAD_STEP bytes at a time (without
 * changing the file's size), once the file holds FXT__AHEAD_FROM bytes (a
 * small archive is left as it was), on ext4 only.  Never fails: where it
 * cannot, the write allocates as it would have. */
void fxt__ahead_write(struct fxt__ahead *a, int fd, size_t len);

/* After the last write to `fd`: gives back the blocks allocated past the
 * file's end (a truncation to its size; ext4 frees them).  0 or -errno;
 * nothing when nothing was allocated ahead. */
int fxt__ahead_trim(struct fxt__ahead *a, int fd);

#endif /* FXT_AHEAD_H */
