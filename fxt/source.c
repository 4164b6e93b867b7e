/* The FXT reader's byte source and its window (see reader_int.h): memory,
 * a descriptor, either through inflate when it is gzip or through
 * ZSTD_decompressStream when it is zstd (told by the first bytes, whatever
 * the file's name); the window over it
 * is filled, grown for a large record held whole, and skipped through for
 * a large payload not held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "fxt/reader_int.h"

/* An error of the source itself (a read, the compressed stream): the
 * reader stops there, fxt__source_verify() has nothing to look for, and
 * it stands whatever the decoder says after. */
#define source_error(r, ...)                                                   \
	((r)->verifying++, fxt__set_error((r), __VA_ARGS__), (r)->verifying--, \
	 (r)->source_failed = true)

/* Reads up to n bytes from the descriptor, retrying on EINTR.  Returns the
 * count (0 at end of file) or -errno. */
static ssize_t read_fd(int fd, void *dst, size_t n)
{
	for (;;) {
		ssize_t got = read(fd, dst, n);
		if (got >= 0)
			return got;
		if (errno != EINTR)
			return -errno;
	}
}

/* Pulls more compressed input into r->in.  Returns false on a read error. */
static bool refill(struct fxt_reader *r)
{
	if (r->src == SRC_MEM) {
		size_t left = r->mem_len - r->mem_pos;
		size_t take = left > (1u << 30) ? (1u << 30) : left;
		r->in = r->mem + r->mem_pos;
		r->in_len = take;
		r->mem_pos += take;
	} else {
		ssize_t got = read_fd(r->fd, r->zin, ZIN_BYTES);
		if (got < 0) {
			source_error(r, r->win_off + r->end, "read error: %s", strerror((int)-got));
			r->read_errno = (int)-got;
			return false;
		}
		r->in = r->zin;
		r->in_len = (size_t)got;
	}
	if (r->in_len == 0)
		r->in_eof = true;
	return true;
}

/* Decompresses up to n bytes into dst.  Returns the count (0 at the end of
 * the compressed input) or -1 with the error set. */
static ssize_t read_gz(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	r->zs.next_out = dst;
	r->zs.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
	size_t want = r->zs.avail_out;
	while (r->zs.avail_out > 0) {
		if (r->in_len == 0 && !r->in_eof && !refill(r))
			return -1;
		if (r->member_done) {
			/* Concatenated gzip members are one stream (gzip -c a b,
			 * and the writer's blocks); only the end of the input
			 * after a member is a clean end. */
			if (r->in_len == 0)
				break;
			if (inflateReset(&r->zs) != Z_OK) {
				source_error(r, r->win_off + r->end, "gzip: cannot reset inflate");
				return -1;
			}
			r->member_done = false;
		}
		uInt before = r->zs.avail_out;
		r->zs.next_in = (Bytef *)(uintptr_t)r->in; /* zlib does not write to it */
		r->zs.avail_in = (uInt)r->in_len;
		int zr = inflate(&r->zs, Z_NO_FLUSH);
		r->in = r->zs.next_in;
		r->in_len = r->zs.avail_in;
		if (zr == Z_STREAM_END) {
			r->member_done = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			source_error(r, r->win_off + r->end + (want - r->zs.avail_out), "gzip: %s",
				     r->zs.msg ? r->zs.msg : "data error");
			return -1;
		} else if (r->zs.avail_out == before && r->in_len == 0 && r->in_eof) {
			/* No progress and no more input, inside a member. */
			size_t got = want - r->zs.avail_out;
			if (got > 0)
				return (ssize_t)got; /* report the cut on the next call */
			source_error(r, r->win_off + r->end,
				     "gzip stream truncated (the compressed file was cut short)");
			return -1;
		}
	}
	return (ssize_t)(want - r->zs.avail_out);
}

