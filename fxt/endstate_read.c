/* The end state (include/fxt/endstate.h), the reader's side: the
 * trailer found at the file's end (plain, gzip or zstd), the state read
 * (inflated when compressed), checked and parsed; nothing in it is
 * trusted before it checks (a damaged or foreign file has none). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include <fxt/endstate.h>
#include <fxt/format.h>

uint64_t fxt_end_check(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h ^ n;
}

struct rcur {
	const unsigned char *p;
	size_t left;
	bool bad;
};

static uint64_t get64(struct rcur *c)
{
	uint64_t v = 0;

	if (c->bad || c->left < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return v;
}

static const char *get_str(struct rcur *c, uint32_t *len)
{
	const char *s;

	if (c->bad || c->left < 4) {
		c->bad = true;
		return "";
	}
	memcpy(len, c->p, 4);
	if (*len > c->left - 4) {
		c->bad = true;
		return "";
	}
	s = (const char *)c->p + 4;
	c->p += 4 + (size_t)*len;
	c->left -= 4 + (size_t)*len;
	return s;
}

void fxt_end_state_free(struct fxt_end_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; st->threads && i < st->nthreads; i++) {
		free((void *)st->threads[i].frames);
		free((void *)st->threads[i].strings);
		free((void *)st->threads[i].threadrefs);
	}
	free(st->threads);
	free(st->bytes);
	free(st);
}

/* A count of things of at least `each` bytes: no more than are left. */
static size_t get_count(struct rcur *c, size_t each)
{
	uint64_t n = get64(c);

	if (c->bad || n > c->left / each) {
		c->bad = true;
		return 0;
	}
	return (size_t)n;
}

static int parse_thread(struct rcur *c, struct fxt_end_thread *t)
{
	struct fxt_end_frame *fr;
	struct fxt_end_string *ss;
	struct fxt_end_threadref *tr;

	t->pid = get64(c);
	t->tid = get64(c);
	t->at = get64(c);
	t->items = get64(c);
	t->any_before = get64(c) != 0;
	t->max_ts = get64(c);
	t->last_ns = get64(c);
	t->held = get64(c) != 0;
	t->nframes = get_count(c, 32);
	if (c->bad || (t->held && !t->nframes))
		return -ENOENT;
	t->frames = fr = calloc(t->nframes + 1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	for (size_t i = 0; i < t->nframes; i++) {
		fr[i].begin = get64(c) != 0;
		fr[i].ts = get64(c);
		fr[i].end = get64(c);
		fr[i].category = get_str(c, &fr[i].category_len);
		fr[i].name = get_str(c, &fr[i].name_len);
	}
	t->nstrings = get_count(c, 12);
	if (c->bad)
		return -ENOENT;
	t->strings = ss = calloc(t->nstrings + 1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	for (size_t i = 0; i < t->nstrings; i++) {
		uint64_t index = get64(c);

		ss[i].data = get_str(c, &ss[i].len);
		if (index == 0 || index > FXT_MAX_STRING_INDEX || ss[i].len > FXT_MAX_STRING_LEN)
			c->bad = true;
		ss[i].index = (uint16_t)index;
	}
	t->nthreadrefs = get_count(c, 24);
	if (c->bad)
		return -ENOENT;
	t->threadrefs = tr = calloc(t->nthreadrefs + 1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	for (size_t i = 0; i < t->nthreadrefs; i++) {
		uint64_t index = get64(c);

		tr[i].pid = get64(c);
		tr[i].tid = get64(c);
		if (index == 0 || index > FXT_MAX_THREAD_INDEX)
			c->bad = true;
		tr[i].index = (uint8_t)index;
	}
	return c->bad ? -ENOENT : 0;
}

/* Parses the state in data (malloc()ed), which the state keeps. */
static int parse_owned(unsigned char *data, size_t len, struct fxt_end_state **out)
{
	struct rcur c = { data, len, false };
	struct fxt_end_state *st;
	uint64_t check;
	int rc = -ENOENT;

	*out = NULL;
	if (len < 16) {
		free(data);
		return -ENOENT;
	}
	memcpy(&check, data + len - 8, 8);
	c.left = len - 8;
	if (check != fxt_end_check(data, len - 8) || get64(&c) != FXT_END_STATE_MAGIC) {
		free(data);
		return -ENOENT;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		free(data);
		return -ENOMEM;
	}
	st->bytes = data;
	st->ticks_per_second = get64(&c);
	st->head_end = get64(&c);
	st->start_ns = get64(&c);
	st->end_ns = get64(&c);
	st->items = get64(&c);
	st->nthreads = get_count(&c, 16);
	if (c.bad || !st->nthreads || st->ticks_per_second != 1000000000u)
		goto fail;
	st->threads = calloc(st->nthreads, sizeof(*st->threads));
	if (!st->threads) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < st->nthreads; i++) {
		uint64_t last = get64(&c), n = get64(&c);
		struct rcur sub;

		if (c.bad || n > c.left) {
			rc = -ENOENT;
			goto fail;
		}
		sub = (struct rcur){ c.p, (size_t)n, false };
		c.p += n;
		c.left -= (size_t)n;
		rc = parse_thread(&sub, &st->threads[i]);
		if (rc == 0 && (sub.left || last < st->threads[i].at))
			rc = -ENOENT;
		st->threads[i].last_off = last;
		if (rc < 0)
			goto fail;
	}
	if (c.left) {
		rc = -ENOENT;
		goto fail;
	}
	*out = st;
	return 0;
fail:
	fxt_end_state_free(st);
	return rc;
}

int fxt_end_state_parse(const void *data, size_t len, struct fxt_end_state **out)
{
	unsigned char *copy = malloc(len + 1);

	*out = NULL;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	return parse_owned(copy, len, out);
}

/* ------------------------------------------------------ finding it */

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	unsigned char *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ENOENT;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* The state's blob records, their payloads joined in place. */
static int unblob(unsigned char *d, size_t len, size_t *out)
{
	static const char name[] = FXT_END_STATE_NAME;
	size_t nl = sizeof(name) - 1, nw = (nl + 7) / 8, o = 0, k = 0;

	while (o < len) {
		uint64_t h, size, words;

		if (len - o < 8)
			return -ENOENT;
		memcpy(&h, d + o, 8);
		words = fxt_header_size(h);
		size = fxt_bits(h, 32, 46);
		if (fxt_header_type(h) != FXT_RECORD_BLOB ||
		    fxt_bits(h, 16, 31) != (0x8000u | nl) || fxt_bits(h, 48, 55) != FXT_BLOB_DATA ||
		    words != 1 + nw + (size + 7) / 8 || words * 8 > len - o ||
		    memcmp(d + o + 8, name, nl) != 0)
			return -ENOENT;
		memmove(d + k, d + o + 8 + nw * 8, (size_t)size);
		k += (size_t)size;
		o += (size_t)words * 8;
	}
	*out = k;
	return 0;
}

static int inflate_all(const unsigned char *in, size_t inlen, unsigned char *out, size_t outlen,
		       bool zst)
{
	if (zst) {
		size_t r = ZSTD_decompress(out, outlen, in, inlen);

		return ZSTD_isError(r) || r != outlen ? -ENOENT : 0;
	}
	z_stream z = { 0 };
	int rc;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)inlen;
	z.next_out = out;
	z.avail_out = (uInt)outlen;
	for (;;) {
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END && z.avail_out && z.avail_in) {
			inflateReset(&z); /* the next member */
			continue;
		}
		break;
	}
	rc = (rc == Z_STREAM_END || rc == Z_OK) && z.avail_out == 0 ? 0 : -ENOENT;
	inflateEnd(&z);
	return rc;
}

