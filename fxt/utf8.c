/* UTF-8 for FXT strings (include/fxt/utf8.h): validation, character
 * length and cleaning (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
#include <stdint.h>
#include <string.h>

#include <fxt/utf8.h>

bool fxt_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	/* Most strings are ASCII: 8 bytes at a time, the last 8 overlapping
	 * the others (no byte at a time for the tail). */
	if (len >= 8) {
		uint64_t any = 0, w;

		for (; i + 8 <= len; i += 8) {
			memcpy(&w, s + i, 8);
			any |= w;
		}
		memcpy(&w, s + len - 8, 8);
		if (((any | w) & UINT64_C(0x8080808080808080)) == 0)
			return true;
		i = 0;
	}
	while (i < len) {
		/* Most names are ASCII: step over 8 bytes at a time. */
		if (len - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if ((w & UINT64_C(0x8080808080808080)) == 0) {
				i += 8;
				continue;
			}
		}
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
		if (c >= 0xc2 && c <= 0xdf) {
			n = 2;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 3;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates U+D800 .. U+DFFF */
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 4;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
		} else {
			return false; /* continuation byte, 0xc0/0xc1 or 0xf5 .. 0xff */
		}
		if (len - i < n)
			return false;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (size_t k = 2; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

size_t fxt_utf8_char_len(const char *s, size_t len)
{
	unsigned char c;
	size_t n;

	if (!len)
		return 0;
	c = (unsigned char)s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	return n <= len && fxt_utf8_valid(s, n) ? n : 0;
}

size_t fxt_utf8_clean(char *dst, const char *src, size_t len)
{
	size_t i = 0, n = 0, k;

	if (fxt_utf8_valid(src, len)) {
		if (len)
			memcpy(dst, src, len);
		return len;
	}
	while (i < len) {
		k = fxt_utf8_char_len(src + i, len - i);
		if (k) {
			memcpy(dst + n, src + i, k);
			n += k;
			i += k;
		} else {
			dst[n++] = '?';
			i++;
		}
	}
	return n;
}
