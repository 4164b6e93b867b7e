/* The trace session (see session.h): the shared file's layout, mapping,
 * stream table and write log.  No agent state here: fxt-run and the unit
 * tests use it as it is. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"
#include "run/names.h"
#include "run/session.h"

_Static_assert(sizeof(struct session_hdr) == 4096, "the header fills one page");
_Static_assert((SESSION_STREAMS & (SESSION_STREAMS - 1)) == 0, "a power of two");

#define STREAMS_OFF ((size_t)sizeof(struct session_hdr))
#define LOG_OFF	    (STREAMS_OFF + (size_t)SESSION_STREAMS * sizeof(struct session_stream))
#define FILE_SIZE   (LOG_OFF + (size_t)SESSION_LOG_SLOTS * sizeof(struct session_write))

void run_session_path(char *buf, size_t cap, const char *output, long root_pid)
{
	run_pid_file_name(buf, cap, output, root_pid, RUN_SESSION_SUFFIX);
}

/* ------------------------------------------------------------ mapping */

/* Where the tables of a header with these sizes lie in a file of `size`
 * bytes; false if they do not fit. */
static bool layout(struct session *s, void *base, size_t size, uint64_t nstreams, uint64_t nlog)
{
	size_t log_off = STREAMS_OFF + nstreams * sizeof(struct session_stream);

	if (nstreams > size / sizeof(struct session_stream) ||
	    nlog > size / sizeof(struct session_write) || log_off > size ||
	    nlog * sizeof(struct session_write) > size - log_off)
		return false;
	s->hdr = base;
	s->streams = (struct session_stream *)((char *)base + STREAMS_OFF);
	s->log = (struct session_write *)((char *)base + log_off);
	s->size = size;
	return true;
}

int run_session_map(struct session *s, const char *path)
{
	struct session_hdr *h;
	struct stat st;
	uint64_t magic;
	void *base;
	int fd, err = 0;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* The file is all zeros when new: a valid empty session.  Growing it
	 * only ever adds zeros, so racing creators do no harm. */
	if (fstat(fd, &st) != 0 || (st.st_size < (off_t)FILE_SIZE && ftruncate(fd, FILE_SIZE) != 0))
		err = -errno;
	else if (st.st_size > (off_t)FILE_SIZE)
		err = -EPROTO;
	base = err ? MAP_FAILED : mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!err && base == MAP_FAILED)
		err = -errno;
	close(fd);
	if (err)
		return err;

	/* Every process stores the same sizes, then publishes the magic. */
	h = base;
	__atomic_store_n(&h->version, SESSION_VERSION, __ATOMIC_RELAXED);
	__atomic_store_n(&h->nstreams, SESSION_STREAMS, __ATOMIC_RELAXED);
	__atomic_store_n(&h->nlog, SESSION_LOG_SLOTS, __ATOMIC_RELAXED);
	magic = 0;
	if (!__atomic_compare_exchange_n(&h->magic, &magic, SESSION_MAGIC, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE) &&
	    magic != SESSION_MAGIC) {
		munmap(base, FILE_SIZE);
		return -EPROTO;
	}
	layout(s, base, FILE_SIZE, SESSION_STREAMS, SESSION_LOG_SLOTS);
	return 0;
}

