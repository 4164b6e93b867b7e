/* Unit tests of include/fxt/format.h (bit helpers, header fields, refs),
 * the stream and UTF-8 helpers of fxt/internal.h, and the magic record. */
#include "config.h"

#include <fxt/format.h>
#include <fxt/writer.h>

#include "fxt/internal.h"
#include "tests/lib/tap.h"

static void test_bits(void)
{
	uint64_t w = 0x0123456789abcdefull;

	ASSERT_EQ_U64(fxt_bits(w, 0, 3), 0xf, "fxt_bits [0..3]");
	ASSERT_EQ_U64(fxt_bits(w, 4, 15), 0xcde, "fxt_bits [4..15]");
	ASSERT_EQ_U64(fxt_bits(w, 16, 31), 0x89ab, "fxt_bits [16..31]");
	ASSERT_EQ_U64(fxt_bits(w, 60, 63), 0x0, "fxt_bits [60..63]");
	ASSERT_EQ_U64(fxt_bits(w, 56, 63), 0x01, "fxt_bits [56..63]");
	ASSERT_EQ_U64(fxt_bits(w, 0, 63), w, "fxt_bits whole word");
	ASSERT_EQ_U64(fxt_bits(w, 31, 31), 1, "fxt_bits single bit 31 (0x89abcdef has it)");
	ASSERT_EQ_U64(fxt_bits(~0ull, 4, 35), 0xffffffffull, "fxt_bits 32-bit large size field");
}

static void test_field(void)
{
	ASSERT_EQ_U64(fxt_field(4, 0, 3), 0x4, "fxt_field [0..3]");
	ASSERT_EQ_U64(fxt_field(3, 4, 15), 0x30, "fxt_field [4..15]");
	ASSERT_EQ_U64(fxt_field(0xabcd, 48, 63), 0xabcd000000000000ull, "fxt_field [48..63]");
	ASSERT_EQ_U64(fxt_field(0x1ff, 16, 23), 0xff0000, "fxt_field masks an oversized value");
	ASSERT_EQ_U64(fxt_field(~0ull, 0, 63), ~0ull, "fxt_field whole word");
	ASSERT_EQ_U64(fxt_field(1, 63, 63), 0x8000000000000000ull, "fxt_field top bit");
	ASSERT_EQ_U64(fxt_bits(fxt_field(0x5a5a5, 20, 51), 20, 51), 0x5a5a5,
		      "fxt_bits undoes fxt_field");
}

static void test_stream_words(void)
{
	ASSERT_EQ_U64(fxt_stream_words(0), 0, "stream of 0 bytes: 0 words");
	ASSERT_EQ_U64(fxt_stream_words(1), 1, "stream of 1 byte: 1 word");
	ASSERT_EQ_U64(fxt_stream_words(7), 1, "stream of 7 bytes: 1 word");
	ASSERT_EQ_U64(fxt_stream_words(8), 1, "stream of 8 bytes: 1 word, no terminator");
	ASSERT_EQ_U64(fxt_stream_words(9), 2, "stream of 9 bytes: 2 words");
	ASSERT_EQ_U64(fxt_stream_words(32000), 4000, "stream of 32000 bytes: 4000 words");
}

static void test_header(void)
{
	/* An event record of 3 words: type 4, size 3, the rest arbitrary. */
	uint64_t h = 0xffffffffffff0034ull;
	/* A large record: type 15, size 0x12345678 at [4..35], large type 0. */
	uint64_t lh = 0x000000012345678full;

	ASSERT_EQ_U64(fxt_header_type(h), 4, "header type");
	ASSERT_EQ_U64(fxt_header_size(h), 3, "header size");
	ASSERT_EQ_U64(fxt_header_type(0xfff0), 0, "header type 0 beside a full size field");
	ASSERT_EQ_U64(fxt_header_size(0xfff0), 4095, "header size 4095 (maximum)");
	ASSERT_EQ_U64(fxt_header_type(lh), FXT_RECORD_LARGE, "large header type");
	ASSERT_EQ_U64(fxt_large_header_size(lh), 0x12345678, "large header size [4..35]");
}

