/* The names of a run's files, made and read back (see names.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "run/names.h"

/* A tiny string builder: appends, always NUL-terminates, truncates. */
struct sbuf {
	char *p;
	size_t cap, len;
	bool cut; /* something did not fit */
};

static void put_str(struct sbuf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && b->len + 1 < b->cap; i++)
		b->p[b->len++] = s[i];
	b->cut |= i < n;
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

/* n decimal digits of v, zero-padded. */
static void put_dec_width(struct sbuf *b, unsigned long long v, unsigned n)
{
	char d[24];

	for (unsigned i = n; i-- > 0; v /= 10)
		d[i] = (char)('0' + v % 10);
	put_str(b, d, n);
}

int run_output_expand(char *buf, size_t cap, const char *tmpl, const struct run_template_values *v,
		      char *bad)
{
	struct sbuf b = { buf, cap, 0, false };
	struct tm tm;
	time_t t;

	for (const char *p = tmpl; *p; p++) {
		if (*p != '%') {
			put_str(&b, p, 1);
			continue;
		}
		switch (*++p) {
		case '%':
			put_str(&b, "%", 1);
			break;
		case 'p':
			put_dec(&b, (unsigned long long)v->pid);
			break;
		case 'n':
			put_str(&b, v->program, strlen(v->program));
			break;
		case 'h':
			put_str(&b, v->host, strlen(v->host));
			break;
		case 't':
			/* UTC: gmtime_r reads no time zone file, in the agent
			 * no more than in fxt-run. */
			t = (time_t)v->start;
			if (!gmtime_r(&t, &tm))
				memset(&tm, 0, sizeof(tm));
			put_dec_width(&b, (unsigned long long)tm.tm_year + 1900, 4);
			put_dec_width(&b, (unsigned long long)tm.tm_mon + 1, 2);
			put_dec_width(&b, (unsigned long long)tm.tm_mday, 2);
			put_str(&b, "-", 1);
			put_dec_width(&b, (unsigned long long)tm.tm_hour, 2);
			put_dec_width(&b, (unsigned long long)tm.tm_min, 2);
			put_dec_width(&b, (unsigned long long)tm.tm_sec, 2);
			break;
		default:
			if (bad)
				*bad = *p;
			return -EINVAL;
		}
	}
	return b.cut || !cap ? -ENAMETOOLONG : 0;
}

int run_output_escape(char *buf, size_t cap, const char *name)
{
	struct sbuf b = { buf, cap, 0, false };

	for (const char *p = name; *p; p++) {
		put_str(&b, p, 1);
		if (*p == '%')
			put_str(&b, "%", 1);
	}
	return b.cut || !cap ? -ENAMETOOLONG : 0;
}

size_t run_archive_stem(const char *output)
{
	const char *base = strrchr(output, '/');
	const char *dot, *gz;

	base = base ? base + 1 : output;
	dot = strrchr(base, '.');
	/* A compressed archive's suffix stays with its ".fxt": ".fxt.gz". */
	gz = dot && (strcmp(dot, ".gz") == 0 || strcmp(dot, ".zst") == 0) ? dot : NULL;
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
	struct sbuf b = { buf, cap, 0, false };
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
	struct sbuf b = { buf, cap, 0, false };

	put_str(&b, output, strlen(output));
	put_str(&b, ".", 1);
	put_dec(&b, (unsigned long long)pid);
	if (image > 1) {
		put_str(&b, ".", 1);
		put_dec(&b, image);
	}
	put_str(&b, ".spool", 6);
}

void run_spare_name(char *buf, size_t cap, const char *output, long launcher_pid, unsigned slot)
{
	struct sbuf b = { buf, cap, 0, false };

	put_str(&b, output, strlen(output));
	put_str(&b, ".", 1);
	put_dec(&b, (unsigned long long)launcher_pid);
	put_str(&b, ".spare.", 7);
	put_dec(&b, slot);
}

void run_pid_file_name(char *buf, size_t cap, const char *output, long pid, const char *suffix)
{
	struct sbuf b = { buf, cap, 0, false };

	put_str(&b, output, strlen(output));
	put_str(&b, ".", 1);
	put_dec(&b, (unsigned long long)pid);
	put_str(&b, suffix, strlen(suffix));
}

#define SNAP_TAG ".snap"

void run_snapshot_name(char *buf, size_t cap, const char *output, unsigned n, bool spool)
{
	struct sbuf b = { buf, cap, 0, false };
	size_t stem = spool ? strlen(output) : run_archive_stem(output);

	put_str(&b, output, stem);
	put_str(&b, SNAP_TAG, strlen(SNAP_TAG));
	put_dec(&b, n);
	if (spool)
		put_str(&b, ".spool", 6);
	else
		put_str(&b, output + stem, strlen(output + stem));
}

/* ------------------------------------------------------------ parsing */

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Reads ".DIGITS" at p into *v (at most UINT_MAX).  Returns what follows,
 * or NULL when p holds no such number. */
