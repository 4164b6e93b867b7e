/* The one line that says why an attach step failed, written into the
 * caller's buffer (inject.c, preflight.c): every refusal and error of
 * launcher/attach/ is returned as a negative errno with it. */
#ifndef FXT_LAUNCHER_ATTACH_WHY_H
#define FXT_LAUNCHER_ATTACH_WHY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Formats the line into why (cap bytes; nothing when why is NULL) and
 * returns err. */
static inline int __attribute__((format(printf, 4, 5)))
attach_fail(char *why, size_t cap, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && cap) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return err;
}

#endif /* FXT_LAUNCHER_ATTACH_WHY_H */