static void test_refs(void)
{
	struct fxt_sref s;

	ok(!fxt_strref_is_inline(0x7fff), "0x7fff is an indexed string ref");
	ok(fxt_strref_is_inline(0x8001), "0x8001 is an inline string ref");
	ASSERT_EQ_U64(fxt_strref_inline_len(0x8005), 5, "inline length is the low 15 bits");
	ASSERT_EQ_U64(FXT_STRREF_INLINE(12), 0x800c, "FXT_STRREF_INLINE(12)");
	s = fxt_sref_inline("abc", 3);
	ASSERT_EQ_U64(s.ref, 0x8003, "fxt_sref_inline of 3 bytes");
	s = fxt_sref_inline("", 0);
	ASSERT_EQ_U64(s.ref, FXT_STRREF_EMPTY, "fxt_sref_inline of 0 bytes is the empty ref");
	s = fxt_sref_inline("x", FXT_MAX_STRING_LEN + 1);
	ASSERT_EQ_U64(s.ref, 0xffff, "fxt_sref_inline of an over-long string is poisoned");
	s = fxt_sref_index(0x8123);
	ASSERT_EQ_U64(s.ref, 0x0123, "fxt_sref_index keeps 15 bits");
}

static void test_magic(void)
{
	static const unsigned char want[8] = { 0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00 };
	uint64_t word[2] = { 0, 0xdeadbeef };
	unsigned char bytes[8];

	ASSERT_EQ_U64(fxt_enc_magic(word, 2), 1, "magic record is 1 word");
	memcpy(bytes, word, 8);
	ok(memcmp(bytes, want, 8) == 0, "magic record bytes are 10 00 04 46 78 54 16 00");
	for (int i = 0; i < 8; i++)
		if (bytes[i] != want[i])
			diag("  byte %d: got %02x, want %02x", i, bytes[i], want[i]);
	ASSERT_EQ_U64(word[1], 0xdeadbeef, "magic encoder writes one word only");
	ASSERT_EQ_U64(fxt_enc_magic(NULL, 0), 1, "magic encoder measures with cap 0");
	/* The same word from its fields: metadata, 1 word, trace info, magic. */
	ASSERT_EQ_U64(fxt_field(FXT_RECORD_METADATA, 0, 3) | fxt_field(1, 4, 15) |
			  fxt_field(FXT_METADATA_TRACE_INFO, 16, 19) |
			  fxt_field(FXT_TRACE_INFO_MAGIC, 20, 23) |
			  fxt_field(FXT_MAGIC_NUMBER, 24, 55),
		      FXT_MAGIC_RECORD, "magic record from its fields");
}

static void test_put_stream(void)
{
	uint64_t out[3];
	unsigned char b[24];

	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ_U64(fxt__put_stream(out, "hello", 5), 1, "5-byte stream: 1 word");
	memcpy(b, out, 16);
	ok(memcmp(b, "hello\0\0\0", 8) == 0, "5-byte stream padded with 3 zeros");
	ASSERT_EQ_U64(out[1], 0xaaaaaaaaaaaaaaaaull, "5-byte stream writes no further");

	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ_U64(fxt__put_stream(out, "12345678", 8), 1, "8-byte stream: 1 word");
	ASSERT_EQ_U64(out[1], 0xaaaaaaaaaaaaaaaaull, "8-byte stream has no terminator");

	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ_U64(fxt__put_stream(out, "123456789", 9), 2, "9-byte stream: 2 words");
	ASSERT_EQ_U64(out[1], 0x39, "9-byte stream: last word is '9' and zeros");
	ASSERT_EQ_U64(fxt__put_stream(out, NULL, 0), 0, "empty stream: 0 words");
}

static void test_utf8_cut(void)
{
	/* "a" + U+00E9 (c3 a9) + U+20AC (e2 82 ac) + U+1F600 (f0 9f 98 80) */
	const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	size_t len = sizeof(s) - 1;

	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 100), len, "utf8_cut: short string unchanged");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, len), len, "utf8_cut: exactly max");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 1), 1, "utf8_cut before a 2-byte char");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 2), 1, "utf8_cut inside a 2-byte char");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 3), 3, "utf8_cut after a 2-byte char");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 5), 3, "utf8_cut inside a 3-byte char");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 9), 6, "utf8_cut inside a 4-byte char (3 in)");
	ASSERT_EQ_U64(fxt_utf8_cut(s, len, 7), 6, "utf8_cut inside a 4-byte char (1 in)");
	ASSERT_EQ_U64(fxt_utf8_cut("\x80\x80\x80\x80\x80", 5, 4), 1,
		      "utf8_cut backs off at most 3 bytes in bad input");
}

