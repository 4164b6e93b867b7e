/* The comparison behind fxt-diff: the functions of two sets of runs (the
 * profiles of their archives), each judged with statistics that hold
 * under a noisy machine.  tools/profile/fxt-diff.c reads the archives and
 * prints.
 *
 * What every function of a run shares (the machine's speed during it) is
 * told apart from what one function does.  Each run gets a factor: the
 * weighted median, over the functions measured in every run (at least
 * DIFF_MIN_GAUGES of them), of how much slower their self time was in
 * that run (stats_run_factors(); weights grow as the square root of the
 * calls, to 10^4, as a function's precision does).  Per function, the
 * runs' inclusive times are divided by their run's factor before the
 * test, so a busy run does not make every function of it look slower,
 * and the change reported beside the raw one ("adj%") is beyond the whole
 * run's.
 * The shift between the sides' factors is the whole run's change, on a
 * line of its own; with >= 2 runs a side it is tested (Welch's t on the
 * runs' factors), with one run a side a busy machine and a slower
 * program cannot be told apart, and it is not.
 *
 * The test per function is on the log of its adjusted per-run totals,
 * against a noise model fitted over all functions (stats_family_fit()):
 * a run's total varies by what its calls give (their spread within the
 * run, known exactly: profile_row_var()) plus what a run adds to every
 * function beyond the machine's factor, fitted over the functions: with
 * repeated runs from their variance between the runs of a side (and each
 * function's own variance counts as far as the functions follow the
 * model: Smyth's moderated t); with one run a side from how much the
 * functions differ between the two runs, most of them being unchanged.
 * So three runs a side have the power of many, and one run a side does
 * not take every run-to-run difference of a function for a change.  A
 * function missing from some runs of a side gets Welch's t-test on its
 * adjusted totals (zero where missing).  The p-values of all functions
 * are one family: a change is significant when its Benjamini-Hochberg
 * q-value is below --alpha, and flagged when it is also at least
 * --threshold percent.
 *
 * --metric pNN compares a percentile of the calls' inclusive times
 * instead (struct diff_pct): each side's calls pooled over its runs, the
 * nearest-rank percentile and its order-statistic interval at confidence
 * 1 - alpha; a change is significant when the two intervals do not
 * overlap (under no change, two 95% intervals miss each other about 0.6%
 * of the time), and flagged when also at least --threshold percent.  The
 * runs' factors are neither measured nor applied (whole.g all 0).
 *
 * Only calls are compared: the rows of stack samples (profile_row.sampled)
 * are estimates of CPU time whose "calls" are frames of a stack chart, and
 * are left out.
 */
#ifndef FXT_TOOLS_DIFF_H
#define FXT_TOOLS_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/profile/profile.h"
#include "tools/profile/stats.h"

/* --metric pNN: a side's percentile of a function, over the calls of its
 * runs pooled (nearest rank), and its order-statistic interval
 * (stats_rank_interval()) at confidence 1 - alpha. */
struct diff_pct {
	double ns;
	double lo, hi; /* NAN: unbounded (too few calls for that side) */
	uint64_t calls;
	enum profile_q_kind kind; /* of ns; the interval's ends are alike */
};

/* One function's rows in every run (NULL where absent). */
struct diff_func {
	const char *category, *name;
	const struct profile_row **row; /* [nruns] */
	struct stats_cmp cmp;		/* of the adjusted totals */
	struct stats_fn fn;		/* the family's view of it (STATS_MODERATED) */
	double total_base, total_new;	/* means of the raw totals */
	double calls_base, calls_new, self_base, self_new;
	int state;		/* 0 both sides, 1 new only, -1 base only */
	struct diff_pct pct[2]; /* --metric pNN: base, new */
};

/* The functions a run factor needs at least: with fewer, the median of
 * their noise adds more to each function than the machine's factor takes
 * away, and one function's own change can be taken for the machine's
 * (examples/hotspot has 4). */
#define DIFF_MIN_GAUGES 10

/* The whole run: what the functions of a side's runs share. */
struct diff_whole {
	size_t gauges; /* functions measured in every run */
	double *g;     /* [nruns] log factors, the base side's mean 0 */
	double shift;  /* log: the new side's mean */
	double pct;    /* 100 (e^shift - 1) */
	bool tested;   /* >= 2 runs a side and enough gauges */
	double p;      /* Welch's t on the sides' factors (1 untested) */
	bool flagged;  /* tested, p < alpha and |pct| >= threshold */
};

/* A comparison: the caller fills the first part, diff_build() the rest. */
struct diff {
	struct profile **runs; /* [nruns]: the base runs, then the new ones */
	size_t nbase, nnew, nruns;
	double alpha;	  /* the false discovery rate */
	double threshold; /* percent: smaller changes are never flagged */
	/* The metric compared: 0, the total time (the runs' factors, the
	 * family's test, above); else a percentile of the per-call times in
	 * parts per million (the runs loaded with percentiles: true), whose
	 * change is significant when the sides' intervals are apart (cmp.p
	 * and q are then 1 and 0 or 1), and 1000000 the max, never tested. */
	uint32_t ppm;

	struct diff_func *f; /* the functions, largest adjusted change first */
	size_t nf;
	size_t ntested; /* functions with a test: the family of q-values */
	struct diff_whole whole;
	struct stats_family fam; /* its noise model */
};

/* Judges every function of the runs (see the top of this file).  Returns
 * 0 or -ENOMEM. */
int diff_build(struct diff *d);

/* A function's verdict: NEW, GONE, SLOWER, FASTER (flagged) or ~. */
const char *diff_verdict(const struct diff_func *f);

/* Frees what diff_build() made (not the runs). */
void diff_free(struct diff *d);

#endif /* FXT_TOOLS_DIFF_H */
