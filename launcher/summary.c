/* What fxt-run says of the archives it leaves: their numbers (what each
 * holds, fxt/counts.h: counted by the converter as it wrote it, or read
 * back from it), one line each or for the merged one, and the hints
 * after them. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fxt/reader.h>

#include "fxt/counts.h"
#include "fxt/depth.h"
#include "launcher/launcher.h"

/* Reads the archive at path.  Returns 0 or -errno (st->error then says
 * what the reader found, if it got that far). */
int archive_stats(const char *path, struct archive_stats *st)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	struct stat sb;
	int rc;

	memset(st, 0, sizeof(*st));
	if (stat(path, &sb) != 0)
		return -errno;
	st->bytes = (uint64_t)sb.st_size;
	rc = fxt_reader_open_path(&r, path, 0);
	if (rc < 0)
		return rc;
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		if (fxt__counts_record(&st->n, &rec) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	/* No magic record first: empty, truncated before its first record,
	 * or not an archive at all; nothing a trace viewer can read. */
	bool magic = fxt_reader_saw_magic(r);
	if (rc < 0 && rc != -ENOMEM && magic)
		st->error = "damaged archive";
	st->calls = st->n.events; /* an archive does not say which are hooks' */
	fxt_reader_free(r);
	if (!magic)
		return -ENODATA;
	return rc < 0 ? (rc == -1 ? -EBADMSG : rc) : 0;
}

void archive_stats_free(struct archive_stats *st)
{
	fxt__counts_free(&st->n);
}

/* Whether path is an archive: it starts with the magic record (a process
 * that failed or died while writing it may leave an empty file). */
bool is_archive(const char *path)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	bool magic;

	if (fxt_reader_open_path(&r, path, 0) < 0)
		return false;
	(void)fxt_reader_next(r, &rec);
	magic = fxt_reader_saw_magic(r);
	fxt_reader_free(r);
	return magic;
}

long archive_first_pid(const char *path)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	long pid = 0;

	if (fxt_reader_open_path(&r, path, 0) < 0)
		return 0;
	for (int i = 0; i < 4 && pid == 0 && fxt_reader_next(r, &rec) > 0; i++)
		pid = (long)rec.provider_id;
	fxt_reader_free(r);
	return pid;
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	v /= 1024.0;
	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* What the summary lines said, for the final hint; the mode, for what
 * keeps drops. */
static struct {
	bool root;	/* the root's archive was summarised */
	uint64_t calls; /* instrumented ones, and calls dropped or overwritten */
	enum fxt_mode mode;
} summarised;

void summary_mode(enum fxt_mode mode)
{
	summarised.mode = mode;
}

/* The functions the filters matched, over the run's processes. */
static uint64_t matched_include, matched_exclude;

void summary_filters(uint32_t included, uint32_t excluded)
{
	matched_include += included;
	matched_exclude += excluded;
}

void summary_filter_hint(const struct options *o)
{
	if (o->set.given[FXT_S_INCLUDE] && matched_include == 0)
		fprintf(stderr,
			"fxt-run: warning: --include matched no function of the instrumented "
			"modules: no call of them was recorded\n");
	if (o->set.given[FXT_S_EXCLUDE] && matched_exclude == 0)
		fprintf(stderr,
			"fxt-run: warning: --exclude matched no function of the instrumented "
			"modules: it left nothing out\n");
}

void summary_snapshots(const struct name_list *snaps)
{
	for (size_t i = 0; i < snaps->n; i++) {
		struct archive_stats st = { 0 };
		struct stat sb;

		if (stat(snaps->v[i], &sb) == 0)
			st.bytes = (uint64_t)sb.st_size;
		archive_stats(snaps->v[i], &st);
		summary_line("snapshot ", display_name(snaps->v[i]), &st, NULL);
		archive_stats_free(&st);
	}
}

/* `note`, if not NULL, follows the numbers ("recovered from spool").  An
 * empty `what` means the root's archive. */
void summary_line(const char *what, const char *display, const struct archive_stats *st,
		  const char *note)
{
	uint64_t events = st->n.events, threads = fxt__counts_threads(&st->n);
	uint64_t dropped = st->n.dropped, overwritten = st->n.overwritten;
	const char *raise =
	    summarised.mode == FXT_MODE_ONESHOT ? "raise --buffer-size" : "raise --max-size";
	char size[32], over[48] = "", why[FXT_DROP_CAUSE_MAX + 96] = "";

	summarised.root |= what[0] == '\0';
	summarised.calls += st->calls + dropped + overwritten;
	format_size(st->bytes, size, sizeof(size));
	if (overwritten != 0)
		snprintf(over, sizeof(over), ", %" PRIu64 " overwritten", overwritten);
	/* The drops' cause: a size limit, unless their markers say another
	 * (fxt/counts.h). */
	if (dropped != 0 && st->n.dropped_cause == 0)
		snprintf(why, sizeof(why), ": %s to keep them", raise);
	else if (dropped != 0 && st->n.dropped_cause >= dropped)
		snprintf(why, sizeof(why), ": %s", st->n.cause);
	else if (dropped != 0)
		snprintf(why, sizeof(why), ": %" PRIu64 " because %s; %s to keep the others",
			 st->n.dropped_cause, st->n.cause, raise);
	fprintf(stderr,
		"fxt-run: wrote %s%s (%s, %" PRIu64 " event%s, %" PRIu64 " thread%s, %" PRIu64
		" dropped%s%s)%s%s%s%s\n",
		what, display, size, events, events == 1 ? "" : "s", threads,
		threads == 1 ? "" : "s", dropped, why, over, st->error != NULL ? "; " : "",
		st->error != NULL ? st->error : "", note != NULL ? "; " : "",
		note != NULL ? note : "");
	if (st->deep != 0) {
		char msg[512];

		fxt__depth_warning(msg, sizeof(msg), st->deep, st->max_depth, st->deep_pid,
				   st->deep_tid);
		fprintf(stderr, "fxt-run: warning: %s\n", msg);
	}
	if (st->n.unsampled != 0) {
		char reasons[512] = "";
		size_t len = 0;

		for (unsigned i = 1; i < FXT_UNSAMPLED_REASONS && len < sizeof(reasons); i++)
			if (st->n.unsampled_why & (1u << i))
				len +=
				    (size_t)snprintf(reasons + len, sizeof(reasons) - len, "%s%s",
						     len ? "; " : "", fxt_unsampled_reason(i));
		fprintf(stderr,
			"fxt-run: warning: %" PRIu64
			" thread%s not sampled from some point on (%s): "
			"fxt-report lists them\n",
			st->n.unsampled, st->n.unsampled == 1 ? "" : "s", reasons);
	}
}

/* Adds one archive's deep nesting to `sum`'s. */
void summary_add_deep(struct archive_stats *sum, const struct archive_stats *st)
{
	sum->deep += st->deep;
	if (st->max_depth > sum->max_depth) {
		sum->max_depth = st->max_depth;
		sum->deep_pid = st->deep_pid;
		sum->deep_tid = st->deep_tid;
	}
}

void summary_hint(const char *prog)
{
	/* Whatever the libc groups: libc calls and samples are recorded
	 * without -finstrument-functions, but they are not the program's
	 * own functions. */
	if (summarised.root && summarised.calls == 0)
		fprintf(stderr,
			"fxt-run: no instrumented calls (the program's own functions; libc calls "
			"do not count): was %s built with -finstrument-functions?\n",
			prog);
}
