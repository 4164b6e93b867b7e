/* How the tools write strings that come from an archive or the command line
 * into their outputs: JSON string literals, CSV fields, plain text lines, and
 * names cleaned once for every output.
 * The one owner of these rules; the XML of flame graphs is the SVG writer's
 * own.
 *
 * Archive strings are bytes: FXT says UTF-8, but a damaged or foreign
 * archive need not be.  Every writer here keeps valid UTF-8 as it is and
 * makes anything else harmless for its format. */
#ifndef FXT_TOOLS_ESCAPE_H
#define FXT_TOOLS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Receives a piece of escaped output: n bytes at s (n > 0). */
typedef void (*tool_put_fn)(void *ctx, const char *s, size_t n);

/* True for a byte that JSON text cannot carry as it is (see
 * tool_json_escape()). */
static inline bool tool_json_special(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c >= 0x80;
}

/* The length of the longest prefix of s[0 .. len) that JSON carries as it
 * is: a writer on a hot path copies it, and calls tool_json_escape() only
 * for the rest, if any. */
static inline size_t tool_json_plain(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && !tool_json_special((unsigned char)s[i]))
		i++;
	return i;
}

/* Escapes s[0 .. len) as the inside of a JSON string literal (no quotes):
 * '"' and '\\' backslashed, control characters and DEL as \u00XX, each
 * byte that is not part of valid UTF-8 as \ufffd (JSON must be UTF-8).
 * Runs of bytes that need nothing are handed to put in one call. */
void tool_json_escape(const char *s, size_t len, tool_put_fn put, void *ctx);

/* s as a JSON string literal, quotes included (tool_json_escape()). */
void tool_put_json_str(FILE *f, const char *s);

/* s as a CSV field (RFC 4180): as it is, or in double quotes, with '"'
 * doubled, when it holds ',', '"', CR or LF. */
void tool_put_csv_str(FILE *f, const char *s);

/* s for a terminal or a line-oriented text table: control characters and
 * bytes that are not valid UTF-8 become \xNN, so a name from an archive can
 * neither break a line nor send escape sequences. */
void tool_put_text_str(FILE *f, const char *s);
/* The same for s[0 .. len), which need not be NUL-terminated (an
 * archive's string as the reader gives it). */
void tool_put_text_mem(FILE *f, const char *s, size_t len);

/* Copies src[0 .. len) to dst (room for len + 1 bytes), NUL-terminated,
 * with each control character and each byte that is not part of valid
 * UTF-8 replaced by '?': a name that any output (XML, a folded line, a
 * terminal) can carry as it is.  Returns len. */
size_t tool_clean_str(char *dst, const char *src, size_t len);

#endif /* FXT_TOOLS_ESCAPE_H */
