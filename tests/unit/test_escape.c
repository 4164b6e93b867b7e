/* The tools' string escapers (tools/front/escape.c): one table of inputs, each
 * with what JSON, CSV and a text line make of it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/tap.h"
#include "tools/front/escape.h"

static const struct {
	const char *what, *in;
	const char *json, *csv, *text;
} cases[] = {
	{ "empty", "", "\"\"", "", "" },
	{ "plain", "main", "\"main\"", "main", "main" },
	{ "C++ name", "std::vector<int>::at(unsigned long) const",
	  "\"std::vector<int>::at(unsigned long) const\"",
	  "std::vector<int>::at(unsigned long) const",
	  "std::vector<int>::at(unsigned long) const" },
	{ "quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"", "\"a\"\"b\\c\"", "a\"b\\c" },
	{ "comma", "f(a, b)", "\"f(a, b)\"", "\"f(a, b)\"", "f(a, b)" },
	{ "newline and CR", "a\nb\rc", "\"a\\u000ab\\u000dc\"", "\"a\nb\rc\"", "a\\x0ab\\x0dc" },
	{ "tab, escape, DEL", "\t\x1b[1m\x7f", "\"\\u0009\\u001b[1m\\u007f\"", "\t\x1b[1m\x7f",
	  "\\x09\\x1b[1m\\x7f" },
	{ "UTF-8 kept", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\"",
	  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5" },
	{ "stray continuation byte", "a\x80z", "\"a\\ufffdz\"", "a\x80z", "a\\x80z" },
	{ "truncated sequence", "x\xe2\x82", "\"x\\ufffd\\ufffd\"", "x\xe2\x82", "x\\xe2\\x82" },
	{ "overlong and surrogate", "\xc0\xaf\xed\xa0\x80",
	  "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"", "\xc0\xaf\xed\xa0\x80",
	  "\\xc0\\xaf\\xed\\xa0\\x80" },
};

/* What writer(f, in) prints, in a malloc'd string. */
static char *capture(void (*writer)(FILE *, const char *), const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		bail_out("open_memstream");
	writer(f, in);
	if (fclose(f) != 0)
		bail_out("fclose");
	return buf;
}

/* tool_json_escape() into a buffer, counting the pieces it hands out. */
struct sink {
	char buf[256];
	size_t n, calls;
};

static void sink_put(void *ctx, const char *s, size_t n)
{
	struct sink *k = ctx;

	if (k->n + n < sizeof(k->buf)) {
		memcpy(k->buf + k->n, s, n);
		k->n += n;
	}
	k->calls++;
}

int main(void)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct sink k = { .n = 0 };

	plan((int)(3 * n + 2));
	for (size_t i = 0; i < n; i++) {
		char *json = capture(tool_put_json_str, cases[i].in);
		char *csv = capture(tool_put_csv_str, cases[i].in);
		char *text = capture(tool_put_text_str, cases[i].in);

		ASSERT_STR_EQ(json, cases[i].json, "json: %s", cases[i].what);
		ASSERT_STR_EQ(csv, cases[i].csv, "csv: %s", cases[i].what);
		ASSERT_STR_EQ(text, cases[i].text, "text: %s", cases[i].what);
		free(json);
		free(csv);
		free(text);
	}

	/* Not NUL-terminated: only len bytes are read, and a NUL inside is a
	 * control character like any other. */
	tool_json_escape("ab\0cdXX", 5, sink_put, &k);
	k.buf[k.n] = 0;
	ASSERT_STR_EQ(k.buf, "ab\\u0000cd", "json: length-delimited, NUL escaped");
	/* Plain runs come in one piece: "ab", the escape, "cd". */
	ASSERT_EQ_U64(k.calls, 3, "json: plain runs handed out whole");
	return exit_status();
}
