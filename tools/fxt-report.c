/* fxt-report: where the time went, per function, thread or process. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common.h"
#include "tools/escape.h"
#include "tools/profile.h"

struct options {
	enum profile_by by;
	enum profile_sort sort;
	size_t top; /* 0 = all */
	enum tool_format format;
	const char *filter, *category;
	const char *path;
	bool subtract; /* --subtract-overhead */
};

#define NAME "fxt-report"

static const char help[] =
    "Usage: fxt-report [OPTION]... ARCHIVE\n"
    "Sum the duration slices of an FXT archive per function: where the time went.\n"
    "ARCHIVE is a file, plain or gzip, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -b, --by KEY        rows per function (default), thread or process\n"
    "  -s, --sort KEY      self (default), total, calls, avg, max or name\n"
    "  -n, --top N         print the first N rows only\n"
    "  -f, --filter RE     only functions whose name matches RE (POSIX ERE)\n"
    "  -c, --category RE   only slices whose category matches RE (e.g. '^libc\\.')\n"
    "  -F, --format FMT    text (default), csv or json\n"
    "  -O, --subtract-overhead\n"
    "                      take the tracer's own cost out of the times (see below)\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "Columns: calls; total = inclusive time, recursion counted once (outermost\n"
    "frame only); self = exclusive time; avg, min, max = per-call inclusive\n"
    "time; self% = share of all self time (the traced time of every thread).\n"
    "Frames never closed are counted to the end of the trace and marked\n"
    "\"[N open]\" (column \"open\" in csv/json).  csv/json times are integer ns.\n"
    "When the trace dropped calls (it hit fxt-run --max-size), the header says\n"
    "\"N calls dropped: totals are partial\" (json: \"dropped\", \"dropped_threads\";\n"
    "csv: a warning on standard error); when a flight recorder overwrote calls\n"
    "(fxt-run --mode=circular), \"N calls overwritten\" (json: \"overwritten\").\n"
    "Calls fxt-run --min-duration wrote as no slice are counted all the same\n"
    "(the archive's fxt.short summaries).\n"
    "--subtract-overhead: the agent measures what its hooks cost at the end of\n"
    "each process and writes it into the archive (the instant \"fxt: hook cost\");\n"
    "from each call of a hooked function this takes the part of its own hooks\n"
    "inside its interval and one pair of hooks per hooked call it made, so\n"
    "that the times approach those of the program run without tracing.  The\n"
    "header says what was taken (json: \"hook_pair_ns\", \"hook_inside_ns\").\n"
    "libc calls, samples and archives without the measure are left as they are.\n"
    "With --by thread, the rows of a stack-sample track (fxt-run --sample) get\n"
    "the sampled thread's tid and the track's name, \"NAME (samples)\": after the\n"
    "function in text, column \"track\" in csv, \"track\" in json (else empty/null).\n"
    "\n"
    "Exit status:\n"
    "  0   the report was written\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged (a partial report would mislead); or the report cannot be\n"
    "      written.  One line on standard error names the file and the problem.\n";

/* clang-format off */
static const struct option longopts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "sort", required_argument, NULL, 's' },
	{ "top", required_argument, NULL, 'n' },
	{ "filter", required_argument, NULL, 'f' },
	{ "category", required_argument, NULL, 'c' },
	{ "format", required_argument, NULL, 'F' },
	{ "subtract-overhead", no_argument, NULL, 'O' },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "b:s:n:f:c:F:O", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'b':
			if (strcmp(optarg, "function") == 0)
				o->by = PROFILE_BY_FUNCTION;
			else if (strcmp(optarg, "thread") == 0)
				o->by = PROFILE_BY_THREAD;
			else if (strcmp(optarg, "process") == 0)
				o->by = PROFILE_BY_PROCESS;
			else
				return tool_usage_error(NAME, "--by: unknown key '%s'", optarg);
			break;
		case 's':
			if (profile_sort_parse(optarg, &o->sort) < 0)
				return tool_usage_error(NAME, "--sort: unknown key '%s'", optarg);
			break;
		case 'n':
			if (tool_parse_count(optarg, &o->top) < 0)
				return tool_usage_error(NAME, "--top: not a count: '%s'", optarg);
			break;
		case 'f':
			o->filter = optarg;
			break;
		case 'c':
			o->category = optarg;
			break;
		case 'F':
			if (tool_parse_format(optarg, &o->format) < 0)
				return tool_usage_error(NAME, "--format: unknown format '%s'",
							optarg);
			break;
		case 'O':
			o->subtract = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	if (optind != argc - 1)
		return tool_usage_error(
		    NAME, "%s", optind == argc ? "missing ARCHIVE" : "only one ARCHIVE is read");
	o->path = argv[optind];
	return 0;
}

static int compile_re(regex_t *re, const char *pattern, const char *what)
{
	char msg[256];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		regerror(rc, re, msg, sizeof(msg));
		return tool_usage_error(NAME, "%s '%s': %s", what, pattern, msg);
	}
	return 0;
}

static uint64_t avg_ns(const struct profile_row *r)
{
	return r->calls ? r->sum_ns / r->calls : 0;
}

