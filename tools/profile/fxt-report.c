/* fxt-report: where the time went, per function, thread or process; the
 * stack samples (fxt-run --sample) in a table of their own; percentiles of
 * the calls' durations (--percentiles) and a function's histogram
 * (--histogram, its own output).
 *
 * One job, one file past 800 lines: the command line and the one table
 * in its three formats (text, CSV, JSON), whose columns (--percentiles,
 * --srcline) each format must list in the same order; the histogram,
 * which is output of its own, is report-hist.c. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/profile/pctl.h"
#include "tools/profile/profile.h"
#include "tools/profile/report-hist.h"
#include "tools/profile/report-states.h"

/* What to do with the slices of stack samples (--samples). */
enum samples_mode {
	SAMPLES_APART, /* a table of their own after the calls' */
	SAMPLES_NO,
	SAMPLES_ONLY,
};

struct options {
	enum profile_by by;
	enum profile_sort sort;
	size_t top; /* 0 = all */
	enum tool_format format;
	const char *filter, *category;
	const char *path;
	bool subtract; /* --subtract-overhead */
	enum samples_mode samples;
	bool percentiles;
	const char *histogram; /* the function's name */
	size_t exact_limit;    /* 0: PROFILE_EXACT_MAX */
	bool srcline;	       /* --srcline: a column of source locations */
};

/* The percentiles of --percentiles, in the order of their columns. */
#define NPCT 4
static const uint32_t pct_ppm[NPCT] = { 500000, 900000, 990000, 999000 };
static const char *const pct_names[NPCT] = { "p50", "p90", "p99", "p99.9" };
static const char *const pct_keys[NPCT] = { "p50_ns", "p90_ns", "p99_ns", "p99_9_ns" };

#define NAME "fxt-report"

