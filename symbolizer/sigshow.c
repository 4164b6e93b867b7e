/* How a value captured at an entry or return shows (signature.h's
 * fxt_sig_show): as the conversion writes it into an FXT argument. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer/signature.h"

static void show_text(char *buf, size_t cap, struct fxt_shown *out, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void show_text(char *buf, size_t cap, struct fxt_shown *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	out->type = FXT_SHOWN_STR;
	out->str = buf;
	out->len = 0;
	if (!cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	out->len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* An unsigned 128-bit number in decimal. */
static void u128_text(unsigned __int128 v, char *dst, size_t cap)
{
	char tmp[48];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	if (cap == 0)
		return;
	{
		size_t i, k = n < cap - 1 ? n : cap - 1;

		for (i = 0; i < k; i++)
			dst[i] = tmp[n - 1 - i];
		dst[k] = '\0';
	}
}

static uint64_t cut(uint64_t v, unsigned size, bool is_signed)
{
	unsigned bits = size * 8;

	if (size == 0 || size >= 8)
		return v;
	v &= (1ull << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

void fxt_sig_show(const struct fxt_value_desc *d, uint64_t lo, uint64_t hi, char *buf, size_t cap,
		  struct fxt_shown *out)
{
	memset(out, 0, sizeof(*out));
	switch (d->kind) {
	case FXT_VK_INT:
	case FXT_VK_UINT: {
		bool sgn = d->kind == FXT_VK_INT;

		if (d->size == 16) {
			unsigned __int128 v = ((unsigned __int128)hi << 64) | lo;
			bool neg = sgn && (int64_t)hi < 0;

			/* The 64-bit type when it holds the value. */
			if (sgn && hi == ((int64_t)lo < 0 ? ~0ull : 0)) {
				out->type = FXT_SHOWN_I64;
				out->v.i64 = (int64_t)lo;
				return;
			}
			if (!sgn && hi == 0) {
				out->type = FXT_SHOWN_U64;
				out->v.u64 = lo;
				return;
			}
			if (neg)
				v = -v;
			show_text(buf, cap, out, "%s", neg ? "-" : "");
			if (cap > out->len)
				u128_text(v, buf + out->len, cap - out->len);
			out->len = cap ? strlen(buf) : 0;
			return;
		}
		if (sgn) {
			out->type = FXT_SHOWN_I64;
			out->v.i64 = (int64_t)cut(lo, d->size, true);
		} else {
			out->type = FXT_SHOWN_U64;
			out->v.u64 = cut(lo, d->size, false);
		}
		return;
	}
	case FXT_VK_BOOL:
		out->type = FXT_SHOWN_BOOL;
		out->v.b = (lo & 0xff) != 0;
		return;
	case FXT_VK_CHAR: {
		unsigned ch = (unsigned)(lo & 0xff);

		if (ch == '\'' || ch == '\\')
			show_text(buf, cap, out, "'\\%c'", (char)ch);
		else if (ch >= 0x20 && ch < 0x7f)
			show_text(buf, cap, out, "'%c'", (char)ch);
		else
			show_text(buf, cap, out, "'\\x%02x'", ch);
		return;
	}
	case FXT_VK_ENUM: {
		uint64_t v = cut(lo, d->size, d->is_signed);
		size_t i;

		for (i = 0; i < d->nenums; i++)
			if ((uint64_t)d->enums[i].value == v) {
				show_text(buf, cap, out, "%s", d->enums[i].name);
				return;
			}
		if (d->is_signed)
			show_text(buf, cap, out, "%" PRId64, (int64_t)v);
		else
			show_text(buf, cap, out, "%" PRIu64, v);
		return;
	}
	case FXT_VK_PTR:
	case FXT_VK_STR: /* the agent reads a string's bytes: this is its address */
		out->type = FXT_SHOWN_PTR;
		out->v.ptr = lo;
		return;
	case FXT_VK_FLOAT: {
		uint32_t bits = (uint32_t)lo;
		float f;

		memcpy(&f, &bits, sizeof(f));
		out->type = FXT_SHOWN_DOUBLE;
		out->v.d = f;
		return;
	}
	case FXT_VK_DOUBLE:
		out->type = FXT_SHOWN_DOUBLE;
		memcpy(&out->v.d, &lo, sizeof(out->v.d));
		return;
	case FXT_VK_STRUCT:
		show_text(buf, cap, out, "{...} (%u bytes)", d->size);
		return;
	case FXT_VK_VOID:
		show_text(buf, cap, out, "(void)");
		return;
	case FXT_VK_UNKNOWN:
	default:
		show_text(buf, cap, out, "(%s)", d->type ? d->type : "?");
		return;
	}
}
