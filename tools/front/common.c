/* Shared by the archive-reading tools: see common.h. */
#include "config.h"

#include "tools/front/common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/format.h>

#include "tools/front/escape.h"

/* ------------------------------------------------------------ command line */

/* Room for every tool's options (fxt-flame has the most, 10). */
#define TOOL_MAX_OPTIONS 24

static void vsay(const char *name, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int tool_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(name, fmt, ap);
	va_end(ap);
	return TOOL_EXIT_ERROR;
}

int tool_archive_operand(const char *name, int argc, char **argv, const char **path)
{
	if (optind != argc - 1)
		return tool_usage_error(
		    name, "%s", optind == argc ? "missing ARCHIVE" : "only one ARCHIVE is read");
	*path = argv[optind];
	return 0;
}

int tool_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(name, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", name);
	return TOOL_EXIT_ERROR;
}

int tool_flush_stdout(const char *name)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	return tool_error(name, "write error: %s", strerror(errno ? errno : EIO));
}

/* The message for what getopt_long() refused (c is '?' or ':'), from the
 * argument it stopped at: a long option is named as written, a short one
 * by its letter. */
static void option_error(int argc, char **argv, const struct tool_cli *cli, int c)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	bool is_long = strncmp(arg, "--", 2) == 0;
	const char *eq = is_long ? strchr(arg, '=') : NULL;

	if (!is_long && optopt)
		tool_usage_error(cli->name,
				 c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'",
				 optopt);
	else if (c == ':')
		tool_usage_error(cli->name, "option '%s' needs a value", arg);
	else if (eq && optopt)
		tool_usage_error(cli->name, "option '%.*s' takes no value", (int)(eq - arg), arg);
	else
		tool_usage_error(cli->name, "unknown option '%s'", arg);
}

int tool_getopt(int argc, char **argv, const struct tool_cli *cli)
{
	static struct option longopts[TOOL_MAX_OPTIONS + 3];
	static char shortopts[3 * TOOL_MAX_OPTIONS + 8];
	static const struct tool_cli *built;
	int c;

	if (built != cli) {
		const char *own = cli->shortopts;
		size_t n = 0;

		/* '+' or '-' stays first; ':' next makes a missing value ':',
		 * not '?'. */
		bool mode = *own == '+' || *own == '-';
		snprintf(shortopts, sizeof(shortopts), "%.*s:%shV", mode ? 1 : 0, own, own + mode);
		while (cli->longopts[n].name && n < TOOL_MAX_OPTIONS) {
			longopts[n] = cli->longopts[n];
			n++;
		}
		longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
		longopts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
		longopts[n] = (struct option){ NULL, 0, NULL, 0 };
		built = cli;
		opterr = 0; /* our messages, not getopt's */
	}
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (c) {
	case 'h':
		fputs(cli->help, stdout);
		exit(tool_flush_stdout(cli->name));
	case 'V':
		printf("%s (%s) %s\n", cli->name, PACKAGE_NAME, PACKAGE_VERSION);
		exit(tool_flush_stdout(cli->name));
	case '?':
	case ':':
		option_error(argc, argv, cli, c);
		return '?';
	default:
		return c;
	}
}

/* -------------------------------------------------------------- archives */

/* The spool header's fields read here (agent/spool.h, read-only). */
#define SPOOL_MAGIC	  UINT64_C(0x4c4f4f5053545846) /* "FXTSPOOL" */
#define SPOOL_PID_AT	  16
#define SPOOL_PROGRAM_AT  48
#define SPOOL_PROGRAM_LEN 256

bool tool_is_spool(const char *path, char *msg, size_t msglen)
{
	unsigned char h[SPOOL_PROGRAM_AT + SPOOL_PROGRAM_LEN];
	char prog[SPOOL_PROGRAM_LEN + 1];
	uint64_t magic = 0, pid = 0;
	size_t got, n, i;
	FILE *f;

	if (strcmp(path, "-") == 0 || !(f = fopen(path, "rb")))
		return false;
	got = fread(h, 1, sizeof(h), f);
	fclose(f);
	if (got < SPOOL_PID_AT + 8)
		return false;
	for (i = 0; i < 8; i++) { /* little-endian, whatever the host */
		magic |= (uint64_t)h[i] << (8 * i);
		pid |= (uint64_t)h[SPOOL_PID_AT + i] << (8 * i);
	}
	if (magic != SPOOL_MAGIC)
		return false;
	n = got > SPOOL_PROGRAM_AT ? got - SPOOL_PROGRAM_AT : 0;
	n = strnlen((const char *)h + SPOOL_PROGRAM_AT, n);
	tool_clean_str(prog, (const char *)h + SPOOL_PROGRAM_AT, n); /* for a terminal */
	snprintf(msg, msglen,
		 "is an fxtrace spool (raw records of process %" PRIu64
		 ", %s), not an archive; turn it into one with: fxt-run --recover %s",
		 pid, n ? prog : "unknown program", path);
	return true;
}

