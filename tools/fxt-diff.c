/* fxt-diff: per-function changes between two runs or two sets of runs,
 * with a significance test so that noise is not reported as a regression.
 *
 * The verdict is about a function's inclusive time (total_ns) per run.
 * With at least two runs per side: Welch's t-test on the per-run totals.
 * With one run on a side: the per-call inclusive durations are the samples
 * (a uniform reservoir sample of at most --samples, default 1000, per
 * function and run, pooled per side: memory is 8 bytes x samples x
 * functions at most, whatever the number of calls),
 * compared with the Mann-Whitney U test.  A change is flagged only when it
 * is significant (p < --alpha) and at least --threshold percent.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common.h"
#include "tools/escape.h"
#include "tools/profile.h"
#include "tools/stats.h"

struct options {
	double threshold; /* percent */
	double fail_above;
	bool fail;
	double alpha;
	uint32_t samples;
	size_t top;
	enum tool_format format;
};

/* One function's rows in every run (NULL where absent). */
struct func {
	const char *category, *name;
	const struct profile_row **row; /* [nruns] */
	struct stats_cmp cmp;
	double calls_base, calls_new, self_base, self_new;
	int state; /* 0 both sides, 1 new only, -1 base only */
};

struct diff {
	struct options o;
	struct profile **runs;
	char **files; /* [nruns] */
	size_t nbase, nnew, nruns;
	struct func *f;
	size_t nf;
};

/* Entry for the merge of all runs' rows by (category, name). */
struct entry {
	const struct profile_row *row;
	size_t run;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->row->name, y->row->name);

	if (c)
		return c;
	c = strcmp(x->row->category, y->row->category);
	if (c)
		return c;
	return (x->run > y->run) - (x->run < y->run);
}

#define NAME "fxt-diff"

static const char help[] =
    "Usage: fxt-diff [OPTION]... BASE NEW\n"
    "  or:  fxt-diff [OPTION]... BASE1 BASE2... --vs NEW1 NEW2...\n"
    "Compare per-function times between runs, with a significance test.\n"
    "Options may come before, between or after the archives.  --vs, or the\n"
    "first --, parts the base runs from the new ones (so an archive named like\n"
    "an option is given as ./NAME; a second -- ends the options).  Archives\n"
    "are files, plain or gzip; one of them may be '-', standard input.\n"
    "\n"
    "Options:\n"
    "  -t, --threshold PCT   never flag changes smaller than PCT% (default 5)\n"
    "  -x, --fail-above PCT  exit 1 if a significant slowdown exceeds PCT%\n"
    "  -a, --alpha P         significance level (default 0.05)\n"
    "  -s, --samples N       per-call samples kept per function and run for\n"
    "                        single-run sides (default 1000)\n"
    "  -n, --top N           print the N largest changes only\n"
    "  -F, --format FMT      text (default), csv or json\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and exit\n"
    "\n"
    "Per function: calls (a mean per run when a side has several runs, whole\n"
    "when they agree), inclusive (total) and self time per run on each\n"
    "side, their change, and a verdict on the total time: with >= 2 runs per\n"
    "side Welch's t-test on per-run totals; with one run on a side the\n"
    "Mann-Whitney U test on per-call durations.  Verdicts: SLOWER / FASTER\n"
    "(significant and >= threshold), ~ (not), NEW / GONE (on one side only).\n"
    "Rows are sorted by the size of the change in total time.  A run that\n"
    "dropped calls is named with its side: \"base|new FILE: N calls dropped:\n"
    "totals are partial\" (text: in the header; csv: on standard error; json:\n"
    "\"base_dropped\" and \"new_dropped\").\n"
    "\n"
    "Exit status:\n"
    "  0   the comparison was written (and nothing is above --fail-above)\n"
    "  1   with --fail-above: a significant slowdown is above it; one line per\n"
    "      such function on standard error\n"
    "  2   bad usage; or an archive cannot be read, is not an FXT archive or is\n"
    "      damaged; or the comparison cannot be written.  One line on standard\n"
    "      error names the file and the problem.\n";

