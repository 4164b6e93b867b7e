/* fxtrace's own zstd encoder (the contract: zstdenc.h), written from RFC
 * 8878 for the writer's 2 MiB frames of FXT records.  libzstd's level 1
 * spends some 190 instructions an 8-byte word of fib's archive, most of
 * them finding matches at every byte and coding one or two sequences a
 * record through its general machinery (bench/README.md, "A match finder
 * that knows FXT's words").  FXT's records are whole 8-byte words whose
 * headers and references repeat at fixed distances and whose timestamps
 * share their high bytes, so here:
 *  - matches are looked for at 8-byte-aligned places only: the word one
 *    repeat offset back, then the last word equal to it (a table keyed by
 *    the word), then the last word with the same 6 high bytes (a
 *    timestamp's; its low bytes go as literals);
 *  - literals are raw (a timestamp's low bytes do not compress);
 *  - each of the three codes of the sequences is either one repeated
 *    symbol (RLE_Mode: no bits a sequence) or the format's predefined
 *    distribution (Predefined_Mode: no table to describe);
 *  - each frame is a single segment (the window is its content) with its
 *    content size and checksum (XXH64), cut into blocks of 128 KiB, each
 *    stored raw when coding it would not make it smaller.
 * Any zstd decoder reads what it writes (tests/unit/test_zstdenc.c
 * checks it through libzstd's). */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/zstdenc.h"

#define BLOCK_MAX  (128u << 10) /* Block_Maximum_Size */
#define HASH_LOG   12
#define MIN_LEAD   4  /* equal high bytes that start a match inside a word */
#define SEQ_MAX    (BLOCK_MAX / 3 + 1)
#define FRAME_HEAD 13 /* magic, descriptor, 4-byte content size (+ slack) */

enum { MODE_PREDEFINED = 0, MODE_RLE = 1 };

/* One FSE code with a predefined distribution: for each symbol and each
 * state the decoder goes to next, the state that decodes the symbol,
 * the bits it reads and their value (state | bits << 8 | value << 16). */
struct fse {
	unsigned log, nsym;
	uint32_t *enc;	   /* nsym << log */
	uint8_t first[64]; /* a state of each symbol, to start at */
};

struct seq {
	uint32_t lit, mlen, ofv; /* literals, match length, Offset_Value */
};

struct fxt__zstdenc {
	struct fse ll, ml, of;
	uint32_t word_at[1u << HASH_LOG], high_at[1u << HASH_LOG];
	uint32_t rep[3];
	struct seq *seqs;
	unsigned char *lits; /* a block's literals, + 16 bytes */
	uint8_t *llc, *mlc, *ofc;
	uint8_t ml_small[128];
};

/* ------------------------------------------------------- the code tables */

static const int16_t ll_norm[36] = { 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
				     2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1 };
static const int16_t ml_norm[53] = { 1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1,  1,  1,  1,  1,  1,  1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1,  1,  1,  1,  1,  1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1 };
static const int16_t of_norm[29] = { 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1 };