static const char *get_dec(const char *p, unsigned long *v)
{
	if (*p < '0' || *p > '9')
		return NULL;
	*v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		*v = *v * 10 + (unsigned long)(*p - '0');
		if (*v > UINT_MAX)
			return NULL;
	}
	return p;
}

static const char *get_dot_dec(const char *p, unsigned long *v)
{
	return p[0] == '.' ? get_dec(p + 1, v) : NULL;
}

/* Whether `name` is prefix, ".snap", N and `suffix`: sets *n. */
static bool parse_snap(const char *name, const char *prefix, size_t plen, const char *suffix,
		       unsigned *n)
{
	size_t tlen = strlen(SNAP_TAG);
	unsigned long v;
	const char *p;

	if (strncmp(name, prefix, plen) != 0 || strncmp(name + plen, SNAP_TAG, tlen) != 0)
		return false;
	p = get_dec(name + plen + tlen, &v);
	if (!p || strcmp(p, suffix) != 0)
		return false;
	*n = (unsigned)v;
	return true;
}

/* Whether `name` is prefix, then ".PID" or ".PID.N", then `suffix`; sets
 * *pid, and *n (1 without ".N") unless n is NULL, in which case ".N" is
 * no match. */
static bool parse_pid_n(const char *name, const char *prefix, size_t plen, const char *suffix,
			long *pid, unsigned *n)
{
	unsigned long v[2];
	const char *p = name + plen;

	if (strncmp(name, prefix, plen) != 0)
		return false;
	for (int i = 0; i < (n ? 2 : 1); i++) {
		if (!(p = get_dot_dec(p, &v[i])))
			return false;
		if (strcmp(p, suffix) == 0) {
			*pid = (long)v[0];
			if (n)
				*n = i == 0 ? 1 : (unsigned)v[1];
			return true;
		}
	}
	return false;
}

bool run_archive_parse(const char *output, const char *name, long *pid, unsigned *n)
{
	const char *base = base_of(output);
	size_t stem = run_archive_stem(output);

	return parse_pid_n(name, base, stem - (size_t)(base - output), output + stem, pid, n);
}

bool run_spool_parse(const char *output, const char *name, long *pid, unsigned *image)
{
	const char *base = base_of(output);

	return parse_pid_n(name, base, strlen(base), ".spool", pid, image);
}

bool run_pid_file_parse(const char *output, const char *name, const char *suffix, long *pid)
{
	const char *base = base_of(output);

	return parse_pid_n(name, base, strlen(base), suffix, pid, NULL);
}

bool run_spare_parse(const char *output, const char *name, long *launcher_pid)
{
	const char *base = base_of(output);
	size_t plen = strlen(base);
	unsigned long v[2];
	const char *p = name + plen;

	if (strncmp(name, base, plen) != 0 || !(p = get_dot_dec(p, &v[0])) ||
	    strncmp(p, ".spare", 6) != 0 || !(p = get_dot_dec(p + 6, &v[1])) || *p != '\0' ||
	    v[1] >= RUN_SPARE_SLOTS)
		return false;
	*launcher_pid = (long)v[0];
	return true;
}

size_t run_spool_output(const char *spool)
{
	size_t len = strlen(spool);

	if (len < 7 || strcmp(spool + len - 6, ".spool") != 0)
		return 0;
	len -= 6;
	/* A snapshot's, OUT.snapN.spool. */
	{
		size_t d = len, t = strlen(SNAP_TAG);
		while (d > 0 && spool[d - 1] >= '0' && spool[d - 1] <= '9')
			d--;
		if (d < len && d > t && strncmp(spool + d - t, SNAP_TAG, t) == 0)
			return d - t;
	}
	for (int i = 0; i < 2; i++) {
		size_t d = len;
		while (d > 0 && spool[d - 1] >= '0' && spool[d - 1] <= '9')
			d--;
		if (d == len || d == 0 || spool[d - 1] != '.')
			break;
		len = d - 1;
	}
	return len;
}

size_t run_pid_file_output(const char *path, const char *suffix, long *pid)
{
	size_t len = strlen(path), slen = strlen(suffix), d;
	unsigned long v;

	if (len <= slen || strcmp(path + len - slen, suffix) != 0)
		return 0;
	len -= slen;
	for (d = len; d > 0 && path[d - 1] >= '0' && path[d - 1] <= '9'; d--)
		;
	if (d == len || d < 2 || path[d - 1] != '.' || path[d - 2] == '/' ||
	    get_dec(path + d, &v) != path + len)
		return 0;
	*pid = (long)v;
	return d - 1;
}

bool run_snapshot_spool_parse(const char *output, const char *name, unsigned *n)
{
	const char *base = base_of(output);

	return parse_snap(name, base, strlen(base), ".spool", n);
}

bool run_snapshot_parse(const char *output, const char *name, unsigned *n)
{
	const char *base = base_of(output);
	size_t stem = run_archive_stem(output) - (size_t)(base - output);

	return parse_snap(name, base, stem, base + stem, n);
}
