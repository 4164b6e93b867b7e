/* The FXT reader's byte source and its window (see reader_int.h): memory,
 * a descriptor, either through inflate when it is gzip or through
 * ZSTD_decompressStream when it is zstd (told by the first bytes, whatever
 * the file's name); the window over it
 * is filled, grown for a large record held whole, and skipped through for
 * a large payload not held.  A plain regular file past MAP_MIN is mapped
 * (map_file()): the window is the map, moved on MAP_STEP at a fill, so
 * that no read() copies its bytes (a tenth of fxt-report's time on a 700
 * MB archive), with the same records, large ones held or not, and errors.
 *
 * A compressed regular file (or memory) notes, as it is read, where each
 * gzip member and zstd frame starts (fxtrace's writer cuts both every few
 * MB), in the stream and in the compressed bytes: a clone
 * (fxt_reader_clone_at()) starts decoding afresh at the last one before
 * its offset and decodes up to it, reading the file with pread() on a
 * descriptor of its own, so that the view's marks work on .fxt.gz and
 * .fxt.zst as on a plain archive.  A gzip member longer than ZW_SPAN
 * (gzip's own output is one member) gets places inside it too: at the
 * end of a deflate block every ZW_SPAN of output, inflate's 32 KiB window
 * saved there, from which a clone inflates raw deflate to the member's
 * end (its trailer skipped); at most ZW_MAX of them (8 MiB), every other
 * one dropped and the span doubled past that.
 *
 * Clones read through a cache of decoded stretches (a stretch: from one
 * place to the next, known once the reader cloned passed it) that they
 * share: the first clone that needs a stretch decodes it whole, and the
 * others (the merge's cursors of other threads near it, a mark resumed
 * again, a search) copy it from there.  Bounded: ZC_BYTES held, plus a
 * stretch being decoded (ZC_STRETCH_MAX at most) per thread decoding one;
 * a larger stretch (one gzip member of a foreign file) is decoded by the
 * clone itself, from its place, as before the cache.
 *
 * One job, one file past 800 lines: the places, the cache and the
 * decoders' restarts all work on the same decoder state as the window's
 * fills (read_gz(), read_zstd()), which no other file should reach.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "fxt/reader_int.h"

/* The places noted at most: past it every other goes. */
#define SEEK_MAX_POINTS 65536u

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

/* pread() from the file's descriptor of the places, retrying on EINTR. */
static ssize_t pread_at(const struct fxt__seekpts *s, void *dst, size_t n, uint64_t off)
{
	for (;;) {
		ssize_t got = pread(s->fd, dst, n, (off_t)(s->base + off));
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
		r->zread = r->mem_pos;
	} else {
		ssize_t got = r->seek && !r->seek_own
				  ? pread_at(r->seek, r->zin, ZIN_BYTES, r->zread)
				  : read_fd(r->fd, r->zin, ZIN_BYTES);
		if (got < 0) {
			source_error(r, r->win_off + r->end, "read error: %s", strerror((int)-got));
			r->read_errno = (int)-got;
			return false;
		}
		r->in = r->zin;
		r->in_len = (size_t)got;
		r->zread += (size_t)got;
	}
	if (r->in_len == 0)
		r->in_eof = true;
	return true;
}

/* Drops every other place from the second on (those with a window that
 * `only_win` says), freeing their windows. */
static void thin_places(struct fxt__seekpts *s, bool only_win)
{
	size_t w = 1, k = 0;

	for (size_t i = 1; i < s->n; i++) {
		bool can = !only_win || s->pt[i].win;

		if (can && k++ % 2 == 0) {
			if (s->pt[i].win)
				s->zw_n--;
			free(s->pt[i].win);
			continue;
		}
		s->pt[w++] = s->pt[i];
	}
	s->n = w;
}

/* Notes a place at stream offset u, at the compressed input not used
 * yet: a member's or frame's start, or (gzip, win) inside a member after
 * a deflate block, `bits` of the byte before not used yet, inflate's
 * window saved. */
