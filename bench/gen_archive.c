/* gen_archive: writes a synthetic FXT archive of a simulated program, for
 * benchmarking fxt-report and for the end-to-end tests of fxt-diff.
 *
 * Each thread runs "main" (a begin/end pair around everything) calling, in
 * a loop, hot() (a leaf), cold() -> leaf(), and every fourth time rec(), which
 * recurses three deep.  Durations are base values scaled by a per-run
 * factor (--run-noise) and a per-call factor (--noise), both uniform, from a
 * seeded generator, so runs are reproducible.  --slow PCT makes hot() PCT%
 * slower.  Complete events are written in end order (as an exit-time
 * flusher does) or, with --order start, parents first.  Timestamps are in
 * ns unless --ticks-per-second asks for another clock (e.g. a TSC's), which
 * readers then have to convert.  --waits N adds, every N-th iteration, a
 * pthread_mutex_lock slice (category libc.sync, waited) holding the end of
 * a flow begun by the next pthread_mutex_unlock slice of the thread before
 * it (the same iteration, cyclically): fxt-waits' input.  --late-begins
 * writes each thread's begin of main after its other events, as
 * magic-trace writes the begins of the frames open at its start at the end
 * of its file: readers in time order give it first (fxt/order.c).
 * --time-ordered writes fxtrace's mark that each thread's events are in
 * time order (as fxt-run does: readers then skip their pass that looks
 * for late events); without it the archive is taken for a foreign one.
 * --deep N makes each thread one recursion N frames deep instead of the
 * loop (rec() in rec(), every other one calling hot() before going down,
 * every third leaf() after coming back): fxt-tree's deep case, written in
 * start or end order, or with --order pairs as begin and end events.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/writer.h>

struct gen {
	struct fxt_writer *w;
	uint64_t rng;
	double noise, run_factor, slow;
	bool start_order;
	bool pairs;   /* --order pairs (--deep only): begin and end events */
	uint64_t now; /* ns of the current thread */
	uint64_t tps; /* ticks per second written */
	uint64_t pid, tid;
	uint64_t events, limit;
	uint64_t waits_every, nthreads, tidx; /* --waits; the thread's index */
	struct fxt_string_slot slots[8];
	struct fxt_string_slot extra[4]; /* --waits: libc.sync, flow, caller, waited */
	/* Start order: the slices of one loop iteration, written sorted. */
	struct slice {
		uint64_t start, end;
		unsigned name;
	} pend[16];
	unsigned npend;
};

static const char *const names[] = { "main",
				     "hot",
				     "cold",
				     "leaf",
				     "rec",
				     "function",
				     "pthread_mutex_lock",
				     "pthread_mutex_unlock" };
enum { N_MAIN, N_HOT, N_COLD, N_LEAF, N_REC, N_CATEGORY, N_LOCK, N_UNLOCK };

static double uniform(struct gen *g) /* in [-1, 1) */
{
	uint64_t x = g->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g->rng = x;
	return (double)((x * UINT64_C(2685821657736338717)) >> 11) / (double)(UINT64_C(1) << 52) -
	       1.0;
}

static uint64_t cost(struct gen *g, double base)
{
	double v = base * g->run_factor * (1 + g->noise * uniform(g));
	return v < 1 ? 1 : (uint64_t)v;
}

static struct fxt_sref sref(struct gen *g, unsigned n)
{
	return fxt_writer_string_cached(g->w, &g->slots[n], names[n], strlen(names[n]));
}

static uint64_t to_ticks(const struct gen *g, uint64_t ns)
{
	if (g->tps == 1000000000)
		return ns;
	return (uint64_t)((unsigned __int128)ns * g->tps / 1000000000);
}

static int write_event(struct gen *g, enum fxt_event_type type, uint64_t ts, uint64_t end,
		       unsigned name)
{
	struct fxt_event ev = { 0 };

	ev.type = type;
	ev.ts = to_ticks(g, ts);
	ev.thread = fxt_writer_thread(g->w, g->pid, g->tid);
	ev.category = sref(g, N_CATEGORY);
	ev.name = sref(g, name);
	ev.extra = type == FXT_EVENT_DURATION_COMPLETE ? to_ticks(g, end) : end;
	g->events++;
	return fxt_writer_event(g->w, &ev);
}