static const uint32_t ll_base[36] = { 0,  1,  2,   3,   4,   5,   6,	7,    8,    9,	  10,	11,
				      12, 13, 14,  15,  16,  18,  20,	22,   24,   28,	  32,	40,
				      48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
static const uint8_t ll_bits[36] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  1,  1,
				     1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
/* Match lengths less 3 (the format's baselines are 3 more). */
static const uint32_t ml_base[53] = { 0,    1,	  2,	3,     4,     5,     6,	   7,	 8,   9,   10,
				      11,   12,	  13,	14,    15,    16,    17,   18,	 19,  20,  21,
				      22,   23,	  24,	25,    26,    27,    28,   29,	 30,  31,  32,
				      34,   36,	  38,	40,    44,    48,    56,   64,	 80,  96,  128,
				      256,  512,  1024, 2048,  4096,  8192,  16384, 32768, 65536 };
static const uint8_t ml_bits[53] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
				     2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static unsigned highbit(uint32_t v)
{
	return 31 - (unsigned)__builtin_clz(v);
}

static unsigned ll_code(uint32_t ll)
{
	static const uint8_t small[64] = { 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
					   13, 14, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20, 20,
					   20, 20, 21, 21, 21, 21, 22, 22, 22, 22, 22, 22, 22,
					   22, 23, 23, 23, 23, 23, 23, 23, 23, 24, 24, 24, 24,
					   24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24 };
	return ll < 64 ? small[ll] : highbit(ll) + 19;
}

/* Of a match length less 3 (e->ml_small: of those below 128). */
static inline unsigned ml_code(const uint8_t *small, uint32_t mb)
{
	return mb < 128 ? small[mb] : highbit(mb) + 36;
}

/* The decoding table the format builds from a distribution (RFC 8878,
 * "FSE Table Description"), turned around for the encoder.  0 or -1. */
static int fse_build(struct fse *f, const int16_t *norm, unsigned nsym, unsigned log)
{
	unsigned size = 1u << log, high = size - 1, pos = 0, sum = 0;
	unsigned step = (size >> 1) + (size >> 3) + 3;
	uint8_t sym[64];
	uint32_t next[64];

	f->log = log;
	f->nsym = nsym;
	f->enc = malloc(((size_t)nsym << log) * sizeof(*f->enc));
	if (!f->enc)
		return -1;
	for (unsigned s = 0; s < nsym; s++) {
		sum += norm[s] < 0 ? 1 : (unsigned)norm[s];
		if (norm[s] < 0) {
			sym[high--] = (uint8_t)s;
			next[s] = 1;
		} else {
			next[s] = (uint32_t)norm[s];
		}
	}
	if (sum != size)
		return -1;
	for (unsigned s = 0; s < nsym; s++)
		for (int i = 0; i < norm[s]; i++) {
			sym[pos] = (uint8_t)s;
			do
				pos = (pos + step) & (size - 1);
			while (pos > high);
		}
	for (unsigned i = 0; i < ((size_t)nsym << log); i++)
		f->enc[i] = UINT32_MAX;
	for (unsigned u = 0; u < size; u++) {
		unsigned s = sym[u], n = next[s]++;
		unsigned nb = log - highbit(n), base = (n << nb) - size;
		f->first[s] = (uint8_t)u;
		for (unsigned v = 0; v < (1u << nb); v++)
			f->enc[(s << log) + base + v] = u | nb << 8 | v << 16;
	}
	/* Every symbol that can be coded reaches every state. */
	for (unsigned i = 0; i < ((size_t)nsym << log); i++)
		if (f->enc[i] == UINT32_MAX)
			return -1;
	return 0;
}

/* ------------------------------------------------------------ bit output */

struct bits {
	uint64_t acc;
	unsigned n;
	unsigned char *p;
};

static inline void bits_add(struct bits *b, uint32_t v, unsigned n)
{
	b->acc |= (uint64_t)v << b->n;
	b->n += n;
}

/* Writes the whole bytes out: 8 bytes are stored, of which n / 8 stay. */
static inline void bits_flush(struct bits *b)
{
	uint64_t a = b->acc;
	unsigned bytes = b->n >> 3;

	memcpy(b->p, &a, 8); /* little-endian hosts only (configure checks) */
	b->p += bytes;
	b->n &= 7;
	b->acc = bytes == 8 ? 0 : a >> (bytes * 8);
}

/* ------------------------------------------------------------- checksum */

#define P1 11400714785074694791ull
#define P2 14029467366897019727ull
#define P3 1609587929392839161ull
#define P4 9650029242287828579ull
#define P5 2870177450012600261ull

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t xxh_round(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * P2, 31) * P1;
}

static inline uint64_t xxh_merge(uint64_t h, uint64_t v)
{
	return (h ^ xxh_round(0, v)) * P1 + P4;
}

/* XXH64 of p[0 .. len - 1] with seed 0: the frame's Content_Checksum is
 * its low 4 bytes. */