/* fxt_utf8_valid() checks ASCII 8 bytes at a time, the last 8
 * overlapping: a bad byte in the tail only, or in the first word only,
 * is still found. */
static void test_utf8_words(void)
{
	ASSERT_EQ_I64(fxt_utf8_valid("abcdefgh", 8), 1, "utf8_valid: 8 ASCII bytes");
	ASSERT_EQ_I64(fxt_utf8_valid("abcdefghij:12345", 16), 1, "utf8_valid: 16 ASCII bytes");
	ASSERT_EQ_I64(fxt_utf8_valid("abcdefgh\xff", 9), 0, "utf8_valid: a bad byte in the tail");
	ASSERT_EQ_I64(fxt_utf8_valid("abcdefg\xff", 8), 0, "utf8_valid: a bad last byte of 8");
	ASSERT_EQ_I64(fxt_utf8_valid("\xff"
				     "bcdefghijk",
				     11),
		      0, "utf8_valid: a bad byte in the first word");
	ASSERT_EQ_I64(fxt_utf8_valid("abcdefghi\xc3\xa9", 11), 1,
		      "utf8_valid: a 2-byte character in the tail");
}

static void test_utf8_chars(void)
{
	/* Each row: input, its length, the first character's length, and the
	 * input with every byte outside a valid character made '?'. */
	static const struct {
		const char *in;
		size_t len, first;
		const char *clean;
	} rows[] = {
		{ "", 0, 0, "" },
		{ "a", 1, 1, "a" },
		{ "\xc3\xa9x", 3, 2, "\xc3\xa9x" },
		{ "\xe2\x82\xac", 3, 3, "\xe2\x82\xac" },
		{ "\xf0\x9f\x98\x80", 4, 4, "\xf0\x9f\x98\x80" },
		{ "\xc3", 1, 0, "?" }, /* truncated */
		{ "\x80"
		  "a",
		  2, 0, "?a" },			      /* stray continuation */
		{ "\xc0\xaf", 2, 0, "??" },	      /* overlong */
		{ "\xed\xa0\x80", 3, 0, "???" },      /* surrogate */
		{ "\xf4\x90\x80\x80", 4, 0, "????" }, /* above U+10FFFF */
		{ "a\xff"
		  "b\xc3\xa9",
		  5, 1, "a?b\xc3\xa9" },
	};
	char out[16];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ASSERT_EQ_U64(fxt_utf8_char_len(rows[i].in, rows[i].len), rows[i].first,
			      "utf8_char_len of row %zu", i);
		size_t n = fxt_utf8_clean(out, rows[i].in, rows[i].len);
		ok(n == rows[i].len && memcmp(out, rows[i].clean, n) == 0, "utf8_clean of row %zu",
		   i);
	}
}

static void test_hash(void)
{
	ASSERT_EQ_U64(fxt__hash_bytes("main", 4), fxt__hash_bytes("main", 4), "hash is stable");
	ok(fxt__hash_bytes("main", 4) != fxt__hash_bytes("mainx", 5), "hash depends on length");
	ok(fxt__hash_bytes("abcdefgh1", 9) != fxt__hash_bytes("abcdefgh2", 9),
	   "hash depends on the tail");
	ok(fxt__hash_pair(1, 2) != fxt__hash_pair(2, 1), "pair hash depends on order");
	ok(fxt__hash_u64(1) != fxt__hash_u64(2), "u64 hash depends on the key");
	/* Keys that differ in one bit land in different low bits (table
	 * indices): the finalizer spreads them. */
	ok((fxt__hash_u64(0x400000) & 1023) != (fxt__hash_u64(0x400008) & 1023),
	   "nearby addresses spread over the low bits");
}

int main(void)
{
	plan(91);
	test_bits();
	test_field();
	test_stream_words();
	test_header();
	test_refs();
	test_magic();
	test_put_stream();
	test_utf8_cut();
	test_utf8_words();
	test_utf8_chars();
	test_hash();
	return exit_status();
}