static void note_place(struct fxt_reader *r, uint64_t u, bool win, unsigned bits)
{
	struct fxt__seekpts *s = r->seek;
	struct fxt__seekpt pt = { r->zread - r->in_len, u, NULL, 0, bits };

	if (!s || !r->seek_own || (s->n && s->pt[s->n - 1].u >= u))
		return;
	if (win) {
		uInt len = 0;

		if (s->zw_n == ZW_MAX) {
			thin_places(s, true);
			s->zw_span *= 2;
			if (u - s->pt[s->n - 1].u < s->zw_span)
				return;
		}
		if (!(pt.win = malloc(32768)) ||
		    inflateGetDictionary(&r->zs, pt.win, &len) != Z_OK) {
			free(pt.win);
			return; /* fewer places: clones decode more */
		}
		pt.wlen = len;
	}
	if (s->n == SEEK_MAX_POINTS)
		thin_places(s, false);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct fxt__seekpt *p = realloc(s->pt, cap * sizeof(*p));
		if (!p) {
			free(pt.win);
			return; /* fewer places: clones decode more */
		}
		s->pt = p;
		s->cap = cap;
	}
	s->pt[s->n++] = pt;
	if (pt.win)
		s->zw_n++;
}

static void note_start(struct fxt_reader *r, uint64_t u)
{
	note_place(r, u, false, 0);
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
			 * after a member is a clean end.  Raw deflate from a
			 * place inside a member leaves its trailer to skip. */
			size_t t = r->gz_skip < r->in_len ? r->gz_skip : r->in_len;
			r->in += t;
			r->in_len -= t;
			r->gz_skip -= (unsigned)t;
			if (r->in_len == 0 && (r->in_eof || !r->gz_skip))
				break;
			if (r->gz_skip)
				continue;
			if ((r->gz_raw ? inflateReset2(&r->zs, 15 + 16) : inflateReset(&r->zs)) !=
			    Z_OK) {
				source_error(r, r->win_off + r->end, "gzip: cannot reset inflate");
				return -1;
			}
			r->gz_raw = false;
			r->member_done = false;
		}
		uInt before = r->zs.avail_out;
		/* the owner, ZW_SPAN after its last place: a place at the
		 * next deflate block's end */
		bool mine = dst == r->buf + r->end && r->seek && r->seek_own;
		uint64_t u = r->win_off + r->end + (want - r->zs.avail_out);
		bool due = mine && u - r->seek->pt[r->seek->n - 1].u >= r->seek->zw_span;
		r->zs.next_in = (Bytef *)(uintptr_t)r->in; /* zlib does not write to it */
		r->zs.avail_in = (uInt)r->in_len;
		int zr = inflate(&r->zs, due ? Z_BLOCK : Z_NO_FLUSH);
		r->in = r->zs.next_in;
		r->in_len = r->zs.avail_in;
		u = r->win_off + r->end + (want - r->zs.avail_out);
		if (zr == Z_STREAM_END) {
			r->member_done = true;
			r->gz_skip = r->gz_raw ? 8 : 0;
			if (mine)
				note_start(r, u);
		} else if (due && zr == Z_OK && (r->zs.data_type & 128) &&
			   !(r->zs.data_type & 64)) {
			note_place(r, u, true, (unsigned)r->zs.data_type & 7);
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
		if (zr == 0) {
			r->frame_done = true;
			if (dst == r->buf + r->end)
				note_start(r, r->win_off + r->end + out.pos);
		} else if (moved)
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

/* ------------------------------------------- the clones' stretch cache */

static ssize_t read_codec(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	return r->codec == CODEC_ZSTD ? read_zstd(r, dst, n) : read_gz(r, dst, n);
}

/* The last place at or before stream offset u. */
static size_t place_of(const struct fxt__seekpts *s, uint64_t u)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->pt[mid].u <= u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

/* Starts r's decoder afresh at place k (a member's or frame's start). */
static bool restart_at(struct fxt_reader *r, size_t k)
{
	const struct fxt__seekpt *p = &r->seek->pt[k];

	bool bad;

	r->zread = r->mem_pos = p->z;
	r->in_len = 0;
	r->in_eof = false;
	r->gz_skip = 0;
	if (r->codec == CODEC_ZSTD) {
		bad = ZSTD_isError(ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only));
	} else if (p->win) { /* raw deflate, from inside the member */
		uint8_t byte = 0;

		bad = inflateReset2(&r->zs, -15) != Z_OK;
		if (!bad && p->bits)
			bad = (r->src == SRC_MEM ? (byte = r->mem[p->z - 1], 1)
						 : pread_at(r->seek, &byte, 1, p->z - 1)) != 1 ||
			      inflatePrime(&r->zs, (int)p->bits, byte >> (8 - p->bits)) != Z_OK;
		if (!bad && p->wlen)
			bad = inflateSetDictionary(&r->zs, p->win, p->wlen) != Z_OK;
		r->gz_raw = true;
		r->member_done = false;
	} else {
		bad = inflateReset2(&r->zs, 15 + 16) != Z_OK;
		r->gz_raw = false;
	}
	if (bad) {
		source_error(r, p->u, "cannot restart the decompressor");
		return false;
	}
	/* at a place a member or frame ended: the end of the input there
	 * is a clean end (and inflate's reset again, harmless) */
	r->member_done = !p->win;
	r->frame_done = true;
	return true;
}

