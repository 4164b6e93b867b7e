/* fxtrace's own zstd encoder (the contract: zstdenc.h), written from RFC
 * 8878 for the writer's 2 MiB frames of FXT records.  libzstd's level 1
 * spends ~280 instructions a sequence of fib's archive (one or two a
 * record), finding matches at every byte and coding the sequences
 * through its general machinery (bench/README.md, "A match finder that
 * knows FXT's words"); this takes a third fewer ("zstd frames by our own
 * encoder").  FXT's records are whole 8-byte words whose headers and
 * references repeat at fixed distances and whose timestamps share their
 * high bytes, so here:
 *  - matches are looked for at 8-byte-aligned places only: the word one
 *    repeat offset back or two, then the last word equal to it (a table
 *    keyed by the word), then the last word with the same 6 high bytes
 *    (a timestamp's); a match may start inside the word, its differing
 *    low bytes going as literals;
 *  - literals are raw (a timestamp's low bytes do not compress);
 *  - each of the three codes of a block's sequences is one repeated
 *    symbol (RLE_Mode), the format's predefined distribution (a block of
 *    few sequences) or the block's own (FSE_Compressed_Mode), a symbol
 *    coded with one table load;
 *  - each frame is a single segment (the window is its content) with its
 *    content size and checksum (XXH64), cut into blocks of 128 KiB, each
 *    stored raw when coding it would not make it smaller.
 * libzstd's decoder reads what it writes (tests/unit/test_zstdenc.c), and
 * so did another (bench/README.md).  Little-endian hosts only, as the
 * rest of fxtrace: the words' high bytes are their last. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/zstdenc.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "zstdenc.c reads words little-endian");

#define BLOCK_MAX  (128u << 10) /* Block_Maximum_Size */
#define HASH_LOG   12
#define MIN_LEAD   4 /* equal high bytes that start a match inside a word */
#define REP_LEAD   6 /* those of the repeat offset's that need no other look */
#define SEQ_MAX	   (BLOCK_MAX / 3 + 1)
#define FRAME_HEAD 13 /* magic, descriptor, 4-byte content size (+ slack) */

enum { MODE_PREDEFINED = 0, MODE_RLE = 1, MODE_FSE = 2 };
enum { LL, OF, ML }; /* the three codes, in the order the format lists them */

static const unsigned code_max[3] = { 35, 31, 52 }; /* their largest symbols */
/* Their accuracy logs (the format allows 9, 8, 9): encode() counts on
 * the three states taking 24 bits at most. */
static const unsigned code_maxlog[3] = { 8, 7, 8 };

/* An FSE code's encoding table, for the symbols it has: for symbol s
 * and the state the decoder goes to next (RFC 8878, "FSE Table
 * Description"), enc[(s << 9) + state] is the state that decodes s,
 * the bits the decoder reads to go on and their value: value | nbits <<
 * 10 | state << 16.  One symbol alone (RLE_Mode) is a table of log 0: no
 * bits. */
struct ctab {
	unsigned log;
	uint32_t *enc;	    /* 64 << 9 */
	uint16_t first[64]; /* a state of each symbol, to start at */
};

/* A sequence as the bitstream writes it: its codes, then the literal
 * length's, match length's and offset's extra bits together (bits, nbits
 * of them). */
struct seq {
	uint64_t bits;
	uint8_t code[3], nbits; /* little-endian: find() stores them as one */
};

struct fxt__zstdenc {
	struct ctab pre[3], own[3]; /* predefined; this block's */
	bool pre_built;		    /* pre[] set (at their first use: their rows
				     * are pages apart) */
	uint32_t hist[3][64];	    /* this block's codes */
	uint32_t word_at[1u << HASH_LOG], high_at[1u << HASH_LOG];
	uint32_t rep[3];
	struct seq *seqs;
	unsigned char *lits; /* a block's literals, + 16 bytes */
	uint8_t ml_small[128];
};

/* ------------------------------------------------------- the code tables */

static const int16_t ll_norm[36] = { 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1,  1,  2,  2,
				     2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1 };
