/* The writer's compressors (the contract: compress.h).  The input is cut
 * into blocks of BLOCK_BYTES, each compressed into a unit of its own (a
 * gzip member, or a zstd frame) by a pool of worker threads while the
 * caller fills the next; the units go out in order.  A gzip stream of
 * many members is one stream to every reader (RFC 1952, gzip -c a b), and
 * so are zstd frames one after another; a reader can start decoding afresh
 * at each (fxt-view's marks and reader clones, fxt/source.c).  gzip by
 * libdeflate (whole buffers, 2.2x less CPU than zlib's deflate at level 1
 * on fxt-run's archives, and a little smaller), zstd by fxtrace's own
 * encoder (zstdenc.c: standard frames made for FXT's records, a third
 * fewer instructions than libzstd's level 1 on fib's archive and as
 * small; larger on archives full of strings), or by
 * ZSTD_compress2() at level 1 with FXT_LIBZSTD set in the environment
 * (to compare).  Each block is compressed whole: libzstd's own workers
 * (ZSTD_c_nbWorkers) took one job per frame of this size, and the caller
 * waited at each frame's end for it, so they never ran beside the
 * conversion that fills the next
 * (bench/README.md, "zstd frames by the writer's own workers").  The
 * writer fills the blocks' buffers in place (fxt__zsink_hand()): copying
 * its records into them was 3 % of a compressed run's CPU. */
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
#include "fxt/zstdenc.h"

/* The input of one gzip member or zstd frame: a reader's places to start
 * decoding are this far apart (see bench/README.md). */
#define BLOCK_BYTES FXT__ZSINK_BLOCK
#define GZ_LEVEL    1 /* libdeflate's fastest: ~440 MB/s a core */
#define ZSTD_LEVEL  1 /* see bench/compress.sh */
#define MAX_WORKERS 8

enum slot_state { SLOT_FILLING, SLOT_QUEUED, SLOT_DONE };

/* One block: its input, then its member or frame. */
struct slot {
	unsigned char *in, *out;
	size_t in_len, out_len, out_cap;
	int err;
	enum slot_state state;
};

/* What compresses: the codec, and for zstd, whose encoder. */
enum engine { ENGINE_DEFLATE, ENGINE_ZSTD, ENGINE_LIBZSTD };

struct fxt__zsink {
	enum fxt__codec codec;
	enum engine engine;
	fxt__zsink_out_fn out;
	void *ctx;
	int err;
	bool dirty; /* written to since the last flush */
	unsigned nworkers;

	/* Block `seq` is slots[seq % nslots]; blocks before `written` went
	 * out, before `taken` a worker has, before `queued` are complete;
	 * block `queued` is being filled. */
	struct slot *slots;
	unsigned nslots;
	uint64_t written, taken, queued;
	void *cc; /* the caller's compressor (compressor_new()) */
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

/* ----------------------------------------------------------- compressors */

/* A compressor (libdeflate's, ours, or a ZSTD_CCtx set to our level,
 * with checksums), or NULL. */
static void *compressor_new(enum engine engine)
{
	if (engine == ENGINE_DEFLATE)
		return libdeflate_alloc_compressor(GZ_LEVEL);
	if (engine == ENGINE_ZSTD)
		return fxt__zstdenc_new();
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
		  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)))) {
		ZSTD_freeCCtx(c);
		c = NULL;
	}
	return c;
}

static void compressor_free(enum engine engine, void *c)
{
	if (!c)
		return;
	if (engine == ENGINE_LIBZSTD)
		ZSTD_freeCCtx(c);
	else if (engine == ENGINE_ZSTD)
		fxt__zstdenc_free(c);
	else
		libdeflate_free_compressor(c);
}

/* The most a full block's unit can take. */
static size_t unit_bound(enum engine engine, void *c)
{
	if (engine == ENGINE_ZSTD)
		return fxt__zstdenc_bound(BLOCK_BYTES);
	return engine == ENGINE_LIBZSTD ? ZSTD_compressBound(BLOCK_BYTES)
					: libdeflate_gzip_compress_bound(c, BLOCK_BYTES);
}

