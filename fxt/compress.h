/* The writer's compressors (compress.c), private to fxt/: gzip as
 * independent members, zstd as independent frames, each unit compressed
 * by a pool of threads (or on the caller's).  Either hands the compressed
 * bytes, in order, to the writer's sink on the caller's thread. */
#ifndef FXT_COMPRESS_H
#define FXT_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

enum fxt__codec { FXT__CODEC_GZIP = 1, FXT__CODEC_ZSTD = 2 };

/* Takes compressed bytes: 0 or -errno (which stops the compressor). */
typedef int (*fxt__zsink_out_fn)(void *ctx, const void *data, size_t len);

struct fxt__zsink;

/* A compressor writing through out(ctx, ...).  `serial`: no threads, all
 * the work on the caller's (inside a traced program).  0 or -errno. */
int fxt__zsink_open(struct fxt__zsink **z, enum fxt__codec codec, bool serial,
		    fxt__zsink_out_fn out, void *ctx);
/* From now on, compress with a worker a core, as a sink opened without
 * `serial` does, from the block being filled on.  What comes out decodes
 * to the same bytes.  0 or the sink's error. */
int fxt__zsink_parallel(struct fxt__zsink *z);
/* Its first error (sticky), or 0. */
int fxt__zsink_error(const struct fxt__zsink *z);
/* The codec it was opened with. */
enum fxt__codec fxt__zsink_codec(const struct fxt__zsink *z);
/* Compresses len bytes.  0 or the first error (sticky). */
int fxt__zsink_write(struct fxt__zsink *z, const void *data, size_t len);
/* The input of one gzip member or zstd frame is at most FXT__ZSINK_BLOCK
 * bytes (a reader's places to start decoding are this far apart); a
 * block's buffer holds FXT__ZSINK_CAP, the rest for a record that
 * crosses the block's end (fxt__zsink_hand()). */
#define FXT__ZSINK_BLOCK (2u << 20)
#define FXT__ZSINK_CAP	 (FXT__ZSINK_BLOCK + (32u << 10))
/* The buffer of the block being filled (FXT__ZSINK_CAP bytes), for the
 * caller to fill in place rather than copy (fxt__zsink_hand()); its
 * first *filled bytes are set (fxt__zsink_write()'s). */
void *fxt__zsink_buf(struct fxt__zsink *z, size_t *filled);
/* The block being filled holds `len` bytes (at most FXT__ZSINK_BLOCK,
 * those fxt__zsink_write() put there among them), then `keep` more:
 * the `len` are compressed as a block (none when 0), the `keep` move to
 * the start of the next block's buffer, which is returned (as
 * fxt__zsink_buf()'s).  Errors are the sink's (sticky). */
void *fxt__zsink_hand(struct fxt__zsink *z, size_t len, size_t keep);
/* Makes everything written so far decodable from what went out, as
 * whole members or frames (nothing when nothing was written since the
 * last flush). */
int fxt__zsink_flush(struct fxt__zsink *z);
/* Ends the gzip member or zstd frame under way, every byte so far out as
 * whole members or frames: other whole members or frames may follow them
 * in the file, and what is written next starts a new one.  0 or the first
 * error. */
int fxt__zsink_end_unit(struct fxt__zsink *z);
/* Writes at p a gzip member or zstd skippable frame of exactly `len`
 * bytes that decompresses to nothing: padding that every reader skips.
 * 0, or -ENOSPC when no such unit has that size (gzip: 26 .. 65557 bytes,
 * zstd: 8 .. 2^32 + 7). */
int fxt__zsink_padding(enum fxt__codec codec, unsigned char *p, size_t len);
/* The sizes a padding unit can have (gzip: one extra field of up to
 * 65535 bytes). */
#define FXT__ZSINK_PAD_MIN_GZIP 26u
#define FXT__ZSINK_PAD_MAX_GZIP (26u + 65531u)
#define FXT__ZSINK_PAD_MIN_ZSTD 8u
/* Ends the stream; nothing may be written after it. */
int fxt__zsink_finish(struct fxt__zsink *z);
/* Stops the threads and frees (without finishing). */
void fxt__zsink_free(struct fxt__zsink *z);

#endif /* FXT_COMPRESS_H */
