/* Helpers private to fxt/ (the codec): not installed, not part of the API.
 *
 * Kept small and stable: the writer and the reader both include it.  Only
 * add to it; names carry the fxt__ prefix of internal symbols.
 */
#ifndef FXT_INTERNAL_H
#define FXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/utf8.h>

#include "common/hash.h"

/* Writes `len` bytes as an FXT stream: the bytes, then zeros up to the next
 * 8-byte boundary.  Returns the words written, fxt_stream_words(len). */
static inline size_t fxt__put_stream(uint64_t *out, const void *data, size_t len)
{
	size_t nwords = (size_t)fxt_stream_words(len);

	if (nwords) {
		out[nwords - 1] = 0; /* the padding, before the bytes cover it */
		memcpy(out, data, len);
	}
	return nwords;
}

#endif /* FXT_INTERNAL_H */
