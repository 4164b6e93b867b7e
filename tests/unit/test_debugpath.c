/* Unit tests of where a separate debug file may be (common/debugpath.h):
 * every candidate, in order, for a module with a build ID and a
 * .gnu_debuglink, a symlinked one, a relative one, one at the root, under
 * another debug root; and the CRC-32 a debuglink stores
 * (common/crc32.h), against its check value and zlib's crc32(). */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "common/crc32.h"
#include "common/debugpath.h"
#include "tests/lib/tap.h"

/* Every candidate of key, "B:PATH" (build ID) or "L:PATH" (debuglink),
 * one a line. */
static const char *candidates(const struct fxt_debug_key *key, size_t size)
{
	static char out[4096];
	char buf[512];
	size_t n = 0;

	out[0] = '\0';
	for (unsigned k = 0; k < FXT_DEBUG_CANDIDATES; k++) {
		enum fxt_debug_via via = fxt_debug_candidate(key, k, buf, size);
		if (via == FXT_DEBUG_SKIP)
			continue;
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%c:%s", n ? "\n" : "",
				      via == FXT_DEBUG_BUILD_ID ? 'B' : 'L', buf);
	}
	return out;
}

static void test_candidates(void)
{
	static const unsigned char id[] = { 0xab, 0x01, 0xef, 0x42 };
	struct fxt_debug_key key = { .build_id = id,
				     .build_id_len = sizeof(id),
				     .file = "/usr/bin/sort",
				     .real = "/usr/bin/sort",
				     .link = "sort.debug" };

	ASSERT_STR_EQ(candidates(&key, 512),
		      "B:/usr/lib/debug/.build-id/ab/01ef42.debug\n"
		      "L:/usr/bin/sort.debug\n"
		      "L:/usr/bin/.debug/sort.debug\n"
		      "L:/usr/lib/debug/usr/bin/sort.debug",
		      "build ID, then the link in DIR, DIR/.debug, ROOT/DIR (real path the same)");

	key.file = "/lib/libz.so.1";
	key.real = "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13";
	key.link = "libz.so.1.2.13.debug";
	key.root = "/tmp/dbg";
	ASSERT_STR_EQ(candidates(&key, 512),
		      "B:/tmp/dbg/.build-id/ab/01ef42.debug\n"
		      "L:/lib/libz.so.1.2.13.debug\n"
		      "L:/lib/.debug/libz.so.1.2.13.debug\n"
		      "L:/tmp/dbg/lib/libz.so.1.2.13.debug\n"
		      "L:/usr/lib/x86_64-linux-gnu/libz.so.1.2.13.debug\n"
		      "L:/usr/lib/x86_64-linux-gnu/.debug/libz.so.1.2.13.debug\n"
		      "L:/tmp/dbg/usr/lib/x86_64-linux-gnu/libz.so.1.2.13.debug",
		      "another root; a symlink: its path's places, then its real path's");

	struct fxt_debug_key rel = { .file = "prog", .link = "prog.debug" };
	ASSERT_STR_EQ(candidates(&rel, 512), "L:./prog.debug\nL:./.debug/prog.debug",
		      "a relative path: no build ID, no mirror under the root");
	struct fxt_debug_key top = { .file = "/prog", .link = "prog.debug", .root = "" };
	ASSERT_STR_EQ(candidates(&top, 512),
		      "L:/prog.debug\nL:/.debug/prog.debug\nL:/usr/lib/debug/prog.debug",
		      "a file at / (an empty root: the default)");

	struct fxt_debug_key none = { .build_id = id, .build_id_len = 1, .file = "/usr/bin/x" };
	ASSERT_STR_EQ(candidates(&none, 512), "", "no link, a build ID of one byte: nothing");
	ASSERT_STR_EQ(candidates(&key, 30), "L:/lib/libz.so.1.2.13.debug",
		      "a buffer of 30 bytes: only what fits");
}

static void test_crc32(void)
{
	static unsigned char buf[1 << 20];
	uint32_t x = 12345;

	ASSERT_EQ_U64(fxt__crc32(0, "123456789", 9), 0xcbf43926, "the CRC-32 check value");
	ASSERT_EQ_U64(fxt__crc32(0, "", 0), 0, "no bytes: 0");
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (unsigned char)(x >> 16);
	}
	ASSERT_EQ_U64(fxt__crc32(0, buf, sizeof(buf)), crc32(0, buf, sizeof(buf)),
		      "1 MiB of noise: zlib's crc32()");
	ASSERT_EQ_U64(fxt__crc32(fxt__crc32(0, buf, 1000), buf + 1000, sizeof(buf) - 1000),
		      crc32(0, buf, sizeof(buf)), "in two parts: the same");
}

int main(void)
{
	plan(10);
	test_candidates();
	test_crc32();
	return exit_status();
}