static uint64_t xxh64(const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
		do {
			v1 = xxh_round(v1, load64(p));
			v2 = xxh_round(v2, load64(p + 8));
			v3 = xxh_round(v3, load64(p + 16));
			v4 = xxh_round(v4, load64(p + 24));
			p += 32;
		} while (p + 32 <= end);
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
		h = xxh_merge(h, v1);
		h = xxh_merge(h, v2);
		h = xxh_merge(h, v3);
		h = xxh_merge(h, v4);
	} else {
		h = P5;
	}
	h += len;
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ xxh_round(0, load64(p)), 27) * P1 + P4;
	if (p + 4 <= end) {
		uint32_t w;
		memcpy(&w, p, 4);
		h = rotl64(h ^ (uint64_t)w * P1, 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ *p * P5, 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* --------------------------------------------------------------- encoder */

struct fxt__zstdenc *fxt__zstdenc_new(void)
{
	struct fxt__zstdenc *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->seqs = malloc(SEQ_MAX * sizeof(*e->seqs));
	e->lits = malloc(BLOCK_MAX + 16);
	e->llc = malloc(3 * SEQ_MAX);
	if (!e->seqs || !e->lits || !e->llc || fse_build(&e->ll, ll_norm, 36, 6) ||
	    fse_build(&e->ml, ml_norm, 53, 6) || fse_build(&e->of, of_norm, 29, 5)) {
		fxt__zstdenc_free(e);
		return NULL;
	}
	e->mlc = e->llc + SEQ_MAX;
	e->ofc = e->mlc + SEQ_MAX;
	for (unsigned mb = 0, c = 0; mb < 128; mb++) {
		while (ml_base[c + 1] <= mb)
			c++;
		e->ml_small[mb] = (uint8_t)c;
	}
	return e;
}

void fxt__zstdenc_free(struct fxt__zstdenc *e)
{
	if (!e)
		return;
	free(e->ll.enc);
	free(e->ml.enc);
	free(e->of.enc);
	free(e->seqs);
	free(e->lits);
	free(e->llc);
	free(e);
}

size_t fxt__zstdenc_bound(size_t len)
{
	/* Blocks stored raw at worst, each with its 3-byte header; a
	 * compressed one is kept only when smaller. */
	return FRAME_HEAD + 3 * (len / BLOCK_MAX + 1) + len + 4;
}

static inline uint32_t hash64(uint64_t w)
{
	return (uint32_t)((w * 0x9E3779B185EBCA87ull) >> (64 - HASH_LOG));
}

/* The Offset_Value of a match `off` back after `lit` literals, the
 * repeat offsets updated (RFC 8878, "Repeat Offsets"). */
static uint32_t offset_value(uint32_t *rep, uint32_t off, uint32_t lit)
{
	uint32_t r0 = rep[0], r1 = rep[1], r2 = rep[2];

	if (lit) {
		if (off == r0)
			return 1;
		if (off == r1) {
			rep[0] = r1;
			rep[1] = r0;
			return 2;
		}
		if (off == r2) {
			rep[0] = r2;
			rep[1] = r0;
			rep[2] = r1;
			return 3;
		}
	} else {
		if (off == r1) {
			rep[0] = r1;
			rep[1] = r0;
			return 1;
		}
		if (off == r2) {
			rep[0] = r2;
			rep[1] = r0;
			rep[2] = r1;
			return 2;
		}
		if (off == r0 - 1) {
			rep[0] = off;
			rep[1] = r0;
			rep[2] = r1;
			return 3;
		}
	}
	rep[0] = off;
	rep[1] = r0;
	rep[2] = r1;
	return off + 3;
}

/* Copies n bytes, 8 at a time when the source has 8 to spare. */
static inline void copy_lits(unsigned char *d, const unsigned char *s, size_t n, size_t spare)
{
	if (n + 8 <= spare) {
		for (size_t i = 0; i < n; i += 8)
			memcpy(d + i, s + i, 8);
	} else {
		memcpy(d, s, n);
	}
}

/* Finds the sequences of block [bs, be) of the frame at base (its first
 * len bytes); returns their count, the literals in e->lits (*nlit). */
static size_t find(struct fxt__zstdenc *e, const unsigned char *base, size_t len, size_t bs,
		   size_t be, size_t *nlit)
{
	size_t ip = (bs + 7) & ~(size_t)7, anchor = bs, nseq = 0, nl = 0;

	if (ip < 8)
		ip = 8; /* nothing before the first word */
	while (ip + 8 <= be) {
		uint64_t w = load64(base + ip), x;
		uint32_t h1 = hash64(w), h2 = hash64(w >> 16);
		size_t off = 0, start, q;
		unsigned lead = 0;

		if (e->rep[0] <= ip) {
			x = w ^ load64(base + ip - e->rep[0]);
			lead = x ? (unsigned)__builtin_clzll(x) >> 3 : 8;
			off = e->rep[0];
		}
		if (lead < 8) {
			size_t c = e->word_at[h1];
			if (c < ip && load64(base + c) == w) {
				off = ip - c;
				lead = 8;
			} else if (lead < MIN_LEAD) {
				c = e->high_at[h2];
				x = c < ip ? w ^ load64(base + c) : UINT64_MAX;
				lead = x ? (unsigned)__builtin_clzll(x) >> 3 : 8;
				off = ip - c;
			}
		}
		e->word_at[h1] = (uint32_t)ip;
		e->high_at[h2] = (uint32_t)ip;
		if (lead < MIN_LEAD) {
			ip += 8;
			continue;
		}
		/* The match: back into the literals when it starts at the
		 * word, on a word at a time, then bytes. */
		start = ip + 8 - lead;
		if (lead == 8)
			while (start > anchor && start > off &&
			       base[start - 1] == base[start - 1 - off])
				start--;
		q = ip + 8;
		while (q + 8 <= be) {
			x = load64(base + q) ^ load64(base + q - off);
			if (x) {
				q += (unsigned)__builtin_ctzll(x) >> 3;
				goto found;
			}
			q += 8;
		}
		while (q < be && base[q] == base[q - off])
			q++;
found:;
		uint32_t lit = (uint32_t)(start - anchor);
		struct seq *s = &e->seqs[nseq++];
		copy_lits(e->lits + nl, base + anchor, lit, len - anchor);
		nl += lit;
		s->lit = lit;
		s->mlen = (uint32_t)(q - start);
		s->ofv = offset_value(e->rep, (uint32_t)off, lit);
		anchor = q;
		for (ip += 8; ip + 8 <= q; ip += 8) {
			w = load64(base + ip);
			e->word_at[hash64(w)] = (uint32_t)ip;
			e->high_at[hash64(w >> 16)] = (uint32_t)ip;
		}
		ip = (q + 7) & ~(size_t)7;
	}
	copy_lits(e->lits + nl, base + anchor, be - anchor, len - anchor);
	nl += be - anchor;
	*nlit = nl;
	return nseq;
}

/* Writes a compressed block's content at p (literals, sequences);
 * returns its end. */
static unsigned char *encode(struct fxt__zstdenc *e, unsigned char *p, size_t nseq, size_t nlit)
{
	uint8_t *llc = e->llc, *mlc = e->mlc, *ofc = e->ofc;
	bool ll_rle = true, ml_rle = true, of_rle = true;
	struct bits b;

	/* Raw_Literals_Block */
	if (nlit < 32) {
		*p++ = (unsigned char)(nlit << 3);
	} else if (nlit < 4096) {
		*p++ = (unsigned char)(nlit << 4 | 1 << 2);
		*p++ = (unsigned char)(nlit >> 4);
	} else {
		*p++ = (unsigned char)(nlit << 4 | 3 << 2);
		*p++ = (unsigned char)(nlit >> 4);
		*p++ = (unsigned char)(nlit >> 12);
	}
	memcpy(p, e->lits, nlit);
	p += nlit;

	if (nseq < 128) {
		*p++ = (unsigned char)nseq;
	} else if (nseq < 0x7F00) {
		*p++ = (unsigned char)((nseq >> 8) + 128);
		*p++ = (unsigned char)nseq;
	} else {
		*p++ = 255;
		*p++ = (unsigned char)(nseq - 0x7F00);
		*p++ = (unsigned char)((nseq - 0x7F00) >> 8);
	}
	if (!nseq)
		return p;
	for (size_t i = 0; i < nseq; i++) {
		const struct seq *s = &e->seqs[i];
		llc[i] = (uint8_t)ll_code(s->lit);
		mlc[i] = (uint8_t)ml_code(e->ml_small, s->mlen - 3);
		ofc[i] = (uint8_t)highbit(s->ofv);
		ll_rle &= llc[i] == llc[0];
		ml_rle &= mlc[i] == mlc[0];
		of_rle &= ofc[i] == ofc[0];
	}
	*p++ = (unsigned char)((ll_rle ? MODE_RLE : MODE_PREDEFINED) << 6 |
			       (of_rle ? MODE_RLE : MODE_PREDEFINED) << 4 |
			       (ml_rle ? MODE_RLE : MODE_PREDEFINED) << 2);
	if (ll_rle)
		*p++ = llc[0];
	if (of_rle)
		*p++ = ofc[0];
	if (ml_rle)
		*p++ = mlc[0];

	/* The bitstream, read backwards: the last sequence's first. */
	size_t n = nseq - 1;
	const struct seq *s = &e->seqs[n];
	unsigned sll = e->ll.first[llc[n]], sml = e->ml.first[mlc[n]], sof = e->of.first[ofc[n]];
	b.acc = 0;
	b.n = 0;
	b.p = p;
	bits_add(&b, s->lit - ll_base[llc[n]], ll_bits[llc[n]]);
	bits_add(&b, s->mlen - 3 - ml_base[mlc[n]], ml_bits[mlc[n]]);
	bits_flush(&b);
	bits_add(&b, s->ofv - (1u << ofc[n]), ofc[n]);
	bits_flush(&b);
	while (n--) {
		uint32_t t;
		s = &e->seqs[n];
		if (!of_rle) {
			t = e->of.enc[(ofc[n] << 5) + sof];
			bits_add(&b, t >> 16, (t >> 8) & 0xff);
			sof = t & 0xff;
		}
		if (!ml_rle) {
			t = e->ml.enc[(mlc[n] << 6) + sml];
			bits_add(&b, t >> 16, (t >> 8) & 0xff);
			sml = t & 0xff;
		}
		if (!ll_rle) {
			t = e->ll.enc[(llc[n] << 6) + sll];
			bits_add(&b, t >> 16, (t >> 8) & 0xff);
			sll = t & 0xff;
		}
		bits_add(&b, s->lit - ll_base[llc[n]], ll_bits[llc[n]]);
		bits_add(&b, s->mlen - 3 - ml_base[mlc[n]], ml_bits[mlc[n]]);
		bits_flush(&b);
		bits_add(&b, s->ofv - (1u << ofc[n]), ofc[n]);
		bits_flush(&b);
	}
	/* The starting states, read first: literal lengths, offsets, match
	 * lengths (an RLE code has none). */
	if (!ml_rle)
		bits_add(&b, sml, 6);
	if (!of_rle)
		bits_add(&b, sof, 5);
	bits_flush(&b);
	if (!ll_rle)
		bits_add(&b, sll, 6);
	bits_add(&b, 1, 1); /* the end mark */
	bits_flush(&b);
	return b.p + (b.n > 0);
}

/* The worst a block of n bytes with nseq sequences and nlit literals can
 * take coded: headers, literals, and 8 bytes a sequence at most (states
 * 17 bits, extra bits 16 + 16 + 21) plus the final flushes' 8. */
static size_t encode_bound(size_t nseq, size_t nlit)
{
	return 3 + nlit + 4 + 3 + 9 * nseq + 16;
}

size_t fxt__zstdenc_frame(struct fxt__zstdenc *e, void *dst, size_t cap, const void *src,
			  size_t len)
{
	const unsigned char *base = src;
	unsigned char *p = dst, *end = p + cap;
	uint32_t sum;

	if (cap < fxt__zstdenc_bound(len) || len > UINT32_MAX)
		return 0;
	/* Frame_Header: magic; a single segment with its content size
	 * (1, 2 or 4 bytes) and a checksum; no dictionary. */
	p[0] = 0x28;
	p[1] = 0xB5;
	p[2] = 0x2F;
	p[3] = 0xFD;
	p += 4;
	if (len < 256) {
		*p++ = 0x20 | 0x04;
		*p++ = (unsigned char)len;
	} else if (len < 65536 + 256) {
		*p++ = 0x40 | 0x20 | 0x04;
		*p++ = (unsigned char)(len - 256);
		*p++ = (unsigned char)((len - 256) >> 8);
	} else {
		*p++ = 0x80 | 0x20 | 0x04;
		for (int i = 0; i < 4; i++)
			*p++ = (unsigned char)(len >> (8 * i));
	}
	memset(e->word_at, 0, sizeof(e->word_at));
	memset(e->high_at, 0, sizeof(e->high_at));
	e->rep[0] = 1;
	e->rep[1] = 4;
	e->rep[2] = 8;

	size_t bs = 0;
	do {
		size_t be = len - bs > BLOCK_MAX ? bs + BLOCK_MAX : len, nlit;
		uint32_t rep[3] = { e->rep[0], e->rep[1], e->rep[2] };
		unsigned last = be == len, type = 0;
		size_t nseq = be > bs ? find(e, base, len, bs, be, &nlit) : 0;
		size_t size = be - bs;
		unsigned char *q;

		/* Coded when it fits and is smaller; else raw, and the
		 * repeat offsets as they were (a raw block has none). */
		if (nseq && encode_bound(nseq, nlit) <= (size_t)(end - p - 3 - 4) &&
		    (q = encode(e, p + 3, nseq, nlit)) - (p + 3) < (ptrdiff_t)size) {
			type = 2;
			size = (size_t)(q - (p + 3));
		} else {
			memcpy(e->rep, rep, sizeof(rep));
			memcpy(p + 3, base + bs, size);
		}
		uint32_t head = last | type << 1 | (uint32_t)size << 3;
		p[0] = (unsigned char)head;
		p[1] = (unsigned char)(head >> 8);
		p[2] = (unsigned char)(head >> 16);
		p += 3 + size;
		bs = be;
	} while (bs < len);
	sum = (uint32_t)xxh64(base, len);
	for (int i = 0; i < 4; i++)
		*p++ = (unsigned char)(sum >> (8 * i));
	return (size_t)(p - (unsigned char *)dst);
}
