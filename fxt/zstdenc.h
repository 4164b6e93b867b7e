/* fxtrace's own zstd encoder (zstdenc.c), private to fxt/: one whole
 * standard zstd frame (RFC 8878) a call, which libzstd's decoder, the zstd
 * tool and any other decoder read, made for FXT's records: matches found
 * at 8-byte-aligned places only, literals raw, the sequences coded with
 * the format's predefined distributions or as one repeated symbol. */
#ifndef FXT_ZSTDENC_H
#define FXT_ZSTDENC_H

#include <stddef.h>

struct fxt__zstdenc;

/* An encoder (its tables; one a thread), or NULL without memory. */
struct fxt__zstdenc *fxt__zstdenc_new(void);
void fxt__zstdenc_free(struct fxt__zstdenc *e);
/* The most a frame of `len` bytes of input can take. */
size_t fxt__zstdenc_bound(size_t len);
/* Writes at dst one frame (with its content size and checksum) that
 * decodes to src's len bytes; returns its size, or 0 when cap is less
 * than fxt__zstdenc_bound(len) needs. */
size_t fxt__zstdenc_frame(struct fxt__zstdenc *e, void *dst, size_t cap, const void *src,
			  size_t len);

#endif /* FXT_ZSTDENC_H */