static double share(const struct profile_row *r, double all_self)
{
	return all_self > 0 ? 100.0 * (double)r->self_ns / all_self : 0;
}

static void print_text(const struct options *o, const struct profile *p,
		       const struct profile_row **rows, size_t n, double all_self)
{
	const struct profile_anomalies *a = profile_anomalies(p);
	uint64_t dthreads, dropped = profile_dropped(p, &dthreads);
	char b[6][32];
	size_t i;

	printf("# %s: %" PRIu64 " slices, %zu rows, span ", o->path, profile_nslices(p),
	       profile_nrows(p));
	profile_fmt_ns(b[0], sizeof(b[0]), (double)(profile_end_ns(p) - profile_start_ns(p)));
	printf("%s\n", b[0]);
	if (dropped)
		printf("# %" PRIu64 " calls dropped: totals are partial (on %" PRIu64
		       " thread%s; the trace hit its size limit)\n",
		       dropped, dthreads, dthreads == 1 ? "" : "s");
	if (profile_overwritten(p))
		printf("# %" PRIu64 " calls overwritten: totals are those of each thread's "
		       "newest calls (a flight recorder's window)\n",
		       profile_overwritten(p));
	if (o->subtract) {
		double pair, inside;
		size_t np = profile_hook_cost(p, &pair, &inside);

		if (np)
			printf("# the hooks' cost taken out: %.1f ns a call (%.1f of it inside the "
			       "call's own time), measured in %zu process%s\n",
			       pair, inside, np, np == 1 ? "" : "es");
		else
			printf("# --subtract-overhead: the archive says nothing of the hooks' "
			       "cost; times as measured\n");
	}
	if (a->unmatched_ends || a->overlaps || a->reversed || a->merged)
		printf("# input oddities: %" PRIu64 " ends without a begin, %" PRIu64
		       " improperly nested slices, %" PRIu64
		       " slices ending before they start, %" PRIu64
		       " end-ordered parents split from merged children\n",
		       a->unmatched_ends, a->overlaps, a->reversed, a->merged);
	printf("%10s %12s %12s %12s %12s %12s %7s  ", "calls", "total", "self", "avg", "min", "max",
	       "self%");
	if (o->by != PROFILE_BY_FUNCTION)
		printf("%8s ", "pid");
	if (o->by == PROFILE_BY_THREAD)
		printf("%8s ", "tid");
	printf("function\n");
	for (i = 0; i < n; i++) {
		const struct profile_row *r = rows[i];

		profile_fmt_ns(b[0], sizeof(b[0]), (double)r->total_ns);
		profile_fmt_ns(b[1], sizeof(b[1]), (double)r->self_ns);
		profile_fmt_ns(b[2], sizeof(b[2]), (double)avg_ns(r));
		profile_fmt_ns(b[3], sizeof(b[3]), (double)r->min_ns);
		profile_fmt_ns(b[4], sizeof(b[4]), (double)r->max_ns);
		printf("%10" PRIu64 " %12s %12s %12s %12s %12s %6.2f%%  ", r->calls, b[0], b[1],
		       b[2], b[3], b[4], share(r, all_self));
		if (o->by != PROFILE_BY_FUNCTION)
			printf("%8" PRIu64 " ", r->pid);
		if (o->by == PROFILE_BY_THREAD)
			printf("%8" PRIu64 " ", r->tid);
		tool_put_text_str(stdout, r->name);
		if (r->category[0]) {
			fputs(" (", stdout);
			tool_put_text_str(stdout, r->category);
			putchar(')');
		}
		if (r->open)
			printf(" [%" PRIu64 " open]", r->open);
		if (r->track) {
			fputs(" [", stdout);
			tool_put_text_str(stdout, r->track);
			putchar(']');
		}
		putchar('\n');
	}
}

static void print_csv(const struct options *o, const struct profile_row **rows, size_t n,
		      double all_self)
{
	size_t i;

	fputs("calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,", stdout);
	if (o->by != PROFILE_BY_FUNCTION)
		fputs("pid,", stdout);
	if (o->by == PROFILE_BY_THREAD)
		fputs("tid,", stdout);
	fputs(o->by == PROFILE_BY_THREAD ? "category,name,track\n" : "category,name\n", stdout);
	for (i = 0; i < n; i++) {
		const struct profile_row *r = rows[i];

		printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%.2f,%" PRIu64 ",",
		       r->calls, r->total_ns, r->self_ns, avg_ns(r), r->min_ns, r->max_ns,
		       share(r, all_self), r->open);
		if (o->by != PROFILE_BY_FUNCTION)
			printf("%" PRIu64 ",", r->pid);
		if (o->by == PROFILE_BY_THREAD)
			printf("%" PRIu64 ",", r->tid);
		tool_put_csv_str(stdout, r->category);
		putchar(',');
		tool_put_csv_str(stdout, r->name);
		if (o->by == PROFILE_BY_THREAD) {
			putchar(',');
			tool_put_csv_str(stdout, r->track ? r->track : "");
		}
		putchar('\n');
	}
}