static const char help[] =
    "Usage: fxt-report [OPTION]... ARCHIVE\n"
    "Sum the duration slices of an FXT archive per function: where the time went.\n"
    "ARCHIVE is a file, plain, gzip or zstd, or '-' for standard input.\n"
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
    "  -S, --samples MODE  stack samples (fxt-run --sample): apart (default: a\n"
    "                      table of their own after the calls), no, or only\n"
    "  -p, --percentiles   add the p50, p90, p99 and p99.9 of each function's\n"
    "                      per-call inclusive time (see below)\n"
    "  -H, --histogram NAME\n"
    "                      instead of the table: log2 buckets of the per-call\n"
    "                      inclusive times of the function named NAME (exactly)\n"
    "      --exact-limit N\n"
    "                      hold at most N durations for exact percentiles\n"
    "                      (default " PROFILE_EXACT_MAX_TEXT ", 4 bytes each);\n"
    "                      past it, sketches within 1%\n"
    "  -l, --srcline       a column \"srcline\": where each function is in the\n"
    "                      source, FILE:LINE (see below)\n"
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
    "(fxt-run --mode=circular), \"N calls overwritten\" (json: \"overwritten\");\n"
    "when another writer's trace says a buffer filled up (its provider event\n"
    "record), \"a trace buffer filled up N times: records were likely dropped\"\n"
    "(json: \"buffer_full\"; csv: on standard error).\n"
    "A thread fxt-run --sample could not sample from some point on (the\n"
    "archive's instant \"fxt: not sampled: REASON\") has a header line \"pid P\n"
    "tid T not sampled from +TIME on: REASON\" (json: \"unsampled\"; csv: on\n"
    "standard error).\n"
    "--srcline: FILE:LINE of each function, from its DWARF line table at its\n"
    "entry, as fxt-run wrote it into the archive once per function (FILE\n"
    "relative to its compilation folder, else absolute; text keeps the last\n"
    "28 characters); \"(no debug info)\" for a function no DWARF line covers,\n"
    "\" (inlined)\" after a function also inlined into its callers; \"-\" (csv:\n"
    "empty; json: null) when the archive does not say (libc calls, archives\n"
    "of other writers or older ones).\n"
    "Calls fxt-run --min-duration wrote as no slice are counted all the same\n"
    "(the archive's fxt.short summaries).\n"
    "--subtract-overhead: the agent measures what its hooks cost at the end of\n"
    "each process and writes it into the archive (the instant \"fxt: hook cost\");\n"
    "from each call of a hooked function this takes the part of its own hooks\n"
    "inside its interval and one pair of hooks per hooked call it made, so\n"
    "that the times approach those of the program run without tracing.  The\n"
    "header says what was taken (json: \"hook_pair_ns\", \"hook_inside_ns\").\n"
    "libc calls, samples and archives without the measure are left as they are.\n"
    "\n"
    "Percentiles (--percentiles): columns p50, p90, p99 and p99.9 between min\n"
    "and max (csv: p50_ns, p90_ns, p99_ns, p99_9_ns; json: the same keys), of\n"
    "the same per-call times as avg, min and max: each call's inclusive time,\n"
    "a recursive call's included (a frame never closed: up to the end of the\n"
    "trace; --subtract-overhead: without the hooks' cost).  Nearest rank: the\n"
    "p-th percentile of n calls is the k-th shortest, k = ceil(p n / 100), a\n"
    "time that was measured.  Exact while the durations held (4 bytes each)\n"
    "stay within --exact-limit; past it, the functions holding the most are\n"
    "counted in sketches (64 buckets per power of two) from then on, whose\n"
    "percentiles are within 1% of the exact ones, relative to them: text marks\n"
    "them '~' with a line \"# ~ approximate ...\" under the table, csv and json\n"
    "have per row \"pct_kind\", one letter per percentile (e exact, a\n"
    "approximate, b bound), and json \"pct_rel_error\" and \"sketched_rows\".\n"
    "Calls fxt-run --min-duration summarised rank below every call written: a\n"
    "percentile among them is their longest, an upper bound (text: '<').\n"
    "--histogram NAME: per row of the function (by --by; --category narrows),\n"
    "the calls' inclusive times in buckets [2^k, 2^(k+1)) ns, from the first\n"
    "non-empty to the last: range, count, percent, cumulative percent and a bar\n"
    "of '#' scaled to the terminal (COLUMNS, else the terminal's width, else\n"
    "80); csv: lo_ns,hi_ns,count,pct,cum_pct,[pid,tid,]category,name; json:\n"
    "\"histograms\".  Exact, sketch or not.  Calls --min-duration summarised\n"
    "are said apart (not in the buckets).  No function of that name: exit 2.\n"
    "\n"
    "Stack samples (fxt-run --sample) are estimates of where the CPU time went,\n"
    "not calls: a function's sampled frames never add to its calls or times.\n"
    "They get a table of their own, after the calls': \"# stack samples\" with\n"
    "the frames and tracks they come from, then per function its sampled time\n"
    "(total: with the function on the stack; self: in the function itself) and\n"
    "self% of all sampled time.  --sort total and name order it, any other key\n"
    "by self; --top, --filter and --category apply to it as to the calls.  With\n"
    "--by thread, a sampled row has the sampled thread's tid and the track's\n"
    "name, \"NAME (samples)\", after the function.  csv holds one table: the\n"
    "calls (a line on standard error says what samples were left out), or with\n"
    "--samples only the samples: total_ns,self_ns,self_pct,[pid,tid,]category,\n"
    "name[,track].  json has the calls in \"rows\" and the samples in \"samples\"\n"
    "(name, category, [pid, tid, track,] total_ns, self_ns, self_pct), with\n"
    "\"sampled_frames\" and \"sample_tracks\"; \"slices\" counts the calls' only.\n"
    "\n"
    "When the archive has the kernel's context switches (fxt-run --kernel, or a\n"
    "trace.dat through fxt-import and fxt-merge), --by thread also says each\n"
    "thread's time running, runnable (woken or preempted, waiting for a CPU)\n"
    "and blocked (asleep, on a lock, on I/O), and unrecorded (next to a switch\n"
    "the kernel did not record: not known which): text after the calls' table,\n"
    "\"# thread states ...\", json in \"thread_states\" (pid, tid, thread,\n"
    "running_ns, runnable_ns, blocked_ns, unrecorded_ns).\n"
    "With more than one CPU, the archive is read on a second thread while the\n"
    "first adds up the calls (the same report); FXT_THREADS=0 in the\n"
    "environment keeps to one.\n"
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
	{ "samples", required_argument, NULL, 'S' },
	{ "percentiles", no_argument, NULL, 'p' },
	{ "histogram", required_argument, NULL, 'H' },
	{ "exact-limit", required_argument, NULL, 'L' },
	{ "srcline", no_argument, NULL, 'l' },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "b:s:n:f:c:F:OS:pH:l", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'b':
			if (profile_by_parse(optarg, &o->by) < 0)
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
		case 'l':
			o->srcline = true;
			break;
		case 'S':
			if (strcmp(optarg, "apart") == 0)
				o->samples = SAMPLES_APART;
			else if (strcmp(optarg, "no") == 0)
				o->samples = SAMPLES_NO;
			else if (strcmp(optarg, "only") == 0)
				o->samples = SAMPLES_ONLY;
			else
				return tool_usage_error(NAME, "--samples: unknown mode '%s'",
							optarg);
			break;
		case 'p':
			o->percentiles = true;
			break;
		case 'H':
			if (!*optarg)
				return tool_usage_error(NAME, "--histogram: no function name");
			o->histogram = optarg;
			break;
		case 'L':
			if (tool_parse_count(optarg, &o->exact_limit) < 0 || !o->exact_limit)
				return tool_usage_error(
				    NAME, "--exact-limit: not a count above 0: '%s'", optarg);
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	return tool_archive_operand(NAME, argc, argv, &o->path);
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