/* read_gz() for zstd: frames one after another are one stream too. */
static ssize_t read_zstd(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	ZSTD_outBuffer out = { dst, n, 0 };
	while (out.pos < out.size) {
		if (r->in_len == 0 && !r->in_eof && !refill(r))
			return -1;
		/* Called with no input too: output it held back comes out. */
		ZSTD_inBuffer in = { r->in, r->in_len, 0 };
		size_t before = out.pos;
		size_t zr = ZSTD_decompressStream(r->zd, &out, &in);
		r->in += in.pos;
		r->in_len -= in.pos;
		if (ZSTD_isError(zr)) {
			source_error(r, r->win_off + r->end + out.pos, "zstd: %s",
				     ZSTD_getErrorName(zr));
			return -1;
		}
		bool moved = in.pos > 0 || out.pos > before;
		/* 0: a frame ended and everything it holds is out. */
		if (zr == 0)
			r->frame_done = true;
		else if (moved)
			r->frame_done = false;
		if (!moved && r->in_len == 0 && r->in_eof) {
			if (r->frame_done || out.pos > 0)
				break; /* a cut inside a frame: said on the next call */
			source_error(r, r->win_off + r->end,
				     "zstd stream truncated (the compressed file was cut short)");
			return -1;
		}
	}
	return (ssize_t)out.pos;
}

void fxt__source_verify(struct fxt_reader *r)
{
	char err[sizeof(r->err)];
	uint64_t off = r->err_off;
	uint8_t *scratch;
	ssize_t got;

	if (r->codec == CODEC_NONE || r->source_failed)
		return;
	scratch = malloc(ZIN_BYTES);
	if (!scratch)
		return;
	memcpy(err, r->err, sizeof(err));
	do
		got = r->codec == CODEC_ZSTD ? read_zstd(r, scratch, ZIN_BYTES)
					     : read_gz(r, scratch, ZIN_BYTES);
	while (got > 0);
	free(scratch);
	if (!r->source_failed) {
		memcpy(r->err, err, sizeof(err));
		r->err_off = off;
	}
	r->failed = true;
}

/* Makes at least `need` (<= cap) unread bytes available in the window.
 * Returns true if it could, false at the end of input or on error
 * (r->failed tells which). */
bool fxt__fill_slow(struct fxt_reader *r, size_t need)
{
	if (r->failed)
		return false;
	if (r->src == SRC_MEM && !r->codec)
		return false;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->win_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < need && !r->eof) {
		ssize_t got;
		if (r->codec) {
			got = r->codec == CODEC_ZSTD
				  ? read_zstd(r, r->buf + r->end, r->cap - r->end)
				  : read_gz(r, r->buf + r->end, r->cap - r->end);
			if (got < 0)
				return false;
		} else {
			got = read_fd(r->fd, r->buf + r->end, r->cap - r->end);
			if (got < 0) {
				source_error(r, r->win_off + r->end, "read error: %s",
					     strerror((int)-got));
				r->read_errno = (int)-got;
				return false;
			}
		}
		if (got == 0)
			r->eof = true;
		r->end += (size_t)got;
	}
	return r->end >= need;
}

/* Makes the window (of a descriptor or gzip input) hold `need` bytes. */
bool fxt__grow_window(struct fxt_reader *r, size_t need)
{
	uint8_t *nb;

	if (need <= r->cap)
		return true;
	nb = realloc(r->buf, need);
	if (!nb) {
		fxt__set_error(r, r->win_off + r->pos, "out of memory for a record of %zu bytes",
			       need);
		r->read_errno = ENOMEM;
		return false;
	}
	r->buf = nb;
	r->win = nb;
	r->cap = need;
	return true;
}

/* Throws away the rest of a large record too big for the window.  The bytes
 * were promised by its size field, so running out is damage. */
