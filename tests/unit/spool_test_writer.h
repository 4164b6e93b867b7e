/* A spool writer for the converter's unit tests: threads' records in
 * chunks laid out as spool/format.h says, without the agent.  Private to
 * the converter tests.
 *
 * Each thread fills chunks of the size given to test_spool_reset(), taken
 * in the order the threads need them (so the threads' chunks interleave
 * in the file, as the agent's do).  With a bound on the chunks' bytes, a
 * thread that needs a chunk past it stops recording, as the agent's
 * FXT_MAX_SIZE makes it: its stop and first drop are the time of the
 * record that did not fit, and every call it makes from then on (an enter
 * hook, a tagged record) is one dropped record.  Each chunk carries its
 * thread's name when it was taken.  A record of several slots
 * never straddles two chunks.  Timestamps come from a counter
 * (test_ticks()), one tick per hook. */
#ifndef FXT_TESTS_SPOOL_TEST_WRITER_H
#define FXT_TESTS_SPOOL_TEST_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spool/format.h"
#include "spool/records.h"

/* One recording thread: zero it, then record on it.  Its serial is given
 * at its first record; `tid` and the drop fields are what the seal would
 * say of it (tests may set them). */
struct test_thread {
	struct test_thread *next;
	uint32_t serial;
	uint32_t seq; /* chunks taken */
	uint64_t tid;
	uint64_t dropped, first_drop_ts, stop_ts, end_ts;
	char name[16]; /* stamped into each chunk it takes, as the agent does */
	bool stopped;
	uint64_t *pos, *end; /* free slots of its current chunk */
};

struct test_chunk {
	struct spool_chunk *c; /* chunk_size bytes, header first */
	struct test_thread *owner;
};

static struct {
	uint64_t chunk_size, max_size, granted, clock;
	uint32_t next_serial;
	struct test_thread *threads; /* newest first */
	struct test_chunk *chunks;   /* in the order taken */
	size_t nchunks, cap;
} test_spool;

static inline uint64_t test_ticks(void)
{
	return ++test_spool.clock;
}

/* Forgets every chunk and thread: a fresh spool of `chunk`-byte chunks,
 * bounded to `max` bytes of chunks (0: no bound). */
static inline void test_spool_reset(uint64_t chunk, uint64_t max)
{
	for (size_t i = 0; i < test_spool.nchunks; i++)
		free(test_spool.chunks[i].c);
	free(test_spool.chunks);
	memset(&test_spool, 0, sizeof(test_spool));
	test_spool.chunk_size = chunk;
	test_spool.max_size = max;
}

static inline void test_spool_cleanup(void)
{
	test_spool_reset(0, 0);
}

/* Room for `n` slots on t: a new chunk when its own has none left.
 * NULL when the record is dropped. */
static inline uint64_t *test_reserve(struct test_thread *t, unsigned n, uint64_t ts)
{
	struct test_chunk *k;

	if (!t->serial) {
		t->serial = ++test_spool.next_serial;
		t->next = test_spool.threads;
		test_spool.threads = t;
	}
	if (t->stopped)
		return NULL;
	if (!t->pos || t->pos + 2 * n > t->end) {
		uint64_t size = test_spool.chunk_size;
		if ((test_spool.max_size && test_spool.granted + size > test_spool.max_size) ||
		    SPOOL_CHUNK_HEADER_SIZE + n * SPOOL_RECORD_SIZE > size) {
			t->stopped = true;
			t->stop_ts = ts;
			return NULL;
		}
		if (test_spool.nchunks == test_spool.cap) {
			test_spool.cap = test_spool.cap ? 2 * test_spool.cap : 64;
			test_spool.chunks =
			    realloc(test_spool.chunks, test_spool.cap * sizeof(*test_spool.chunks));
			if (!test_spool.chunks)
				abort();
		}
		k = &test_spool.chunks[test_spool.nchunks++];
		k->c = calloc(1, size);
		if (!k->c)
			abort();
		k->owner = t;
		k->c->magic = SPOOL_CHUNK_MAGIC;
		k->c->size = size;
		k->c->serial = t->serial;
		k->c->seq = t->seq++;
		memcpy(k->c->name, t->name, sizeof(k->c->name));
		test_spool.granted += size;
		t->pos = (uint64_t *)((char *)k->c + SPOOL_CHUNK_HEADER_SIZE);
		t->end = (uint64_t *)((char *)k->c + size);
	}
	t->pos += 2 * n;
	return t->pos - 2 * n;
}

static inline void test_drop(struct test_thread *t, uint64_t ts)
{
	if (!t->first_drop_ts)
		t->first_drop_ts = ts;
	t->dropped++;
}

/* One hook record, `addr` with SPOOL_EXIT_BIT for an exit. */
static inline void test_hook(struct test_thread *t, uint64_t addr)
{
	uint64_t ts = test_ticks(), *p = test_reserve(t, 1, ts);

	if (p) {
		p[0] = ts;
		p[1] = addr;
	} else if (!(addr & SPOOL_EXIT_BIT)) {
		test_drop(t, ts);
	}
}

/* One record of `n` slots (`w`: 2n words), as the agent's wrappers write
 * them; a dropped one counts as a dropped call. */
static inline void test_record(struct test_thread *t, const uint64_t *w, unsigned n)
{
	uint64_t *p = test_reserve(t, n, 0);

	if (p)
		memcpy(p, w, n * SPOOL_RECORD_SIZE);
	else
		test_drop(t, t->stop_ts);
}

/* The thread exited now. */
static inline void test_retire(struct test_thread *t)
{
	t->end_ts = test_ticks();
}

/* The spool as a file: a header naming `pid`, then the chunks (each
 * stamped with its thread's tid as it is now).  Returns a descriptor (the
 * caller closes it) and the end of the chunks in *end, or -1. */
static inline int test_spool_fd(uint64_t pid, uint64_t *end)
{
	struct spool_header *h = calloc(1, SPOOL_HEADER_SIZE);
	int fd = memfd_create("spool", MFD_CLOEXEC);
	uint64_t off = SPOOL_HEADER_SIZE;

	if (!h || fd < 0)
		goto fail;
	h->magic = SPOOL_MAGIC;
	h->version = SPOOL_VERSION;
	h->header_size = SPOOL_HEADER_SIZE;
	h->pid = pid;
	if (pwrite(fd, h, SPOOL_HEADER_SIZE, 0) != SPOOL_HEADER_SIZE)
		goto fail;
	for (size_t i = 0; i < test_spool.nchunks; i++) {
		struct spool_chunk *c = test_spool.chunks[i].c;
		c->tid = test_spool.chunks[i].owner->tid;
		if (pwrite(fd, c, c->size, (off_t)off) != (ssize_t)c->size)
			goto fail;
		off += c->size;
	}
	free(h);
	*end = off;
	return fd;
fail:
	perror("test spool");
	free(h);
	if (fd >= 0)
		close(fd);
	return -1;
}

#endif /* FXT_TESTS_SPOOL_TEST_WRITER_H */
