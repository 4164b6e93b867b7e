/* A plain archive's disk blocks allocated ahead of its writes (see
 * ahead.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fxt/ahead.h"

/* Files smaller than this are written as they were; past it, blocks are
 * allocated this many bytes ahead (at most this many of them unused
 * between a write and fxt__ahead_trim()). */
#define FXT__AHEAD_FROM (4u << 20)
#define FXT__AHEAD_STEP (16u << 20)
#define EXT4_MAGIC	0xEF53 /* statfs f_type of ext2, ext3 and ext4 alike */

static void learn(struct fxt__ahead *a, int fd)
{
	struct statfs sf;
	struct stat st;
	off_t pos;

	a->fd = fd;
	a->known = true;
	a->off = true;
	a->end = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fstatfs(fd, &sf) < 0 ||
	    sf.f_type != EXT4_MAGIC)
		return;
	pos = lseek(fd, 0, SEEK_CUR);
	if (pos < 0 || (fcntl(fd, F_GETFL) & O_APPEND))
		return;
	a->pos = (uint64_t)pos;
	a->end = (uint64_t)pos;
	a->off = false;
}

void fxt__ahead_write(struct fxt__ahead *a, int fd, size_t len)
{
	if (!a->known || a->fd != fd)
		learn(a, fd);
	if (a->off)
		return;
	if (a->pos + len > a->end && a->pos + len >= FXT__AHEAD_FROM) {
		uint64_t from = a->end > a->pos ? a->end : a->pos;
		uint64_t want = a->pos + len + FXT__AHEAD_STEP - from;

		if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)want) < 0)
			a->off = true; /* not supported, or no space: as before */
		else
			a->end = from + want;
	}
	a->pos += len;
}

int fxt__ahead_trim(struct fxt__ahead *a, int fd)
{
	struct stat st;

	if (!a->known || a->fd != fd || a->end <= a->pos)
		return 0;
	a->end = a->pos;
	if (fstat(fd, &st) < 0 || ftruncate(fd, st.st_size) < 0)
		return -errno;
	return 0;
}