static int slice(struct gen *g, uint64_t start, unsigned name)
{
	if (!g->start_order)
		return write_event(g, FXT_EVENT_DURATION_COMPLETE, start, g->now, name);
	g->pend[g->npend++] = (struct slice){ start, g->now, name };
	return 0;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

static int flush_pending(struct gen *g)
{
	unsigned i;
	int rc = 0;

	qsort(g->pend, g->npend, sizeof(g->pend[0]), cmp_slice);
	for (i = 0; i < g->npend && rc == 0; i++)
		rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, g->pend[i].start, g->pend[i].end,
				 g->pend[i].name);
	g->npend = 0;
	return rc;
}

static int rec(struct gen *g, int depth)
{
	uint64_t start = g->now;
	int rc;

	g->now += cost(g, 300);
	if (depth > 1) {
		rc = rec(g, depth - 1);
		if (rc < 0)
			return rc;
	}
	g->now += cost(g, 200);
	return slice(g, start, N_REC);
}

/* --waits: a lock that waited, ended by the flow of thread tidx - 1's
 * unlock in the same iteration, then this thread's unlock, which lets the
 * next thread's lock through.  Written after the iteration's slices (they
 * start later than all of them). */
static int lock_pair(struct gen *g, unsigned i)
{
	struct fxt_arg args[2];
	struct fxt_event ev = { 0 };
	uint64_t start = g->now, id_in, id_out;
	int rc;

	memset(args, 0, sizeof(args));
	args[0].type = FXT_ARG_STRING;
	args[0].name = fxt_writer_string_cached(g->w, &g->extra[2], "caller", 6);
	args[0].v.str = sref(g, N_COLD);
	args[1].type = FXT_ARG_BOOL;
	args[1].name = fxt_writer_string_cached(g->w, &g->extra[3], "waited", 6);
	args[1].v.b = true;
	id_in = (uint64_t)i << 20 | g->tidx;
	id_out = (uint64_t)i << 20 | ((g->tidx + 1) % g->nthreads);
	g->now += cost(g, 2000);
	ev.thread = fxt_writer_thread(g->w, g->pid, g->tid);
	ev.category = fxt_writer_string_cached(g->w, &g->extra[0], "libc.sync", 9);
	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.name = sref(g, N_LOCK);
	ev.ts = to_ticks(g, start);
	ev.extra = to_ticks(g, g->now);
	ev.args = args;
	ev.nargs = 2;
	if ((rc = fxt_writer_event(g->w, &ev)) < 0)
		return rc;
	ev.type = FXT_EVENT_FLOW_END;
	ev.ts = to_ticks(g, g->now - 1);
	ev.extra = id_in;
	ev.args = NULL;
	ev.nargs = 0;
	ev.category = fxt_writer_string_cached(g->w, &g->extra[1], "flow", 4);
	if ((rc = fxt_writer_event(g->w, &ev)) < 0)
		return rc;
	start = g->now;
	g->now += 20;
	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.category = fxt_writer_string_cached(g->w, &g->extra[0], "libc.sync", 9);
	ev.name = sref(g, N_UNLOCK);
	ev.ts = to_ticks(g, start);
	ev.extra = to_ticks(g, g->now);
	ev.args = args;
	ev.nargs = 1;
	if ((rc = fxt_writer_event(g->w, &ev)) < 0)
		return rc;
	ev.type = FXT_EVENT_FLOW_BEGIN;
	ev.ts = to_ticks(g, start + 1);
	ev.extra = id_out;
	ev.args = NULL;
	ev.nargs = 0;
	ev.category = fxt_writer_string_cached(g->w, &g->extra[1], "flow", 4);
	g->events += 4;
	return fxt_writer_event(g->w, &ev);
}

static int iteration(struct gen *g, unsigned i)
{
	uint64_t start;
	int rc;

	g->now += cost(g, 100); /* main's own work */
	start = g->now;
	g->now += cost(g, 1000 * (1 + g->slow / 100));
	if ((rc = slice(g, start, N_HOT)) < 0)
		return rc;

	g->now += cost(g, 50);
	start = g->now;
	g->now += cost(g, 400);
	{
		uint64_t leaf = g->now;
		g->now += cost(g, 800);
		if ((rc = slice(g, leaf, N_LEAF)) < 0)
			return rc;
	}
	g->now += cost(g, 400);
	if ((rc = slice(g, start, N_COLD)) < 0)
		return rc;

	if (i % 4 == 3 && (rc = rec(g, 3)) < 0)
		return rc;
	if (g->start_order && (rc = flush_pending(g)) < 0)
		return rc;
	if (g->waits_every && i % g->waits_every == 0)
		return lock_pair(g, i);
	return 0;
}

