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
 * would be charged to it), and they take turns at going first.  With
 * FORK=1 in the environment each conversion runs in a child process of
 * its own, its memory new as in a run's first conversion; else all run in
 * this process, each on the memory the ones before gave back.  The page
 * faults of each side are printed too: new memory is a good part of a
 * conversion's CPU time, which its instructions do not show.
 *
 * Source lines are kept across runs (FXT_SRCLINE_CACHE, symbolizer/
 * loccache.c): the warm-up conversion keeps them and each conversion with
 * source lines reads them, as a later run does; with FORGET=DIR (the
 * cache's folder) they are removed before each conversion, which decodes
 * them and keeps them again, as a module's first run does; with FILL=1 as
 * well, each is decoded and kept then, untimed, by what fxt-run's early
 * thread does while the program runs (fxt_sym_loccache_fill() on each of
 * the spool's modules, launcher/early.h), whose CPU time is printed apart:
 * a first run under fxt-run whose program ran long enough (not with
 * SRCLINE_BENCH_NO_FILL defined: compiled against a build without it).
 * Each symbol cache decodes the lines in a thread beside the conversion,
 * as fxt-run's does (fxt_symcache_set_ahead()), but with AHEAD=0; its CPU
 * time is the process's, and the wall times are printed too (what a
 * thread shortens when a core is free).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "convert/convert.h"
#include "spool/format.h"
#include "symbolizer/runcache.h"

/* The process's CPU time: what the conversion costs, less what the other
 * processes of a busy machine take from it in wall time. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The calling thread's CPU time: the conversion's own thread, without
 * the one decoding the lines beside it (fxt_symcache_set_ahead()). */
static double thread_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's page faults so far: part of what a conversion's CPU
 * time is, and not of its instructions (new memory for its tables). */
static long faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt + ru.ru_majflt : 0;
}

/* The time since some fixed point: what the conversion costs the one
 * waiting for it, when its threads run beside each other. */
static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* AHEAD=0 in the environment: the conversion decodes the source lines
 * itself, no thread beside it (fxt_symcache_set_ahead(), which fxt-run
 * sets; not with SRCLINE_BENCH_NO_AHEAD: compiled against a build
 * without it). */
static int ahead = 1;

/* CPU seconds one conversion of `spool` took, with `flags`, its wall time
 * in *w, its own thread's CPU time in *tt, its page faults added to *flt;
 * < 0 on error. */
static double convert_here(const char *spool, const char *out, unsigned flags, long *flt, double *w,
			   double *tt)
{
	struct fxt_symcache *c = fxt_symcache_new();
	struct convert_opts o;
	struct convert_result res;
	double t0, w0, tt0;
	int err;

	if (!c)
		return -1;
	fxt_symcache_set_flags(c, flags);
#ifndef SRCLINE_BENCH_NO_AHEAD
	fxt_symcache_set_ahead(c, ahead != 0);
#endif
	memset(&o, 0, sizeof(o));
	o.cache = c;
	*flt -= faults();
	w0 = wall();
	t0 = now();
	tt0 = thread_now();
	err = convert_spool(spool, out, &o, &res);
	*tt = thread_now() - tt0;
	t0 = now() - t0;
	*w = wall() - w0;
	*flt += faults();
	fxt__counts_free(&res.counts);
	fxt_symcache_free(c);
	if (err < 0) {
		fprintf(stderr, "srcline_bench: %s: %s\n", spool, strerror(-err));
		return -1;
	}
	return t0;
}

/* Whether each conversion runs in a process of its own (FORK=1): what a
 * run of fxt-run converts first, its memory new; else all in this one,
 * where the allocator's state (glibc's thresholds move as big blocks are
 * freed) carries from one conversion to the next. */
static int fresh;

/* FORGET=DIR in the environment: the files of DIR (the source lines'
 * cache, FXT_SRCLINE_CACHE) removed before each conversion, untimed: each
 * conversion decodes and keeps its lines as a module's first run does. */
static const char *forget;

