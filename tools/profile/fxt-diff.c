/* fxt-diff: per-function changes between two runs or two sets of runs,
 * with statistics that hold under a noisy machine.  This file is the
 * command: its options, reading the archives (profile.c), the text, CSV
 * and JSON output and the --fail-above gate; the comparison itself, and
 * how it tells noise from change, is tools/profile/diff.h's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/profile/diff-pct.h"
#include "tools/profile/diff.h"
#include "tools/front/escape.h"

struct options {
	double threshold; /* percent */
	double fail_above;
	bool fail;
	double alpha;
	size_t top;
	enum tool_format format;
	bool subtract;	    /* --subtract-overhead */
	const char *metric; /* its name; NULL: total */
};

/* The metrics of --metric besides total, the default. */
static const struct {
	const char *name;
	uint32_t ppm;
} metrics[] = {
	{ "p50", 500000 },   { "p90", 900000 },	 { "p99", 990000 },
	{ "p99.9", 999000 }, { "max", 1000000 },
};

/* One invocation: its options, archives and comparison. */
struct job {
	struct options o;
	char **files; /* [d.nruns] */
	struct diff d;
};

#define NAME "fxt-diff"

static const char help[] =
    "Usage: fxt-diff [OPTION]... BASE NEW\n"
    "  or:  fxt-diff [OPTION]... BASE1 BASE2... --vs NEW1 NEW2...\n"
    "Compare per-function times between runs, with statistics that hold on a\n"
    "noisy machine.  Options may come before, between or after the archives.\n"
    "--vs, or the first --, parts the base runs from the new ones (so an\n"
    "archive named like an option is given as ./NAME; a second -- ends the\n"
    "options).  Archives are files, plain, gzip or zstd; one of them may be '-',\n"
    "standard input.  Three runs a side are better than one: see below.\n"
    "\n"
    "Options:\n"
    "  -t, --threshold PCT   never flag changes smaller than PCT% (default 5)\n"
    "  -x, --fail-above PCT  exit 1 if a flagged slowdown exceeds PCT%\n"
    "  -a, --alpha Q         false discovery rate (default 0.05)\n"
    "  -n, --top N           print the N largest changes only\n"
    "  -F, --format FMT      text (default), csv or json\n"
    "  -m, --metric M        what is compared: total (default), or a percentile of\n"
    "                        the per-call times, p50, p90, p99, p99.9 or max\n"
    "  -O, --subtract-overhead\n"
    "                        take the tracer's own cost out of every run's times\n"
    "                        (as fxt-report -O does)\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and exit\n"
    "\n"
    "The whole run.  What every function of a run shares, the machine's speed\n"
    "during it, is measured apart: each run's factor is the weighted median,\n"
    "over the functions measured in every run (at least 10), of how much slower\n"
    "their self times were in that run (weights: the square root of the calls,\n"
    "up to 10^4).  A line \"whole run\" gives the change between the sides'\n"
    "factors.  With >= 2 runs a side it is tested (Welch's t on the runs'\n"
    "factors) and flagged like a function; with one run a side a busy machine\n"
    "and a program slower as a whole look alike, so it is not tested, and\n"
    "does not count for --fail-above.\n"
    "\n"
    "Per function: calls (a mean per run when a side has several runs, whole\n"
    "when they agree), inclusive (total) and self time per run on each side,\n"
    "their change, and adj%, the change of the total beyond the whole run's\n"
    "(each run's times divided by its factor).  The test is on those adjusted\n"
    "totals, on a log scale: a moderated t-test (Smyth's), whose variance\n"
    "joins the spread of the per-call durations and, with more than one run\n"
    "a side, that of the per-run totals, pooled over the functions; a\n"
    "function missing from some runs gets Welch's t-test on its per-run\n"
    "totals (>= 2 runs a side), or none.  The\n"
    "p-values of all functions are one family: q is each one's\n"
    "Benjamini-Hochberg q-value, and a change is significant when q < --alpha\n"
    "(so at most that share of the significant changes are expected to be\n"
    "noise).  Verdicts: SLOWER / FASTER (significant and adj% beyond the\n"
    "threshold), ~ (not), NEW / GONE (on one side only).  Rows are sorted by\n"
    "the size of the adjusted change in total time.  A run that dropped calls\n"
    "is named with its side: \"base|new FILE: N calls dropped: totals are\n"
    "partial\" (text: in the header; csv: on standard error; json:\n"
    "\"base_dropped\" and \"new_dropped\"); so is a run whose trace says a buffer\n"
    "filled up (another writer's provider event record): \"base|new FILE: a\n"
    "trace buffer filled up N times: records were likely dropped\" (json:\n"
    "\"base_buffer_full\", \"new_buffer_full\").  csv writes the whole run's line on\n"
    "standard error; json has it as \"whole_run\".\n"
    "With --subtract-overhead, each run loses its own measure of the hooks'\n"
    "cost, so that a function which makes more calls is not charged the\n"
    "hooks of those calls; a run whose archive has no measure is named\n"
    "(\"base|new FILE: no measure of the hooks' cost: times as measured\")\n"
    "and json gives each run's \"hook_pair_ns\" (null: none).\n"
    "Stack samples (fxt-run --sample) are estimates of CPU time, not calls:\n"
    "they are left out of the comparison, and a line says how many runs had\n"
    "them (\"stack samples left out\"; csv: on standard error; json:\n"
    "\"sampled_runs\").  fxt-flame --diff --samples compares them.\n"
    "\n"
    "--metric pNN compares a percentile of each function's per-call inclusive\n"
    "times (as fxt-report --percentiles gives them: nearest rank, exact or\n"
    "within 1%), each side's calls pooled over its runs.  Its own test: an\n"
    "order-statistic interval per side, the ranks between which the\n"
    "percentile lies with confidence 1 - alpha (the count of calls below it is\n"
    "binomial: n p +- z sqrt(n p (1 - p)), z the normal quantile of alpha / 2,\n"
    "then the calls at those ranks); a change is significant when the two\n"
    "intervals do not overlap (when nothing changed, two 95% intervals miss\n"
    "each other about 0.6% of the time), and flagged when also at least\n"
    "--threshold.  A side with too few calls for the percentile has an\n"
    "interval open on that end (text \"-\", csv empty, json null): p99.9 needs a\n"
    "few thousand calls.  No run factor is measured or applied (no \"whole\n"
    "run\" line; json: not measured), and a value among the calls fxt-run\n"
    "--min-duration summarised (an upper bound) is not tested.  max is shown,\n"
    "never tested: one call decides it.\n"
    "Columns: the percentile on each side, its change, each side's interval\n"
    "(csv/json: base_lo_ns, base_hi_ns, new_lo_ns, new_hi_ns) and calls (all\n"
    "of its runs').\n"
    "With more than one CPU, each archive is read on a second thread while the\n"
    "first adds up the calls (the same numbers); FXT_THREADS=0 in the\n"
    "environment keeps to one.\n"
    "\n"
    "Exit status:\n"
    "  0   the comparison was written (and nothing is above --fail-above)\n"
    "  1   with --fail-above: a flagged slowdown (a function's adj%, or the\n"
    "      whole run's when tested) is above it; one line per such function on\n"
    "      standard error\n"
    "  2   bad usage; or an archive cannot be read, is not an FXT archive or is\n"
    "      damaged; or the comparison cannot be written.  One line on standard\n"
    "      error names the file and the problem.\n";

