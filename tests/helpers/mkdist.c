/* mkdist: an archive of calls whose durations have a known distribution,
 * for the tests of fxt-report --percentiles / --histogram and fxt-diff
 * --metric (report-percentiles.sh).  One thread, calls under "main", as
 * complete events in start order, in a shuffled (seeded) order:
 *
 *  - parse: 10000 calls of 100 ns x i, i = 1 .. 10000: nearest-rank p50
 *    500 us, p90 900 us, p99 990 us, p99.9 999 us, max 1 ms;
 *  - work: 20000 calls, 98% of them (19600) 1000 + (i % 1000) ns, the
 *    other 400 (the tail, 2%) TAIL ns (--tail, default 10000): p50 and
 *    p90 in the body, p99 in the tail;
 *  - tiny: 100 calls of 5 us written, and a summary (fxt.short, as fxt-run
 *    --min-duration writes it) of 900 more calls of 10 .. 900 ns.
 *
 * Usage: mkdist [--tail NS] [--seed N] FILE
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/writer.h>

struct call {
	uint64_t dur;
	const char *name;
};

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(2685821657736338717);
}

static int slice(struct fxt_writer *w, const char *name, uint64_t start, uint64_t end)
{
	struct fxt_event ev = { 0 };

	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.ts = start;
	ev.thread = fxt_writer_thread(w, 1, 1);
	ev.category = fxt_writer_cstring(w, "function");
	ev.name = fxt_writer_cstring(w, name);
	ev.extra = end;
	return fxt_writer_event(w, &ev);
}

/* fxt-run --min-duration's summary of tiny's calls left out. */
static int short_summary(struct fxt_writer *w, uint64_t ts)
{
	static const struct {
		const char *name;
		uint64_t v;
	} u[] = { { FXT_SHORT_ARG_CALLS, 900 },	      { FXT_SHORT_ARG_SUM, 900 * 455 },
		  { FXT_SHORT_ARG_TOTAL, 900 * 455 }, { FXT_SHORT_ARG_SELF, 900 * 455 },
		  { FXT_SHORT_ARG_MIN, 10 },	      { FXT_SHORT_ARG_MAX, 900 } };
	struct fxt_arg a[7];
	struct fxt_event ev = { 0 };

	memset(a, 0, sizeof(a));
	a[0].type = FXT_ARG_STRING;
	a[0].name = fxt_writer_cstring(w, FXT_SHORT_ARG_MODULE);
	a[0].v.str = fxt_writer_cstring(w, "function");
	for (unsigned i = 0; i < 6; i++) {
		a[i + 1].type = FXT_ARG_UINT64;
		a[i + 1].name = fxt_writer_cstring(w, u[i].name);
		a[i + 1].v.u64 = u[i].v;
	}
	ev.type = FXT_EVENT_INSTANT;
	ev.ts = ts;
	ev.thread = fxt_writer_thread(w, 1, 1);
	ev.category = fxt_writer_cstring(w, FXT_SHORT_CATEGORY);
	ev.name = fxt_writer_cstring(w, "tiny");
	ev.args = a;
	ev.nargs = 7;
	return fxt_writer_event(w, &ev);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tail", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t tail = 10000, seed = 1, now = 1000, start;
	size_t n = 0, cap = 10000 + 20000 + 100;
	struct call *calls = calloc(cap, sizeof(*calls));
	struct fxt_writer *w;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 't')
			tail = strtoull(optarg, NULL, 0);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind != argc - 1 || !calls) {
		fputs("usage: mkdist [--tail NS] [--seed N] FILE\n", stderr);
		return 2;
	}
	for (uint64_t i = 1; i <= 10000; i++)
		calls[n++] = (struct call){ 100 * i, "parse" };
	for (uint64_t i = 0; i < 20000; i++)
		calls[n++] = (struct call){ i < 19600 ? 1000 + i % 1000 : tail, "work" };
	for (uint64_t i = 0; i < 100; i++)
		calls[n++] = (struct call){ 5000, "tiny" };
	rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = (size_t)(next() % (i + 1));
		struct call t = calls[i];

		calls[i] = calls[j];
		calls[j] = t;
	}

	rc = fxt_writer_open_path(&w, argv[optind], 0);
	if (rc < 0) {
		fprintf(stderr, "mkdist: %s: cannot write\n", argv[optind]);
		return 1;
	}
	rc = fxt_writer_magic(w);
	if (rc == 0)
		rc = fxt_writer_provider(w, 1, "mkdist");
	if (rc == 0)
		rc = fxt_writer_initialization(w, 1000000000);
	/* main's slice comes first (start order): its end is the sum. */
	start = now;
	for (size_t i = 0; i < n; i++)
		now += 10 + calls[i].dur;
	if (rc == 0)
		rc = slice(w, "main", start, now + 10);
	now = start;
	for (size_t i = 0; i < n && rc == 0; i++) {
		now += 10;
		rc = slice(w, calls[i].name, now, now + calls[i].dur);
		now += calls[i].dur;
	}
	if (rc == 0)
		rc = short_summary(w, now + 10);
	if (rc == 0)
		rc = fxt_writer_close(w);
	else
		fxt_writer_free(w);
	free(calls);
	if (rc < 0) {
		fprintf(stderr, "mkdist: %s: write failed\n", argv[optind]);
		return 1;
	}
	return 0;
}