static const int16_t ml_norm[53] = { 1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1,  1,  1,  1,  1,  1,  1, 1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1,  1,  1,  1,  1,  1, 1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1 };
static const int16_t of_norm[29] = { 1, 1, 1, 1, 1, 1, 2, 2, 2, 1,  1,	1,  1,	1, 1,
				     1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1 };

static const uint32_t ll_base[36] = { 0,   1,	2,    3,    4,	  5,	6,     7,     8,
				      9,   10,	11,   12,   13,	  14,	15,    16,    18,
				      20,  22,	24,   28,   32,	  40,	48,    64,    128,
				      256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
static const uint8_t ll_bits[36] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  1,  1,
				     1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
/* Match lengths less 3 (the format's baselines are 3 more). */
static const uint32_t ml_base[53] = { 0,   1,	2,    3,    4,	  5,	6,     7,     8,    9,	10,
				      11,  12,	13,   14,   15,	  16,	17,    18,    19,   20, 21,
				      22,  23,	24,   25,   26,	  27,	28,    29,    30,   31, 32,
				      34,  36,	38,   40,   44,	  48,	56,    64,    80,   96, 128,
				      256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
static const uint8_t ml_bits[53] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0, 0,
				     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  1,  1,  1, 1,
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

/* The encoding table of a distribution (norm: the format's normalized
 * counts, -1 for "less than 1"), its states spread as the decoder's
 * (RFC 8878, "FSE Table Description").  log 0: norm's one symbol (RLE).
 * Only the rows of the symbols it has are set. */
static void ctab_build(struct ctab *t, const int16_t *norm, unsigned nsym, unsigned log)
{
	unsigned size = 1u << log, high = size - 1, pos = 0;
	unsigned step = (size >> 1) + (size >> 3) + 3;
	uint8_t sym[512];
	uint32_t next[64];

	t->log = log;
	if (log == 0) {
		t->enc[(nsym - 1) << 9] = 0;
		t->first[nsym - 1] = 0;
		return;
	}
	for (unsigned s = 0; s < nsym; s++) {
		if (norm[s] < 0)
			sym[high--] = (uint8_t)s;
		next[s] = norm[s] < 0 ? 1u : (unsigned)norm[s];
	}
	for (unsigned s = 0; s < nsym; s++)
		for (int i = 0; i < norm[s]; i++) {
			sym[pos] = (uint8_t)s;
			do
				pos = (pos + step) & (size - 1);
			while (pos > high);
		}
	for (unsigned u = 0; u < size; u++) {
		unsigned s = sym[u], n = next[s]++;
		unsigned nb = log - highbit(n), base = (n << nb) - size;
		uint32_t *row = t->enc + (s << 9) + base;
		t->first[s] = (uint16_t)u;
		for (unsigned v = 0; v < (1u << nb); v++)
			row[v] = v | nb << 10 | u << 16;
	}
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
	if (!e->seqs || !e->lits) {
		fxt__zstdenc_free(e);
		return NULL;
	}
	for (unsigned c = 0; c < 3; c++) {
		e->pre[c].enc = malloc((64u << 9) * sizeof(uint32_t));
		e->own[c].enc = malloc((64u << 9) * sizeof(uint32_t));
		if (!e->pre[c].enc || !e->own[c].enc) {
			fxt__zstdenc_free(e);
			return NULL;
		}
	}
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
	for (unsigned c = 0; c < 3; c++) {
		free(e->pre[c].enc);
		free(e->own[c].enc);
	}
	free(e->seqs);
	free(e->lits);
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

/* Equal high bytes of two words whose xor is x (8: all). */
static inline unsigned lead_bytes(uint64_t x)
{
	return (unsigned)(__builtin_clzll(x | 1) + (x == 0)) >> 3;
}

/* Finds the sequences of block [bs, be) of the frame at base: each with its codes counted in
 * e->hist and its extra bits ready (struct seq); returns their count, the literals in e->lits
 * (*nlit).  What the loop keeps is in locals: its stores are through
 * byte pointers, which the compiler takes to alias everything. */
static size_t find(struct fxt__zstdenc *e, const unsigned char *base, size_t bs, size_t be,
		   size_t *nlit)
{
	size_t ip = (bs + 7) & ~(size_t)7, anchor = bs, nl = 0;
	unsigned char *lits = e->lits;
	struct seq *seq = e->seqs, *seq0 = seq;
	uint32_t *hll = e->hist[LL], *hml = e->hist[ML], *hof = e->hist[OF];
	uint32_t *word_at = e->word_at, *high_at = e->high_at;
	const uint8_t *ml_small = e->ml_small;
	uint32_t rep[3] = { e->rep[0], e->rep[1], e->rep[2] };

	if (ip < 8)
		ip = 8; /* nothing before the first word */
	while (ip + 8 <= be) {
		uint64_t w = load64(base + ip), x;
		size_t off = rep[0], start, q;
		unsigned lead;

		/* The word one repeat offset back (never before the frame:
		 * an offset is at most the place it was found at), or the
		 * second's if more of it is equal. */
		lead = lead_bytes(w ^ load64(base + ip - off));
		if (lead < 7) {
			unsigned l1 = lead_bytes(w ^ load64(base + ip - rep[1]));
			if (l1 > lead) {
				lead = l1;
				off = rep[1];
			}
		}
		if (lead < REP_LEAD) {
			/* The last word equal to this one, else the last
			 * with its 6 high bytes, if more of it is equal. */
			uint32_t h1 = hash64(w), h2 = hash64(w >> 16);
			size_t c = word_at[h1];
			word_at[h1] = (uint32_t)ip;
			if (c < ip && load64(base + c) == w) {
				off = ip - c;
				lead = 8;
			} else {
				c = high_at[h2];
				unsigned l2 = c < ip ? lead_bytes(w ^ load64(base + c)) : 0;
				if (l2 > lead) {
					lead = l2;
					off = ip - c;
				}
			}
			high_at[h2] = (uint32_t)ip;
			/* Words at every byte, for the next words to find
			 * what repeats at any distance (strings, not
			 * records). */

			if (lead < MIN_LEAD) {
				ip += 8;
				continue;
			}
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
		uint32_t lit = (uint32_t)(start - anchor), ofv;
		/* anchor <= ip: 8 bytes can be read from it */
		memcpy(lits + nl, base + anchor, 8);
		if (lit > 8)
			memcpy(lits + nl + 8, base + anchor + 8, lit - 8);
		nl += lit;
		ofv = lit && off == rep[0] ? 1 : offset_value(rep, (uint32_t)off, lit);

		/* The sequence's codes and extra bits. */
		unsigned mb = (unsigned)(q - start) - 3, ofc = highbit(ofv), llc, mlc, nbits;
		uint64_t bits;
		if (lit < 16 && mb < 32) { /* codes with no extra bits */
			llc = lit;
			mlc = mb;
			bits = ofv & ((1u << ofc) - 1);
			nbits = ofc;
		} else {
			llc = ll_code(lit);
			mlc = ml_code(ml_small, mb);
			bits = (lit - ll_base[llc]) | (uint64_t)(mb - ml_base[mlc]) << ll_bits[llc];
			nbits = ll_bits[llc] + ml_bits[mlc];
			bits |= (uint64_t)(ofv & ((1u << ofc) - 1)) << nbits;
			nbits += ofc;
		}
		seq->bits = bits;
		/* code[LL], code[OF], code[ML], nbits: one store */
		uint32_t packed = llc | ofc << 8 | mlc << 16 | nbits << 24;
		memcpy(seq->code, &packed, 4);
		seq++;
		hll[llc]++;
		hml[mlc]++;
		hof[ofc]++;
		anchor = q;
		ip = (q + 7) & ~(size_t)7;
	}
	memcpy(lits + nl, base + anchor, be - anchor);
	nl += be - anchor;
	*nlit = nl;
	memcpy(e->rep, rep, sizeof(rep));
	return (size_t)(seq - seq0);
}

/* The normalized counts (summing to 1 << log, each symbol seen at least
 * 1) of `total` codes counted in hist[0 .. max]. */
static void normalize(int16_t *norm, const uint32_t *hist, unsigned max, uint32_t total,
		      unsigned log)
{
	int size = 1 << log, sum = 0;
	unsigned big = 0;

	for (unsigned s = 0; s <= max; s++) {
		int v = 0;
		if (hist[s]) {
			v = (int)(((uint64_t)hist[s] << log) + total / 2) / (int)total;
			if (v < 1)
				v = 1;
		}
		norm[s] = (int16_t)v;
		sum += v;
		if (hist[s] > hist[big])
			big = s;
	}
	if (sum <= size) {
		norm[big] = (int16_t)(norm[big] + size - sum);
		return;
	}
	while (sum > size) { /* the rare codes rounded up: the most common pay */
		unsigned most = 0;
		for (unsigned s = 1; s <= max; s++)
			if (norm[s] > norm[most])
				most = s;
		norm[most]--;
		sum--;
	}
}

/* Writes the FSE table description of norm[0 .. max] (RFC 8878, "FSE
 * Table Description"); returns its end. */
static unsigned char *write_ncount(unsigned char *p, const int16_t *norm, unsigned max,
				   unsigned log)
{
	uint64_t acc = log - 5;
	unsigned n = 4, nb = log + 1, s = 0;
	int remaining = (1 << log) + 1, threshold = 1 << log;
	bool prev0 = false;

#define NC_PUT(v, k)                                     \
	do {                                             \
		acc |= (uint64_t)(v) << n;               \
		n += (k);                                \
		memcpy(p, &acc, 8);                      \
		p += n >> 3;                             \
		acc = (n >> 3) ? acc >> (n & ~7u) : acc; \
		n &= 7;                                  \
	} while (0)
	while (s <= max && remaining > 1) {
		if (prev0) { /* the zeros that follow a zero, 2 bits at a time */
			unsigned from = s;
			while (!norm[s])
				s++;
			for (; s >= from + 3; from += 3)
				NC_PUT(3, 2);
			NC_PUT(s - from, 2);
		}
		int count = norm[s++], top = 2 * threshold - 1 - remaining;
		remaining -= count < 0 ? -count : count;
		count++;
		if (count >= threshold)
			count += top;
		NC_PUT(count, nb - (count < top));
		prev0 = count == 1;
		while (remaining < threshold) {
			nb--;
			threshold >>= 1;
		}
	}
#undef NC_PUT
	return p + (n > 0);
}

/* The accuracy log of a table for nseq codes, the largest `max` (as
 * libzstd picks it). */
static unsigned table_log(size_t nseq, unsigned max, unsigned maxlog)
{
	unsigned log = highbit((uint32_t)nseq - 1) - 2, least = highbit(max) + 2;

	if (log > maxlog)
		log = maxlog;
	if (log < least)
		log = least;
	if (log < 5)
		log = 5;
	return log > maxlog ? maxlog : log;
}

/* Chooses how code c is written in a block of nseq sequences (one
 * symbol: RLE; few sequences: the predefined distribution; else one of
 * its own, described at p), writes what the mode needs at *p, and
 * returns the table to encode with. */
static const struct ctab *pick(struct fxt__zstdenc *e, unsigned c, size_t nseq, unsigned char **p,
			       unsigned *mode)
{
	uint32_t *h = e->hist[c];
	unsigned max = code_max[c], sym = 0, nsym = 0;
	int16_t norm[64];

	while (!h[max])
		max--;
	for (unsigned s = 0; s <= max; s++)
		if (h[s]) {
			nsym++;
			sym = s;
		}
	if (nsym == 1) {
		*mode = MODE_RLE;
		*(*p)++ = (unsigned char)sym;
		memset(norm, 0, sizeof(norm));
		norm[sym] = 1;
		ctab_build(&e->own[c], norm, sym + 1, 0);
		return &e->own[c];
	}
	if (nseq < 64) {
		*mode = MODE_PREDEFINED;
		if (!e->pre_built) {
			ctab_build(&e->pre[LL], ll_norm, 36, 6);
			ctab_build(&e->pre[ML], ml_norm, 53, 6);
			ctab_build(&e->pre[OF], of_norm, 29, 5);
			e->pre_built = true;
		}
		return &e->pre[c];
	}
	unsigned log = table_log(nseq, max, code_maxlog[c]);
	normalize(norm, h, max, (uint32_t)nseq, log);
	*mode = MODE_FSE;
	*p = write_ncount(*p, norm, max, log);
	ctab_build(&e->own[c], norm, max + 1, log);
	return &e->own[c];
}

/* Writes a compressed block's content at p (literals, sequences);
 * returns its end. */
static unsigned char *encode(struct fxt__zstdenc *e, unsigned char *p, size_t nseq, size_t nlit)
{
	const struct ctab *t[3];
	unsigned mode[3];

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
	unsigned char *modes = p++;
	for (unsigned c = LL; c <= ML; c++)
		t[c] = pick(e, c, nseq, &p, &mode[c]);
	*modes = (unsigned char)(mode[LL] << 6 | mode[OF] << 4 | mode[ML] << 2);

	/* The bitstream, read backwards: the last sequence's first. */
	const uint32_t *el = t[LL]->enc, *em = t[ML]->enc, *eo = t[OF]->enc;
	const unsigned ll = t[LL]->log, lm = t[ML]->log, lo = t[OF]->log;
	const struct seq *seqs = e->seqs, *s = &seqs[nseq - 1];
	uint32_t xl = t[LL]->first[s->code[LL]], xm = t[ML]->first[s->code[ML]],
		 xo = t[OF]->first[s->code[OF]];
	uint64_t acc = 0;
	unsigned n = 0;

#define PUT(v, k)                          \
	do {                               \
		acc |= (uint64_t)(v) << n; \
		n += (k);                  \
	} while (0)
#define FLUSH()                                                             \
	do {                                                                \
		memcpy(p, &acc, 8); /* little-endian: the low bits first */ \
		p += n >> 3;                                                \
		acc >>= n & ~7u;                                            \
		n &= 7;                                                     \
	} while (0)
#define ENCODE(enc, x, sym)                                        \
	do {                                                       \
		uint32_t t_ = (enc)[((uint32_t)(sym) << 9) + (x)]; \
		PUT(t_ & 1023, (t_ >> 10) & 15);                   \
		(x) = t_ >> 16;                                    \
	} while (0)
	PUT(s->bits, s->nbits); /* at most 16 + 16 + 22 bits */
	FLUSH();
	/* The accumulator takes 63 bits (FLUSH() leaves at most 7): room
	 * for the states' 24 bits at most (logs 8, 7, 8), then for the
	 * extra bits; a few bits a sequence, it is written out every few. */
	for (size_t i = nseq - 1; i-- > 0;) {
		s = &seqs[i];
		if (n > 63 - 24)
			FLUSH();
		ENCODE(eo, xo, s->code[OF]);
		ENCODE(em, xm, s->code[ML]);
		ENCODE(el, xl, s->code[LL]);
		if (n + s->nbits > 63)
			FLUSH();
		PUT(s->bits, s->nbits);
	}
	FLUSH();
	/* The starting states, read first: literal lengths, offsets, match
	 * lengths (an RLE code's log is 0). */
	PUT(xm, lm);
	PUT(xo, lo);
	FLUSH();
	PUT(xl, ll);
	PUT(1, 1); /* the end mark */
	FLUSH();
#undef PUT
#undef FLUSH
#undef ENCODE
	return p + (n > 0);
}

/* The worst a block with nseq sequences and nlit literals can take
 * coded: headers, the three tables' descriptions, literals, and 10 bytes
 * a sequence at most (states 26 bits, extra bits 16 + 16 + 22) plus the
 * final flushes' 8. */
static size_t encode_bound(size_t nseq, size_t nlit)
{
	return 3 + nlit + 4 + 3 * 80 + 10 * nseq + 16;
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
		size_t nseq;

		memset(e->hist, 0, sizeof(e->hist));
		nseq = be > bs ? find(e, base, bs, be, &nlit) : 0;
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