static const struct option longopts[] = {
	{ "threshold", required_argument, NULL, 't' },
	{ "fail-above", required_argument, NULL, 'x' },
	{ "alpha", required_argument, NULL, 'a' },
	{ "top", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'F' },
	{ "vs", no_argument, NULL, 'S' },
	{ "subtract-overhead", no_argument, NULL, 'O' },
	{ "metric", required_argument, NULL, 'm' },
	{ NULL, 0, NULL, 0 },
};

/* '-': operands come back in order among the options (as option 1), so
 * options may come anywhere, as with GNU tools, and the place of --vs
 * among the operands parts the two sides. */
static const struct tool_cli cli = { NAME, help, "-t:x:a:n:F:Om:", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_pct(const char *s, double *out, const char *what)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (*end == '%')
		end++;
	if (errno || end == s || *end || !(*out >= 0))
		return tool_usage_error(NAME, "%s: not a percentage: '%s'", what, s);
	return 0;
}

/* The operands, in order, and the base runs' count: those before --vs
 * (the first "--" counts as --vs); without it, exactly two runs.  Returns
 * 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct job *j)
{
	static char vs[] = "--vs";
	static char **ops; /* until exit */
	size_t nops = 0;
	char *end;
	int c, i, sep = -1, n;

	ops = calloc((size_t)argc + 1, sizeof(*ops));
	if (!ops)
		return tool_error(NAME, "out of memory");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = vs; /* a part, not the end of the options */
			break;
		}
	}
	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 1:
			ops[nops++] = optarg;
			break;
		case 'S':
			if (sep >= 0)
				return tool_usage_error(NAME, "--vs (or --) given twice");
			sep = (int)nops;
			break;
		case 't':
			if (parse_pct(optarg, &j->o.threshold, "--threshold"))
				return TOOL_EXIT_ERROR;
			break;
		case 'x':
			if (parse_pct(optarg, &j->o.fail_above, "--fail-above"))
				return TOOL_EXIT_ERROR;
			j->o.fail = true;
			break;
		case 'a':
			j->o.alpha = strtod(optarg, &end);
			if (*end || !(j->o.alpha > 0 && j->o.alpha < 1))
				return tool_usage_error(NAME, "--alpha: not in (0, 1): '%s'",
							optarg);
			break;
		case 'n':
			if (tool_parse_count(optarg, &j->o.top) < 0)
				return tool_usage_error(NAME, "--top: not a count: '%s'", optarg);
			break;
		case 'F':
			if (tool_parse_format(optarg, &j->o.format) < 0)
				return tool_usage_error(NAME, "--format: unknown format '%s'",
							optarg);
			break;
		case 'O':
			j->o.subtract = true;
			break;
		case 'm': {
			size_t k;

			j->o.metric = NULL;
			j->d.ppm = 0;
			for (k = 0; k < sizeof(metrics) / sizeof(metrics[0]); k++) {
				if (strcmp(optarg, metrics[k].name) == 0) {
					j->o.metric = metrics[k].name;
					j->d.ppm = metrics[k].ppm;
				}
			}
			if (!j->d.ppm && strcmp(optarg, "total") != 0)
				return tool_usage_error(
				    NAME,
				    "--metric: unknown metric '%s' (total, p50, "
				    "p90, p99, p99.9 or max)",
				    optarg);
			break;
		}
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	/* After a second "--": operands only. */
	for (i = optind; i < argc; i++)
		ops[nops++] = argv[i];
	if (sep < 0) {
		if (nops != 2)
			return tool_usage_error(NAME, "give BASE NEW, or BASE... --vs NEW...");
		j->d.nbase = 1;
		j->d.nnew = 1;
	} else {
		j->d.nbase = (size_t)sep;
		j->d.nnew = nops - (size_t)sep;
		if (!j->d.nbase || !j->d.nnew)
			return tool_usage_error(NAME, "each side needs at least one archive");
	}
	j->d.nruns = j->d.nbase + j->d.nnew;
	j->files = ops;
	/* Standard input can be read once: a second "-" would be empty. */
	for (i = 0, n = 0; i < (int)j->d.nruns; i++)
		n += strcmp(j->files[i], "-") == 0;
	if (n > 1)
		return tool_usage_error(NAME, "only one archive can be standard input ('-')");
	return 0;
}