static const struct option longopts[] = {
	{ "threshold", required_argument, NULL, 't' },
	{ "fail-above", required_argument, NULL, 'x' },
	{ "alpha", required_argument, NULL, 'a' },
	{ "samples", required_argument, NULL, 's' },
	{ "top", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'F' },
	{ "vs", no_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 },
};

/* '-': operands come back in order among the options (as option 1), so
 * options may come anywhere, as with GNU tools, and the place of --vs
 * among the operands parts the two sides. */
static const struct tool_cli cli = { NAME, help, "-t:x:a:s:n:F:", longopts };

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
static int parse_args(int argc, char **argv, struct diff *d, char ***files)
{
	static char vs[] = "--vs";
	static char **ops; /* until exit */
	size_t count, nops = 0;
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
			if (parse_pct(optarg, &d->o.threshold, "--threshold"))
				return TOOL_EXIT_ERROR;
			break;
		case 'x':
			if (parse_pct(optarg, &d->o.fail_above, "--fail-above"))
				return TOOL_EXIT_ERROR;
			d->o.fail = true;
			break;
		case 'a':
			d->o.alpha = strtod(optarg, &end);
			if (*end || !(d->o.alpha > 0 && d->o.alpha < 1))
				return tool_usage_error(NAME, "--alpha: not in (0, 1): '%s'",
							optarg);
			break;
		case 's':
			/* Range-checked before narrowing: 4294967297 is not 1. */
			if (tool_parse_count(optarg, &count) < 0 || !count || count > 10000000)
				return tool_usage_error(NAME, "--samples: bad count '%s'", optarg);
			d->o.samples = (uint32_t)count;
			break;
		case 'n':
			if (tool_parse_count(optarg, &d->o.top) < 0)
				return tool_usage_error(NAME, "--top: not a count: '%s'", optarg);
			break;
		case 'F':
			if (tool_parse_format(optarg, &d->o.format) < 0)
				return tool_usage_error(NAME, "--format: unknown format '%s'",
							optarg);
			break;
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
		d->nbase = 1;
		d->nnew = 1;
	} else {
		d->nbase = (size_t)sep;
		d->nnew = nops - (size_t)sep;
		if (!d->nbase || !d->nnew)
			return tool_usage_error(NAME, "each side needs at least one archive");
	}
	d->nruns = d->nbase + d->nnew;
	*files = ops;
	/* Standard input can be read once: a second "-" would be empty. */
	for (i = 0, n = 0; i < (int)d->nruns; i++)
		n += strcmp((*files)[i], "-") == 0;
	if (n > 1)
		return tool_usage_error(NAME, "only one archive can be standard input ('-')");
	return 0;
}

/* Reads every run.  Returns 0 or TOOL_EXIT_ERROR (said). */
static int load_runs(struct diff *d, char **files)
{
	struct profile_opts po = { 0 };
	char err[512];
	size_t i;
	int rc;

	d->runs = calloc(d->nruns, sizeof(*d->runs));
	if (!d->runs)
		return tool_error(NAME, "%s", strerror(ENOMEM));
	po.by = PROFILE_BY_FUNCTION;
	/* Per-call samples only serve the single-run test. */
	po.reservoir = d->nbase < 2 || d->nnew < 2 ? d->o.samples : 0;
	for (i = 0; i < d->nruns; i++) {
		po.seed = i + 1;
		rc = profile_new(&d->runs[i], &po);
		if (rc < 0)
			return tool_error(NAME, "%s", strerror(-rc));
		rc = profile_load(d->runs[i], files[i], err, sizeof(err));
		if (rc < 0)
			return tool_error(NAME, "%s: %s", files[i], err);
	}
	return 0;
}

