/* mkruns: writes one archive of a simulated program of many functions, as
 * one run of it would leave, for testing fxt-diff's statistics against
 * noise (tests/e2e/diff-noise.sh).
 *
 * The program is the same in every run: its shape comes from a fixed
 * seed, not from --seed.  main calls M "phase_NN" functions, each of them
 * r times (r one of 1, 2, 5, 10, 20), and each phase calls its leaves
 * "fn_NNN" q times per call (q from 1 to 100, log-uniform): call counts
 * from 1 to 2000.  Per-call costs are log-uniform, 100 ns to 20 us for a
 * leaf, 0.5 to 5 us of a phase's own, 10 us of main's between phases.
 *
 * What changes between runs, from --seed:
 *   - the machine: every duration of the run is multiplied by one factor,
 *     exp(sd * z) with z standard normal (--machine-noise SD%, default 5);
 *   - each call: its cost is multiplied by exp(sd * z) (--call-noise SD%,
 *     default 20), and a share of the calls (--preempt PCT, default 0.5)
 *     is preempted: times 1 to 6.
 * --slow NAME:PCT makes every call of the function NAME PCT% slower (its
 * own time), --scale PCT makes the whole program PCT% slower.
 *
 *	mkruns [--functions N] [--seed S] [--machine-noise SD] [--call-noise SD]
 *	       [--preempt PCT] [--slow NAME:PCT] [--scale PCT] [--list] -o FILE
 *
 * --list prints each function's name and calls per run instead.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/writer.h>

#define PROGRAM_SEED 0x5eedf00dull

struct fn {
	char name[32];
	int parent;	/* index of the phase, -1 for a phase or main */
	unsigned per;	/* calls per call of the parent */
	double cost;	/* ns of its own per call */
	double slow;	/* factor */
	uint64_t calls; /* per run (for --list) */
	struct fxt_sref ref;
};

struct run {
	struct fxt_writer *w;
	struct fxt_tref thread;
	struct fxt_sref category;
	uint64_t rng;
	double machine, call_sd, scale, preempt;
	double now; /* ns */
	struct fn *fn;
	size_t nfn, nphase;
};

static uint64_t next(uint64_t *s) /* xorshift64* */
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(2685821657736338717);
}

static double uniform(uint64_t *s) /* in (0, 1) */
{
	return ((double)(next(s) >> 11) + 0.5) / (double)(UINT64_C(1) << 53);
}

static double normal(uint64_t *s) /* Box-Muller */
{
	return sqrt(-2 * log(uniform(s))) * cos(2 * M_PI * uniform(s));
}

static double log_uniform(uint64_t *s, double lo, double hi)
{
	return lo * exp(log(hi / lo) * uniform(s));
}

/* A call's own cost, with the run's and the call's noise. */
static double cost(struct run *r, const struct fn *f)
{
	double d = f->cost * f->slow * r->scale * r->machine * exp(r->call_sd * normal(&r->rng));

	if (uniform(&r->rng) < r->preempt)
		d *= 1 + 5 * uniform(&r->rng);
	return d;
}

static int slice(struct run *r, const struct fn *f, double start)
{
	struct fxt_event ev = { 0 };

	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.ts = (uint64_t)start;
	ev.extra = (uint64_t)r->now;
	ev.thread = r->thread;
	ev.category = r->category;
	ev.name = f->ref;
	return fxt_writer_event(r->w, &ev);
}

/* One call of fn[i] (a phase, or a leaf when phase < 0), children first. */
static int call(struct run *r, size_t i)
{
	struct fn *f = &r->fn[i];
	double start = r->now;
	int rc = 0;

	f->calls++;
	r->now += cost(r, f) / 2;
	for (size_t k = 0; k < r->nfn && rc == 0; k++)
		if (r->fn[k].parent == (int)i)
			for (unsigned q = 0; q < r->fn[k].per && rc == 0; q++)
				rc = call(r, k);
	r->now += cost(r, f) / 2;
	return rc ? rc : slice(r, f, start);
}

/* The program's shape: fn[0] is main, 1 .. nphase the phases, then leaves. */
static void shape(struct run *r)
{
	static const unsigned reps[] = { 1, 2, 5, 10, 20 };
	uint64_t s = PROGRAM_SEED;
	size_t i;

	r->nphase = r->nfn / 11 ? r->nfn / 11 : 1;
	snprintf(r->fn[0].name, sizeof(r->fn[0].name), "main");
	r->fn[0].parent = -2;
	r->fn[0].per = 1;
	r->fn[0].cost = 20000;
	for (i = 1; i < r->nfn; i++) {
		struct fn *f = &r->fn[i];

		if (i <= r->nphase) {
			snprintf(f->name, sizeof(f->name), "phase_%02zu", i);
			f->parent = 0;
			f->per = reps[next(&s) % 5];
			f->cost = log_uniform(&s, 500, 5000);
		} else {
			snprintf(f->name, sizeof(f->name), "fn_%03zu", i - r->nphase);
			f->parent = (int)(1 + (i - r->nphase - 1) % r->nphase);
			f->per = (unsigned)log_uniform(&s, 1, 101);
			f->cost = log_uniform(&s, 100, 20000);
		}
	}
	for (i = 0; i < r->nfn; i++)
		r->fn[i].slow = 1;
}