/* Reads every run.  Returns 0 or TOOL_EXIT_ERROR (said). */
static int load_runs(struct diff *d, char **files, bool subtract, bool percentiles)
{
	struct profile_opts po = { 0 };
	char err[512];
	size_t i;
	int rc;

	d->runs = calloc(d->nruns, sizeof(*d->runs));
	if (!d->runs)
		return tool_error(NAME, "%s", strerror(ENOMEM));
	po.by = PROFILE_BY_FUNCTION;
	po.subtract_overhead = subtract;
	po.percentiles = percentiles;
	po.variance = true;
	for (i = 0; i < d->nruns; i++) {
		rc = profile_new(&d->runs[i], &po);
		if (rc < 0)
			return tool_error(NAME, "%s", strerror(-rc));
		rc = profile_load(d->runs[i], files[i], err, sizeof(err));
		if (rc < 0)
			return tool_error(NAME, "%s: %s", files[i], err);
	}
	return 0;
}

static const char *whole_verdict(const struct diff_whole *w)
{
	if (!w->flagged)
		return "~";
	return w->pct > 0 ? "SLOWER" : "FASTER";
}

static double pct(double from, double to)
{
	if (from == 0)
		return to == 0 ? 0 : INFINITY;
	return 100 * (to - from) / from;
}