/* Appends the samples of runs [lo, hi) of f to *v. */
static int pool_samples(const struct diff *d, const struct func *f, size_t lo, size_t hi,
			double **v, size_t *n)
{
	size_t i, k, total = 0;

	for (i = lo; i < hi; i++)
		if (f->row[i])
			total += f->row[i]->nsamples;
	*n = 0;
	*v = malloc((total + 1) * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	for (i = lo; i < hi; i++)
		for (k = 0; f->row[i] && k < f->row[i]->nsamples; k++)
			(*v)[(*n)++] = (double)f->row[i]->samples[k];
	(void)d;
	return 0;
}

static int compare_func(struct diff *d, struct func *f)
{
	double *tot, *calls_b = NULL, *calls_n = NULL;
	size_t i, ncb = 0, ncn = 0;
	bool in_base = false, in_new = false;
	int rc;

	tot = malloc(d->nruns * sizeof(*tot));
	if (!tot)
		return -ENOMEM;
	for (i = 0; i < d->nruns; i++) {
		const struct profile_row *r = f->row[i];
		bool base = i < d->nbase;
		double n = d->nbase, m = d->nnew;

		tot[i] = r ? (double)r->total_ns : 0;
		if (r) {
			if (base) {
				in_base = true;
				f->calls_base += (double)r->calls / n;
				f->self_base += (double)r->self_ns / n;
			} else {
				in_new = true;
				f->calls_new += (double)r->calls / m;
				f->self_new += (double)r->self_ns / m;
			}
		}
	}
	f->state = in_base && in_new ? 0 : (in_new ? 1 : -1);
	rc = pool_samples(d, f, 0, d->nbase, &calls_b, &ncb);
	if (rc == 0)
		rc = pool_samples(d, f, d->nbase, d->nruns, &calls_n, &ncn);
	if (rc == 0)
		rc = stats_compare(tot, d->nbase, tot + d->nbase, d->nnew, calls_b, ncb, calls_n,
				   ncn, d->o.alpha, d->o.threshold, &f->cmp);
	free(calls_b);
	free(calls_n);
	free(tot);
	return rc;
}

static int build(struct diff *d)
{
	struct entry *e;
	size_t n = 0, i, j, r;
	int rc = 0;

	for (r = 0; r < d->nruns; r++)
		n += profile_nrows(d->runs[r]);
	e = malloc((n + 1) * sizeof(*e));
	d->f = calloc(n + 1, sizeof(*d->f));
	if (!e || !d->f) {
		free(e);
		return -ENOMEM;
	}
	n = 0;
	for (r = 0; r < d->nruns; r++)
		for (i = 0; i < profile_nrows(d->runs[r]); i++)
			e[n++] = (struct entry){ profile_row(d->runs[r], i), r };
	qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; i < n && rc == 0; i = j) {
		struct func *f = &d->f[d->nf++];

		f->name = e[i].row->name;
		f->category = e[i].row->category;
		f->row = calloc(d->nruns, sizeof(*f->row));
		if (!f->row) {
			rc = -ENOMEM;
			break;
		}
		for (j = i; j < n && strcmp(e[j].row->name, f->name) == 0 &&
			    strcmp(e[j].row->category, f->category) == 0;
		     j++)
			f->row[e[j].run] = e[j].row;
		rc = compare_func(d, f);
	}
	free(e);
	return rc;
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	double dx = fabs(x->cmp.delta), dy = fabs(y->cmp.delta);
	int c;

	if (dx != dy)
		return dx < dy ? 1 : -1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->category, y->category);
}

static const char *verdict(const struct func *f)
{
	if (f->state > 0)
		return "NEW";
	if (f->state < 0)
		return "GONE";
	if (!f->cmp.flagged)
		return "~";
	return f->cmp.delta > 0 ? "SLOWER" : "FASTER";
}

