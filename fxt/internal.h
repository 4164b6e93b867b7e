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

/* The longest prefix of s[0 .. len) that is at most `max` bytes and does not
 * end inside a UTF-8 sequence: when the cut falls on a continuation byte
 * (10xxxxxx), it moves back to the lead byte of that character.  Input that
 * is not UTF-8 is cut at most 3 bytes short of `max`. */
static inline size_t fxt__utf8_cut(const char *s, size_t len, size_t max)
{
	size_t cut, back;

	if (len <= max)
		return len;
	cut = max;
	for (back = 0; back < 3 && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80; back++)
		cut--;
	return cut;
}

/* A 32-bit hash of a byte string for the string tables (not cryptographic,
 * not stable across versions: never store it).  Eight bytes per step, each
 * multiplied into the state; a final avalanche spreads the high bits down
 * so that masking off the low bits gives good bucket indices. */
static inline uint32_t fxt__hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)len * 0xbf58476d1ce4e5b9ull);
	uint64_t v;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * 0x94d049bb133111ebull;
		h ^= h >> 31;
	}
	if (len) {
		v = 0;
		memcpy(&v, p, len);
		h = (h ^ v) * 0x94d049bb133111ebull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

/* The same, for a pair of 64-bit keys (pid, tid). */
static inline uint32_t fxt__hash_pair(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ b;

	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 32;
	return (uint32_t)h;
}

#endif /* FXT_INTERNAL_H */