/* The calls a side dropped, over its runs. */
static uint64_t side_dropped(const struct diff *d, bool base)
{
	size_t lo = base ? 0 : d->nbase, hi = base ? d->nbase : d->nruns;
	uint64_t n = 0;

	for (size_t i = lo; i < hi; i++)
		n += profile_dropped(d->runs[i], NULL);
	return n;
}

/* Another writer's "buffer full" provider events of a side, over its runs. */
static uint64_t side_buffer_full(const struct diff *d, bool base)
{
	size_t lo = base ? 0 : d->nbase, hi = base ? d->nbase : d->nruns;
	uint64_t n = 0;

	for (size_t i = lo; i < hi; i++)
		n += profile_buffer_full(d->runs[i]);
	return n;
}

/* "PREFIXbase FILE" or "PREFIXnew FILE": run i, the start of its line. */
static void put_run(const struct job *j, FILE *out, const char *prefix, size_t i)
{
	fprintf(out, "%s%s ", prefix, i < j->d.nbase ? "base" : "new");
	tool_put_text_str(out, j->files[i]);
}

/* A line per run that dropped calls, saying which side it is on:
 * "PREFIXbase FILE: N calls dropped: totals are partial"; one per run
 * whose calls a flight recorder overwrote; with --subtract-overhead, one
 * per run whose archive does not say what the hooks cost. */
static void put_drops(const struct job *j, FILE *out, const char *prefix)
{
	char lost[160]; /* tool_kernel_lost() */
	char full[128]; /* tool_buffer_full() */
	const struct diff *d = &j->d;

	for (size_t i = 0; i < d->nruns; i++) {
		uint64_t n = profile_dropped(d->runs[i], NULL);
		uint64_t o = profile_overwritten(d->runs[i]);

		if (n) {
			put_run(j, out, prefix, i);
			fprintf(out, ": %" PRIu64 " calls dropped: totals are partial\n", n);
		}
		if (o) {
			put_run(j, out, prefix, i);
			fprintf(out,
				": %" PRIu64 " calls overwritten: totals are those of a flight "
				"recorder's window\n",
				o);
		}
		if (profile_kernel_lost(d->runs[i])) {
			put_run(j, out, prefix, i);
			fprintf(out, ": %s\n",
				tool_kernel_lost(lost, sizeof(lost),
						 profile_kernel_lost(d->runs[i]),
						 "its thread states are partial"));
		}
		if (profile_buffer_full(d->runs[i])) {
			put_run(j, out, prefix, i);
			fprintf(out, ": %s\n",
				tool_buffer_full(full, sizeof(full),
						 profile_buffer_full(d->runs[i]),
						 "totals may be partial"));
		}
		if (j->o.subtract && !profile_hook_cost(d->runs[i], NULL, NULL)) {
			put_run(j, out, prefix, i);
			fputs(": no measure of the hooks' cost: times as measured\n", out);
		}
	}
}