/* The rows of one table, filtered, sorted and cut to --top: the calls'
 * or the samples'.  all_self: the self time of every row of its kind,
 * before any filter, what self% is a share of (a double: the sum of many
 * threads' times can pass 2^64 ns). */
struct table {
	const struct profile_row **rows;
	size_t n;
	size_t nall; /* rows of its kind, before the filters */
	double all_self;
	struct profile_q (*q)[NPCT]; /* --percentiles: per printed row */
};

static uint64_t avg_ns(const struct profile_row *r)
{
	return r->calls ? r->sum_ns / r->calls : 0;
}

static double share(const struct profile_row *r, double all_self)
{
	return all_self > 0 ? 100.0 * (double)r->self_ns / all_self : 0;
}

/* A percentile for the text table: '~' approximate, '<' an upper bound. */
static void fmt_q(char *buf, size_t len, const struct profile_q *q)
{
	size_t at = 0;

	if (q->kind != PROFILE_Q_EXACT)
		buf[at++] = q->kind == PROFILE_Q_APPROX ? '~' : '<';
	tool_fmt_ns(buf + at, len - at, (double)q->ns);
}

/* "eeab": what each percentile of a row is (csv and json). */
static const char *q_kinds(char *buf, const struct profile_q *q)
{
	for (int i = 0; i < NPCT; i++)
		buf[i] = "eab"[q[i].kind]; /* enum profile_q_kind's order */
	buf[NPCT] = 0;
	return buf;
}

/* The lines under the text table that say what '~' and '<' mean, when a
 * printed row has them. */
static void print_q_notes(const struct profile *p, const struct table *t)
{
	bool approx = false, bound = false;

	for (size_t i = 0; t->q && i < t->n; i++) {
		for (int k = 0; k < NPCT; k++) {
			approx |= t->q[i][k].kind == PROFILE_Q_APPROX;
			bound |= t->q[i][k].kind == PROFILE_Q_BOUND;
		}
	}
	if (approx)
		printf("# ~ approximate: %zu function%s held too many durations for exact "
		       "percentiles (--exact-limit); theirs are within %g%% of the exact ones\n",
		       profile_nsketched(p), profile_nsketched(p) == 1 ? "" : "s",
		       100 * PCTL_REL_ERR);
	if (bound)
		printf("# < at most: the rank falls among calls fxt-run --min-duration "
		       "summarised; the longest of them\n");
}