/* Decodes the n bytes from the decoder's place, thrown away. */
static bool decode_skip(struct fxt_reader *r, uint8_t *scratch, size_t cap, uint64_t n, uint64_t at)
{
	while (n > 0) {
		ssize_t got = read_codec(r, scratch, n < cap ? (size_t)n : cap);
		if (got <= 0) {
			if (got == 0)
				source_error(r, at, "compressed stream ended before offset %llu",
					     (unsigned long long)(at + n));
			return false;
		}
		n -= (uint64_t)got;
		at += (uint64_t)got;
	}
	return true;
}

/* Puts clone r at stream offset u: in the cache's stretch that holds it
 * when it may be cached, else decoding from the place before it. */
static bool zc_enter(struct fxt_reader *r, uint64_t u)
{
	const struct fxt__seekpts *s = r->seek;
	size_t k = place_of(s, u);

	if (k + 1 < s->n && s->pt[k + 1].u - s->pt[k].u <= ZC_STRETCH_MAX) {
		r->zc_on = true;
		r->zc_u = s->pt[k].u;
		r->zc_len = s->pt[k + 1].u - s->pt[k].u;
		r->zc_pos = u - s->pt[k].u;
		return true;
	}
	r->zc_on = false;
	return restart_at(r, k) && decode_skip(r, r->buf, r->cap, u - s->pt[k].u, s->pt[k].u);
}

/* The cached stretch starting at u (its slot), or NULL.  Under the lock. */
static struct fxt__zent *zc_find(struct fxt__seekpts *s, uint64_t u)
{
	for (size_t i = 0; i < ZC_SLOTS; i++)
		if (s->zc[i].len && s->zc[i].u == u)
			return &s->zc[i];
	return NULL;
}

/* Puts a decoded stretch in the cache, the least recently used going
 * while it would hold more than ZC_BYTES (or has no free slot).  Under
 * the lock.  Takes data. */
static struct fxt__zent *zc_put(struct fxt__seekpts *s, uint64_t u, uint8_t *data, size_t len)
{
	struct fxt__zent *e;

	for (;;) {
		struct fxt__zent *old = NULL, *free_slot = NULL;

		for (size_t i = 0; i < ZC_SLOTS; i++) {
			if (!s->zc[i].len)
				free_slot = free_slot ? free_slot : &s->zc[i];
			else if (!old || s->zc[i].used < old->used)
				old = &s->zc[i];
		}
		if (free_slot && s->zc_bytes + len <= ZC_BYTES) {
			e = free_slot;
			break;
		}
		s->zc_bytes -= old->len;
		munmap(old->data, old->len);
		old->len = 0;
	}
	*e = (struct fxt__zent){ .u = u, .used = ++s->zc_tick, .data = data, .len = len };
	s->zc_bytes += len;
	return e;
}

/* Copies n bytes of r's stretch from the cache, decoding the stretch
 * whole first when it is not there (outside the lock). */