/* The runs that have stack samples (left out of the comparison). */
static size_t sampled_runs(const struct diff *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nruns; i++)
		n += profile_nsampled(d->runs[i], NULL) != 0;
	return n;
}

/* "PREFIXstack samples left out ..." when a run has them. */
static void put_samples(const struct diff *d, FILE *out, const char *prefix)
{
	size_t n = sampled_runs(d);

	if (n)
		fprintf(out,
			"%sstack samples left out (in %zu of %zu runs): estimates of CPU time, "
			"not calls; fxt-flame --diff --samples compares them\n",
			prefix, n, d->nruns);
}

/* With --subtract-overhead: "PREFIXthe hooks' cost taken out: ..." with
 * each side's mean over its runs that measured it. */
static void put_hook_cost(const struct job *j, FILE *out, const char *prefix)
{
	const struct diff *d = &j->d;
	double sum[2] = { 0, 0 }, pair;
	size_t n[2] = { 0, 0 };

	if (!j->o.subtract)
		return;
	for (size_t i = 0; i < d->nruns; i++) {
		if (profile_hook_cost(d->runs[i], &pair, NULL)) {
			sum[i >= d->nbase] += pair;
			n[i >= d->nbase]++;
		}
	}
	fprintf(out, "%sthe hooks' cost taken out, a call:", prefix);
	for (int s = 0; s < 2; s++) {
		fprintf(out, " %s ", s ? "new" : "base");
		if (n[s])
			fprintf(out, "%.1f ns", sum[s] / (double)n[s]);
		else
			fputs("not measured", out);
		fputs(s ? "\n" : ",", out);
	}
}

/* "PREFIXwhole run: ...": its change, its test or why there is none, and
 * each run's factor against the base runs' mean. */
static void put_whole(const struct diff *d, FILE *out, const char *prefix)
{
	const struct diff_whole *w = &d->whole;

	fprintf(out, "%swhole run: ", prefix);
	if (w->gauges < DIFF_MIN_GAUGES) {
		fprintf(out,
			"not measured: %zu function%s in every run, it takes %d; adj%% is the "
			"raw change\n",
			w->gauges, w->gauges == 1 ? "" : "s", DIFF_MIN_GAUGES);
		return;
	}
	fprintf(out, "%+.1f%%, ", w->pct);
	if (!w->tested) {
		fprintf(out,
			"not tested: with one run a side, a busy machine and a program slower "
			"as a whole look alike (%zu functions in every run; give 3 runs a "
			"side)\n",
			w->gauges);
		return;
	}
	fprintf(out,
		"p %.2g: %s (%zu functions in every run; each run against the base runs' "
		"mean:",
		w->p, whole_verdict(w), w->gauges);
	for (size_t i = 0; i < d->nruns; i++)
		fprintf(out, "%s %+.1f%%", i == d->nbase ? " |" : "", 100 * expm1(w->g[i]));
	fputs(")\n", out);
}

/* "test: ..." with the fitted noise model: what a run adds to a
 * function beyond its calls' noise (as a relative spread), and the weight
 * of the model (prior degrees of freedom) with repeated runs. */
static void put_test(const struct diff *d, FILE *out)
{
	const struct stats_family *m = &d->fam;

	if (m->df > 0) {
		fprintf(out, "test: moderated t on log totals (run noise %.1f%%, prior df ",
			100 * sqrt(m->tau2));
		fprintf(out, isfinite(m->d0) ? "%.0f)" : "inf)", m->d0);
	} else {
		fprintf(out, "test: z on log totals (run noise %.1f%%, from the functions' spread)",
			100 * sqrt(m->tau2));
	}
}

/* A call count: whole, or a mean of runs that differ, to one decimal. */
static const char *fmt_calls(char *buf, size_t cap, double calls)
{
	snprintf(buf, cap, calls < 1e15 && calls == (double)(uint64_t)calls ? "%.0f" : "%.1f",
		 calls);
	return buf;
}

