/* What source lines cost the conversion (bench/srcline.sh runs it):
 *
 *	bench/srcline_bench SPOOL ROUNDS
 *
 * Converts one sealed spool again and again (convert_spool(), not
 * consumed), each round once with names only and once with each
 * function's source location (symbolizer/runcache.h: the cache's flags),
 * each time with a new cache, as a run of fxt-run starts with, and prints
 * the CPU times (min and median) and the median of the per-round ratios.
 * The two sides do the same work but the locations: each writes a new
 * archive (the previous one removed untimed: truncating the other side's
 * would be charged to it), and they take turns at going first.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convert/convert.h"
#include "symbolizer/runcache.h"

/* The process's CPU time: what the conversion costs, less what the other
 * processes of a busy machine take from it in wall time. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds one conversion of `spool` took, with `flags`; < 0 on error. */
static double convert_once(const char *spool, const char *out, unsigned flags)
{
	struct fxt_symcache *c = fxt_symcache_new();
	struct convert_opts o;
	struct convert_result res;
	double t0;
	int err;

	if (!c)
		return -1;
	fxt_symcache_set_flags(c, flags);
	memset(&o, 0, sizeof(o));
	o.cache = c;
	remove(out);
	t0 = now();
	err = convert_spool(spool, out, &o, &res);
	t0 = now() - t0;
	fxt__counts_free(&res.counts);
	fxt_symcache_free(c);
	if (err < 0) {
		fprintf(stderr, "srcline_bench: %s: %s\n", spool, strerror(-err));
		return -1;
	}
	return t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 0;
	double *off, *on, *ratio, med_off, med_on;
	char out[4096];

	if (argc != 3 || rounds < 1) {
		fprintf(stderr, "usage: srcline_bench SPOOL ROUNDS\n");
		return 2;
	}
	snprintf(out, sizeof(out), "%s.bench.fxt", argv[1]);
	off = calloc((size_t)rounds, sizeof(double));
	on = calloc((size_t)rounds, sizeof(double));
	ratio = calloc((size_t)rounds, sizeof(double));
	if (!off || !on || !ratio)
		return 1;
	if (convert_once(argv[1], out, 0) < 0) /* warms the page cache */
		return 1;
	for (int r = 0; r < rounds; r++) {
		if (r % 2) {
			on[r] = convert_once(argv[1], out, FXT_SYM_FUNC_LOC);
			off[r] = convert_once(argv[1], out, 0);
		} else {
			off[r] = convert_once(argv[1], out, 0);
			on[r] = convert_once(argv[1], out, FXT_SYM_FUNC_LOC);
		}
		if (off[r] <= 0 || on[r] <= 0)
			return 1;
		ratio[r] = on[r] / off[r];
	}
	med_off = median(off, rounds); /* sorts: the minimum first */
	med_on = median(on, rounds);
	printf("conversion (CPU time, min/median of %d rounds): names only %.1f/%.1f ms, "
	       "with source lines %.1f/%.1f ms, ratio %.3f (median of the rounds')\n",
	       rounds, off[0] * 1e3, med_off * 1e3, on[0] * 1e3, med_on * 1e3,
	       median(ratio, rounds));
	remove(out);
	free(off);
	free(on);
	free(ratio);
	return 0;
}