static bool zc_copy(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	struct fxt__seekpts *s = r->seek;
	struct fxt__zent *e;
	uint8_t *data;

	pthread_mutex_lock(&s->lock);
	if ((e = zc_find(s, r->zc_u)) != NULL) {
		e->used = ++s->zc_tick;
		memcpy(dst, e->data + r->zc_pos, n);
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	pthread_mutex_unlock(&s->lock);
	/* mapped, not malloc()ed: unmapped when it goes, where freed
	 * stretches would stay in the heaps of the threads that decoded them */
	data = mmap(NULL, r->zc_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED) {
		fxt__set_error(r, r->zc_u, "out of memory for a decoded stretch");
		r->read_errno = ENOMEM;
		return false;
	}
	if (!restart_at(r, place_of(s, r->zc_u))) {
		munmap(data, r->zc_len);
		return false;
	}
	for (size_t have = 0; have < r->zc_len;) {
		ssize_t got = read_codec(r, data + have, r->zc_len - have);
		if (got <= 0) {
			if (got == 0)
				source_error(r, r->zc_u + have,
					     "compressed stream ended before offset %llu",
					     (unsigned long long)(r->zc_u + r->zc_len));
			munmap(data, r->zc_len);
			return false;
		}
		have += (size_t)got;
	}
	memcpy(dst, data + r->zc_pos, n);
	pthread_mutex_lock(&s->lock);
	if (zc_find(s, r->zc_u)) /* another thread's, meanwhile */
		munmap(data, r->zc_len);
	else
		zc_put(s, r->zc_u, data, r->zc_len);
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* read_codec() for a clone: from the cache's stretches, or decoding the
 * ones it does not hold. */
static ssize_t read_src(struct fxt_reader *r, uint8_t *dst, size_t n)
{
	size_t got = 0;

	if (!r->zc_on)
		return read_codec(r, dst, n);
	while (got < n) {
		size_t take;

		if (r->zc_pos == r->zc_len) { /* the next stretch */
			if (!zc_enter(r, r->zc_u + r->zc_len))
				return -1;
			if (!r->zc_on) {
				ssize_t more = read_codec(r, dst + got, n - got);
				if (more < 0)
					return got ? (ssize_t)got : -1;
				return (ssize_t)(got + (size_t)more);
			}
		}
		take = r->zc_len - r->zc_pos < n - got ? (size_t)(r->zc_len - r->zc_pos) : n - got;
		if (!zc_copy(r, dst + got, take))
			return got ? (ssize_t)got : -1;
		r->zc_pos += take;
		got += take;
	}
	return (ssize_t)got;
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
		got = read_src(r, scratch, ZIN_BYTES);
	while (got > 0);
	free(scratch);
	if (!r->source_failed) {
		memcpy(r->err, err, sizeof(err));
		r->err_off = off;
	}
	r->failed = true;
}

static int codec_start(struct fxt_reader *r, enum codec codec, const uint8_t *in, size_t len);

/* A clone's first fill: its buffers and decompressor, and its place,
 * in the cache's stretch that holds it or decoded from the place before
 * it (zc_enter()). */
static bool seek_start(struct fxt_reader *r)
{
	r->seek_pending = false;
	r->cap = WINDOW_BYTES;
	r->buf = malloc(r->cap);
	if (r->src == SRC_FD)
		r->zin = malloc(ZIN_BYTES);
	if (!r->buf || (r->src == SRC_FD && !r->zin)) {
		fxt__set_error(r, r->seek_to, "out of memory for a window");
		r->read_errno = ENOMEM;
		return false;
	}
	r->win = r->buf;
	if (codec_start(r, r->codec, NULL, 0) < 0) {
		fxt__set_error(r, r->seek_to, "out of memory for a decompressor");
		r->read_errno = ENOMEM;
		return false;
	}
	r->win_off = r->seek_to;
	r->pos = r->end = 0;
	return zc_enter(r, r->seek_to);
}

/* The first byte of the page that holds a. */
static uintptr_t page_of(const void *a)
{
	return (uintptr_t)a & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
}

/* fxt__fill_slow() of a mapped file: MAP_STEP more of the map (or
 * `need`) in the window, its pages mapped by the faults of their first
 * reads (the kernel maps 16 at a fault; MADV_POPULATE_READ's mapping page
 * by page cost more: 15.9% of the samples in the reading thread's kernel
 * side against 14.0%); the pages before the unread bytes given back, so
 * that what the reader holds stays bounded as it does with read() (a page
 * given back that is read again is mapped again: only slower). */
static bool map_fill(struct fxt_reader *r, size_t need)
{
	size_t want = r->pos + (need > MAP_STEP ? need : MAP_STEP);

	if (want > r->map_len)
		want = r->map_len;
	if (want > r->end)
		r->end = want;
	r->eof = r->end == r->map_len;
	if (r->pos >= r->map_dropped + MAP_STEP) {
		uintptr_t a = page_of(r->map_base + r->map_dropped),
			  b = page_of(r->map_base + r->pos);

		if (b > a)
			(void)madvise((void *)a, b - a, MADV_DONTNEED);
		r->map_dropped = r->pos;
	}
	return r->end - r->pos >= need;
}

/* Reads the plain regular file fd through a map of it, when it is worth
 * it (more than MAP_MIN bytes): the window's bytes then come from the
 * page cache without read()'s copy.  `have` bytes of it were read from
 * fd already (its position is past them).  Nothing changes when it cannot
 * be mapped: then read() reads it.  (A file cut shorter while it is read
 * kills the reader with SIGBUS, as order.c's map of it does.) */
static void map_file(struct fxt_reader *r, int fd, size_t have)
{
	struct stat st;
	off_t at;
	void *m;

	if ((r->flags & FXT_READER_RAW) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (at = lseek(fd, 0, SEEK_CUR)) < (off_t)have ||
	    st.st_size - (at - (off_t)have) <= MAP_MIN || (uint64_t)st.st_size > SIZE_MAX)
		return;
	if (r->premap && r->premap_size == (size_t)st.st_size) {
		/* order.c's, of the same file as it is now: taken */
		m = r->premap;
		r->premap = NULL;
	} else {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			return;
		(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	r->map = m;
	r->map_size = (size_t)st.st_size;
	r->map_base = (const uint8_t *)m + (at - (off_t)have);
	r->map_len = (size_t)(st.st_size - (at - (off_t)have));
	r->map_dropped = 0;
	r->win = r->map_base;
	r->pos = r->end = 0;
	map_fill(r, 0);
}

/* Makes at least `need` (<= cap) unread bytes available in the window.
 * Returns true if it could, false at the end of input or on error
 * (r->failed tells which). */
bool fxt__fill_slow(struct fxt_reader *r, size_t need)
{
	if (r->failed)
		return false;
	if (r->seek_pending && !seek_start(r))
		return false;
	if (r->src == SRC_MEM && !r->codec)
		return false;
	if (r->map)
		return map_fill(r, need);
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->win_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < need && !r->eof) {
		ssize_t got;
		if (r->codec) {
			got = read_src(r, r->buf + r->end, r->cap - r->end);
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

int fxt__seek_init(struct fxt_reader *r, int fd, uint64_t base)
{
	struct fxt__seekpts *s = calloc(1, sizeof(*s));

	if (!s || !(s->pt = malloc(64 * sizeof(*s->pt)))) {
		free(s);
		return -ENOMEM;
	}
	s->refs = 1;
	s->zw_span = ZW_SPAN;
	pthread_mutex_init(&s->lock, NULL);
	s->cap = 64;
	s->n = 1; /* the start: (0, 0) */
	s->pt[0] = (struct fxt__seekpt){ 0 };
	s->base = base;
	s->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd >= 0 && s->fd < 0) {
		free(s->pt);
		free(s);
		return 0; /* no clones then */
	}
	r->seek = s;
	r->seek_own = true;
	return 0;
}

static void seek_put(struct fxt__seekpts *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (s->fd >= 0)
		close(s->fd);
	for (size_t i = 0; i < ZC_SLOTS; i++)
		if (s->zc[i].len)
			munmap(s->zc[i].data, s->zc[i].len);
	for (size_t i = 0; i < s->n; i++)
		free(s->pt[i].win);
	pthread_mutex_destroy(&s->lock);
	free(s->pt);
	free(s);
}

int fxt__source_clone(const struct fxt_reader *r, struct fxt_reader *c, uint64_t offset)
{
	if (!r->seek)
		return -EINVAL;
	c->src = r->src;
	c->codec = r->codec;
	c->mem = r->mem;
	c->mem_len = r->mem_len;
	/* the buffers come at the first read: a clone kept for its tables
	 * (callmerge's marks) costs none */
	c->win = (const uint8_t *)fxt__empty;
	c->win_off = offset;
	c->seek = r->seek;
	__atomic_add_fetch(&c->seek->refs, 1, __ATOMIC_RELAXED);
	c->seek_pending = true;
	c->seek_to = offset;
	return 0;
}

/* order.c's map of the file, when map_file() did not take it. */
static void source_premap_drop(struct fxt_reader *r)
{
	if (r->premap)
		munmap(r->premap, r->premap_size);
	r->premap = NULL;
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
		struct stat st;
		off_t at;

		err = codec_start(r, codec, r->zin, have);
		if (err)
			return err;
		r->zread = have;
		r->in_eof = r->eof;
		r->eof = false;
		/* a regular file can be read again, by clones */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    (at = lseek(fd, 0, SEEK_CUR)) >= (off_t)have &&
		    (err = fxt__seek_init(r, fd, (uint64_t)at - have)) < 0)
			return err;
	} else {
		memcpy(r->buf, r->zin, have);
		r->end = have;
		map_file(r, fd, have);
	}
	source_premap_drop(r);
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
		if (!err)
			err = fxt__seek_init(r, -1, 0);
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
	seek_put(r->seek);
	if (r->own_fd)
		close(r->user_fd);
	if (r->copy_fd >= 0)
		close(r->copy_fd);
	if (r->map)
		munmap(r->map, r->map_size);
	source_premap_drop(r);
	free(r->buf);
	free(r->zin);
}