static void print_text(const struct job *j, size_t n)
{
	const struct diff *d = &j->d;
	char b[3][32], c[2][32];
	size_t i;

	printf("# %zu base run%s vs %zu new run%s; ", d->nbase, d->nbase > 1 ? "s" : "", d->nnew,
	       d->nnew > 1 ? "s" : "");
	put_test(d, stdout);
	printf("; q: Benjamini-Hochberg over %zu function%s; alpha %g; threshold %g%%%s\n",
	       d->ntested, d->ntested == 1 ? "" : "s", j->o.alpha, j->o.threshold,
	       d->nbase > 1 || d->nnew > 1 ? "; calls: mean per run" : "");
	put_whole(d, stdout, "# ");
	put_hook_cost(j, stdout, "# ");
	put_drops(j, stdout, "# ");
	put_samples(d, stdout, "# ");
	printf("%-7s %12s %12s %12s %8s %8s %9s %8s %12s %12s  function\n", "verdict", "total base",
	       "total new", "delta", "delta%", "adj%", "q", "self%", "calls base", "calls new");
	for (i = 0; i < n; i++) {
		const struct diff_func *f = &d->f[i];

		tool_fmt_ns(b[0], sizeof(b[0]), f->total_base);
		tool_fmt_ns(b[1], sizeof(b[1]), f->total_new);
		tool_fmt_ns(b[2], sizeof(b[2]), f->total_new - f->total_base);
		printf("%-7s %12s %12s %12s %+7.1f%% %+7.1f%% %9.2g %+7.1f%% %12s %12s  ",
		       diff_verdict(f), b[0], b[1], b[2], pct(f->total_base, f->total_new),
		       f->cmp.pct, f->cmp.q, pct(f->self_base, f->self_new),
		       fmt_calls(c[0], sizeof(c[0]), f->calls_base),
		       fmt_calls(c[1], sizeof(c[1]), f->calls_new));
		tool_put_text_str(stdout, f->name);
		if (f->category[0]) {
			fputs(" (", stdout);
			tool_put_text_str(stdout, f->category);
			putchar(')');
		}
		if (f->cmp.sd_base > 0 || f->cmp.sd_new > 0) {
			tool_fmt_ns(b[0], sizeof(b[0]), f->cmp.sd_base);
			tool_fmt_ns(b[1], sizeof(b[1]), f->cmp.sd_new);
			printf("  [sd %s -> %s]", b[0], b[1]);
		}
		putchar('\n');
	}
}

static void print_text_pct(const struct job *j, size_t n)
{
	const struct diff *d = &j->d;

	printf("# %zu base run%s vs %zu new run%s; metric %s: nearest rank over each side's "
	       "calls; test: %g%% order-statistic intervals apart; alpha %g; threshold %g%%\n",
	       d->nbase, d->nbase > 1 ? "s" : "", d->nnew, d->nnew > 1 ? "s" : "", j->o.metric,
	       100 * (1 - j->o.alpha), j->o.alpha, j->o.threshold);
	put_hook_cost(j, stdout, "# ");
	put_drops(j, stdout, "# ");
	put_samples(d, stdout, "# ");
	diff_pct_text(d, j->o.metric, n);
}

static void print_csv(const struct diff *d, size_t n)
{
	char c[2][32];
	size_t i;

	puts("verdict,total_base_ns,total_new_ns,delta_ns,delta_pct,adj_pct,sd_base_ns,sd_new_ns,"
	     "p,q,method,self_base_ns,self_new_ns,self_delta_pct,calls_base,calls_new,category,"
	     "name");
	for (i = 0; i < n; i++) {
		const struct diff_func *f = &d->f[i];

		printf("%s,%.0f,%.0f,%.0f,%.2f,%.2f,%.0f,%.0f,%.3g,%.3g,%s,%.0f,%.0f,%.2f,%s,%s,",
		       diff_verdict(f), f->total_base, f->total_new, f->total_new - f->total_base,
		       pct(f->total_base, f->total_new), f->cmp.pct, f->cmp.sd_base, f->cmp.sd_new,
		       f->cmp.p, f->cmp.q, stats_method_name(f->cmp.method), f->self_base,
		       f->self_new, pct(f->self_base, f->self_new),
		       fmt_calls(c[0], sizeof(c[0]), f->calls_base),
		       fmt_calls(c[1], sizeof(c[1]), f->calls_new));
		tool_put_csv_str(stdout, f->category);
		putchar(',');
		tool_put_csv_str(stdout, f->name);
		putchar('\n');
	}
}

