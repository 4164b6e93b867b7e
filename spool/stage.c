/* Copying a staged chunk to its reserved place (see stage.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "spool/stage.h"

int spool_write_all(int fd, const void *buf, uint64_t size, uint64_t off)
{
	while (size) {
		ssize_t n = pwrite(fd, buf, size, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf = (const char *)buf + n;
		off += (uint64_t)n;
		size -= (uint64_t)n;
	}
	return 0;
}

int spool_stage_copy(int fd, const struct spool_chunk *c, uint64_t off, const void *map)
{
	struct spool_chunk h = *c;
	uint64_t body = c->size - SPOOL_CHUNK_HEADER_SIZE;
	int err;

	if (c->dest <= off || c->size < SPOOL_CHUNK_HEADER_SIZE)
		return -EINVAL;
	err = spool_write_all(fd, (const char *)map + SPOOL_CHUNK_HEADER_SIZE, body,
			      c->dest + SPOOL_CHUNK_HEADER_SIZE);
	if (err < 0)
		return err;
	h.state = CHUNK_PLAIN;
	h.dest = 0;
	h.next_staged = 0;
	return spool_write_all(fd, &h, sizeof(h), c->dest);
}
