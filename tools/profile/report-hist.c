/* fxt-report --histogram NAME: the per-call inclusive times of a
 * function's rows in log2 buckets (pctl.h's, exact from a sketch too), as
 * a text table with bars scaled to the terminal, csv or json.  The
 * durations are the profile's (opts.percentiles); fxt-report.c reads the
 * archive and says when no function has the name. */
#include "config.h"

#include "tools/profile/report-hist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/profile/pctl.h"

/* The columns a bar may take: COLUMNS, else the terminal's, else 80. */
static unsigned term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	size_t n;

	if (c && tool_parse_count(c, &n) == 0 && n > 0 && n < 100000)
		return (unsigned)n;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	return 80;
}

/* Bucket b's range [lo, hi) in ns (pctl.h: [0] is 0 ns; hi of the last
 * saturates). */
static void hist_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	*lo = b ? UINT64_C(1) << (b - 1) : 0;
	*hi = b == 0 ? 1 : b == 64 ? UINT64_MAX : UINT64_C(1) << b;
}

/* "[pid P tid T ]name (category)" of a histogram's heading. */
static void put_hist_title(const struct report_hist *o, const struct profile_row *r)
{
	if (o->by != PROFILE_BY_FUNCTION)
		printf("pid %" PRIu64 " ", r->pid);
	if (o->by == PROFILE_BY_THREAD)
		printf("tid %" PRIu64 " ", r->tid);
	tool_put_text_str(stdout, r->name);
	if (r->category[0]) {
		fputs(" (", stdout);
		tool_put_text_str(stdout, r->category);
		putchar(')');
	}
}

static void print_hist_text(const struct report_hist *o, const struct profile_row *r,
			    const uint64_t *h, unsigned first, unsigned last, uint64_t n)
{
	/* "[  1.024 us,   2.048 us) " + count, %, cum% */
	const unsigned lead = 1 + 11 + 2 + 11 + 2 + 12 + 8 + 8 + 2;
	unsigned width = term_width(), room = width > lead + 10 ? width - lead : 10;
	uint64_t most = 0, cum = 0;
	char b[2][32];

	printf("# %s: ", o->path);
	put_hist_title(o, r);
	printf(": %" PRIu64 " calls; per-call inclusive time in log2 buckets\n", r->calls);
	if (r->short_calls) {
		tool_fmt_ns(b[0], sizeof(b[0]), (double)r->short_min_ns);
		tool_fmt_ns(b[1], sizeof(b[1]), (double)r->short_max_ns);
		printf("# %" PRIu64 " of them summarised by fxt-run --min-duration, not in the "
		       "buckets: %s to %s\n",
		       r->short_calls, b[0], b[1]);
	}
	if (!n)
		return;
	for (unsigned k = first; k <= last; k++)
		most = h[k] > most ? h[k] : most;
	printf("%-26s %12s %7s %7s\n", "range", "count", "%", "cum%");
	for (unsigned k = first; k <= last; k++) {
		uint64_t lo, hi;
		unsigned bar;

		hist_range(k, &lo, &hi);
		tool_fmt_ns(b[0], sizeof(b[0]), (double)lo);
		tool_fmt_ns(b[1], sizeof(b[1]), (double)hi);
		cum += h[k];
		printf("[%11s, %11s) %12" PRIu64 " %6.2f%% %6.2f%%  ", b[0], b[1], h[k],
		       100.0 * (double)h[k] / (double)n, 100.0 * (double)cum / (double)n);
		bar = (unsigned)((double)room * (double)h[k] / (double)most + 0.5);
		if (h[k] && !bar)
			bar = 1;
		for (unsigned i = 0; i < bar; i++)
			putchar('#');
		putchar('\n');
	}
}