/* JSON has no infinity: a function new on one side gets null percentages. */
static void json_num(const char *key, double v, int decimals)
{
	printf(",\"%s\":", key);
	if (isfinite(v))
		printf("%.*f", decimals, v);
	else
		fputs("null", stdout);
}

static void json_whole(const struct diff *d)
{
	const struct diff_whole *w = &d->whole;

	printf(",\"whole_run\":{\"measured\":%s,\"functions\":%zu",
	       w->gauges >= DIFF_MIN_GAUGES ? "true" : "false", w->gauges);
	json_num("pct", w->pct, 2);
	printf(",\"tested\":%s,\"p\":", w->tested ? "true" : "false");
	if (w->tested)
		printf("%.3g", w->p);
	else
		fputs("null", stdout);
	printf(",\"verdict\":\"%s\",\"run_factors_pct\":[", whole_verdict(w));
	for (size_t i = 0; i < d->nruns; i++)
		printf("%s%.2f", i ? "," : "", 100 * expm1(w->g[i]));
	fputs("]}", stdout);
}

static void print_json(const struct job *j, size_t n)
{
	const struct diff *d = &j->d;
	char c[32];
	size_t i;

	printf("{\"base_runs\":%zu,\"new_runs\":%zu,\"alpha\":%g,\"threshold_pct\":%g,"
	       "\"base_dropped\":%" PRIu64 ",\"new_dropped\":%" PRIu64
	       ",\"base_buffer_full\":%" PRIu64 ",\"new_buffer_full\":%" PRIu64
	       ",\"tested\":%zu,\"sampled_runs\":%zu",
	       d->nbase, d->nnew, j->o.alpha, j->o.threshold, side_dropped(d, true),
	       side_dropped(d, false), side_buffer_full(d, true), side_buffer_full(d, false),
	       d->ntested, sampled_runs(d));
	json_whole(d);
	if (j->o.subtract) {
		fputs(",\"hook_pair_ns\":[", stdout);
		for (i = 0; i < d->nruns; i++) {
			double pair;

			if (i)
				putchar(',');
			if (profile_hook_cost(d->runs[i], &pair, NULL))
				printf("%.3f", pair);
			else
				fputs("null", stdout);
		}
		putchar(']');
	}
	if (d->ppm)
		printf(",\"metric\":\"%s\",\"pct_method\":\"nearest-rank\",\"confidence\":%g",
		       j->o.metric, 1 - j->o.alpha);
	else
		fputs(",\"metric\":\"total\"", stdout);
	json_num("run_noise_pct", 100 * sqrt(d->fam.tau2), 2);
	json_num("prior_df", d->fam.df > 0 ? d->fam.d0 : NAN, 1);
	fputs(",\"functions\":[", stdout);
	for (i = 0; i < n; i++) {
		const struct diff_func *f = &d->f[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
		tool_put_json_str(stdout, f->name);
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, f->category);
		printf(",\"verdict\":\"%s\",\"method\":\"%s\"", diff_verdict(f),
		       stats_method_name(f->cmp.method));
		if (d->ppm) {
			diff_pct_json(f);
			continue;
		}
		json_num("total_base_ns", f->total_base, 0);
		json_num("total_new_ns", f->total_new, 0);
		json_num("delta_ns", f->total_new - f->total_base, 0);
		json_num("delta_pct", pct(f->total_base, f->total_new), 2);
		json_num("adj_pct", f->cmp.pct, 2);
		json_num("sd_base_ns", f->cmp.sd_base, 0);
		json_num("sd_new_ns", f->cmp.sd_new, 0);
		printf(",\"p\":%.3g,\"q\":%.3g", f->cmp.p, f->cmp.q);
		json_num("self_base_ns", f->self_base, 0);
		json_num("self_new_ns", f->self_new, 0);
		json_num("self_delta_pct", pct(f->self_base, f->self_new), 2);
		printf(",\"calls_base\":%s", fmt_calls(c, sizeof(c), f->calls_base));
		printf(",\"calls_new\":%s", fmt_calls(c, sizeof(c), f->calls_new));
		printf(",\"significant\":%s}", f->cmp.significant ? "true" : "false");
	}
	fputs("\n]}\n", stdout);
}