static int usage(void)
{
	fputs(
	    "usage: mkruns [--functions N] [--seed S] [--machine-noise SD] "
	    "[--call-noise SD] [--preempt PCT] [--slow NAME:PCT] [--scale PCT] [--list] -o FILE\n",
	    stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "functions", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "machine-noise", required_argument, NULL, 'm' },
		{ "call-noise", required_argument, NULL, 'c' },
		{ "slow", required_argument, NULL, 'S' },
		{ "scale", required_argument, NULL, 'x' },
		{ "preempt", required_argument, NULL, 'p' },
		{ "list", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { 0 };
	const char *out = NULL, *slow = NULL;
	double machine_sd = 0.05, slow_pct = 0;
	uint64_t seed = 1;
	bool list = false;
	int c, rc;
	size_t i;

	r.nfn = 100;
	r.call_sd = 0.20;
	r.scale = 1;
	r.preempt = 0.005;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			r.nfn = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'm':
			machine_sd = strtod(optarg, NULL) / 100;
			break;
		case 'c':
			r.call_sd = strtod(optarg, NULL) / 100;
			break;
		case 'S':
			slow = optarg;
			break;
		case 'x':
			r.scale = 1 + strtod(optarg, NULL) / 100;
			break;
		case 'p':
			r.preempt = strtod(optarg, NULL) / 100;
			break;
		case 'l':
			list = true;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return usage();
		}
	}
	if ((!out && !list) || r.nfn < 2 || r.nfn > 10000)
		return usage();
	r.fn = calloc(r.nfn, sizeof(*r.fn));
	if (!r.fn)
		return 1;
	shape(&r);
	if (slow) {
		const char *colon = strchr(slow, ':');

		if (!colon)
			return usage();
		slow_pct = strtod(colon + 1, NULL);
		for (i = 0; i < r.nfn; i++)
			if (strlen(r.fn[i].name) == (size_t)(colon - slow) &&
			    memcmp(r.fn[i].name, slow, (size_t)(colon - slow)) == 0)
				break;
		if (i == r.nfn) {
			fprintf(stderr, "mkruns: no function %.*s\n", (int)(colon - slow), slow);
			return 2;
		}
		r.fn[i].slow = 1 + slow_pct / 100;
	}
	r.rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	r.machine = exp(machine_sd * normal(&r.rng));
	r.now = 1000;

	rc = fxt_writer_open_mem(&r.w, 0); /* --list: counted, not kept */
	if (!list) {
		fxt_writer_free(r.w);
		rc = fxt_writer_open_path(&r.w, out, 0);
	}
	if (rc < 0) {
		fprintf(stderr, "mkruns: %s: %s\n", out ? out : "memory", strerror(-rc));
		return 1;
	}
	rc = fxt_writer_magic(r.w);
	rc = rc ? rc : fxt_writer_provider(r.w, 1, "mkruns");
	rc = rc ? rc : fxt_writer_initialization(r.w, 1000000000);
	rc = rc ? rc : fxt_writer_process_name(r.w, 100, "prog");
	rc = rc ? rc : fxt_writer_thread_name(r.w, 100, 101, "prog");
	r.thread = fxt_writer_thread(r.w, 100, 101);
	r.category = fxt_writer_cstring(r.w, "prog");
	for (i = 0; i < r.nfn; i++)
		r.fn[i].ref = fxt_writer_cstring(r.w, r.fn[i].name);
	/* main: its own work between the phases, each phase r times. */
	{
		double start = r.now;
		r.fn[0].calls = 1;
		for (i = 1; i <= r.nphase && rc == 0; i++) {
			r.now += cost(&r, &r.fn[0]) / (double)r.nphase;
			for (unsigned k = 0; k < r.fn[i].per && rc == 0; k++)
				rc = call(&r, i);
		}
		rc = rc ? rc : slice(&r, &r.fn[0], start);
	}
	if (list) {
		fxt_writer_free(r.w);
		for (i = 0; i < r.nfn; i++)
			printf("%s %llu\n", r.fn[i].name, (unsigned long long)r.fn[i].calls);
		free(r.fn);
		return rc ? 1 : 0;
	}
	rc = rc ? rc : fxt_writer_close(r.w);
	if (rc < 0) {
		fprintf(stderr, "mkruns: %s: %s\n", out, strerror(-rc));
		return 1;
	}
	free(r.fn);
	return 0;
}
