/* The FXT reader's byte source and its window (see reader_int.h): memory,
 * a descriptor, either through inflate when it is gzip; the window over it
 * is filled, grown for a large record held whole, and skipped through for
 * a large payload not held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "fxt/reader_int.h"

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

/* Pulls more compressed input.  Returns false on a read error. */
static bool gz_refill(struct fxt_reader *r)
{
	if (r->src == SRC_MEM) {
		size_t left = r->mem_len - r->mem_pos;
		size_t take = left > (1u << 30) ? (1u << 30) : left;
		r->zs.next_in = (Bytef *)(uintptr_t)(r->mem + r->mem_pos);
		r->zs.avail_in = (uInt)take;
		r->mem_pos += take;
	} else {
		ssize_t got = read_fd(r->fd, r->zin, ZIN_BYTES);
		if (got < 0) {
			fxt__set_error(r, r->win_off + r->end, "read error: %s",
				       strerror((int)-got));
			r->read_errno = (int)-got;
			return false;
		}
		r->zs.next_in = r->zin;
		r->zs.avail_in = (uInt)got;
	}
	if (r->zs.avail_in == 0)
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
		if (r->zs.avail_in == 0 && !r->in_eof && !gz_refill(r))
			return -1;
		if (r->member_done) {
			/* Concatenated gzip members are one stream (gzip -c a b);
			 * only the end of the input after a member is a clean end. */
			if (r->zs.avail_in == 0)
				break;
			if (inflateReset(&r->zs) != Z_OK) {
				fxt__set_error(r, r->win_off + r->end,
					       "gzip: cannot reset inflate");
				return -1;
			}
			r->member_done = false;
		}
		uInt before = r->zs.avail_out;
		int zr = inflate(&r->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			r->member_done = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			fxt__set_error(r, r->win_off + r->end + (want - r->zs.avail_out),
				       "gzip: %s", r->zs.msg ? r->zs.msg : "data error");
			return -1;
		} else if (r->zs.avail_out == before && r->zs.avail_in == 0 && r->in_eof) {
			/* No progress and no more input, inside a member. */
			size_t got = want - r->zs.avail_out;
			if (got > 0)
				return (ssize_t)got; /* report the cut on the next call */
			fxt__set_error(r, r->win_off + r->end,
				       "gzip stream truncated (the compressed file was cut short)");
			return -1;
		}
	}
	return (ssize_t)(want - r->zs.avail_out);
}

/* Makes at least `need` (<= cap) unread bytes available in the window.
 * Returns true if it could, false at the end of input or on error
 * (r->failed tells which). */
bool fxt__fill_slow(struct fxt_reader *r, size_t need)
{
	if (r->failed)
		return false;
	if (r->src == SRC_MEM && !r->gz)
		return false;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->win_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < need && !r->eof) {
		ssize_t got;
		if (r->gz) {
			got = read_gz(r, r->buf + r->end, r->cap - r->end);
			if (got < 0)
				return false;
		} else {
			got = read_fd(r->fd, r->buf + r->end, r->cap - r->end);
			if (got < 0) {
				fxt__set_error(r, r->win_off + r->end, "read error: %s",
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

static int gz_start(struct fxt_reader *r)
{
	if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	r->zs_init = true;
	r->gz = true;
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

	/* Peek at the first two bytes for the gzip magic.  They land in zin:
	 * inflate's input if it is gzip, else copied into the window. */
	size_t have = 0;
	while (have < 2) {
		ssize_t got = read_fd(fd, r->zin + have, ZIN_BYTES - have);
		if (got < 0) {
			err = (int)got;
			fxt__set_error(r, 0, "read error: %s", strerror(-err));
			r->read_errno = -err;
			return err;
		}
		if (got == 0) {
			r->eof = true;
			break;
		}
		have += (size_t)got;
	}
	if (have >= 2 && r->zin[0] == 0x1f && r->zin[1] == 0x8b) {
		err = gz_start(r);
		if (err)
			return err;
		r->zs.next_in = r->zin;
		r->zs.avail_in = (uInt)have;
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
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
		r->cap = WINDOW_BYTES;
		r->buf = malloc(r->cap);
		if (!r->buf)
			return -ENOMEM;
		int err = gz_start(r);
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
	if (r->own_fd)
		close(r->fd);
	free(r->buf);
	free(r->zin);
}
