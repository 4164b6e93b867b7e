/* The one hash function of fxtrace, for every in-memory table: the codec's
 * string and thread tables, the symbolizer's caches, the session's keys,
 * the tools' node and row tables, fxt-run's sets.
 *
 * Not cryptographic and not stable across versions: never store a hash in
 * an archive.  (A run's session file holds keys made with it; every
 * process of one run uses the same build.)  Header-only, so that the agent
 * (hidden visibility, no codec library) compiles it in as well.
 *
 * Words are folded in by multiply-xorshift steps; fxt__hash_mix is the
 * splitmix64 finalizer, which spreads every input bit over the whole
 * result, so that masking the low bits or taking the high ones gives
 * well-spread bucket indices. */
#ifndef FXT_COMMON_HASH_H
#define FXT_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FXT__HASH_SEED UINT64_C(0x9e3779b97f4a7c15) /* 2^64 / golden ratio */

/* The finalizer: every bit of h reaches every bit of the result. */
static inline uint64_t fxt__hash_mix(uint64_t h)
{
	h ^= h >> 30;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64_C(0x94d049bb133111eb);
	h ^= h >> 31;
	return h;
}

/* Folds one 64-bit word into the state h (not finalized). */
static inline uint64_t fxt__hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UINT64_C(0x94d049bb133111eb);
	return h ^ (h >> 31);
}

/* Folds `len` bytes into the state h, eight at a time; the length is
 * folded in with the last word, so "a" and "a\0" differ (not finalized:
 * chain several fields, then call fxt__hash_mix). */
static inline uint64_t fxt__hash_more(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = fxt__hash_word(h, w);
	}
	w = 0;
	for (size_t i = 0; i < len; i++) /* no variable-size memcpy call */
		w |= (uint64_t)p[i] << (8 * i);
	return fxt__hash_word(h, w ^ ((uint64_t)len << 56));
}

/* The hash of a byte string. */
static inline uint64_t fxt__hash_bytes(const void *data, size_t len)
{
	return fxt__hash_mix(fxt__hash_more(FXT__HASH_SEED, data, len));
}

/* The hash of one 64-bit key (an address, a tid). */
static inline uint64_t fxt__hash_u64(uint64_t x)
{
	return fxt__hash_mix(x * FXT__HASH_SEED);
}

/* The hash of an ordered pair of 64-bit keys (pid, tid). */
static inline uint64_t fxt__hash_pair(uint64_t a, uint64_t b)
{
	return fxt__hash_mix(fxt__hash_word(a * FXT__HASH_SEED, b));
}

#endif /* FXT_COMMON_HASH_H */