int tool_open_archive(struct fxt_reader **r, const char *path, unsigned flags, char *err,
		      size_t errlen)
{
	struct stat st;
	int rc;

	*r = NULL;
	if (strcmp(path, "-") != 0) {
		if (stat(path, &st) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s", strerror(-rc));
			return rc;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s", strerror(EISDIR));
			return -EISDIR;
		}
		if (tool_is_spool(path, err, errlen))
			return -EMEDIUMTYPE;
	}
	rc = fxt_reader_open_path(r, path, flags);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		*r = NULL;
	}
	return rc;
}

int tool_read_first(struct fxt_reader *r, char *err, size_t errlen)
{
	if (fxt_reader_saw_magic(r))
		return 0;
	snprintf(err, errlen, "not an FXT archive (no magic record at offset 0)");
	return -EINVAL;
}

int tool_read_end(struct fxt_reader *r, int rc, uint64_t n, char *err, size_t errlen)
{
	uint64_t off = 0;
	const char *why;

	if (rc < 0) {
		why = fxt_reader_error(r, &off);
		if (n == 0 && !fxt_reader_saw_magic(r))
			snprintf(err, errlen, "not an FXT archive (%s)", why ? why : "unreadable");
		else
			snprintf(err, errlen, "%s at byte %" PRIu64, why ? why : "read error", off);
		return -EINVAL;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty file, not an FXT archive");
		return -ENODATA;
	}
	return 0;
}

/* Plain events read at a time by tool_read_records() (4.5 KB). */
#define PLAIN_RUN 64

