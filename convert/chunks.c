/* Reading a spool's chunks (see chunks.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "convert/chunks.h"
#include "common/grow.h"
#include "spool/format.h"

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk_ref *x = a, *y = b;

	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Keeps one chunk of each (serial, seq) in the sorted `v`: the last in
 * the file.  Two exist when a thread's chunk was recycled in place
 * (spool_chunk_drain()): its copy, appended later, is the one to read
 * until the original has been emptied and re-stamped. */
static size_t drop_copies(struct chunk_ref *v, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < len; i++) {
		if (i + 1 < len && v[i + 1].serial == v[i].serial && v[i + 1].seq == v[i].seq)
			continue;
		v[out++] = v[i];
	}
	return out;
}

int conv_chunks_scan(int fd, uint64_t end, struct chunk_ref **out, size_t *n)
{
	struct chunk_ref *v = NULL;
	size_t len = 0, cap = 0;
	uint64_t off = SPOOL_HEADER_SIZE;

	while (off + SPOOL_CHUNK_HEADER_SIZE <= end) {
		struct spool_chunk c;
		ssize_t got = pread(fd, &c, sizeof(c), (off_t)off);
		if (got != (ssize_t)sizeof(c) || !spool_chunk_ok(&c, off, end))
			break;
		if (c.serial) {
			if (fxt__grow((void **)&v, &cap, len + 1, sizeof(*v)) < 0) {
				free(v);
				return -ENOMEM;
			}
			v[len].off = off;
			v[len].size = c.size;
			v[len].serial = c.serial;
			v[len].seq = c.seq;
			v[len].tid = c.tid;
			v[len].overwritten = c.overwritten;
			memcpy(v[len].name, c.name, sizeof(v[len].name));
			v[len].name[sizeof(v[len].name) - 1] = '\0';
			len++;
		}
		off += c.size;
	}
	if (len) {
		qsort(v, len, sizeof(*v), chunk_cmp);
		len = drop_copies(v, len);
	}
	*out = v;
	*n = len;
	return 0;
}

int conv_chunk_read(int fd, const void *map, uint64_t map_len, const struct chunk_ref *c,
		    uint64_t off, uint64_t *buf, const uint64_t **start, const uint64_t **stop)
{
	uint64_t end = c->off + c->size;
	size_t want = end - off < READ_BLOCK ? (size_t)(end - off) : READ_BLOCK;
	ssize_t got;

	if (map && end <= map_len && off < end) {
		uint64_t len = (end - off) - (end - off) % SPOOL_RECORD_SIZE;

		if (!len)
			return -EIO;
		*start = (const uint64_t *)((const char *)map + off);
		*stop = *start + len / 8;
		return 0;
	}
	*start = buf;
	do
		got = pread(fd, buf, want, (off_t)off);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got < 0 ? -errno : -EIO;
	got -= got % SPOOL_RECORD_SIZE;
	if (!got)
		return -EIO;
	*stop = buf + got / 8;
	return 0;
}

/* A mapped spool smaller than this is unmapped whole right after its
 * conversion: its pages are not let go of chunk by chunk (a system call a
 * chunk; a short process's spool has one or two). */
#define CHUNK_DONE_MIN_MAP (8u << 20)

void conv_chunk_done(const void *map, uint64_t map_len, const struct chunk_ref *c)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = c->off - c->off % page, hi = c->off + c->size;

	if (!map || hi > map_len || map_len < CHUNK_DONE_MIN_MAP)
		return;
	hi -= hi % page; /* a page the next chunk may share stays */
	if (hi > lo)
		(void)madvise((char *)(uintptr_t)map + lo, (size_t)(hi - lo), MADV_DONTNEED);
}
