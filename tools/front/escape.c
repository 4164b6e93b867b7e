/* The tools' string escapers (JSON, CSV, text) and cleaner: see escape.h. */
#include "config.h"

#include "tools/front/escape.h"

#include <string.h>

#include <fxt/utf8.h>

void tool_json_escape(const char *s, size_t len, tool_put_fn put, void *ctx)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run, n;

	while (i < len) {
		unsigned char c;

		run = i + tool_json_plain(s + i, len - i);
		if (run > i)
			put(ctx, s + i, run - i);
		if (run == len)
			break;
		i = run;
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			put(ctx, e, 2);
			i++;
		} else if (c < 0x80) { /* a control character or DEL */
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

			put(ctx, e, 6);
			i++;
		} else if ((n = fxt_utf8_char_len(s + i, len - i)) != 0) {
			put(ctx, s + i, n);
			i += n;
		} else {
			put(ctx, "\\ufffd", 6);
			i++;
		}
	}
}

static void put_file(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, (FILE *)ctx);
}

void tool_put_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	tool_json_escape(s, strlen(s), put_file, f);
	fputc('"', f);
}

void tool_put_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tool_put_text_mem(FILE *f, const char *s, size_t len)
{
	size_t i = 0, run = 0, n;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f) { /* plain ASCII: in runs */
			i++;
			continue;
		}
		if (i > run)
			fwrite(s + run, 1, i - run, f);
		if (c >= 0x80 && (n = fxt_utf8_char_len(s + i, len - i)) != 0) {
			fwrite(s + i, 1, n, f);
			i += n;
		} else {
			fprintf(f, "\\x%02x", c);
			i++;
		}
		run = i;
	}
	if (i > run)
		fwrite(s + run, 1, i - run, f);
}

void tool_put_text_str(FILE *f, const char *s)
{
	tool_put_text_mem(f, s, strlen(s));
}

size_t tool_clean_str(char *dst, const char *src, size_t len)
{
	fxt_utf8_clean(dst, src, len);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
	dst[len] = 0;
	return len;
}