static void forget_kept(void)
{
	char path[4096];
	struct dirent *de;
	DIR *d = forget ? opendir(forget) : NULL;

	while (d && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", forget, de->d_name) < (int)sizeof(path))
			unlink(path);
	if (d)
		closedir(d);
}

/* FILL=1: the kept lines made again before each conversion with source
 * lines, as fxt-run's early thread makes them; its CPU time in filled. */
static int fill_ahead;
static double filled;

static int fill_kept(const char *spool)
{
	struct spool_header *h;
	double t0 = now();
	int fd = open(spool, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -1;
	err = convert_read_header(fd, &h);
	close(fd);
	if (err < 0)
		return -1;
#ifdef SRCLINE_BENCH_NO_FILL /* an older BASE=BUILD's */
	err = -1;
	fprintf(stderr, "srcline_bench: FILL: not in the build it was compiled against\n");
#else
	/* A module it cannot open (the vDSO) is one fxt-run leaves too. */
	for (uint32_t i = 0; i < h->nmodules; i++)
		(void)fxt_sym_loccache_fill(h->modules[i].path, NULL);
#endif
	free(h);
	filled += now() - t0;
	return err;
}

/* convert_here(), in a child process when `fresh`, the previous archive
 * removed first, untimed (and with FORGET, the kept lines; with FILL,
 * kept again ahead). */
static double convert_once(const char *spool, const char *out, unsigned flags, long *flt, double *w,
			   double *tt)
{
	struct {
		double t, w, tt;
		long flt;
	} r = { -1, 0, 0, 0 };
	int fd[2], status;
	pid_t pid;

	remove(out);
	forget_kept();
	if (fill_ahead && flags && fill_kept(spool) < 0)
		return -1;
	if (!fresh)
		return convert_here(spool, out, flags, flt, w, tt);
	if (pipe(fd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		r.t = convert_here(spool, out, flags, &r.flt, &r.w, &r.tt);
		_exit(write(fd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	if (read(fd[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r.t = -1;
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		r.t = -1;
	*flt += r.flt;
	*w = r.w;
	*tt = r.tt;
	return r.t;
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
	double *off, *on, *ratio, med_off, med_on, *woff, *won, *wratio, wmed_off, wmed_on, wdummy;
	double *toff, *ton, *tratio, tdummy;
	long flt_off = 0, flt_on = 0, flt_warm = 0;
	char out[4096];

	fresh = getenv("FORK") && atoi(getenv("FORK")) > 0;
	forget = getenv("FORGET");
	fill_ahead = getenv("FILL") && atoi(getenv("FILL")) > 0;
	ahead = !getenv("AHEAD") || atoi(getenv("AHEAD")) > 0;
	if (argc != 3 || rounds < 1) {
		fprintf(stderr, "usage: srcline_bench SPOOL ROUNDS\n");
		return 2;
	}
	snprintf(out, sizeof(out), "%s.bench.fxt", argv[1]);
	off = calloc((size_t)rounds, sizeof(double));
	on = calloc((size_t)rounds, sizeof(double));
	ratio = calloc((size_t)rounds, sizeof(double));
	woff = calloc((size_t)rounds, sizeof(double));
	won = calloc((size_t)rounds, sizeof(double));
	wratio = calloc((size_t)rounds, sizeof(double));
	toff = calloc((size_t)rounds, sizeof(double));
	ton = calloc((size_t)rounds, sizeof(double));
	tratio = calloc((size_t)rounds, sizeof(double));
	if (!off || !on || !ratio || !woff || !won || !wratio || !toff || !ton || !tratio)
		return 1;
	/* Warms the page cache (and keeps the lines, but with FORGET). */
	if (convert_once(argv[1], out, 0, &flt_warm, &wdummy, &tdummy) < 0 ||
	    convert_once(argv[1], out, FXT_SYM_FUNC_LOC, &flt_warm, &wdummy, &tdummy) < 0)
		return 1;
	for (int r = 0; r < rounds; r++) {
		if (r % 2) {
			on[r] =
			    convert_once(argv[1], out, FXT_SYM_FUNC_LOC, &flt_on, &won[r], &ton[r]);
			off[r] = convert_once(argv[1], out, 0, &flt_off, &woff[r], &toff[r]);
		} else {
			off[r] = convert_once(argv[1], out, 0, &flt_off, &woff[r], &toff[r]);
			on[r] =
			    convert_once(argv[1], out, FXT_SYM_FUNC_LOC, &flt_on, &won[r], &ton[r]);
		}
		if (off[r] <= 0 || on[r] <= 0 || woff[r] <= 0 || won[r] <= 0 || toff[r] <= 0 ||
		    ton[r] <= 0)
			return 1;
		ratio[r] = on[r] / off[r];
		wratio[r] = won[r] / woff[r];
		tratio[r] = ton[r] / toff[r];
	}
	med_off = median(off, rounds); /* sorts: the minimum first */
	med_on = median(on, rounds);
	wmed_off = median(woff, rounds);
	wmed_on = median(won, rounds);
	printf("conversion (CPU time, min/median of %d rounds): names only %.1f/%.1f ms, "
	       "with source lines %.1f/%.1f ms, ratio %.3f (median of the rounds')\n",
	       rounds, off[0] * 1e3, med_off * 1e3, on[0] * 1e3, med_on * 1e3,
	       median(ratio, rounds));
	printf("  wall time (min/median): names only %.1f/%.1f ms, with source lines %.1f/%.1f ms, "
	       "ratio %.3f (goal: at most 1.10)\n",
	       woff[0] * 1e3, wmed_off * 1e3, won[0] * 1e3, wmed_on * 1e3, median(wratio, rounds));
	printf("  the conversion's own thread (CPU time, median): names only %.1f ms, "
	       "with source lines %.1f ms, ratio %.3f\n",
	       median(toff, rounds) * 1e3, median(ton, rounds) * 1e3, median(tratio, rounds));
	printf("  page faults a conversion (mean): names only %ld, with source lines %ld\n",
	       flt_off / rounds, flt_on / rounds);
	if (fill_ahead)
		printf("  decoded and kept ahead (fxt-run's early thread, untimed above): "
		       "%.1f ms a conversion (mean)\n",
		       filled * 1e3 / (rounds + 1));
	remove(out);
	free(off);
	free(on);
	free(ratio);
	free(woff);
	free(won);
	free(wratio);
	free(toff);
	free(ton);
	free(tratio);
	return 0;
}
