/* The writer's compressors (compress.c), private to fxt/: gzip as
 * independent members deflated by a pool of threads, zstd by libzstd with
 * its own workers.  Either hands the compressed bytes, in order, to the
 * writer's sink on the caller's thread. */
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
/* Compresses len bytes.  0 or the first error (sticky). */
int fxt__zsink_write(struct fxt__zsink *z, const void *data, size_t len);
/* Makes everything written so far decodable from what went out (nothing
 * when nothing was written since the last flush). */
int fxt__zsink_flush(struct fxt__zsink *z);
/* Ends the stream; nothing may be written after it. */
int fxt__zsink_finish(struct fxt__zsink *z);
/* Stops the threads and frees (without finishing). */
void fxt__zsink_free(struct fxt__zsink *z);

#endif /* FXT_COMPRESS_H */