/* Compresses a slot's input into one whole member or frame. */
static void compress_slot(enum engine engine, void *c, struct slot *s)
{
	if (engine == ENGINE_ZSTD) {
		/* out_cap is the bound of a full block: 0 cannot happen. */
		s->out_len = fxt__zstdenc_frame(c, s->out, s->out_cap, s->in, s->in_len);
		s->err = s->out_len ? 0 : -EIO;
		return;
	}
	if (engine == ENGINE_LIBZSTD) {
		size_t r = ZSTD_compress2(c, s->out, s->out_cap, s->in, s->in_len);
		s->err = ZSTD_isError(r) ? -EIO : 0;
		s->out_len = ZSTD_isError(r) ? 0 : r;
		return;
	}
	/* out_cap is the bound of a full block: 0 cannot happen. */
	s->out_len = libdeflate_gzip_compress(c, s->in, s->in_len, s->out, s->out_cap);
	s->err = s->out_len ? 0 : -EIO;
}

/* ------------------------------------------------------------ the blocks */

static void *worker(void *arg)
{
	struct fxt__zsink *z = arg;
	void *c = compressor_new(z->engine);

	pthread_mutex_lock(&z->mu);
	for (;;) {
		while (z->taken == z->queued && !z->stop)
			pthread_cond_wait(&z->work, &z->mu);
		if (z->taken == z->queued)
			break;
		struct slot *s = &z->slots[z->taken++ % z->nslots];
		pthread_mutex_unlock(&z->mu);
		if (c)
			compress_slot(z->engine, c, s);
		else
			s->err = -ENOMEM;
		pthread_mutex_lock(&z->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->mu);
	compressor_free(z->engine, c);
	return NULL;
}

/* Starts the workers; those that could not start leave the work to the
 * caller. */
static void workers_start(struct fxt__zsink *z)
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
	       pthread_create(&z->threads[z->nthreads], NULL, worker, z) == 0)
		z->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	z->nworkers = z->nthreads;
}

/* Sends the oldest unit out, waiting for it if `wait`.  Returns whether
 * one went. */
static bool put_oldest(struct fxt__zsink *z, bool wait)
{
	struct slot *s = &z->slots[z->written % z->nslots];

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
static void submit(struct fxt__zsink *z, bool full)
{
	struct slot *s = &z->slots[z->queued % z->nslots];

	if (z->nworkers && !z->threads && full)
		workers_start(z);
	if (!z->nthreads) { /* compressed here and now */
		compress_slot(z->engine, z->cc, s);
		s->state = SLOT_DONE;
		z->queued++;
		z->taken++;
		put_oldest(z, false);
		return;
	}
	pthread_mutex_lock(&z->mu);
	s->state = SLOT_QUEUED;
	z->queued++;
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->mu);
	/* What is done goes out; the next block needs a free slot. */
	while (put_oldest(z, z->queued - z->written >= z->nslots))
		;
}

static int blocks_write(struct fxt__zsink *z, const unsigned char *p, size_t len)
{
	while (len && !z->err) {
		struct slot *s = &z->slots[z->queued % z->nslots];
		size_t take = BLOCK_BYTES - s->in_len;

		if (take > len)
			take = len;
		memcpy(s->in + s->in_len, p, take);
		s->in_len += take;
		p += take;
		len -= take;
		if (s->in_len == BLOCK_BYTES)
			submit(z, true);
	}
	return z->err;
}

/* Every byte so far out, as whole units.  `end`: an empty stream still
 * gets one (empty) unit, to be a gzip or zstd file. */
static int blocks_flush(struct fxt__zsink *z, bool end)
{
	struct slot *s = &z->slots[z->queued % z->nslots];

	if (s->in_len || (end && z->queued == 0))
		submit(z, false);
	while (put_oldest(z, true))
		;
	return z->err;
}

/* Buffers for slots v[from .. to - 1]: 0, or -ENOMEM (none left). */
static int slots_add(struct slot *v, unsigned from, unsigned to, size_t cap)
{
	for (unsigned i = from; i < to; i++) {
		v[i].in = malloc(FXT__ZSINK_CAP);
		v[i].out = malloc(cap);
		v[i].out_cap = cap;
		if (!v[i].in || !v[i].out) {
			for (unsigned j = from; j <= i; j++) {
				free(v[j].in);
				free(v[j].out);
				v[j].in = v[j].out = NULL;
			}
			return -ENOMEM;
		}
	}
	return 0;
}