/* Whether the samples' table is printed (text, json). */
static bool show_samples(const struct options *o, const struct table *samples)
{
	return o->samples == SAMPLES_ONLY || (o->samples == SAMPLES_APART && samples->nall);
}

/* The --srcline column of a text row: the location's last SRCLINE_WIDTH
 * characters (the file's name and line are at its end), "-" when the
 * archive does not say. */
#define SRCLINE_WIDTH 28

static void put_text_srcline(const struct options *o, const struct profile_row *r)
{
	const char *loc = r->loc ? r->loc : "-";
	size_t n = strlen(loc);

	if (!o->srcline)
		return;
	if (n > SRCLINE_WIDTH)
		printf("...%s ", loc + n - (SRCLINE_WIDTH - 3));
	else
		printf("%-*s ", SRCLINE_WIDTH, loc);
}

/* "[srcline ][pid tid ]function (category)[ [track]]" of a text row. */
static void put_text_function(const struct options *o, const struct profile_row *r)
{
	put_text_srcline(o, r);
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

static void put_text_heads(const struct options *o)
{
	if (o->srcline)
		printf("%-*s ", SRCLINE_WIDTH, "srcline");
	if (o->by != PROFILE_BY_FUNCTION)
		printf("%8s ", "pid");
	if (o->by == PROFILE_BY_THREAD)
		printf("%8s ", "tid");
	printf("function\n");
}

/* The samples' table: a heading that says what they are, then per row the
 * sampled time with the function on the stack and in it. */
static void print_text_samples(const struct options *o, const struct profile *p,
			       const struct table *t)
{
	uint64_t ntracks, nframes = profile_nsampled(p, &ntracks);
	char b[2][32];

	if (!t->nall) {
		printf("# stack samples: none (the archive was not recorded with fxt-run "
		       "--sample)\n");
		return;
	}
	printf("# stack samples: %" PRIu64 " frames on %" PRIu64 " track%s, %zu rows", nframes,
	       ntracks, ntracks == 1 ? "" : "s", t->nall);
	if (!t->n) {
		printf(", none of them matching the filters\n");
		return;
	}
	printf("; sampled time, an estimate of CPU time, not calls\n");
	printf("%12s %12s %7s  ", "total", "self", "self%");
	put_text_heads(o);
	for (size_t i = 0; i < t->n; i++) {
		const struct profile_row *r = t->rows[i];

		tool_fmt_ns(b[0], sizeof(b[0]), (double)r->total_ns);
		tool_fmt_ns(b[1], sizeof(b[1]), (double)r->self_ns);
		printf("%12s %12s %6.2f%%  ", b[0], b[1], share(r, t->all_self));
		put_text_function(o, r);
	}
}

/* The threads stack sampling could not sample, one line each. */
static void print_unsampled(FILE *f, const char *lead, const struct profile *p)
{
	const struct profile_unsampled *u;
	size_t n = profile_unsampled(p, &u);
	char at[32];

	for (size_t i = 0; i < n; i++) {
		tool_fmt_ns(at, sizeof(at), (double)(u[i].ts_ns - profile_start_ns(p)));
		fprintf(f, "%spid %" PRIu64 " tid %" PRIu64 " not sampled from +%s on: %s\n", lead,
			u[i].pid, u[i].tid, at, u[i].reason);
	}
}

/* Whether the archive located any function (fxt-report --srcline). */
static bool any_loc(const struct profile *p)
{
	for (size_t i = 0; i < profile_nrows(p); i++)
		if (profile_row(p, i)->loc)
			return true;
	return false;
}

/* The line that says a writer's buffer filled up (profile_buffer_full()). */
static const char *buffer_full_line(char *buf, size_t len, const struct profile *p)
{
	return tool_buffer_full(buf, len, profile_buffer_full(p), "totals may be partial");
}

static void print_text(const struct options *o, const struct profile *p, const struct table *calls,
		       const struct table *samples)
{
	char lost[160]; /* tool_kernel_lost() */
	char full[128]; /* buffer_full_line() */
	const struct profile_anomalies *a = profile_anomalies(p);
	uint64_t dthreads, dropped = profile_dropped(p, &dthreads);
	char b[6][32];
	size_t i;

	printf("# %s: %" PRIu64 " slices, %zu rows, span ", o->path, profile_nslices(p),
	       calls->nall);
	tool_fmt_ns(b[0], sizeof(b[0]), (double)(profile_end_ns(p) - profile_start_ns(p)));
	printf("%s\n", b[0]);
	if (dropped)
		printf("# %" PRIu64 " calls dropped: totals are partial (on %" PRIu64
		       " thread%s; the trace hit its size limit)\n",
		       dropped, dthreads, dthreads == 1 ? "" : "s");
	if (profile_overwritten(p))
		printf("# %" PRIu64 " calls overwritten: totals are those of each thread's "
		       "newest calls (a flight recorder's window)\n",
		       profile_overwritten(p));
	if (profile_buffer_full(p))
		printf("# %s\n", buffer_full_line(full, sizeof(full), p));
	if (profile_kernel_lost(p))
		printf("# %s\n", tool_kernel_lost(lost, sizeof(lost), profile_kernel_lost(p),
						  "thread states are partial"));
	print_unsampled(stdout, "# ", p);
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
	if (o->srcline && !any_loc(p))
		printf("# --srcline: the archive says where no function is (not written by "
		       "this fxt-run, or only libc calls)\n");
	if (a->unmatched_ends || a->overlaps || a->reversed || a->merged)
		printf("# input oddities: %" PRIu64 " ends without a begin, %" PRIu64
		       " improperly nested slices, %" PRIu64
		       " slices ending before they start, %" PRIu64
		       " end-ordered parents split from merged children\n",
		       a->unmatched_ends, a->overlaps, a->reversed, a->merged);
	if (o->samples != SAMPLES_ONLY) {
		printf("%10s %12s %12s %12s %12s ", "calls", "total", "self", "avg", "min");
		for (int k = 0; calls->q && k < NPCT; k++)
			printf("%12s ", pct_names[k]);
		printf("%12s %7s  ", "max", "self%");
		put_text_heads(o);
		for (i = 0; i < calls->n; i++) {
			const struct profile_row *r = calls->rows[i];

			tool_fmt_ns(b[0], sizeof(b[0]), (double)r->total_ns);
			tool_fmt_ns(b[1], sizeof(b[1]), (double)r->self_ns);
			tool_fmt_ns(b[2], sizeof(b[2]), (double)avg_ns(r));
			tool_fmt_ns(b[3], sizeof(b[3]), (double)r->min_ns);
			tool_fmt_ns(b[4], sizeof(b[4]), (double)r->max_ns);
			printf("%10" PRIu64 " %12s %12s %12s %12s ", r->calls, b[0], b[1], b[2],
			       b[3]);
			for (int k = 0; calls->q && k < NPCT; k++) {
				fmt_q(b[5], sizeof(b[5]), &calls->q[i][k]);
				printf("%12s ", b[5]);
			}
			printf("%12s %6.2f%%  ", b[4], share(r, calls->all_self));
			put_text_function(o, r);
		}
		print_q_notes(p, calls);
	}
	if (o->by == PROFILE_BY_THREAD)
		report_states_text(p);
	if (show_samples(o, samples))
		print_text_samples(o, p, samples);
}

/* "[pid,][tid,]category,name[,track]\n" of a csv row. */
static void put_csv_function(const struct options *o, const struct profile_row *r)
{
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
	if (o->srcline) {
		putchar(',');
		tool_put_csv_str(stdout, r->loc ? r->loc : "");
	}
	putchar('\n');
}

static void put_csv_heads(const struct options *o)
{
	if (o->by != PROFILE_BY_FUNCTION)
		fputs("pid,", stdout);
	if (o->by == PROFILE_BY_THREAD)
		fputs("tid,", stdout);
	fputs(o->by == PROFILE_BY_THREAD ? "category,name,track" : "category,name", stdout);
	fputs(o->srcline ? ",srcline\n" : "\n", stdout);
}

/* One table: the calls', or with --samples only the samples'. */
static void print_csv(const struct options *o, const struct table *calls,
		      const struct table *samples)
{
	size_t i;

	if (o->samples == SAMPLES_ONLY) {
		fputs("total_ns,self_ns,self_pct,", stdout);
		put_csv_heads(o);
		for (i = 0; i < samples->n; i++) {
			const struct profile_row *r = samples->rows[i];

			printf("%" PRIu64 ",%" PRIu64 ",%.2f,", r->total_ns, r->self_ns,
			       share(r, samples->all_self));
			put_csv_function(o, r);
		}
		return;
	}
	fputs("calls,total_ns,self_ns,avg_ns,min_ns,", stdout);
	for (int k = 0; calls->q && k < NPCT; k++)
		printf("%s,", pct_keys[k]);
	fputs(calls->q ? "max_ns,pct_kind,self_pct,open," : "max_ns,self_pct,open,", stdout);
	put_csv_heads(o);
	for (i = 0; i < calls->n; i++) {
		const struct profile_row *r = calls->rows[i];
		char kinds[NPCT + 1];

		printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->calls,
		       r->total_ns, r->self_ns, avg_ns(r), r->min_ns);
		for (int k = 0; calls->q && k < NPCT; k++)
			printf("%" PRIu64 ",", calls->q[i][k].ns);
		printf("%" PRIu64 ",", r->max_ns);
		if (calls->q)
			printf("%s,", q_kinds(kinds, calls->q[i]));
		printf("%.2f,%" PRIu64 ",", share(r, calls->all_self), r->open);
		put_csv_function(o, r);
	}
}

