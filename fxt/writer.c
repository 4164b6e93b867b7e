/* The FXT writer (the contract: include/fxt/writer.h): records gathered in
 * one word-aligned buffer, drained to a descriptor (write loop) or to
 * memory, directly or through a compressor (compress.c); the record
 * emitters; providers.  The encoders are in encode.c, the string and
 * thread tables in tables.c.  Past 800 lines because the emitters and the
 * output path share the buffer's rules (where records go, when and how
 * much of it is written), which are one job. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/utf8.h>
#include <fxt/writer.h>

#include "fxt/ahead.h"
#include "fxt/behind.h"
#include "fxt/compress.h"
#include "fxt/encode.h"
#include "fxt/internal.h"
#include "fxt/writer_int.h"

/* Records are gathered in a buffer of OUT_ALIGN bytes and some room
 * more, which a file sink takes OUT_ALIGN bytes at a time, at offsets
 * that are multiples of it (make_room()): the page cache then takes each
 * write() in one large folio, where the writes of a buffer's size
 * anywhere in the file made a cascade of smaller ones down to a partial
 * page (ext4: some 17 folios a write, ~10% more of its CPU). */
#define OUT_ALIGN     (512u * 1024)
#define OUT_BUF_BYTES (OUT_ALIGN + 32u * 1024)
/* Whether the buffer holds OUT_ALIGN bytes (a compressed writer's: a
 * block, FXT__ZSINK_BLOCK, in the compressor's own buffer): the next
 * reservation makes room, so that what make_room() keeps (and moves) is
 * a record or so, not up to the 32 KiB more. */
#define OUT_FULL(w) ((w)->pos >= (w)->full)
/* A plain writer told fxt_writer_compress_parallel() writes the buffer's
 * first fill itself and starts the thread writing behind at the second:
 * the thread's start (clone, its stack, a fresh buffer's pages faulted
 * in, the hand-offs) costs about what the one write() it would take off
 * the caller does (512 KiB into the page cache: 0.2-0.45 ms), so an
 * archive of two writes or fewer (under ~1 MiB, fxt-run's of a short
 * run) gains nothing by it, and one past that loses one write's overlap
 * of hundreds (bench/README.md, "No thread for a small archive"). */
#define BEHIND_FILL   2u
#define MEM_MIN_BYTES (64u * 1024)
#define IO_CHUNK      (1u << 30) /* per write() */