static int blocks_open(struct fxt__zsink *z)
{
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->work, NULL);
	pthread_cond_init(&z->done, NULL);
	z->sync_init = true;
	/* With workers: compressing, one going out, one filling.  Serial,
	 * each block goes out as it is complete: one. */
	z->nslots = z->nworkers ? z->nworkers + 2 : 1;
	z->slots = calloc(z->nslots, sizeof(*z->slots));
	if (!z->slots)
		return -ENOMEM;
	/* The caller's compressor, also for the bound of a full block. */
	z->cc = compressor_new(z->engine);
	if (!z->cc)
		return -ENOMEM;
	return slots_add(z->slots, 0, z->nslots, unit_bound(z->engine, z->cc));
}

static void blocks_free(struct fxt__zsink *z)
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
	compressor_free(z->engine, z->cc);
}

/* ----------------------------------------------------------------- entry */

/* FXT_LIBZSTD set: libzstd's level 1 writes the zstd frames
 * (run/settings.def). */
static bool libzstd_asked(void)
{
	return getenv("FXT_LIBZSTD") != NULL;
}

int fxt__zsink_open(struct fxt__zsink **out, enum fxt__codec codec, bool serial,
		    fxt__zsink_out_fn fn, void *ctx)
{
	struct fxt__zsink *z = calloc(1, sizeof(*z));
	int err;

	*out = NULL;
	if (!z)
		return -ENOMEM;
	z->codec = codec;
	z->engine = codec != FXT__CODEC_ZSTD ? ENGINE_DEFLATE
		    : libzstd_asked()	     ? ENGINE_LIBZSTD
					     : ENGINE_ZSTD;
	z->out = fn;
	z->ctx = ctx;
	z->nworkers = serial ? 0 : cores();
	err = blocks_open(z);
	if (err) {
		fxt__zsink_free(z);
		return err;
	}
	*out = z;
	return 0;
}

int fxt__zsink_parallel(struct fxt__zsink *z)
{
	unsigned n = cores(), nslots = n + 2, fill;
	struct slot *v, t;

	if (z->err || z->nworkers || n < 2)
		return z->err;
	/* The ring of slots grown for n workers.  Serial, each block went
	 * out as it was submitted: only the one being filled holds
	 * anything, and it keeps its place in the ring (block `queued`). */
	v = calloc(nslots, sizeof(*v));
	if (!v)
		return 0; /* serial still */
	memcpy(v, z->slots, z->nslots * sizeof(*v));
	if (slots_add(v, z->nslots, nslots, z->slots[0].out_cap)) {
		free(v);
		return 0;
	}
	fill = (unsigned)(z->queued % z->nslots);
	t = v[fill];
	v[fill] = v[z->queued % nslots];
	v[z->queued % nslots] = t;
	free(z->slots);
	z->slots = v;
	z->nslots = nslots;
	z->nworkers = n;
	return 0;
}

int fxt__zsink_error(const struct fxt__zsink *z)
{
	return z->err;
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
	return blocks_write(z, data, len);
}

void *fxt__zsink_buf(struct fxt__zsink *z, size_t *filled)
{
	struct slot *s = &z->slots[z->queued % z->nslots];

	*filled = s->in_len;
	return s->in;
}

void *fxt__zsink_hand(struct fxt__zsink *z, size_t len, size_t keep)
{
	struct slot *s = &z->slots[z->queued % z->nslots], *next;

	if (len > BLOCK_BYTES || keep > FXT__ZSINK_CAP - len)
		set_err(z, -EINVAL); /* a caller bug: the block is lost */
	if (len && !z->err) {
		/* Serial, the block is compressed (and out) before its tail
		 * moves to the start of the same buffer; with workers, a
		 * worker reads its first `len` bytes while the tail is copied
		 * to a free slot's. */
		s->in_len = len;
		z->dirty = true;
		submit(z, len == BLOCK_BYTES);
	}
	next = &z->slots[z->queued % z->nslots];
	if (!z->err)
		memmove(next->in, s->in + len, keep);
	return next->in;
}

int fxt__zsink_flush(struct fxt__zsink *z)
{
	if (z->err || !z->dirty)
		return z->err;
	z->dirty = false;
	return blocks_flush(z, false);
}

int fxt__zsink_end_unit(struct fxt__zsink *z)
{
	return fxt__zsink_flush(z);
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
	return blocks_flush(z, true);
}

void fxt__zsink_free(struct fxt__zsink *z)
{
	if (!z)
		return;
	blocks_free(z);
	free(z);
}