static void print_hist_csv(const struct report_hist *o, const struct profile_row *r,
			   const uint64_t *h, unsigned first, unsigned last, uint64_t n)
{
	uint64_t cum = 0;

	for (unsigned k = first; k <= last && n; k++) {
		uint64_t lo, hi;

		hist_range(k, &lo, &hi);
		cum += h[k];
		printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.2f,%.2f,", lo, hi, h[k],
		       100.0 * (double)h[k] / (double)n, 100.0 * (double)cum / (double)n);
		if (o->by != PROFILE_BY_FUNCTION)
			printf("%" PRIu64 ",", r->pid);
		if (o->by == PROFILE_BY_THREAD)
			printf("%" PRIu64 ",", r->tid);
		tool_put_csv_str(stdout, r->category);
		putchar(',');
		tool_put_csv_str(stdout, r->name);
		putchar('\n');
	}
}

static void print_hist_json(const struct report_hist *o, const struct profile_row *r,
			    const uint64_t *h, unsigned first, unsigned last, uint64_t n)
{
	uint64_t cum = 0;

	fputs("\n{\"name\":", stdout);
	tool_put_json_str(stdout, r->name);
	fputs(",\"category\":", stdout);
	tool_put_json_str(stdout, r->category);
	if (o->by != PROFILE_BY_FUNCTION)
		printf(",\"pid\":%" PRIu64, r->pid);
	if (o->by == PROFILE_BY_THREAD)
		printf(",\"tid\":%" PRIu64, r->tid);
	printf(",\"calls\":%" PRIu64 ",\"short_calls\":%" PRIu64 ",\"short_min_ns\":%" PRIu64
	       ",\"short_max_ns\":%" PRIu64 ",\"buckets\":[",
	       r->calls, r->short_calls, r->short_min_ns, r->short_max_ns);
	for (unsigned k = first; k <= last && n; k++) {
		uint64_t lo, hi;

		hist_range(k, &lo, &hi);
		cum += h[k];
		printf("%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64 ",\"count\":%" PRIu64
		       ",\"pct\":%.2f,\"cum_pct\":%.2f}",
		       k == first ? "" : ",", lo, hi, h[k], 100.0 * (double)h[k] / (double)n,
		       100.0 * (double)cum / (double)n);
	}
	fputs("]}", stdout);
}

int report_histograms(const struct profile *p, const struct report_hist *o)
{
	size_t nrows = profile_nrows(p), found = 0;

	if (o->format == TOOL_FMT_CSV) {
		fputs("lo_ns,hi_ns,count,pct,cum_pct,", stdout);
		if (o->by != PROFILE_BY_FUNCTION)
			fputs("pid,", stdout);
		if (o->by == PROFILE_BY_THREAD)
			fputs("tid,", stdout);
		fputs("category,name\n", stdout);
	} else if (o->format == TOOL_FMT_JSON) {
		fputs("{\"archive\":", stdout);
		tool_put_json_str(stdout, o->path);
		fputs(",\"histograms\":[", stdout);
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *r = profile_row(p, i);
		uint64_t h[PCTL_HIST_BUCKETS] = { 0 }, n = 0;
		unsigned first = PCTL_HIST_BUCKETS, last = 0;

		if (r->sampled || strcmp(r->name, o->name) != 0 ||
		    (o->cat_re && regexec(o->cat_re, r->category, 0, NULL, 0) != 0))
			continue;
		if (profile_histogram(p, r, h) < 0)
			return -EINVAL;
		for (unsigned k = 0; k < PCTL_HIST_BUCKETS; k++) {
			if (!h[k])
				continue;
			n += h[k];
			first = k < first ? k : first;
			last = k;
		}
		if (o->format == TOOL_FMT_TEXT && found)
			putchar('\n');
		if (o->format == TOOL_FMT_JSON && found)
			putchar(',');
		found++;
		switch (o->format) {
		case TOOL_FMT_TEXT:
			print_hist_text(o, r, h, first, last, n);
			break;
		case TOOL_FMT_CSV:
			print_hist_csv(o, r, h, first, last, n);
			break;
		case TOOL_FMT_JSON:
			print_hist_json(o, r, h, first, last, n);
			break;
		}
	}
	if (!found)
		return -ENOENT;
	if (o->format == TOOL_FMT_JSON)
		fputs("\n]}\n", stdout);
	return 0;
}