int fxt_end_state_load(const char *path, struct fxt_end_state **out)
{
	unsigned char head[4], tail[256];
	uint64_t w[FXT_END_TRAILER_WORDS], size, tlen, tstart;
	unsigned char *buf = NULL, *z = NULL;
	size_t n;
	struct stat sb;
	bool gz, zst;
	int fd, rc = -ENOENT;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size < 64 ||
	    pread_all(fd, head, 4, 0) < 0)
		goto out;
	size = (uint64_t)sb.st_size;
	gz = head[0] == 0x1f && head[1] == 0x8b;
	zst = head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd;
	/* The trailer's unit: its size, and where its words end. */
	tlen = gz ? 26 + 48 : zst ? 8 + 48 : 8 * (1 + 2 + FXT_END_TRAILER_WORDS);
	if (size < tlen || pread_all(fd, tail, (size_t)tlen, size - tlen) < 0)
		goto out;
	tstart = size - tlen;
	memcpy(w, tail + tlen - (gz ? 10 : 0) - 48, 48);
	if (gz) {
		static const unsigned char g[] = { 0x1f, 0x8b, 8,  4, 0,   0,	0,  0,
						   0,	 255,  52, 0, 'F', 'X', 48, 0 };

		if (memcmp(tail, g, sizeof(g)) != 0 || tail[tlen - 10] != 3 || tail[tlen - 9] != 0)
			goto out;
	} else if (zst) {
		uint32_t magic, len;

		memcpy(&magic, tail, 4);
		memcpy(&len, tail + 4, 4);
		if (magic != 0x184D2A50u || len != 48)
			goto out;
	} else {
		static const char name[] = FXT_END_TRAILER_NAME;
		uint64_t h;

		memcpy(&h, tail, 8);
		if (fxt_header_type(h) != FXT_RECORD_BLOB || fxt_header_size(h) != tlen / 8 ||
		    fxt_bits(h, 16, 31) != (0x8000u | (sizeof(name) - 1)) ||
		    fxt_bits(h, 32, 46) != 48 || fxt_bits(h, 48, 55) != FXT_BLOB_DATA ||
		    memcmp(tail + 8, name, sizeof(name) - 1) != 0)
			goto out;
	}
	if (w[0] != FXT_END_MAGIC || w[5] != fxt_end_check(w, 40) || w[2] > (64u << 20) ||
	    w[2] % 8 || !w[2])
		goto out;
	/* plain: the state lies just before the trailer; else its units do */
	if ((!gz && !zst && (w[1] != w[3] || w[2] != w[4] || w[3] + w[4] != tstart)) ||
	    ((gz || zst) && (w[3] + w[4] != tstart || w[4] > (64u << 20))))
		goto out;
	buf = malloc((size_t)w[2]);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	if (gz || zst) {
		z = malloc((size_t)w[4] + 1);
		if (!z) {
			rc = -ENOMEM;
			goto out;
		}
		if (pread_all(fd, z, (size_t)w[4], w[3]) < 0 ||
		    inflate_all(z, (size_t)w[4], buf, (size_t)w[2], zst) < 0)
			goto out;
	} else if (pread_all(fd, buf, (size_t)w[2], w[3]) < 0) {
		goto out;
	}
	if (unblob(buf, (size_t)w[2], &n) < 0)
		goto out;
	rc = parse_owned(buf, n, out);
	buf = NULL;
	if (rc == 0) {
		/* its places lie before the state */
		for (size_t i = 0; i < (*out)->nthreads; i++)
			if ((*out)->threads[i].last_off >= w[1] ||
			    (*out)->head_end > (*out)->threads[i].at)
				rc = -ENOENT;
		if (rc < 0) {
			fxt_end_state_free(*out);
			*out = NULL;
		}
	}
out:
	free(z);
	free(buf);
	close(fd);
	return rc;
}
