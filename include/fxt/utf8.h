/* UTF-8 as FXT strings need it: FXT strings are UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), while program
 * output, paths and symbol names need not be.  The one owner of these
 * rules: the codec, the converter and the tools all call these. */
#ifndef FXT_UTF8_H
#define FXT_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True if s[0 .. len) is valid UTF-8. */
bool fxt_utf8_valid(const char *s, size_t len);

/* The length (1 to 4) of the valid UTF-8 character that starts s[0 .. len),
 * or 0 if none does (len == 0, a stray or truncated sequence). */
size_t fxt_utf8_char_len(const char *s, size_t len);

/* Copies src[0 .. len) to dst (room for len bytes), each byte that is not
 * part of a valid UTF-8 character replaced with '?'.  Returns the bytes
 * written (len). */
size_t fxt_utf8_clean(char *dst, const char *src, size_t len);

/* The longest prefix of s[0 .. len) that is at most `max` bytes and does not
 * end inside a UTF-8 sequence: when the cut falls on a continuation byte
 * (10xxxxxx), it moves back to the lead byte of that character.  Input that
 * is not UTF-8 is cut at most 3 bytes short of `max`. */
static inline size_t fxt_utf8_cut(const char *s, size_t len, size_t max)
{
	size_t cut, back;

	if (len <= max)
		return len;
	cut = max;
	for (back = 0; back < 3 && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80; back++)
		cut--;
	return cut;
}

#ifdef __cplusplus
}
#endif

#endif /* FXT_UTF8_H */
