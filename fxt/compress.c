/* The writer's compressors (the contract: compress.h).  gzip: the input is
 * cut into blocks of GZ_BLOCK_BYTES, each deflated into a gzip member of
 * its own (libdeflate: whole buffers, 2.2x less CPU than zlib's deflate at
 * level 1 on fxt-run's archives, and a little smaller) by a pool of worker
 * threads while the caller fills the next;
 * the members go out in order, and a gzip stream of many members is one
 * stream to every reader (RFC 1952, gzip -c a b).  zstd: compressed by
 * libzstd's own workers (ZSTD_c_nbWorkers), a frame ended every
 * ZSTD_FRAME_BYTES of input: frames one after another are one stream too,
 * and a reader can start decoding afresh at each (fxt-view's marks and
 * reader clones, fxt/source.c), as at each gzip member. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zstd.h>

#include "fxt/compress.h"

#define GZ_BLOCK_BYTES	 (2u << 20) /* the input of one gzip member */
#define GZ_LEVEL	 1	    /* libdeflate's fastest: ~440 MB/s a core */
#define ZSTD_LEVEL	 1	    /* see bench/compress.sh */
#define ZSTD_FRAME_BYTES (2u << 20) /* the input of one zstd frame (see bench/README.md) */
#define MAX_WORKERS	 8

enum slot_state { SLOT_FILLING, SLOT_QUEUED, SLOT_DONE };

/* One block: its input, then its member. */
struct gz_slot {
	unsigned char *in, *out;
	size_t in_len, out_len, out_cap;
	int err;
	enum slot_state state;
};

struct fxt__zsink {
	enum fxt__codec codec;
	fxt__zsink_out_fn out;
	void *ctx;
	int err;
	bool dirty; /* written to since the last flush */
	unsigned nworkers;

	/* zstd */
	ZSTD_CCtx *cctx;
	unsigned char *zbuf;
	size_t zcap;
	size_t zframe;	   /* input in the frame being written */
	bool zended;	   /* a frame was ended, none begun since */
	unsigned zworkers; /* workers to take at the next frame's start (fxt__zsink_parallel()) */

	/* gzip: block `seq` is slots[seq % nslots]; blocks before `written`
	 * went out, before `taken` a worker has, before `queued` are
	 * complete; block `queued` is being filled. */
	struct gz_slot *slots;
	unsigned nslots;
	uint64_t written, taken, queued;
	struct libdeflate_compressor *dc; /* the caller's, with no workers */
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool sync_init; /* mu, work, done */
	pthread_t *threads;
	unsigned nthreads; /* started: 0 until the first full block */
	bool stop;
};

static int set_err(struct fxt__zsink *z, int err)
{
	if (!z->err)
		z->err = err;
	return z->err;
}

/* The cores this process may run on, at most MAX_WORKERS. */
static unsigned cores(void)
{
	cpu_set_t set;
	int n = 1;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n < 1)
		n = 1;
	return n > MAX_WORKERS ? MAX_WORKERS : (unsigned)n;
}

/* ------------------------------------------------------------------ gzip */

/* Deflates a slot's input into one whole member. */
static void gz_member(struct libdeflate_compressor *dc, struct gz_slot *s)
{
	/* out_cap is the bound of a full block: 0 cannot happen. */
	s->out_len = libdeflate_gzip_compress(dc, s->in, s->in_len, s->out, s->out_cap);
	s->err = s->out_len ? 0 : -EIO;
}