/* --deep: one recursion of n frames of rec() on the thread, its times
 * computed first (each frame's start and end, its hot() and leaf()
 * calls'), then written in the order asked for. */
static int deep(struct gen *g, size_t n)
{
	uint64_t *t = calloc(n * 6, sizeof(*t));
	uint64_t *rs = t, *re = t + n, *hs = t + 2 * n, *he = t + 3 * n, *ls = t + 4 * n,
		 *le = t + 5 * n;
	int rc = 0;

	if (!t)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		rs[k] = g->now;
		g->now += cost(g, 300);
		if (k % 2 == 0) {
			hs[k] = g->now;
			g->now += cost(g, 1000);
			he[k] = g->now;
			g->now += 20;
		}
	}
	g->now += cost(g, 500);
	for (size_t k = n; k-- > 0;) {
		g->now += cost(g, 200);
		if (k % 3 == 0) {
			ls[k] = g->now;
			g->now += cost(g, 800);
			le[k] = g->now;
		}
		re[k] = g->now;
	}
	if (g->pairs) {
		for (size_t k = 0; k < n && rc == 0; k++) {
			rc = write_event(g, FXT_EVENT_DURATION_BEGIN, rs[k], 0, N_REC);
			if (rc == 0 && k % 2 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_BEGIN, hs[k], 0, N_HOT);
			if (rc == 0 && k % 2 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_END, he[k], 0, N_HOT);
		}
		for (size_t k = n; rc == 0 && k-- > 0;) {
			if (k % 3 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_BEGIN, ls[k], 0, N_LEAF);
			if (rc == 0 && k % 3 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_END, le[k], 0, N_LEAF);
			if (rc == 0)
				rc = write_event(g, FXT_EVENT_DURATION_END, re[k], 0, N_REC);
		}
	} else if (g->start_order) {
		for (size_t k = 0; k < n && rc == 0; k++) {
			rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, rs[k], re[k], N_REC);
			if (rc == 0 && k % 2 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, hs[k], he[k],
						 N_HOT);
		}
		for (size_t k = n; rc == 0 && k-- > 0;)
			if (k % 3 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, ls[k], le[k],
						 N_LEAF);
	} else {
		for (size_t k = 0; k < n && rc == 0; k += 2)
			rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, hs[k], he[k], N_HOT);
		for (size_t k = n; rc == 0 && k-- > 0;) {
			if (k % 3 == 0)
				rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, ls[k], le[k],
						 N_LEAF);
			if (rc == 0)
				rc = write_event(g, FXT_EVENT_DURATION_COMPLETE, rs[k], re[k],
						 N_REC);
		}
	}
	free(t);
	return rc;
}

