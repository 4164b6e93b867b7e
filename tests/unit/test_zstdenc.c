/* fxt/zstdenc.c, fxtrace's own zstd encoder: every frame it writes must
 * be one that libzstd's decoder reads back to the same bytes, with the
 * content size and checksum it says.  Buffers of many sizes (around the
 * frame header's and the literals' and sequences' size fields, the 128 KiB
 * blocks, the writer's 2 MiB frames) and kinds: zeros, random bytes (raw
 * blocks), FXT-like records (headers repeating at fixed distances,
 * timestamps whose low bytes change: the coded blocks, repeat offsets),
 * records of random sizes with strings, and random mixes of copies at any
 * distance and byte offset with random bytes (every literal length, match
 * length and offset code the encoder can make); each also from an odd
 * address. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "fxt/zstdenc.h"
#include "tests/lib/tap.h"

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum kind { ZEROS, RANDOM, FIB, RECORDS, MIX, WORDS, NKIND };
static const char *const kind_name[NKIND] = { "zeros",	 "random", "fib-like",
					      "records", "mix",	   "word copies" };

static void put64(unsigned char *p, size_t *at, size_t len, uint64_t v)
{
	for (int i = 0; i < 8 && *at < len; i++)
		p[(*at)++] = (unsigned char)(v >> (8 * i));
}

static void fill(unsigned char *p, size_t len, enum kind k)
{
	size_t at = 0;
	uint64_t ts = 0x0001234500000000ull;

	switch (k) {
	case ZEROS:
		memset(p, 0, len);
		break;
	case RANDOM:
		for (size_t i = 0; i < len; i++)
			p[i] = (unsigned char)next();
		break;
	case FIB: /* a duration-complete record: header, start, end */
		while (at < len) {
			put64(p, &at, len, 0x0003000100040034ull + (next() % 4 == 0 ? 0x10000 : 0));
			ts += next() % 600;
			put64(p, &at, len, ts);
			ts += next() % 600;
			put64(p, &at, len, ts);
		}
		break;
	case RECORDS: /* records of 1-6 words: some strings, some numbers */
		while (at < len) {
			unsigned n = 1 + (unsigned)(next() % 6), kind = (unsigned)(next() % 5);
			put64(p, &at, len, (uint64_t)n << 4 | kind | (uint64_t)(next() % 3) << 16);
			for (unsigned i = 1; i < n; i++)
				put64(p, &at, len,
				      kind == 0	  ? 0x2f7573722f6c6962ull + i /* "/usr/lib" */
				      : kind == 1 ? (ts += next() % 5000)
						  : next() % 1000);
		}
		break;
	case MIX: /* random bytes and copies of earlier ones */
		while (at < len) {
			size_t n = 1 + (size_t)(next() % (next() % 8 ? 40 : 70000));
			if (n > len - at)
				n = len - at;
			if (at > 0 && next() % 3) {
				size_t off = 1 + (size_t)(next() % (next() % 4 ? 64 : at));
				if (off > at)
					off = at;
				for (size_t i = 0; i < n; i++, at++)
					p[at] = p[at - off];
			} else {
				for (size_t i = 0; i < n; i++)
					p[at++] = (unsigned char)next();
			}
		}
		break;
	case WORDS: /* copies 8 bytes apart, some long, and literals */
		while (at < len) {
			size_t n = 1 + (size_t)(next() % (next() % 8 ? 100 : 140000));
			if (n > len - at)
				n = len - at;
			if (at >= 8 && next() % 4) {
				size_t off = 8 * (1 + (size_t)(next() % (next() % 2 ? 4 : at / 8)));
				if (off > at)
					off = 8;
				for (size_t i = 0; i < n; i++, at++)
					p[at] = p[at - off];
			} else {
				for (size_t i = 0; i < n; i++)
					p[at++] = (unsigned char)next();
			}
		}
		break;
	default:
		break;
	}
}

/* Encodes len bytes at in and decodes them with libzstd: 1 if they
 * come back, with the frame's content size, and fit the bound. */