static void *gz_worker(void *arg)
{
	struct fxt__zsink *z = arg;
	struct libdeflate_compressor *dc = libdeflate_alloc_compressor(GZ_LEVEL);

	pthread_mutex_lock(&z->mu);
	for (;;) {
		while (z->taken == z->queued && !z->stop)
			pthread_cond_wait(&z->work, &z->mu);
		if (z->taken == z->queued)
			break;
		struct gz_slot *s = &z->slots[z->taken++ % z->nslots];
		pthread_mutex_unlock(&z->mu);
		if (dc)
			gz_member(dc, s);
		else
			s->err = -ENOMEM;
		pthread_mutex_lock(&z->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->mu);
	libdeflate_free_compressor(dc);
	return NULL;
}

/* Starts the workers; those that could not start leave the work to the
 * caller. */
static void gz_start(struct fxt__zsink *z)
{
	sigset_t all, old;

	z->threads = calloc(z->nworkers, sizeof(*z->threads));
	if (!z->threads) {
		z->nworkers = 0;
		return;
	}
	/* Signals are for the caller's thread, never a worker's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (z->nthreads < z->nworkers &&
	       pthread_create(&z->threads[z->nthreads], NULL, gz_worker, z) == 0)
		z->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	z->nworkers = z->nthreads;
}

/* Sends the oldest member out, waiting for it if `wait`.  Returns whether
 * one went. */
static bool gz_put_oldest(struct fxt__zsink *z, bool wait)
{
	struct gz_slot *s = &z->slots[z->written % z->nslots];

	if (z->written == z->queued)
		return false;
	pthread_mutex_lock(&z->mu);
	while (wait && s->state != SLOT_DONE)
		pthread_cond_wait(&z->done, &z->mu);
	bool ready = s->state == SLOT_DONE;
	pthread_mutex_unlock(&z->mu);
	if (!ready)
		return false;
	if (s->err)
		set_err(z, s->err);
	else if (!z->err)
		set_err(z, z->out(z->ctx, s->out, s->out_len));
	s->in_len = s->out_len = 0;
	s->state = SLOT_FILLING;
	z->written++;
	return true;
}

/* The block being filled is complete (`full`, or short at a flush).  The
 * workers start at the first full block: a small archive has none. */
static void gz_submit(struct fxt__zsink *z, bool full)
{
	struct gz_slot *s = &z->slots[z->queued % z->nslots];

	if (z->nworkers && !z->threads && full)
		gz_start(z);
	if (!z->nthreads) { /* deflated here and now */
		gz_member(z->dc, s);
		s->state = SLOT_DONE;
		z->queued++;
		z->taken++;
		gz_put_oldest(z, false);
		return;
	}
	pthread_mutex_lock(&z->mu);
	s->state = SLOT_QUEUED;
	z->queued++;
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->mu);
	/* What is done goes out; the next block needs a free slot. */
	while (gz_put_oldest(z, z->queued - z->written >= z->nslots))
		;
}

static int gz_write(struct fxt__zsink *z, const unsigned char *p, size_t len)
{
	while (len && !z->err) {
		struct gz_slot *s = &z->slots[z->queued % z->nslots];
		size_t take = GZ_BLOCK_BYTES - s->in_len;

		if (take > len)
			take = len;
		memcpy(s->in + s->in_len, p, take);
		s->in_len += take;
		p += take;
		len -= take;
		if (s->in_len == GZ_BLOCK_BYTES)
			gz_submit(z, true);
	}
	return z->err;
}

/* Every byte so far out, as whole members.  `end`: an empty stream still
 * gets one (empty) member, to be a gzip file. */
static int gz_flush(struct fxt__zsink *z, bool end)
{
	struct gz_slot *s = &z->slots[z->queued % z->nslots];

	if (s->in_len || (end && z->queued == 0))
		gz_submit(z, false);
	while (gz_put_oldest(z, true))
		;
	return z->err;
}

static int gz_open(struct fxt__zsink *z)
{
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->work, NULL);
	pthread_cond_init(&z->done, NULL);
	z->sync_init = true;
	z->nslots = z->nworkers + 2; /* compressing, one going out, one filling */
	z->slots = calloc(z->nslots, sizeof(*z->slots));
	if (!z->slots)
		return -ENOMEM;
	/* The caller's compressor, also for the bound of a full block. */
	z->dc = libdeflate_alloc_compressor(GZ_LEVEL);
	if (!z->dc)
		return -ENOMEM;
	size_t cap = libdeflate_gzip_compress_bound(z->dc, GZ_BLOCK_BYTES);
	for (unsigned i = 0; i < z->nslots; i++) {
		z->slots[i].in = malloc(GZ_BLOCK_BYTES);
		z->slots[i].out = malloc(cap);
		z->slots[i].out_cap = cap;
		if (!z->slots[i].in || !z->slots[i].out)
			return -ENOMEM;
	}
	return 0;
}

