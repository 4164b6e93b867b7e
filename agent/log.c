/* Signal-safe formatting and logging for the agent (see log.h). */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "agent/log.h"

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put(o, *s++);
}

static void put_num(struct out *o, unsigned long long v, unsigned base, int neg)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
}

size_t agent_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, cap, 0 };

	for (; *fmt; fmt++) {
		int lng = 0;
		int size_t_arg = 0;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		if (*fmt == 'z') {
			size_t_arg = 1;
			fmt++;
		}
		switch (*fmt) {
		case 's':
			put_str(&o, va_arg(ap, const char *));
			break;
		case 'd': {
			long long v = lng >= 2 ? va_arg(ap, long long)
				      : lng    ? va_arg(ap, long)
					       : va_arg(ap, int);
			put_num(&o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, 10,
				v < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = size_t_arg ? va_arg(ap, size_t)
					       : lng >= 2 ? va_arg(ap, unsigned long long)
					       : lng	  ? va_arg(ap, unsigned long)
							  : va_arg(ap, unsigned);
			put_num(&o, v, *fmt == 'x' ? 16 : 10, 0);
			break;
		}
		case 'p':
			put_str(&o, "0x");
			put_num(&o, (uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '?');
			break;
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t agent_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = agent_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

void agent_log(int always, const char *fmt, ...)
{
	int saved = errno;
	char line[512];
	size_t n;
	va_list ap;

	if (always && !agent_cfg.debug)
		n = agent_fmt(line, sizeof(line), "fxtrace: ");
	else
		n = agent_fmt(line, sizeof(line), "fxtrace[%ld]: ", (long)getpid());
	va_start(ap, fmt);
	n += agent_vfmt(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	while (write(2, line, n) < 0 && errno == EINTR)
		;
	errno = saved;
}
