/* Raw FXT records for unit tests, written word by word where the writer
 * has no call for them (include/fxt/writer.h): a string record that gives
 * an index new text, as writers that evict do. */
#ifndef FXT_TESTS_RAW_TEST_STRING_H
#define FXT_TESTS_RAW_TEST_STRING_H

#include <stdint.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

/* Registers string `index` of the current provider as s (up to 48 bytes). */
static inline void raw_test_string(struct fxt_writer *w, uint16_t index, const char *s)
{
	size_t len = strlen(s), nwords = 1 + (len + 7) / 8;
	uint64_t words[8] = { 0 };

	if (nwords > 8)
		bail_out("raw_test_string: too long");
	words[0] = fxt_field(FXT_RECORD_STRING, 0, 3) | fxt_field(nwords, 4, 15) |
		   fxt_field(index, 16, 30) | fxt_field(len, 32, 46);
	memcpy(&words[1], s, len);
	if (fxt_writer_words(w, words, nwords) < 0)
		bail_out("fxt_writer_words");
}

#endif /* FXT_TESTS_RAW_TEST_STRING_H */