void run_session_unmap(struct session *s)
{
	if (s->hdr)
		munmap(s->hdr, s->size);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------ keys */

static uint64_t nonzero_key(uint64_t k)
{
	k &= SESSION_KEY_MASK;
	return k ? k : 1;
}

uint64_t run_session_pipe_key(uint64_t dev, uint64_t ino)
{
	/* Pipes and sockets live on small anonymous devices with inode
	 * numbers below 2^32 in practice: keep those exact (no collision
	 * between two live pipes), and fold in the rest. */
	return nonzero_key((ino & 0xffffffffull) ^ ((dev & 0xffffull) << 32) ^ ((ino >> 32) << 20) ^
			   ((dev >> 16) << 40));
}

uint64_t run_session_addr_key(const void *from, size_t from_len, const void *to, size_t to_len)
{
	uint64_t h = fxt__hash_more(FXT__HASH_SEED, from, from_len);

	h = fxt__hash_more(h, to, to_len);
	/* Bit 47 set: never equal to a pipe key of an inode below 2^32 on
	 * a device below 2^15. */
	return nonzero_key(fxt__hash_mix(h) | (1ull << 47));
}

/* ------------------------------------------------------------ streams */

struct session_stream *run_session_stream(struct session *s, uint64_t key)
{
	uint32_t mask = SESSION_STREAMS - 1, i = (uint32_t)fxt__hash_mix(key) & mask;

	if (!s->hdr || !key)
		return NULL;
	for (uint32_t probes = 0; probes < SESSION_STREAMS; probes++, i = (i + 1) & mask) {
		struct session_stream *st = &s->streams[i];
		uint64_t k = __atomic_load_n(&st->key, __ATOMIC_ACQUIRE);

		if (k == key)
			return st;
		if (k == 0 && __atomic_compare_exchange_n(&st->key, &k, key, false,
							  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return st;
		if (k == key) /* another process took it for the same key */
			return st;
	}
	return NULL;
}

struct session_stream *run_session_find_stream(const struct session *s, uint64_t key)
{
	uint32_t mask = SESSION_STREAMS - 1, i = (uint32_t)fxt__hash_mix(key) & mask;

	if (!s->hdr || !key)
		return NULL;
	for (uint32_t probes = 0; probes < SESSION_STREAMS; probes++, i = (i + 1) & mask) {
		uint64_t k = __atomic_load_n(&s->streams[i].key, __ATOMIC_ACQUIRE);

		if (k == key)
			return &s->streams[i];
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* ------------------------------------------------------------ the log */

int run_session_log_write(struct session *s, const struct session_write *w, bool *first)
{
	uint64_t i;
	struct session_write *e;

	*first = false;
	if (!s->hdr)
		return -ENOSPC;
	if (__atomic_load_n(&s->hdr->log_full, __ATOMIC_RELAXED))
		return -ENOSPC;
	i = __atomic_fetch_add(&s->hdr->log_next, 1, __ATOMIC_RELAXED);
	if (i >= SESSION_LOG_SLOTS) {
		*first = __atomic_exchange_n(&s->hdr->log_full, 1, __ATOMIC_RELAXED) == 0;
		return -ENOSPC;
	}
	/* The key is stored last: a reader takes an entry whose key is set
	 * as complete (a writer killed half-way leaves key 0: skipped). */
	e = &s->log[i];
	e->off = w->off;
	e->len = w->len;
	e->flow_id = w->flow_id;
	__atomic_store_n(&e->key, w->key, __ATOMIC_RELEASE);
	return 0;
}

static int cmp_write(const void *a, const void *b)
{
	const struct session_write *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

int run_session_log_mark(const char *path, uint64_t *mark)
{
	struct session_hdr h;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = pread(fd, &h, sizeof(h), 0);
	close(fd);
	if (got != (ssize_t)sizeof(h) || h.magic != SESSION_MAGIC)
		return -EPROTO;
	*mark = h.log_next;
	return 0;
}

int run_session_open_read(struct session *s, const char *path)
{
	const struct session_hdr *h;
	struct stat st;
	void *base;
	int fd, err = 0;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct session_hdr)) {
		close(fd);
		return -EPROTO;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	err = base == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	h = base;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SESSION_MAGIC ||
	    h->version != SESSION_VERSION ||
	    !layout(s, base, (size_t)st.st_size, h->nstreams, h->nlog)) {
		munmap(base, (size_t)st.st_size);
		memset(s, 0, sizeof(*s));
		return -EPROTO;
	}
	return 0;
}

uint64_t run_session_mark(const struct session *s)
{
	return __atomic_load_n(&s->hdr->log_next, __ATOMIC_ACQUIRE);
}

int run_session_writes(const struct session *s, struct session_write **out, size_t *n)
{
	uint64_t count = __atomic_load_n(&s->hdr->log_next, __ATOMIC_RELAXED);
	struct session_write *v;
	size_t len = 0;

	*out = NULL;
	*n = 0;
	if (count > s->hdr->nlog)
		count = s->hdr->nlog;
	v = malloc((count ? count : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t key = __atomic_load_n(&s->log[i].key, __ATOMIC_ACQUIRE);

		if (!key)
			continue;
		v[len] = s->log[i];
		v[len++].key = key;
	}
	qsort(v, len, sizeof(*v), cmp_write);
	*out = v;
	*n = len;
	return 0;
}

int run_session_load_writes(const char *path, struct session_write **out, size_t *n)
{
	struct session s;
	int err = run_session_open_read(&s, path);

	*out = NULL;
	*n = 0;
	if (err < 0)
		return err;
	err = run_session_writes(&s, out, n);
	run_session_unmap(&s);
	return err;
}