static void gz_free(struct fxt__zsink *z)
{
	if (z->threads) {
		pthread_mutex_lock(&z->mu);
		z->stop = true;
		pthread_cond_broadcast(&z->work);
		pthread_mutex_unlock(&z->mu);
		for (unsigned i = 0; i < z->nthreads; i++)
			pthread_join(z->threads[i], NULL);
		free(z->threads);
	}
	if (z->sync_init) {
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->work);
		pthread_cond_destroy(&z->done);
	}
	if (z->slots) {
		for (unsigned i = 0; i < z->nslots; i++) {
			free(z->slots[i].in);
			free(z->slots[i].out);
		}
		free(z->slots);
	}
	if (z->dc)
		libdeflate_free_compressor(z->dc);
}

/* ------------------------------------------------------------------ zstd */

/* Runs the compressor over `in` with directive `op` until it has taken all
 * of it and, for a flush or the end, until the frame is out. */
static int zstd_run(struct fxt__zsink *z, const void *data, size_t len, ZSTD_EndDirective op)
{
	ZSTD_inBuffer in = { data, len, 0 };

	for (;;) {
		ZSTD_outBuffer out = { z->zbuf, z->zcap, 0 };
		size_t left = ZSTD_compressStream2(z->cctx, &out, &in, op);

		if (ZSTD_isError(left))
			return set_err(z, -EIO);
		if (out.pos && set_err(z, z->out(z->ctx, z->zbuf, out.pos)))
			return z->err;
		if (op == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

/* The workers fxt__zsink_parallel() asked for, if a frame may start
 * here (libzstd refuses between a frame's start and its end). */
static void zstd_take_workers(struct fxt__zsink *z)
{
	if (z->zworkers &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_nbWorkers, (int)z->zworkers))) {
		z->nworkers = z->zworkers;
		z->zworkers = 0;
	}
}

/* Compresses len bytes, ending the frame at every ZSTD_FRAME_BYTES. */
static int zstd_write(struct fxt__zsink *z, const unsigned char *p, size_t len)
{
	while (len) {
		size_t take = ZSTD_FRAME_BYTES - z->zframe;

		if (take > len)
			take = len;
		if (zstd_run(z, p, take, ZSTD_e_continue))
			return z->err;
		z->zended = false;
		z->zframe += take;
		p += take;
		len -= take;
		if (z->zframe == ZSTD_FRAME_BYTES) {
			if (zstd_run(z, NULL, 0, ZSTD_e_end))
				return z->err;
			z->zframe = 0;
			z->zended = true;
			zstd_take_workers(z);
		}
	}
	return 0;
}

static int zstd_open(struct fxt__zsink *z)
{
	z->cctx = ZSTD_createCCtx();
	z->zcap = ZSTD_CStreamOutSize();
	z->zbuf = malloc(z->zcap);
	if (!z->cctx || !z->zbuf)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	/* A libzstd built without threads refuses: it compresses here then. */
	if (z->nworkers)
		ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_nbWorkers, (int)z->nworkers);
	return 0;
}

/* ----------------------------------------------------------------- entry */

int fxt__zsink_open(struct fxt__zsink **out, enum fxt__codec codec, bool serial,
		    fxt__zsink_out_fn fn, void *ctx)
{
	struct fxt__zsink *z = calloc(1, sizeof(*z));
	int err;

	*out = NULL;
	if (!z)
		return -ENOMEM;
	z->codec = codec;
	z->out = fn;
	z->ctx = ctx;
	z->nworkers = serial ? 0 : cores();
	err = codec == FXT__CODEC_ZSTD ? zstd_open(z) : gz_open(z);
	if (err) {
		fxt__zsink_free(z);
		return err;
	}
	*out = z;
	return 0;
}

/* gzip: the ring of slots grown for n workers.  Serial, each block went
 * out as it was submitted: only the one being filled holds anything, and
 * it keeps its place in the ring (block `queued`). */
static int gz_parallel(struct fxt__zsink *z, unsigned n)
{
	unsigned nslots = n + 2, fill = (unsigned)(z->queued % z->nslots);
	size_t cap = z->slots[0].out_cap;
	struct gz_slot *v = calloc(nslots, sizeof(*v)), t;

	if (!v)
		return 0; /* serial still */
	memcpy(v, z->slots, z->nslots * sizeof(*v));
	for (unsigned i = z->nslots; i < nslots; i++) {
		v[i].in = malloc(GZ_BLOCK_BYTES);
		v[i].out = malloc(cap);
		v[i].out_cap = cap;
		if (!v[i].in || !v[i].out) {
			for (unsigned j = z->nslots; j <= i; j++) {
				free(v[j].in);
				free(v[j].out);
			}
			free(v);
			return 0;
		}
	}
	t = v[fill];
	v[fill] = v[z->queued % nslots];
	v[z->queued % nslots] = t;
	free(z->slots);
	z->slots = v;
	z->nslots = nslots;
	z->nworkers = n;
	return 0;
}