/* --fail-above: a line on standard error per slowdown above it (the whole
 * run's first).  Looks at every function, not only the printed ones.
 * Returns TOOL_EXIT_FOUND when there is one, else TOOL_EXIT_OK. */
static int gate(const struct job *j)
{
	const struct diff *d = &j->d;
	int status = TOOL_EXIT_OK;

	if (d->whole.flagged && d->whole.pct > j->o.fail_above) {
		fprintf(stderr, "fxt-diff: the whole run is %.1f%% slower (p = %.2g), above %g%%\n",
			d->whole.pct, d->whole.p, j->o.fail_above);
		status = TOOL_EXIT_FOUND;
	}
	for (size_t i = 0; i < d->nf; i++) {
		const struct diff_func *f = &d->f[i];

		if (f->state != 0 || !f->cmp.flagged || !(f->cmp.pct > j->o.fail_above))
			continue;
		fputs("fxt-diff: ", stderr);
		tool_put_text_str(stderr, f->name);
		if (j->d.ppm)
			fprintf(stderr, "'s %s is %.1f%% slower (intervals apart), above %g%%\n",
				j->o.metric, f->cmp.pct, j->o.fail_above);
		else
			fprintf(stderr, " is %.1f%% slower (q = %.2g), above %g%%\n", f->cmp.pct,
				f->cmp.q, j->o.fail_above);
		status = TOOL_EXIT_FOUND;
	}
	return status;
}

int main(int argc, char **argv)
{
	static struct job j; /* zero */
	struct diff *d = &j.d;
	size_t i, n;
	int status = TOOL_EXIT_ERROR, rc;

	j.o.threshold = 5;
	j.o.alpha = 0.05;
	if (parse_args(argc, argv, &j))
		return TOOL_EXIT_ERROR;
	d->alpha = j.o.alpha;
	d->threshold = j.o.threshold;
	if (load_runs(d, j.files, j.o.subtract, d->ppm != 0))
		goto out;
	rc = diff_build(d);
	if (rc < 0) {
		tool_error(NAME, "%s", strerror(-rc));
		goto out;
	}
	n = j.o.top && j.o.top < d->nf ? j.o.top : d->nf;
	switch (j.o.format) {
	case TOOL_FMT_TEXT:
		if (d->ppm)
			print_text_pct(&j, n);
		else
			print_text(&j, n);
		break;
	case TOOL_FMT_CSV:
		if (!d->ppm)				    /* no run factors for a percentile */
			put_whole(d, stderr, "fxt-diff: "); /* CSV has rows only */
		put_hook_cost(&j, stderr, "fxt-diff: ");
		put_drops(&j, stderr, "fxt-diff: ");
		put_samples(d, stderr, "fxt-diff: ");
		if (d->ppm)
			diff_pct_csv(d, j.o.metric, n);
		else
			print_csv(d, n);
		break;
	case TOOL_FMT_JSON:
		print_json(&j, n);
		break;
	}
	if (tool_flush_stdout(NAME))
		goto out;
	status = j.o.fail ? gate(&j) : TOOL_EXIT_OK;
out:
	diff_free(d);
	for (i = 0; d->runs && i < d->nruns; i++)
		profile_free(d->runs[i]);
	free(d->runs);
	return status;
}