static void print_json(const struct options *o, const struct profile *p,
		       const struct profile_row **rows, size_t n, double all_self)
{
	static const char *const by_names[] = { "function", "process", "thread" };
	uint64_t dthreads, dropped = profile_dropped(p, &dthreads);
	size_t i;

	fputs("{\"archive\":", stdout);
	tool_put_json_str(stdout, o->path);
	printf(",\"by\":\"%s\",\"slices\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	       ",\"dropped\":%" PRIu64 ",\"dropped_threads\":%" PRIu64 ",\"overwritten\":%" PRIu64,
	       by_names[o->by], profile_nslices(p), profile_start_ns(p), profile_end_ns(p), dropped,
	       dthreads, profile_overwritten(p));
	if (o->subtract) {
		double pair, inside;

		if (profile_hook_cost(p, &pair, &inside))
			printf(",\"hook_pair_ns\":%.3f,\"hook_inside_ns\":%.3f", pair, inside);
		else
			fputs(",\"hook_pair_ns\":null,\"hook_inside_ns\":null", stdout);
	}
	fputs(",\"rows\":[", stdout);
	for (i = 0; i < n; i++) {
		const struct profile_row *r = rows[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
		tool_put_json_str(stdout, r->name);
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, r->category);
		if (o->by != PROFILE_BY_FUNCTION)
			printf(",\"pid\":%" PRIu64, r->pid);
		if (o->by == PROFILE_BY_THREAD) {
			printf(",\"tid\":%" PRIu64 ",\"track\":", r->tid);
			if (r->track)
				tool_put_json_str(stdout, r->track);
			else
				fputs("null", stdout);
		}
		printf(",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		       ",\"avg_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
		       ",\"self_pct\":%.2f,\"open\":%" PRIu64 "}",
		       r->calls, r->total_ns, r->self_ns, avg_ns(r), r->min_ns, r->max_ns,
		       share(r, all_self), r->open);
	}
	fputs("\n]}\n", stdout);
}

int main(int argc, char **argv)
{
	struct options o = {
		PROFILE_BY_FUNCTION, PROFILE_SORT_SELF, 0, TOOL_FMT_TEXT, NULL, NULL, NULL
	};
	struct profile_opts popts = { 0 };
	const struct profile_row **rows = NULL;
	struct profile *p = NULL;
	regex_t name_re, cat_re;
	bool have_name_re = false, have_cat_re = false;
	double all_self = 0; /* a double: the sum of many threads' times can pass 2^64 ns */
	char err[512];
	size_t i, n = 0;
	int rc, status = TOOL_EXIT_ERROR;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	if (o.filter) {
		if (compile_re(&name_re, o.filter, "--filter"))
			return TOOL_EXIT_ERROR;
		have_name_re = true;
	}
	if (o.category) {
		if (compile_re(&cat_re, o.category, "--category"))
			goto out;
		have_cat_re = true;
	}
	popts.by = o.by;
	popts.subtract_overhead = o.subtract;
	rc = profile_new(&p, &popts);
	if (rc < 0) {
		tool_error(NAME, "%s", strerror(-rc));
		goto out;
	}
	rc = profile_load(p, o.path, err, sizeof(err));
	if (rc < 0) {
		tool_error(NAME, "%s: %s", o.path, err);
		goto out;
	}

	rows = malloc((profile_nrows(p) + 1) * sizeof(*rows));
	if (!rows) {
		tool_error(NAME, "%s", strerror(ENOMEM));
		goto out;
	}
	/* Shares are of all the traced time, before any filter. */
	for (i = 0; i < profile_nrows(p); i++) {
		const struct profile_row *r = profile_row(p, i);

		all_self += (double)r->self_ns;
		if (have_name_re && regexec(&name_re, r->name, 0, NULL, 0) != 0)
			continue;
		if (have_cat_re && regexec(&cat_re, r->category, 0, NULL, 0) != 0)
			continue;
		rows[n++] = r;
	}
	profile_sort_rows(rows, n, o.sort);
	if (o.top && o.top < n)
		n = o.top;

	switch (o.format) {
	case TOOL_FMT_TEXT:
		print_text(&o, p, rows, n, all_self);
		break;
	case TOOL_FMT_CSV:
		/* CSV has rows only: the warning goes to standard error. */
		if (profile_dropped(p, NULL))
			fprintf(stderr,
				NAME ": %s: %" PRIu64 " calls dropped: totals are partial\n",
				o.path, profile_dropped(p, NULL));
		if (profile_overwritten(p))
			fprintf(stderr,
				NAME ": %s: %" PRIu64 " calls overwritten: totals are those of "
				     "each thread's newest calls\n",
				o.path, profile_overwritten(p));
		print_csv(&o, rows, n, all_self);
		break;
	case TOOL_FMT_JSON:
		print_json(&o, p, rows, n, all_self);
		break;
	}
	if (tool_flush_stdout(NAME))
		goto out;
	status = TOOL_EXIT_OK;
out:
	free(rows);
	profile_free(p);
	if (have_name_re)
		regfree(&name_re);
	if (have_cat_re)
		regfree(&cat_re);
	return status;
}