static const char *method_name(enum stats_method m)
{
	switch (m) {
	case STATS_WELCH:
		return "welch";
	case STATS_MANN_WHITNEY:
		return "mann-whitney";
	case STATS_NONE:
		break;
	}
	return "none";
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

/* A line per run that dropped calls, saying which side it is on:
 * "PREFIXbase FILE: N calls dropped: totals are partial". */
static void put_drops(const struct diff *d, FILE *out, const char *prefix)
{
	for (size_t i = 0; i < d->nruns; i++) {
		uint64_t n = profile_dropped(d->runs[i], NULL);

		if (!n)
			continue;
		fprintf(out, "%s%s ", prefix, i < d->nbase ? "base" : "new");
		tool_put_text_str(out, d->files[i]);
		fprintf(out, ": %" PRIu64 " calls dropped: totals are partial\n", n);
	}
}

/* A call count: whole, or a mean of runs that differ, to one decimal. */
static const char *fmt_calls(char *buf, size_t cap, double calls)
{
	snprintf(buf, cap, calls < 1e15 && calls == (double)(uint64_t)calls ? "%.0f" : "%.1f",
		 calls);
	return buf;
}

static void print_text(const struct diff *d, size_t n)
{
	char b[4][32], c[2][32];
	size_t i;

	printf("# %zu base run%s vs %zu new run%s; test: %s; alpha %g; threshold %g%%%s\n",
	       d->nbase, d->nbase > 1 ? "s" : "", d->nnew, d->nnew > 1 ? "s" : "",
	       d->nbase > 1 && d->nnew > 1 ? "Welch's t on per-run totals"
					   : "Mann-Whitney U on per-call durations",
	       d->o.alpha, d->o.threshold,
	       d->nbase > 1 || d->nnew > 1 ? "; calls: mean per run" : "");
	put_drops(d, stdout, "# ");
	printf("%-7s %12s %12s %12s %8s %9s %12s %8s %12s %12s  function\n", "verdict",
	       "total base", "total new", "delta", "delta%", "p", "self delta", "self%",
	       "calls base", "calls new");
	for (i = 0; i < n; i++) {
		const struct func *f = &d->f[i];

		profile_fmt_ns(b[0], sizeof(b[0]), f->cmp.mean_base);
		profile_fmt_ns(b[1], sizeof(b[1]), f->cmp.mean_new);
		profile_fmt_ns(b[2], sizeof(b[2]), f->cmp.delta);
		profile_fmt_ns(b[3], sizeof(b[3]), f->self_new - f->self_base);
		printf("%-7s %12s %12s %12s %+7.1f%% %9.2g %12s %+7.1f%% %12s %12s  ", verdict(f),
		       b[0], b[1], b[2], f->cmp.pct, f->cmp.p, b[3], pct(f->self_base, f->self_new),
		       fmt_calls(c[0], sizeof(c[0]), f->calls_base),
		       fmt_calls(c[1], sizeof(c[1]), f->calls_new));
		tool_put_text_str(stdout, f->name);
		if (f->category[0]) {
			fputs(" (", stdout);
			tool_put_text_str(stdout, f->category);
			putchar(')');
		}
		if (f->cmp.sd_base > 0 || f->cmp.sd_new > 0) {
			profile_fmt_ns(b[0], sizeof(b[0]), f->cmp.sd_base);
			profile_fmt_ns(b[1], sizeof(b[1]), f->cmp.sd_new);
			printf("  [sd %s -> %s]", b[0], b[1]);
		}
		putchar('\n');
	}
}

static void print_csv(const struct diff *d, size_t n)
{
	size_t i;

	puts("verdict,total_base_ns,total_new_ns,delta_ns,delta_pct,sd_base_ns,sd_new_ns,p,"
	     "method,self_base_ns,self_new_ns,self_delta_pct,calls_base,calls_new,category,name");
	for (i = 0; i < n; i++) {
		const struct func *f = &d->f[i];

		printf("%s,%.0f,%.0f,%.0f,%.2f,%.0f,%.0f,%.3g,%s,%.0f,%.0f,%.2f,%.1f,%.1f,",
		       verdict(f), f->cmp.mean_base, f->cmp.mean_new, f->cmp.delta, f->cmp.pct,
		       f->cmp.sd_base, f->cmp.sd_new, f->cmp.p, method_name(f->cmp.method),
		       f->self_base, f->self_new, pct(f->self_base, f->self_new), f->calls_base,
		       f->calls_new);
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

static void print_json(const struct diff *d, size_t n)
{
	size_t i;

	printf("{\"base_runs\":%zu,\"new_runs\":%zu,\"alpha\":%g,\"threshold_pct\":%g,"
	       "\"base_dropped\":%" PRIu64 ",\"new_dropped\":%" PRIu64 ",\"functions\":[",
	       d->nbase, d->nnew, d->o.alpha, d->o.threshold, side_dropped(d, true),
	       side_dropped(d, false));
	for (i = 0; i < n; i++) {
		const struct func *f = &d->f[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
		tool_put_json_str(stdout, f->name);
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, f->category);
		printf(",\"verdict\":\"%s\",\"method\":\"%s\"", verdict(f),
		       method_name(f->cmp.method));
		json_num("total_base_ns", f->cmp.mean_base, 0);
		json_num("total_new_ns", f->cmp.mean_new, 0);
		json_num("delta_ns", f->cmp.delta, 0);
		json_num("delta_pct", f->cmp.pct, 2);
		json_num("sd_base_ns", f->cmp.sd_base, 0);
		json_num("sd_new_ns", f->cmp.sd_new, 0);
		printf(",\"p\":%.3g", f->cmp.p);
		json_num("self_base_ns", f->self_base, 0);
		json_num("self_new_ns", f->self_new, 0);
		json_num("self_delta_pct", pct(f->self_base, f->self_new), 2);
		json_num("calls_base", f->calls_base, 1);
		json_num("calls_new", f->calls_new, 1);
		printf(",\"significant\":%s}", f->cmp.significant ? "true" : "false");
	}
	fputs("\n]}\n", stdout);
}

int main(int argc, char **argv)
{
	struct diff d = { 0 };
	char **files = NULL;
	size_t i, n;
	int status = TOOL_EXIT_ERROR, rc;

	d.o.threshold = 5;
	d.o.alpha = 0.05;
	d.o.samples = 1000;
	if (parse_args(argc, argv, &d, &files))
		return TOOL_EXIT_ERROR;
	d.files = files;
	if (load_runs(&d, files))
		goto out;
	rc = build(&d);
	if (rc < 0) {
		tool_error(NAME, "%s", strerror(-rc));
		goto out;
	}
	qsort(d.f, d.nf, sizeof(*d.f), cmp_func);
	n = d.o.top && d.o.top < d.nf ? d.o.top : d.nf;
	switch (d.o.format) {
	case TOOL_FMT_TEXT:
		print_text(&d, n);
		break;
	case TOOL_FMT_CSV:
		put_drops(&d, stderr, "fxt-diff: "); /* CSV has rows only */
		print_csv(&d, n);
		break;
	case TOOL_FMT_JSON:
		print_json(&d, n);
		break;
	}
	if (tool_flush_stdout(NAME))
		goto out;
	status = TOOL_EXIT_OK;
	/* The gate looks at every function, not only the printed ones. */
	for (i = 0; d.o.fail && i < d.nf; i++) {
		const struct func *f = &d.f[i];
		if (f->state == 0 && f->cmp.flagged && f->cmp.delta > 0 &&
		    f->cmp.pct > d.o.fail_above) {
			fputs("fxt-diff: ", stderr);
			tool_put_text_str(stderr, f->name);
			fprintf(stderr, " is %.1f%% slower (p = %.2g), above %g%%\n", f->cmp.pct,
				f->cmp.p, d.o.fail_above);
			status = TOOL_EXIT_FOUND;
		}
	}
out:
	for (i = 0; i < d.nf; i++)
		free(d.f[i].row);
	free(d.f);
	for (i = 0; d.runs && i < d.nruns; i++)
		profile_free(d.runs[i]);
	free(d.runs);
	return status;
}