static int round_trip(struct fxt__zstdenc *e, const unsigned char *in, size_t len,
		      unsigned char *dst, size_t cap, unsigned char *back, size_t backcap,
		      size_t *nout, const char **why)
{
	size_t n = fxt__zstdenc_frame(e, dst, cap, in, len);
	size_t got = n ? ZSTD_decompress(back, backcap, dst, n) : 0;

	*nout = n;
	*why = n && ZSTD_isError(got) ? ZSTD_getErrorName(got) : "alike";
	return n && !ZSTD_isError(got) && got == len && !memcmp(back, in, len) &&
	       ZSTD_getFrameContentSize(dst, n) == len &&
	       ZSTD_findFrameCompressedSize(dst, n) == n && n <= fxt__zstdenc_bound(len);
}

static const size_t sizes[] = { 0,	1,	7,	8,	9,	 31,	32,
				255,	256,	257,	4095,	4096,	 65791, 65792,
				131071, 131072, 131073, 300001, 1u << 21 };
#define NSIZE (sizeof(sizes) / sizeof(sizes[0]))

int main(void)
{
	struct fxt__zstdenc *e = fxt__zstdenc_new();
	size_t maxlen = 1u << 21, cap = fxt__zstdenc_bound(maxlen);
	unsigned char *src = malloc(maxlen + 1), *dst = malloc(cap), *back = malloc(maxlen + 1);
	size_t fib_in = 0, fib_out = 0;

	plan(5 + NKIND * (int)NSIZE);
	ok(e && src && dst && back, "encoder and buffers");
	if (!e || !src || !dst || !back)
		return exit_status();
	for (int k = 0; k < NKIND; k++) {
		for (size_t i = 0; i < NSIZE; i++) {
			size_t len = sizes[i];
			unsigned char *in = src + (i & 1); /* odd addresses too */
			fill(in, len, (enum kind)k);
			size_t n;
			const char *why;
			int same = round_trip(e, in, len, dst, cap, back, maxlen + 1, &n, &why);
			ok(same, "%s, %zu bytes: %zu compressed, decoded %s", kind_name[k], len, n,
			   why);
			if (k == FIB && len == maxlen) {
				fib_in = len;
				fib_out = n;
			}
		}
	}
	/* Random sizes and kinds, each kind mixed with the others. */
	int bad = 0;
	for (int r = 0; r < 60; r++) {
		size_t len = (size_t)(next() % maxlen), at = 0, n;
		const char *why;
		while (at < len) {
			size_t part = 1 + (size_t)(next() % (len - at));
			fill(src + at, part, (enum kind)(next() % NKIND));
			at += part;
		}
		if (!round_trip(e, src, len, dst, cap, back, maxlen + 1, &n, &why)) {
			diag("round %d, %zu bytes: %s", r, len, why);
			bad++;
		}
	}
	ok(!bad, "60 buffers of random sizes and mixed kinds");
	/* FXT-like records compress (their timestamps' low bytes are what
	 * is left). */
	diag("fib-like 2 MiB: %zu bytes (%.2fx)", fib_out, fib_out ? (double)fib_in / fib_out : 0);
	ok(fib_out && fib_out < fib_in / 2, "fib-like records compress 2x or more");
	/* Too small an output: 0, nothing past it. */
	fill(src, 4096, RANDOM);
	memset(dst, 0xa5, cap);
	ok(fxt__zstdenc_frame(e, dst, fxt__zstdenc_bound(4096) - 1, src, 4096) == 0 &&
	       dst[fxt__zstdenc_bound(4096) - 1] == 0xa5,
	   "an output too small: 0");
	/* Frames one after another are one stream to a reader. */
	fill(src, 300001, MIX);
	size_t a = fxt__zstdenc_frame(e, dst, cap, src, 100000);
	size_t b = fxt__zstdenc_frame(e, dst + a, cap - a, src + 100000, 200001);
	size_t got = ZSTD_decompress(back, maxlen, dst, a + b);
	ok(a && b && got == 300001 && !memcmp(back, src, 300001), "two frames in a row");
	fxt__zstdenc_free(e);
	free(src);
	free(dst);
	free(back);
	return exit_status();
}