bool fxt__skip_payload(struct fxt_reader *r)
{
	while (r->skip_left > 0) {
		size_t avail = r->end - r->pos;
		if (avail == 0) {
			if (!fxt__fill(r, 1)) {
				if (!r->failed)
					fxt__set_error(
					    r, r->skip_off,
					    "large record runs past the end of the input "
					    "(%llu bytes missing)",
					    (unsigned long long)r->skip_left);
				return false;
			}
			avail = r->end - r->pos;
		}
		size_t take = avail < r->skip_left ? avail : (size_t)r->skip_left;
		r->pos += take;
		r->skip_left -= take;
	}
	return true;
}

/* The codec whose magic the first bytes are, CODEC_NONE for plain FXT. */
static enum codec sniff(const uint8_t *d, size_t len)
{
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return CODEC_GZIP;
	/* A zstd frame, or a skippable frame (magic 0x184D2A5?) before one. */
	if (len >= 4 && ((d[0] == 0x28 && d[1] == 0xb5 && d[2] == 0x2f && d[3] == 0xfd) ||
			 ((d[0] & 0xf0) == 0x50 && d[1] == 0x2a && d[2] == 0x4d && d[3] == 0x18)))
		return CODEC_ZSTD;
	return CODEC_NONE;
}

/* Sets up the decompressor of `codec`, its input `in`. */
static int codec_start(struct fxt_reader *r, enum codec codec, const uint8_t *in, size_t len)
{
	if (codec == CODEC_ZSTD) {
		r->zd = ZSTD_createDStream();
		if (!r->zd || ZSTD_isError(ZSTD_initDStream(r->zd)))
			return -ENOMEM;
	} else {
		if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
			return -ENOMEM;
		r->zs_init = true;
	}
	r->codec = codec;
	r->in = in;
	r->in_len = len;
	return 0;
}

int fxt__source_open_fd(struct fxt_reader *r, int fd)
{
	int err;

	r->src = SRC_FD;
	r->fd = fd;
	r->cap = WINDOW_BYTES;
	r->buf = malloc(r->cap);
	r->zin = malloc(ZIN_BYTES);
	if (!r->buf || !r->zin)
		return -ENOMEM;
	r->win = r->buf;

	/* Peek at the first four bytes for a magic.  They land in zin: the
	 * decompressor's input if there is one, else copied into the window. */
	size_t have = 0;
	while (have < 4) {
		ssize_t got = read_fd(fd, r->zin + have, ZIN_BYTES - have);
		if (got < 0) {
			err = (int)got;
			source_error(r, 0, "read error: %s", strerror(-err));
			r->read_errno = -err;
			return err;
		}
		if (got == 0) {
			r->eof = true;
			break;
		}
		have += (size_t)got;
	}
	enum codec codec = sniff(r->zin, have);
	if (codec) {
		err = codec_start(r, codec, r->zin, have);
		if (err)
			return err;
		r->in_eof = r->eof;
		r->eof = false;
	} else {
		memcpy(r->buf, r->zin, have);
		r->end = have;
	}
	return 0;
}

int fxt__source_open_mem(struct fxt_reader *r, const uint8_t *d, size_t len)
{
	r->src = SRC_MEM;
	enum codec codec = sniff(d, len);
	if (codec) {
		r->cap = WINDOW_BYTES;
		r->buf = malloc(r->cap);
		if (!r->buf)
			return -ENOMEM;
		int err = codec_start(r, codec, NULL, 0);
		if (err)
			return err;
		r->mem = d;
		r->mem_len = len;
		r->win = r->buf;
	} else {
		/* Plain memory is its own window: no copy. */
		r->win = len ? d : (const uint8_t *)fxt__empty;
		r->end = len;
		r->eof = true;
	}
	return 0;
}

void fxt__source_close(struct fxt_reader *r)
{
	if (r->zs_init)
		inflateEnd(&r->zs);
	ZSTD_freeDStream(r->zd);
	if (r->own_fd)
		close(r->user_fd);
	if (r->copy_fd >= 0)
		close(r->copy_fd);
	free(r->buf);
	free(r->zin);
}