static void usage(FILE *f)
{
	fputs("Usage: gen_archive [OPTION]... -o FILE\n"
	      "  --events N       about N events in all (default 1000000)\n"
	      "  --threads N      threads per process (default 1)\n"
	      "  --processes N    processes, one provider each (default 1)\n"
	      "  --seed N         generator seed (default 1)\n"
	      "  --slow PCT       make hot() PCT% slower (default 0)\n"
	      "  --noise PCT      per-call noise, uniform +-PCT% (default 10)\n"
	      "  --run-noise PCT  per-run noise, uniform +-PCT% (default 2)\n"
	      "  --order end|start  order of complete events (default end); with\n"
	      "                   --deep also pairs: begin and end events\n"
	      "  --deep N         each thread one recursion N frames deep instead of\n"
	      "                   the loop (--events is then not used)\n"
	      "  --ticks-per-second N  clock of the timestamps (default 1000000000)\n"
	      "  --no-end         leave main open (no end event)\n"
	      "  --late-begins    write main's begin after the thread's other events\n"
	      "  --time-ordered   mark the archive in time order, as fxt-run does\n"
	      "  --waits N        every N-th iteration, a lock that waited for the\n"
	      "                   previous thread's unlock (a flow; default 0: none)\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "threads", required_argument, NULL, 't' },
		{ "processes", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "slow", required_argument, NULL, 'S' },
		{ "noise", required_argument, NULL, 'n' },
		{ "run-noise", required_argument, NULL, 'r' },
		{ "order", required_argument, NULL, 'O' },
		{ "no-end", no_argument, NULL, 'E' },
		{ "late-begins", no_argument, NULL, 'L' },
		{ "time-ordered", no_argument, NULL, 'M' },
		{ "ticks-per-second", required_argument, NULL, 'T' },
		{ "waits", required_argument, NULL, 'W' },
		{ "deep", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen g = { 0 };
	const char *out = NULL;
	uint64_t per_thread, nthreads = 1, nprocs = 1, seed = 1, depth = 0;
	double run_noise = 2;
	bool no_end = false, late_begins = false, marked = false;
	int c, rc;

	g.limit = 1000000;
	g.tps = 1000000000;
	g.noise = 0.10;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			g.limit = strtoull(optarg, NULL, 0);
			break;
		case 't':
			nthreads = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			nprocs = strtoull(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			g.slow = strtod(optarg, NULL);
			break;
		case 'n':
			g.noise = strtod(optarg, NULL) / 100;
			break;
		case 'r':
			run_noise = strtod(optarg, NULL);
			break;
		case 'O':
			g.start_order = strcmp(optarg, "start") == 0;
			g.pairs = strcmp(optarg, "pairs") == 0;
			break;
		case 'E':
			no_end = true;
			break;
		case 'L':
			late_begins = true;
			break;
		case 'M':
			marked = true;
			break;
		case 'T':
			g.tps = strtoull(optarg, NULL, 0);
			if (!g.tps) {
				usage(stderr);
				return 2;
			}
			break;
		case 'W':
			g.waits_every = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			depth = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out || !nthreads || !nprocs || (g.pairs && !depth)) {
		usage(stderr);
		return 2;
	}
	g.rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	g.run_factor = 1 + run_noise / 100 * uniform(&g);
	per_thread = g.limit / (nthreads * nprocs);

	rc = fxt_writer_open_path(&g.w, out, 0);
	if (rc < 0) {
		fprintf(stderr, "gen_archive: %s: %s\n", out, strerror(-rc));
		return 1;
	}
	rc = fxt_writer_magic(g.w);
	if (rc == 0 && marked && !late_begins)
		rc = fxt_writer_time_ordered(g.w);
	for (uint64_t p = 0; p < nprocs && rc == 0; p++) {
		g.pid = 1000 + p;
		rc = fxt_writer_provider(g.w, (uint32_t)g.pid, "gen_archive");
		if (rc == 0)
			rc = fxt_writer_initialization(g.w, g.tps);
		memset(g.slots, 0, sizeof(g.slots));
		for (uint64_t t = 0; t < nthreads && rc == 0; t++) {
			uint64_t stop = g.events + per_thread;
			g.tid = g.pid * 100 + t;
			g.tidx = t;
			g.nthreads = nthreads;
			g.now = 1000;
			if (!late_begins)
				rc = write_event(&g, FXT_EVENT_DURATION_BEGIN, g.now, 0, N_MAIN);
			if (depth)
				rc = deep(&g, depth);
			for (unsigned i = 0; rc == 0 && !depth && g.events + 2 < stop; i++)
				rc = iteration(&g, i);
			g.now += 10;
			if (rc == 0 && !no_end)
				rc = write_event(&g, FXT_EVENT_DURATION_END, g.now, 0, N_MAIN);
			if (rc == 0 && late_begins)
				rc = write_event(&g, FXT_EVENT_DURATION_BEGIN, 1000, 0, N_MAIN);
		}
	}
	if (rc < 0) {
		fprintf(stderr, "gen_archive: %s: %s\n", out, strerror(-rc));
		fxt_writer_free(g.w);
		return 1;
	}
	rc = fxt_writer_close(g.w);
	if (rc < 0) {
		fprintf(stderr, "gen_archive: %s: %s\n", out, strerror(-rc));
		return 1;
	}
	return 0;
}