/* ",\"pid\":P,\"tid\":T,\"track\":..." as grouped. */
static void put_json_group(const struct options *o, const struct profile_row *r)
{
	if (o->by != PROFILE_BY_FUNCTION)
		printf(",\"pid\":%" PRIu64, r->pid);
	if (o->by == PROFILE_BY_THREAD) {
		printf(",\"tid\":%" PRIu64 ",\"track\":", r->tid);
		if (r->track)
			tool_put_json_str(stdout, r->track);
		else
			fputs("null", stdout);
	}
	if (o->srcline) {
		fputs(",\"srcline\":", stdout);
		if (r->loc)
			tool_put_json_str(stdout, r->loc);
		else
			fputs("null", stdout);
	}
}

static void print_json(const struct options *o, const struct profile *p, const struct table *calls,
		       const struct table *samples)
{
	static const char *const by_names[] = { "function", "process", "thread" };
	uint64_t dthreads, dropped = profile_dropped(p, &dthreads);
	uint64_t ntracks, nframes = profile_nsampled(p, &ntracks);
	size_t i, n;

	fputs("{\"archive\":", stdout);
	tool_put_json_str(stdout, o->path);
	printf(",\"by\":\"%s\",\"slices\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	       ",\"dropped\":%" PRIu64 ",\"dropped_threads\":%" PRIu64 ",\"overwritten\":%" PRIu64
	       ",\"buffer_full\":%" PRIu64 ",\"kernel_lost\":%" PRIu64
	       ",\"sampled_frames\":%" PRIu64 ",\"sample_tracks\":%" PRIu64,
	       by_names[o->by], profile_nslices(p), profile_start_ns(p), profile_end_ns(p), dropped,
	       dthreads, profile_overwritten(p), profile_buffer_full(p), profile_kernel_lost(p),
	       nframes, ntracks);
	{
		const struct profile_unsampled *u;
		size_t nu = profile_unsampled(p, &u);

		fputs(",\"unsampled\":[", stdout);
		for (size_t k = 0; k < nu; k++) {
			printf("%s{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts_ns\":%" PRIu64
			       ",\"reason\":",
			       k ? "," : "", u[k].pid, u[k].tid, u[k].ts_ns);
			tool_put_json_str(stdout, u[k].reason);
			putchar('}');
		}
		putchar(']');
	}
	if (calls->q)
		printf(
		    ",\"pct_method\":\"nearest-rank\",\"pct_rel_error\":%g,\"sketched_rows\":%zu",
		    PCTL_REL_ERR, profile_nsketched(p));
	if (o->subtract) {
		double pair, inside;

		if (profile_hook_cost(p, &pair, &inside))
			printf(",\"hook_pair_ns\":%.3f,\"hook_inside_ns\":%.3f", pair, inside);
		else
			fputs(",\"hook_pair_ns\":null,\"hook_inside_ns\":null", stdout);
	}
	if (o->by == PROFILE_BY_THREAD)
		report_states_json(p);
	fputs(",\"rows\":[", stdout);
	n = o->samples == SAMPLES_ONLY ? 0 : calls->n;
	for (i = 0; i < n; i++) {
		const struct profile_row *r = calls->rows[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
		tool_put_json_str(stdout, r->name);
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, r->category);
		put_json_group(o, r);
		printf(",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		       ",\"avg_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
		       ",\"self_pct\":%.2f,\"open\":%" PRIu64,
		       r->calls, r->total_ns, r->self_ns, avg_ns(r), r->min_ns, r->max_ns,
		       share(r, calls->all_self), r->open);
		if (calls->q) {
			char kinds[NPCT + 1];

			for (int k = 0; k < NPCT; k++)
				printf(",\"%s\":%" PRIu64, pct_keys[k], calls->q[i][k].ns);
			printf(",\"pct_kind\":\"%s\"", q_kinds(kinds, calls->q[i]));
		}
		putchar('}');
	}
	fputs("\n],\"samples\":[", stdout);
	n = show_samples(o, samples) ? samples->n : 0;
	for (i = 0; i < n; i++) {
		const struct profile_row *r = samples->rows[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
		tool_put_json_str(stdout, r->name);
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, r->category);
		put_json_group(o, r);
		printf(",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64 ",\"self_pct\":%.2f}",
		       r->total_ns, r->self_ns, share(r, samples->all_self));
	}
	fputs("\n]}\n", stdout);
}

