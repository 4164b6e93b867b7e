/* fxt-diff --metric pNN's tables (text, csv, json): per function each
 * side's percentile, its change, each side's order-statistic interval and
 * calls (diff.h's struct diff_pct).  fxt-diff.c prints the lines above
 * them, as for the total time's table. */
#include "config.h"

#include "tools/profile/diff-pct.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tools/front/common.h"
#include "tools/front/escape.h"

/* --metric pNN: a side's value or an interval's end for text: '-'
 * unbounded, '~' approximate, '<' an upper bound (fxt-report's marks). */
static const char *fmt_pct(char *buf, size_t cap, double ns, enum profile_q_kind kind)
{
	size_t at = 0;

	if (isnan(ns))
		return "-";
	if (kind != PROFILE_Q_EXACT)
		buf[at++] = kind == PROFILE_Q_APPROX ? '~' : '<';
	tool_fmt_ns(buf + at, cap - at, ns);
	return buf;
}

void diff_pct_text(const struct diff *d, const char *metric, size_t n)
{
	char b[7][32], c[2][32], h[2][20];
	size_t i;

	snprintf(h[0], sizeof(h[0]), "%s base", metric);
	snprintf(h[1], sizeof(h[1]), "%s new", metric);
	printf("%-7s %12s %12s %12s %8s %12s %12s %12s %12s %12s %12s  function\n", "verdict", h[0],
	       h[1], "delta", "delta%", "base lo", "base hi", "new lo", "new hi", "calls base",
	       "calls new");
	for (i = 0; i < n; i++) {
		const struct diff_func *f = &d->f[i];
		const struct diff_pct *pb = &f->pct[0], *pn = &f->pct[1];

		snprintf(c[0], sizeof(c[0]), "%" PRIu64, pb->calls);
		snprintf(c[1], sizeof(c[1]), "%" PRIu64, pn->calls);
		tool_fmt_ns(b[2], sizeof(b[2]), f->cmp.delta);
		printf("%-7s %12s %12s %12s %+7.1f%% %12s %12s %12s %12s %12s %12s  ",
		       diff_verdict(f), fmt_pct(b[0], sizeof(b[0]), pb->ns, pb->kind),
		       fmt_pct(b[1], sizeof(b[1]), pn->ns, pn->kind), b[2], f->cmp.pct,
		       fmt_pct(b[3], sizeof(b[3]), pb->lo, pb->kind),
		       fmt_pct(b[4], sizeof(b[4]), pb->hi, pb->kind),
		       fmt_pct(b[5], sizeof(b[5]), pn->lo, pn->kind),
		       fmt_pct(b[6], sizeof(b[6]), pn->hi, pn->kind), c[0], c[1]);
		tool_put_text_str(stdout, f->name);
		if (f->category[0]) {
			fputs(" (", stdout);
			tool_put_text_str(stdout, f->category);
			putchar(')');
		}
		putchar('\n');
	}
}

/* A number of ns for csv: empty when unknown. */
static void csv_ns(double v)
{
	if (!isnan(v))
		printf("%.0f", v);
	putchar(',');
}

void diff_pct_csv(const struct diff *d, const char *metric, size_t n)
{

	printf("verdict,metric,base_ns,new_ns,delta_ns,delta_pct,base_lo_ns,base_hi_ns,new_lo_ns,"
	       "new_hi_ns,base_kind,new_kind,method,calls_base,calls_new,category,name\n");
	for (size_t i = 0; i < n; i++) {
		const struct diff_func *f = &d->f[i];
		const struct diff_pct *pb = &f->pct[0], *pn = &f->pct[1];
		static const char kinds[] = "eab";

		printf("%s,%s,", diff_verdict(f), metric);
		csv_ns(pb->ns);
		csv_ns(pn->ns);
		printf("%.0f,%.2f,", f->cmp.delta, f->cmp.pct);
		csv_ns(pb->lo);
		csv_ns(pb->hi);
		csv_ns(pn->lo);
		csv_ns(pn->hi);
		printf("%c,%c,%s,%" PRIu64 ",%" PRIu64 ",", kinds[pb->kind], kinds[pn->kind],
		       stats_method_name(f->cmp.method), pb->calls, pn->calls);
		tool_put_csv_str(stdout, f->category);
		putchar(',');
		tool_put_csv_str(stdout, f->name);
		putchar('\n');
	}
}

/* ",\"KEY\":V" of ns, null when unknown (json has no NaN). */
static void json_ns(const char *side, const char *key, double v)
{
	printf(",\"%s%s\":", side, key);
	if (isnan(v))
		fputs("null", stdout);
	else
		printf("%.0f", v);
}

void diff_pct_json(const struct diff_func *f)
{
	static const char *const kinds[] = { "exact", "approx", "bound" };

	for (int s = 0; s < 2; s++) {
		const struct diff_pct *q = &f->pct[s];
		const char *side = s ? "new" : "base";

		json_ns(side, "_ns", q->ns);
		json_ns(side, "_lo_ns", q->lo);
		json_ns(side, "_hi_ns", q->hi);
		printf(",\"%s_kind\":\"%s\",\"calls_%s\":%" PRIu64, side, kinds[q->kind], side,
		       q->calls);
	}
	printf(",\"delta_ns\":%.0f,\"delta_pct\":", f->cmp.delta);
	if (isfinite(f->cmp.pct))
		printf("%.2f", f->cmp.pct);
	else
		fputs("null", stdout);
	printf(",\"significant\":%s}", f->cmp.significant ? "true" : "false");
}
