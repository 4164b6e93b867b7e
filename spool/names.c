/* The names of a run's files (see names.h). */
#include "config.h"

#include <string.h>

#include "spool/names.h"

/* A tiny string builder: appends, always NUL-terminates, truncates. */
struct sbuf {
	char *p;
	size_t cap, len;
};

static void put_str(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && b->len + 1 < b->cap; i++)
		b->p[b->len++] = s[i];
	if (b->cap)
		b->p[b->len] = '\0';
}

static void put_dec(struct sbuf *b, unsigned long long v)
{
	char d[24];
	size_t n = 0;

	do
		d[sizeof(d) - 1 - n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(d));
	put_str(b, d + sizeof(d) - n, n);
}

size_t run_archive_stem(const char *output)
{
	const char *base = strrchr(output, '/');
	const char *dot, *gz;

	base = base ? base + 1 : output;
	dot = strrchr(base, '.');
	gz = dot && strcmp(dot, ".gz") == 0 ? dot : NULL;
	if (gz) {
		const char *p = gz;
		dot = NULL;
		while (p > base && *--p != '.')
			;
		if (*p == '.' && p > base)
			dot = p;
		else
			dot = gz;
	}
	if (!dot || dot == base)
		dot = base + strlen(base);
	return (size_t)(dot - output);
}

void run_archive_name(char *buf, size_t cap, const char *output, long pid, unsigned n)
{
	struct sbuf b = { buf, cap, 0 };
	size_t stem = run_archive_stem(output);

	put_str(&b, output, stem);
	put_str(&b, ".", 1);
	put_dec(&b, (unsigned long long)pid);
	if (n > 1) {
		put_str(&b, ".", 1);
		put_dec(&b, n);
	}
	put_str(&b, output + stem, strlen(output + stem));
}

void run_spool_name(char *buf, size_t cap, const char *output, long pid, unsigned image)
{
	struct sbuf b = { buf, cap, 0 };

	put_str(&b, output, strlen(output));
	put_str(&b, ".", 1);
	put_dec(&b, (unsigned long long)pid);
	if (image > 1) {
		put_str(&b, ".", 1);
		put_dec(&b, image);
	}
	put_str(&b, ".spool", 6);
}