static int set_error(struct fxt_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Every ref and slot handed out before is void (the tables reset, or
 * another provider's): fxt_writer_registrations() says something changed,
 * as its contract has it (include/fxt/writer.h). */
static void refs_void(struct fxt_writer *w)
{
	if (++w->gen == 0) /* 0 means "never valid" in slots */
		w->gen = 1;
}

/* Whether records may be added: 0, the sticky error, or -EPIPE after
 * fxt_writer_finish() (not sticky: the archive itself is complete). */
static inline int writable(const struct fxt_writer *w)
{
	return w->err ? w->err : w->finished ? -EPIPE : 0;
}

/* ----------------------------------------------------------------- sink */

static int mem_append(struct fxt_writer *w, const void *data, size_t len)
{
	if (len > w->mem_cap - w->mem_len) {
		size_t want = w->mem_cap ? w->mem_cap : MEM_MIN_BYTES;
		unsigned char *m;

		while (want - w->mem_len < len) {
			if (want > SIZE_MAX / 2)
				return set_error(w, -ENOMEM);
			want *= 2;
		}
		m = realloc(w->mem, want);
		if (!m)
			return set_error(w, -ENOMEM);
		w->mem = m;
		w->mem_cap = want;
	}
	memcpy(w->mem + w->mem_len, data, len);
	w->mem_len += len;
	return 0;
}

static int sink_write(struct fxt_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (w->to_mem)
		return mem_append(w, data, len);
	/* After what the thread writes behind, never beside it; the buffer
	 * is empty then (drain(), make_room()). */
	if (w->behind) {
		int err = fxt__behind_sync(w->behind);

		if (err)
			return set_error(w, err);
		w->behind_off += len;
	}
	fxt__ahead_write(&w->ahead, w->fd, len);
	while (len) {
		ssize_t r = write(w->fd, p, len < IO_CHUNK ? len : IO_CHUNK);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return set_error(w, -errno);
		}
		if (r == 0) /* cannot happen for len > 0; never spin on it */
			return set_error(w, -EIO);
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int sink_out(void *w, const void *data, size_t len)
{
	return sink_write(w, data, len);
}

/* Sends bytes to the sink, through the compressor if any: with one, the
 * buffer must be empty (drain()), and holds after it what the compressor
 * kept of them for its next block. */
static int emit(struct fxt_writer *w, const void *data, size_t len)
{
	if (w->err)
		return w->err;
	if (!w->z)
		return len ? sink_write(w, data, len) : 0;
	int err = fxt__zsink_write(w->z, data, len);
	w->buf = fxt__zsink_buf(w->z, &w->pos);
	return err ? set_error(w, err) : 0;
}

/* A compressed writer's buffer is the compressor's block being filled:
 * its first `out` bytes go out as a block, the rest starts the next. */
static int hand(struct fxt_writer *w, size_t out)
{
	size_t keep = w->pos - out;
	int err;

	w->buf = fxt__zsink_hand(w->z, out, keep);
	w->pos = keep;
	err = fxt__zsink_error(w->z);
	return err ? set_error(w, err) : 0;
}

/* The buffer's first `out` bytes go to the thread writing behind; the
 * rest (`keep`) starts the next buffer. */
static int behind_out(struct fxt_writer *w, size_t out)
{
	unsigned char *next = fxt__behind_next(w->behind);
	size_t keep = w->pos - out;
	int err;

	memcpy(next, (const unsigned char *)w->buf + out, keep);
	err = fxt__behind_submit(w->behind, out);
	w->buf = (uint64_t *)next;
	w->pos = keep;
	w->behind_off += out;
	return err ? set_error(w, err) : 0;
}

/* Empties the output buffer into the sink. */
static int drain(struct fxt_writer *w)
{
	if (w->behind && !w->err) {
		int err = w->pos ? behind_out(w, w->pos) : 0;

		if (!err && (err = fxt__behind_sync(w->behind)))
			set_error(w, err);
		return w->err;
	}
	if (w->z)
		return w->err ? w->err : hand(w, w->pos);
	int err = emit(w, w->buf, w->pos);

	w->pos = 0;
	return err;
}

/* Room for `len` bytes more in the buffer: a file sink takes what ends
 * at the last multiple of OUT_ALIGN in the file, the rest is kept at the
 * buffer's start, when that leaves the room; else drain(). */
static int make_room(struct fxt_writer *w, size_t len)
{
	off_t off;
	size_t keep;

	if (w->behind_in && !w->behind && !w->err && --w->behind_in == 0) {
		/* From the buffer's start on; as before if it cannot start. */
		off = lseek(w->fd, 0, SEEK_CUR);
		if (off >= 0 && fxt__behind_open(&w->behind, w->fd, w->buf, w->cap, &w->ahead) == 0)
			w->behind_off = (uint64_t)off;
	}
	if (w->behind && !w->err) { /* as below, without waiting for the write */
		keep = (size_t)((w->behind_off + w->pos) % OUT_ALIGN);
		if (keep >= w->pos || len > w->cap - keep)
			keep = 0;
		return behind_out(w, w->pos - keep);
	}
	if (w->z && !w->err) { /* whole blocks, as long as it has room */
		keep = w->pos > w->full ? w->pos - w->full : 0;
		return hand(w, len > w->cap - keep ? w->pos : w->pos - keep);
	}
	if (w->err || w->to_mem || w->z || (off = lseek(w->fd, 0, SEEK_CUR)) < 0)
		return drain(w);
	keep = (size_t)(((uint64_t)off + w->pos) % OUT_ALIGN);
	if (keep >= w->pos || len > w->cap - keep)
		return drain(w);
	if (sink_write(w, w->buf, w->pos - keep))
		return w->err;
	memmove(w->buf, (const unsigned char *)w->buf + (w->pos - keep), keep);
	w->pos = keep;
	return 0;
}

/* Appends raw bytes (whole records, or a large payload and its padding). */
static int put_bytes(struct fxt_writer *w, const void *data, size_t len)
{
	if (writable(w))
		return writable(w);
	if (len > w->cap - w->pos || OUT_FULL(w)) {
		if (make_room(w, len))
			return w->err;
		if (len > w->cap) { /* bigger than the buffer: send it as it is */
			if (emit(w, data, len))
				return w->err;
			w->bytes += len;
			return 0;
		}
	}
	memcpy((unsigned char *)w->buf + w->pos, data, len);
	w->pos += len;
	w->bytes += len;
	return 0;
}

uint64_t *fxt_writer_reserve(struct fxt_writer *w, size_t nwords)
{
	if (writable(w))
		return NULL;
	if (nwords > w->cap / FXT_WORD_SIZE) {
		set_error(w, -EINVAL);
		return NULL;
	}
	if ((nwords * FXT_WORD_SIZE > w->cap - w->pos || OUT_FULL(w)) &&
	    make_room(w, nwords * FXT_WORD_SIZE))
		return NULL;
	w->reserved = nwords;
	return w->buf + w->pos / FXT_WORD_SIZE;
}

void fxt_writer_commit(struct fxt_writer *w, size_t nwords)
{
	if (nwords > w->reserved) { /* a caller bug: the tail was never written */
		set_error(w, -EINVAL);
		return;
	}
	w->pos += nwords * FXT_WORD_SIZE;
	w->bytes += nwords * FXT_WORD_SIZE;
	w->reserved = 0;
}

int fxt_writer_words(struct fxt_writer *w, const uint64_t *words, size_t nwords)
{
	return put_bytes(w, words, nwords * FXT_WORD_SIZE);
}

/* ------------------------------------------------------------ open/close */

static struct provider *provider_get(struct fxt_writer *w, uint32_t id);

static int writer_new(struct fxt_writer **out, unsigned flags, int fd, bool own_fd, bool to_mem)
{
	struct fxt_writer *w;
	int err = -ENOMEM;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail_alloc;
	w->fd = fd;
	w->own_fd = own_fd;
	w->to_mem = to_mem;
	w->cap = OUT_BUF_BYTES;
	w->full = OUT_ALIGN;
	w->buf = malloc(w->cap);
	if (!w->buf)
		goto fail_buf;
	if (flags & (FXT_WRITER_GZIP | FXT_WRITER_ZSTD)) {
		err = fxt__zsink_open(&w->z,
				      (flags & FXT_WRITER_ZSTD) ? FXT__CODEC_ZSTD : FXT__CODEC_GZIP,
				      flags & FXT_WRITER_SERIAL, sink_out, w);
		if (err)
			goto fail_zsink;
		err = -ENOMEM;
	}
	/* Records before any provider record belong to provider 0, for the
	 * reader as for us. */
	w->cur = provider_get(w, 0);
	if (!w->cur)
		goto fail_provider;
	if (w->z) { /* records built in the compressor's blocks, uncopied */
		free(w->buf);
		w->buf = fxt__zsink_buf(w->z, &w->pos);
		w->cap = FXT__ZSINK_CAP;
		w->full = FXT__ZSINK_BLOCK;
	}
	*out = w;
	return 0;

fail_provider:
	free(w->prov);
	fxt__zsink_free(w->z);
fail_zsink:
	free(w->buf);
fail_buf:
	free(w);
fail_alloc:
	return err;
}

unsigned fxt_writer_path_flags(const char *path)
{
	size_t len = strlen(path);

	if (len >= 3 && strcmp(path + len - 3, ".gz") == 0)
		return FXT_WRITER_GZIP;
	if (len >= 4 && strcmp(path + len - 4, ".zst") == 0)
		return FXT_WRITER_ZSTD;
	return 0;
}

int fxt_writer_open_path(struct fxt_writer **w, const char *path, unsigned flags)
{
	int oflags = O_WRONLY | O_CREAT | O_CLOEXEC;
	int fd, err;

	*w = NULL;
	flags |= fxt_writer_path_flags(path);
	oflags |= (flags & FXT_WRITER_NO_CLOBBER) ? O_EXCL : O_TRUNC;
	do
		fd = open(path, oflags, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	err = writer_new(w, flags, fd, true, false);
	if (err)
		close(fd);
	return err;
}

int fxt_writer_open_fd(struct fxt_writer **w, int fd, unsigned flags)
{
	if (fd < 0) {
		*w = NULL;
		return -EBADF;
	}
	return writer_new(w, flags, fd, false, false);
}

int fxt_writer_open_mem(struct fxt_writer **w, unsigned flags)
{
	return writer_new(w, flags, -1, false, true);
}

const void *fxt_writer_mem_data(const struct fxt_writer *w, size_t *len)
{
	*len = w->to_mem ? w->mem_len : 0;
	return w->to_mem ? w->mem : NULL;
}

int fxt_writer_flush(struct fxt_writer *w)
{
	int err;

	if (w->finished)
		return w->err;
	/* The compressor makes everything so far decodable from the file
	 * (nothing when nothing was written since its last flush). */
	err = drain(w);
	if (!err && w->z && (err = fxt__zsink_flush(w->z)))
		set_error(w, err);
	return w->err;
}

int fxt_writer_compress_parallel(struct fxt_writer *w)
{
	int err;

	if (w->finished || w->err || w->to_mem)
		return w->err;
	if (!w->z) {
		/* Plain: written behind once the buffer fills the
		 * BEHIND_FILL-th time (a small archive starts no thread). */
		if (!w->behind && !w->behind_in)
			w->behind_in = BEHIND_FILL;
		return 0;
	}
	err = fxt__zsink_parallel(w->z);
	if (err)
		set_error(w, err);
	return w->err;
}

int fxt_writer_finish(struct fxt_writer *w)
{
	if (!w->finished) {
		int err = drain(w);
		if (!err && w->z && (err = fxt__zsink_finish(w->z)))
			set_error(w, err);
		/* Every byte is in: the blocks allocated past them go back.
		 * Where that fails they stay past the file's end (at most
		 * one step of them), the archive whole all the same. */
		if (!w->to_mem)
			(void)fxt__ahead_trim(&w->ahead, w->fd);
		w->finished = true;
	}
	return w->err;
}

int fxt_writer_error(const struct fxt_writer *w)
{
	return w->err;
}

void fxt_writer_free(struct fxt_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nprov; i++) {
		fxt__strtab_reset(&w->prov[i]->st);
		free(w->prov[i]);
	}
	free(w->prov);
	fxt__zsink_free(w->z);
	if (w->z) /* it owned the buffer */
		w->buf = NULL;
	if (w->behind) { /* it owns the buffers */
		fxt__behind_free(w->behind);
		w->buf = NULL;
	}
	if (w->own_fd)
		close(w->fd);
	free(w->mem);
	free(w->buf);
	free(w);
}

int fxt_writer_close(struct fxt_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	err = fxt_writer_finish(w);
	if (w->own_fd) {
		/* Linux releases the descriptor even when close() fails: no retry. */
		if (close(w->fd) < 0 && !err)
			err = -errno;
		w->own_fd = false;
	}
	fxt_writer_free(w);
	return err;
}

uint64_t fxt_writer_bytes(const struct fxt_writer *w)
{
	return w->bytes;
}

void fxt_writer_forget(struct fxt_writer *w)
{
	if (!w->cur)
		return;
	fxt__strtab_reset(&w->cur->st);
	fxt__thrtab_reset(&w->cur->tt);
	refs_void(w);
}

/* Copies `len` bytes from offset `off` of `fd` to the sink as they are. */
static int copy_raw(struct fxt_writer *w, int fd, uint64_t off, uint64_t len)
{
	char buf[64 << 10];
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < IO_CHUNK ? (size_t)(len - done) : IO_CHUNK;
		loff_t from = (loff_t)(off + done);
		ssize_t n = copy_file_range(fd, &from, w->fd, NULL, want, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Not between these files (another file system, an old
			 * kernel): through memory. */
			n = pread(fd, buf, want < sizeof(buf) ? want : sizeof(buf),
				  (off_t)(off + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return set_error(w, n < 0 ? -errno : -EIO);
			if (sink_write(w, buf, (size_t)n))
				return w->err;
		} else {
			/* Straight to the file (sink_write() counts its own). */
			if (w->behind)
				w->behind_off += (uint64_t)n;
			w->ahead.pos += (uint64_t)n;
		}
		done += (uint64_t)n;
	}
	return 0;
}

int fxt_writer_append_fd(struct fxt_writer *w, int fd, uint64_t off, uint64_t len, uint64_t bytes)
{
	int err;

	if (w->to_mem)
		return -ENOTSUP;
	if (writable(w) || drain(w))
		return w->err;
	/* What was compressed so far out as whole members or frames: the
	 * file's follow them. */
	if (w->z && (err = fxt__zsink_end_unit(w->z)))
		return set_error(w, err);
	if (copy_raw(w, fd, off, len))
		return w->err;
	w->bytes += w->z ? bytes : len;
	return 0;
}

/* Padding records over `bytes` (a multiple of 8, not 0) at p: headers of
 * at most FXT_MAX_RECORD_WORDS words each, zeros after them. */
static void put_padding(unsigned char *p, uint64_t bytes)
{
	memset(p, 0, bytes);
	while (bytes) {
		uint64_t words = bytes / FXT_WORD_SIZE, h;

		if (words > FXT_MAX_RECORD_WORDS)
			words = FXT_MAX_RECORD_WORDS;
		h = fxt_field(FXT_RECORD_METADATA, 0, 3) | fxt_field(words, 4, 15) |
		    fxt_field(FXT_METADATA_PADDING, 16, 19);
		memcpy(p, &h, sizeof(h));
		p += words * FXT_WORD_SIZE;
		bytes -= words * FXT_WORD_SIZE;
	}
}

/* What goes before `front` in a compressed archive: the records in w's
 * buffer compressed on their own (a member or frame), then padding units
 * that decompress to nothing.  0, -ENOSPC (no such fill), -errno. */
static int compressed_head(struct fxt_writer *w, unsigned char *head, size_t front)
{
	enum fxt__codec codec = fxt__zsink_codec(w->z);
	struct fxt_writer *m;
	const void *data;
	size_t len, left;
	int err;

	err = fxt_writer_open_mem(
	    &m, (codec == FXT__CODEC_ZSTD ? FXT_WRITER_ZSTD : FXT_WRITER_GZIP) | FXT_WRITER_SERIAL);
	if (err)
		return err;
	err = put_bytes(m, w->buf, w->pos);
	if (!err)
		err = fxt_writer_finish(m);
	data = fxt_writer_mem_data(m, &len);
	if (!err && len > front)
		err = -ENOSPC;
	if (!err) {
		memcpy(head, data, len);
		/* The rest in units as large as they come, none too small. */
		for (left = front - len; left && !err;) {
			size_t unit = left;

			if (codec == FXT__CODEC_GZIP && unit > FXT__ZSINK_PAD_MAX_GZIP)
				unit = left - FXT__ZSINK_PAD_MAX_GZIP >= FXT__ZSINK_PAD_MIN_GZIP
					   ? FXT__ZSINK_PAD_MAX_GZIP
					   : left - FXT__ZSINK_PAD_MIN_GZIP;
			err = fxt__zsink_padding(codec, head + (front - left), unit);
			left -= unit;
		}
	}
	fxt_writer_free(m);
	return err;
}

int fxt_writer_move_to_fd(struct fxt_writer *w, int fd, uint64_t front, uint64_t len,
			  uint64_t bytes)
{
	unsigned char *head;
	int nfd, err = 0;

	if (w->to_mem)
		return -ENOTSUP;
	if (writable(w))
		return writable(w);
	if (w->bytes != w->pos)
		return -EAGAIN;
	if (front > SIZE_MAX || (!w->z && (front % FXT_WORD_SIZE || front < w->pos ||
					   (front > w->pos && front - w->pos < FXT_WORD_SIZE))))
		return -ENOSPC;
	head = malloc(front ? (size_t)front : 1);
	if (!head)
		return -ENOMEM;
	if (w->z) {
		err = compressed_head(w, head, (size_t)front);
	} else {
		memcpy(head, w->buf, w->pos);
		if (front > w->pos)
			put_padding(head + w->pos, front - w->pos);
	}
	for (size_t done = 0; done < front && !err;) {
		ssize_t n = pwrite(fd, head + done, (size_t)front - done, (off_t)done);

		if (n > 0)
			done += (size_t)n;
		else if (n == 0 || errno != EINTR)
			err = n < 0 ? -errno : -EIO;
	}
	free(head);
	if (err)
		return err;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	if (lseek(nfd, (off_t)(front + len), SEEK_SET) < 0) {
		err = -errno;
		close(nfd);
		return err;
	}
	if (w->behind) { /* nothing was submitted (w->bytes == w->pos) */
		fxt__behind_set_fd(w->behind, nfd);
		w->behind_off = front + len;
	}
	if (w->own_fd)
		close(w->fd);
	w->fd = nfd;
	w->own_fd = true;
	w->ahead.known = false; /* nothing was written to the old one */
	/* Compressed: the buffer's records went out in the head, the padding
	 * holds none. */
	w->bytes = w->z ? w->pos + bytes : front + len;
	w->pos = 0;
	return 0;
}

int fxt_writer_fd(const struct fxt_writer *w)
{
	return w->to_mem ? -1 : w->fd;
}

/* ------------------------------------------------------- record emitters */

/* The emitters below measure the record (encoder with cap 0), reserve its
 * space, then encode into it.  record_begin() does the middle step and
 * tells why it failed: -EINVAL when the record cannot be encoded (not
 * sticky: the archive is still fine), or the sticky I/O error. */
static uint64_t *record_begin(struct fxt_writer *w, size_t nwords, int *err)
{
	uint64_t *out;

	*err = writable(w);
	if (*err)
		return NULL;
	if (!nwords) {
		*err = -EINVAL;
		return NULL;
	}
	out = fxt_writer_reserve(w, nwords);
	if (!out)
		*err = writable(w);
	return out;
}

int fxt_writer_magic(struct fxt_writer *w)
{
	int err;
	uint64_t *out = record_begin(w, 1, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_magic(out, 1));
	return 0;
}

int fxt_writer_time_ordered(struct fxt_writer *w)
{
	fxt_writer_cstring(w, FXT_TIME_ORDERED_MARK);
	return fxt_writer_error(w);
}

int fxt_writer_provider_section(struct fxt_writer *w, uint32_t provider_id)
{
	struct provider *p;
	uint64_t *out;
	int err;

	out = record_begin(w, fxt_enc_provider_section(NULL, 0, provider_id), &err);
	if (!out)
		return err;
	p = provider_get(w, provider_id);
	if (!p)
		return set_error(w, -ENOMEM);
	w->cur = p;
	fxt_writer_commit(w, fxt_enc_provider_section(out, 1, provider_id));
	return 0;
}

int fxt_writer_provider_event(struct fxt_writer *w, uint32_t provider_id, unsigned event)
{
	int err;
	uint64_t *out = record_begin(w, fxt_enc_provider_event(NULL, 0, provider_id, event), &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_provider_event(out, 1, provider_id, event));
	return 0;
}

int fxt_writer_initialization(struct fxt_writer *w, uint64_t ticks_per_second)
{
	int err;
	uint64_t *out = record_begin(w, fxt_enc_initialization(NULL, 0, ticks_per_second), &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_initialization(out, 2, ticks_per_second));
	return 0;
}

int fxt_writer_kernel_object(struct fxt_writer *w, unsigned obj_type, uint64_t koid,
			     struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t n = fxt_enc_kernel_object(NULL, 0, obj_type, koid, name, args, nargs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_kernel_object(out, n, obj_type, koid, name, args, nargs));
	return 0;
}

int fxt_writer_userspace_object(struct fxt_writer *w, uint64_t pointer, struct fxt_tref process,
				struct fxt_sref name, const struct fxt_arg *args, unsigned nargs)
{
	size_t n = fxt_enc_userspace_object(NULL, 0, pointer, process, name, args, nargs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_userspace_object(out, n, pointer, process, name, args, nargs));
	return 0;
}

int fxt_writer_blob(struct fxt_writer *w, struct fxt_sref name, unsigned blob_type,
		    const void *payload, size_t len)
{
	size_t n = fxt_enc_blob(NULL, 0, name, blob_type, payload, len);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_blob(out, n, name, blob_type, payload, len));
	return 0;
}

int fxt_writer_context_switch(struct fxt_writer *w, const struct fxt_context_switch *cs)
{
	size_t n = fxt_enc_context_switch(NULL, 0, cs);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_context_switch(out, n, cs));
	return 0;
}

int fxt_writer_log(struct fxt_writer *w, uint64_t ts, struct fxt_tref thread, const char *msg,
		   size_t len)
{
	size_t n = fxt_enc_log(NULL, 0, ts, thread, msg, len);
	int err;
	uint64_t *out = record_begin(w, n, &err);

	if (!out)
		return err;
	fxt_writer_commit(w, fxt_enc_log(out, n, ts, thread, msg, len));
	return 0;
}

/* The flusher's hot path: encode straight into the buffer, measuring only
 * when the record does not fit in what is left of it. */
int fxt_writer_event(struct fxt_writer *w, const struct fxt_event *ev)
{
	size_t avail, n;
	uint64_t *out;

	if (writable(w))
		return writable(w);
	out = w->buf + w->pos / FXT_WORD_SIZE;
	avail = OUT_FULL(w) ? 0 : (w->cap - w->pos) / FXT_WORD_SIZE;
	n = enc_event(out, avail, ev);
	if (!n)
		return -EINVAL;
	if (n > avail) {
		out = fxt_writer_reserve(w, n);
		if (!out)
			return writable(w);
		fxt_enc_event(out, n, ev);
	}
	w->pos += n * FXT_WORD_SIZE;
	w->bytes += n * FXT_WORD_SIZE;
	return 0;
}

int fxt_writer_large_blob(struct fxt_writer *w, const struct fxt_large_blob *b)
{
	static const uint64_t zero;
	uint64_t total = 0, *prefix, *tmp = NULL;
	size_t n, pad;

	if (writable(w))
		return writable(w);
	n = fxt__large_blob_prefix_words(b, &total);
	if (!n)
		return -EINVAL;
	/* The prefix (up to 15 arguments) can outgrow the output buffer. */
	if (n <= w->cap / FXT_WORD_SIZE) {
		prefix = fxt_writer_reserve(w, n);
		if (!prefix)
			return w->err;
		fxt__put_large_blob_prefix(prefix, b, total);
		fxt_writer_commit(w, n);
	} else {
		tmp = malloc(n * FXT_WORD_SIZE);
		if (!tmp)
			return -ENOMEM;
		fxt__put_large_blob_prefix(tmp, b, total);
		put_bytes(w, tmp, n * FXT_WORD_SIZE);
		free(tmp);
	}
	pad = (size_t)(fxt_stream_words(b->size) * FXT_WORD_SIZE - b->size);
	if (b->size)
		put_bytes(w, b->payload, (size_t)b->size);
	if (pad)
		put_bytes(w, &zero, pad);
	return w->err;
}

/* ------------------------------------------------------------ providers */

/* The context of provider `id`, created (with empty tables) if new. */
static struct provider *provider_get(struct fxt_writer *w, uint32_t id)
{
	struct provider *p, **v;

	for (size_t i = 0; i < w->nprov; i++)
		if (w->prov[i]->id == id)
			return w->prov[i];
	v = realloc(w->prov, (w->nprov + 1) * sizeof(*v));
	if (!v)
		return NULL;
	w->prov = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	fxt__strtab_reset(&p->st);
	fxt__thrtab_reset(&p->tt);
	w->prov[w->nprov++] = p;
	return p;
}

int fxt_writer_provider(struct fxt_writer *w, uint32_t provider_id, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), 0xff); /* 8-bit length field */
	size_t n = fxt_enc_provider_info(NULL, 0, provider_id, name, len);
	struct provider *p;
	uint64_t *out;
	int err;

	out = record_begin(w, n, &err);
	if (!out)
		return err;
	p = provider_get(w, provider_id);
	if (!p)
		return set_error(w, -ENOMEM);
	/* Provider info tells the reader to start this provider afresh. */
	fxt__strtab_reset(&p->st);
	fxt__thrtab_reset(&p->tt);
	w->cur = p;
	refs_void(w);
	fxt_writer_commit(w, fxt_enc_provider_info(out, n, provider_id, name, len));
	return 0;
}

/* -------------------------------------------------------- object names */

int fxt_writer_process_name(struct fxt_writer *w, uint64_t pid, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), FXT_MAX_STRING_LEN);

	return fxt_writer_kernel_object(w, FXT_OBJ_PROCESS, pid, fxt_sref_inline(name, len), NULL,
					0);
}

int fxt_writer_thread_name(struct fxt_writer *w, uint64_t pid, uint64_t tid, const char *name)
{
	size_t len = fxt_utf8_cut(name, strlen(name), FXT_MAX_STRING_LEN);
	struct fxt_arg process = {
		.type = FXT_ARG_KOID, /* not u64: Perfetto rejects that */
		.name = fxt_writer_cstring(w, "process"),
		.v.koid = pid,
	};

	return fxt_writer_kernel_object(w, FXT_OBJ_THREAD, tid, fxt_sref_inline(name, len),
					&process, 1);
}