int tool_read_records(struct fxt_reader *r, tool_record_fn fn, void *ctx, char *err, size_t errlen)
{
	struct fxt_plain plain[PLAIN_RUN];
	struct fxt_record rec;
	uint64_t n = 0;
	int rc;

	for (;;) {
		/* Runs of plain events (fxt_reader_next_plain()) after the
		 * first record, each given as the record fxt_reader_next()
		 * makes of it, but for where it is in the file (offset,
		 * nwords and provider_id 0): a fraction of its cost. */
		size_t k = n ? fxt_reader_next_plain(r, plain, PLAIN_RUN) : 0;

		if (k) {
			n += k;
			rec.offset = 0;
			rec.nwords = 0;
			rec.provider_id = 0;
			for (size_t i = 0; i < k; i++) {
				fxt_plain_record(&rec, &plain[i]);
				if ((rc = fn(ctx, r, &rec)) < 0)
					goto fail;
			}
			continue;
		}
		if ((rc = fxt_reader_next(r, &rec)) <= 0)
			break;
		if (n++ == 0 && (rc = tool_read_first(r, err, errlen)) < 0)
			return rc;
		if ((rc = fn(ctx, r, &rec)) < 0)
			goto fail;
	}
	return tool_read_end(r, rc, n, err, errlen);
fail:
	snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

int tool_open_input(const struct tool_input *in, struct fxt_reader **r, char *err, size_t errlen)
{
	unsigned flags = FXT_READER_TIME_ORDER;
	struct stat st;
	int rc;

	if (in->stream && !in->mem && strcmp(in->path, "-") == 0 &&
	    (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)))
		flags = 0;
	if (!in->mem)
		return tool_open_archive(r, in->path, flags, err, errlen);
	rc = fxt_reader_open_mem(r, in->mem, in->len, flags);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

int tool_read_input(const struct tool_input *in, tool_record_fn fn, void *ctx, char *err,
		    size_t errlen)
{
	struct fxt_reader *r;
	int rc;

	rc = tool_open_input(in, &r, err, errlen);
	if (rc < 0)
		return rc;
	rc = tool_read_records(r, fn, ctx, err, errlen);
	fxt_reader_free(r);
	return rc;
}

int tool_output_open(struct tool_output *o, const char *path, char *err, size_t errlen)
{
	struct stat st;
	mode_t mask;
	int fd, rc;

	o->f = stdout;
	o->path = NULL;
	o->tmp = NULL;
	if (!path || strcmp(path, "-") == 0)
		return 0;
	o->path = path;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		goto direct;
	if (stat(path, &st) == 0) {
		o->mode = st.st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		o->mode = 0666 & ~mask;
	}
	if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		/* A writable file in a directory we cannot create files in:
		 * write it in place, as a last resort. */
		rc = -errno;
		free(o->tmp);
		o->tmp = NULL;
		if (rc == -EACCES || rc == -EPERM)
			goto direct;
		goto fail;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		rc = -errno;
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	return 0;

direct:
	o->f = fopen(path, "w");
	if (o->f)
		return 0;
	rc = -errno;
fail:
	o->f = stdout;
	o->path = NULL;
	snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

int tool_output_close(struct tool_output *o, bool discard, char *err, size_t errlen)
{
	int rc = 0;

	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		rc = -(errno ? errno : EIO);
	if (o->f != stdout) {
		if (o->tmp && rc == 0 && !discard && fchmod(fileno(o->f), o->mode) != 0)
			rc = -errno;
		errno = 0;
		if (fclose(o->f) != 0 && rc == 0)
			rc = -(errno ? errno : EIO);
		if (o->tmp) {
			if (rc == 0 && !discard && rename(o->tmp, o->path) != 0)
				rc = -errno;
			if (rc < 0 || discard)
				unlink(o->tmp);
			free(o->tmp);
			o->tmp = NULL;
		}
	}
	o->f = NULL;
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

void tool_fmt_ns(char *buf, size_t len, double ns)
{
	double a = ns < 0 ? -ns : ns;

	if (a < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (a < 1e6)
		snprintf(buf, len, "%.3f us", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
}

const char *tool_kernel_lost(char *buf, size_t len, uint64_t n, const char *so)
{
	snprintf(buf, len,
		 "%" PRIu64 FXT_KERNEL_LOST_SUFFIX " (the kernel's ring buffer was full): %s", n,
		 so);
	return buf;
}

const char *tool_buffer_full(char *buf, size_t len, uint64_t n, const char *so)
{
	snprintf(buf, len,
		 "a trace buffer filled up %" PRIu64 " time%s: records were likely dropped, %s", n,
		 n == 1 ? "" : "s", so);
	return buf;
}

void tool_losses_record(struct tool_losses *l, const struct fxt_record *rec)
{
	if (rec->type == FXT_RECORD_EVENT && rec->u.event.type == FXT_EVENT_INSTANT)
		l->dropped += fxt_dropped_in_name(rec->u.event.name.data, rec->u.event.name.len);
	else if (rec->type == FXT_RECORD_METADATA &&
		 rec->u.meta.type == FXT_METADATA_PROVIDER_EVENT &&
		 rec->u.meta.event == FXT_PROVIDER_EVENT_BUFFER_FULL)
		l->buffer_full++;
}

void tool_losses_say(FILE *f, const char *tool, const char *path, const struct tool_losses *l,
		     const char *so, const char *so_may)
{
	char full[128]; /* tool_buffer_full() */

	if (l->dropped)
		fprintf(f, "%s: %s: %" PRIu64 " calls dropped: %s\n", tool, path, l->dropped, so);
	if (l->buffer_full)
		fprintf(f, "%s: %s: %s\n", tool, path,
			tool_buffer_full(full, sizeof(full), l->buffer_full, so_may));
}

int tool_parse_format(const char *s, enum tool_format *out)
{
	static const char *const names[] = { "text", "csv", "json" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum tool_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

int tool_parse_count(const char *s, size_t *out)
{
	uintmax_t v = 0;

	if (!*s)
		return -EINVAL;
	/* By hand rather than strtoull, which takes blanks and a sign (and
	 * turns "-1" into the largest count). */
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (SIZE_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = (size_t)v;
	return 0;
}

int tool_parse_ids(const char *s, uint64_t **ids, size_t *n)
{
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s), v;
		char one[24];
		uint64_t *nv;

		if (!len || len >= sizeof(one))
			return -EINVAL;
		memcpy(one, s, len);
		one[len] = 0;
		if (tool_parse_count(one, &v) < 0)
			return -EINVAL;
		nv = realloc(*ids, (*n + 1) * sizeof(**ids));
		if (!nv)
			return -ENOMEM;
		*ids = nv;
		(*ids)[(*n)++] = v;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

bool tool_id_selected(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return n == 0;
}

int tool_pick_option(const char *name, const char *opt, const char *arg, struct tool_pick *p)
{
	bool pid = strcmp(opt, "pid") == 0;
	int rc = pid ? tool_parse_ids(arg, &p->pids, &p->npids)
		     : tool_parse_ids(arg, &p->tids, &p->ntids);

	if (rc == -ENOMEM)
		return tool_error(name, "%s", strerror(ENOMEM));
	if (rc < 0)
		return tool_usage_error(name, "--%s: not a list of ids: '%s'", opt, arg);
	return 0;
}

void tool_pick_free(struct tool_pick *p)
{
	free(p->pids);
	free(p->tids);
	p->pids = p->tids = NULL;
	p->npids = p->ntids = 0;
}

int tool_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *nv;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	nv = realloc(*v, n * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = n;
	return 0;
}