int fxt__zsink_parallel(struct fxt__zsink *z)
{
	unsigned n = cores();

	if (z->err || z->nworkers || n < 2)
		return z->err;
	if (z->codec == FXT__CODEC_ZSTD) {
		z->zworkers = n;
		zstd_take_workers(z); /* else at the frame's end */
		return 0;
	}
	return gz_parallel(z, n);
}

enum fxt__codec fxt__zsink_codec(const struct fxt__zsink *z)
{
	return z->codec;
}

int fxt__zsink_write(struct fxt__zsink *z, const void *data, size_t len)
{
	if (z->err || !len)
		return z->err;
	z->dirty = true;
	return z->codec == FXT__CODEC_ZSTD ? zstd_write(z, data, len) : gz_write(z, data, len);
}

int fxt__zsink_flush(struct fxt__zsink *z)
{
	if (z->err || !z->dirty)
		return z->err;
	z->dirty = false;
	return z->codec == FXT__CODEC_ZSTD ? zstd_run(z, NULL, 0, ZSTD_e_flush)
					   : gz_flush(z, false);
}

int fxt__zsink_end_unit(struct fxt__zsink *z)
{
	if (z->err || !z->dirty)
		return z->err;
	z->dirty = false;
	if (z->codec != FXT__CODEC_ZSTD)
		return gz_flush(z, false);
	if (!zstd_run(z, NULL, 0, ZSTD_e_end))
		zstd_take_workers(z);
	return z->err;
}

/* An empty gzip member (RFC 1952) whose header carries an extra field of
 * one subfield "FX" (fxtrace) of zeros, or a zstd skippable frame (magic
 * 0x184D2A50, its length, zeros). */
int fxt__zsink_padding(enum fxt__codec codec, unsigned char *p, size_t len)
{
	if (codec == FXT__CODEC_ZSTD) {
		if (len < FXT__ZSINK_PAD_MIN_ZSTD || len - 8 > UINT32_MAX)
			return -ENOSPC;
		uint32_t magic = 0x184D2A50u, size = (uint32_t)(len - 8);
		memset(p, 0, len);
		memcpy(p, &magic, 4); /* little-endian, as the format is */
		memcpy(p + 4, &size, 4);
		return 0;
	}
	if (len < FXT__ZSINK_PAD_MIN_GZIP || len > FXT__ZSINK_PAD_MAX_GZIP)
		return -ENOSPC;
	size_t xlen = len - 22, sub = xlen - 4;
	memset(p, 0, len);
	p[0] = 0x1f; /* ID1 ID2 CM=deflate FLG=FEXTRA, MTIME 0, XFL 0, OS unknown */
	p[1] = 0x8b;
	p[2] = 8;
	p[3] = 4;
	p[9] = 255;
	p[10] = (unsigned char)(xlen & 0xff);
	p[11] = (unsigned char)(xlen >> 8);
	p[12] = 'F';
	p[13] = 'X';
	p[14] = (unsigned char)(sub & 0xff);
	p[15] = (unsigned char)(sub >> 8);
	/* After the field: an empty final block of fixed codes (03 00), then
	 * CRC32 and ISIZE of nothing (zeros). */
	p[12 + xlen] = 0x03;
	p[13 + xlen] = 0x00;
	return 0;
}

int fxt__zsink_finish(struct fxt__zsink *z)
{
	if (z->err)
		return z->err;
	z->dirty = false;
	if (z->codec == FXT__CODEC_ZSTD && z->zended)
		return 0; /* the last frame is ended: no empty one after it */
	return z->codec == FXT__CODEC_ZSTD ? zstd_run(z, NULL, 0, ZSTD_e_end) : gz_flush(z, true);
}

void fxt__zsink_free(struct fxt__zsink *z)
{
	if (!z)
		return;
	gz_free(z);
	ZSTD_freeCCtx(z->cctx);
	free(z->zbuf);
	free(z);
}