/* --percentiles: those of the calls' printed rows.  0 or -ENOMEM. */
static int make_quantiles(struct profile *p, struct table *calls)
{
	calls->q = calloc(calls->n + 1, sizeof(*calls->q));
	if (!calls->q)
		return -ENOMEM;
	for (size_t i = 0; i < calls->n; i++)
		if (calls->rows[i]->calls &&
		    profile_quantiles(p, calls->rows[i], pct_ppm, NPCT, calls->q[i]) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

/* Splits the rows into the calls' table and the samples', each filtered,
 * sorted (the samples by total or name, else by self) and cut to --top.
 * Returns 0 or -ENOMEM. */
static int make_tables(const struct options *o, const struct profile *p, const regex_t *name_re,
		       const regex_t *cat_re, struct table *calls, struct table *samples)
{
	size_t i, nrows = profile_nrows(p);
	enum profile_sort skey = o->sort == PROFILE_SORT_TOTAL || o->sort == PROFILE_SORT_NAME
				     ? o->sort
				     : PROFILE_SORT_SELF;

	calls->rows = malloc((nrows + 1) * sizeof(*calls->rows));
	samples->rows = malloc((nrows + 1) * sizeof(*samples->rows));
	if (!calls->rows || !samples->rows)
		return -ENOMEM;
	/* Shares are of all the traced time of the kind, before any filter. */
	for (i = 0; i < nrows; i++) {
		const struct profile_row *r = profile_row(p, i);
		struct table *t = r->sampled ? samples : calls;

		t->nall++;
		t->all_self += (double)r->self_ns;
		if (name_re && regexec(name_re, r->name, 0, NULL, 0) != 0)
			continue;
		if (cat_re && regexec(cat_re, r->category, 0, NULL, 0) != 0)
			continue;
		t->rows[t->n++] = r;
	}
	profile_sort_rows(calls->rows, calls->n, o->sort);
	profile_sort_rows(samples->rows, samples->n, skey);
	if (o->top && o->top < calls->n)
		calls->n = o->top;
	if (o->top && o->top < samples->n)
		samples->n = o->top;
	return 0;
}

int main(int argc, char **argv)
{
	char lost[160]; /* tool_kernel_lost() */
	struct options o = {
		PROFILE_BY_FUNCTION, PROFILE_SORT_SELF, 0, TOOL_FMT_TEXT, NULL, NULL, NULL
	};
	struct profile_opts popts = { 0 };
	struct table calls = { 0 }, samples = { 0 };
	struct profile *p = NULL;
	regex_t name_re, cat_re;
	bool have_name_re = false, have_cat_re = false;
	char err[512];
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
	popts.percentiles = o.percentiles || o.histogram;
	popts.exact_max = o.exact_limit;
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
	if (o.histogram) {
		struct report_hist h = { o.path, o.histogram, o.by, o.format,
					 have_cat_re ? &cat_re : NULL };

		rc = report_histograms(p, &h);
		fflush(stdout);
		if (rc == -ENOENT)
			tool_error(NAME, "%s: no function named '%s'%s", o.path, o.histogram,
				   have_cat_re ? " in the categories of --category" : "");
		else if (rc < 0)
			tool_error(NAME, "%s", strerror(-rc));
		else if (tool_flush_stdout(NAME) == 0)
			status = TOOL_EXIT_OK;
		goto out;
	}
	if (make_tables(&o, p, have_name_re ? &name_re : NULL, have_cat_re ? &cat_re : NULL, &calls,
			&samples) < 0 ||
	    (o.percentiles && make_quantiles(p, &calls) < 0)) {
		tool_error(NAME, "%s", strerror(ENOMEM));
		goto out;
	}

	switch (o.format) {
	case TOOL_FMT_TEXT:
		print_text(&o, p, &calls, &samples);
		break;
	case TOOL_FMT_CSV:
		/* CSV has rows only: the warnings go to standard error. */
		if (profile_dropped(p, NULL))
			fprintf(stderr,
				NAME ": %s: %" PRIu64 " calls dropped: totals are partial\n",
				o.path, profile_dropped(p, NULL));
		if (profile_kernel_lost(p))
			fprintf(stderr, NAME ": %s: %s\n", o.path,
				tool_kernel_lost(lost, sizeof(lost), profile_kernel_lost(p),
						 "thread states are partial"));
		if (profile_overwritten(p))
			fprintf(stderr,
				NAME ": %s: %" PRIu64 " calls overwritten: totals are those of "
				     "each thread's newest calls\n",
				o.path, profile_overwritten(p));
		if (profile_buffer_full(p)) {
			char full[128];

			fprintf(stderr, NAME ": %s: %s\n", o.path,
				buffer_full_line(full, sizeof(full), p));
		}
		if (o.samples == SAMPLES_APART && samples.nall)
			fprintf(stderr,
				NAME ": %s: stack samples left out (%zu rows, not calls): "
				     "--samples=only lists them\n",
				o.path, samples.nall);
		print_unsampled(stderr, NAME ": samples: ", p);
		print_csv(&o, &calls, &samples);
		break;
	case TOOL_FMT_JSON:
		print_json(&o, p, &calls, &samples);
		break;
	}
	if (tool_flush_stdout(NAME))
		goto out;
	status = TOOL_EXIT_OK;
out:
	free(calls.rows);
	free(calls.q);
	free(samples.rows);
	profile_free(p);
	if (have_name_re)
		regfree(&name_re);
	if (have_cat_re)
		regfree(&cat_re);
	return status;
}
