/* The side-by-side harness of the libc wrapper benches (bench/libc_mem,
 * bench/libc_io).  Not a test.
 *
 * A bench names its loops and times them in a child process; the harness
 * runs that child three times -- without the agent, with the agent and
 * FXT_LIBC=none (the wrappers' cost when their group is off), with the
 * agent recording the bench's groups (archive under TMPDIR, removed) --
 * and prints one row per loop: ns per iteration of each run and what the
 * agent adds over the plain one. */
#ifndef FXT_BENCH_LIBC_SIDE_H
#define FXT_BENCH_LIBC_SIDE_H

#define LIBC_SIDE_ROUNDS    5 /* a loop's time is the best of these */
#define LIBC_SIDE_MAX_LOOPS 8

struct libc_side {
	const char *name;   /* "libc_mem": usage and messages */
	const char *groups; /* FXT_LIBC of the recording run */
	long iterations;    /* default per round */
	unsigned nloops;
	const char *const *loop_names;
	/* In the child: times every loop over `n` iterations and stores ns
	 * per iteration (best of LIBC_SIDE_ROUNDS) in out[0 .. nloops).
	 * Returns 0, or non-zero when a loop could not run. */
	int (*time_loops)(long n, double *out);
};

/* The bench's main(): `self --child N` is the timed child, `self AGENT_SO
 * [ITERATIONS]` the side-by-side run.  Returns the exit status. */
int libc_side_main(int argc, char **argv, const struct libc_side *b);

#endif /* FXT_BENCH_LIBC_SIDE_H */
