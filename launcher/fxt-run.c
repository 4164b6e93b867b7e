/* fxt-run: runs a program with the fxtrace agent preloaded and reports
 * the archive it wrote.
 *
 *	fxt-run [options] [--] PROGRAM [ARGS...]
 *
 * It is a small trace manager in the manner of a shell: it finds the agent,
 * passes the options to it through FXT_* environment variables (the agent
 * reads them, see run/settings.def), prepends the agent to LD_PRELOAD, runs
 * the program with the terminal untouched, and exits with the program's
 * status (128 + signal if it was killed).  Programs the agent cannot enter
 * (static, set-user-ID) run with a warning.
 *
 * Every traced process records into a spool of its own and seals it at
 * exit (spool/format.h); fxt-run converts each spool into that process's
 * archive (convert/convert.h) as soon as the process is done -- sealed,
 * or gone whatever killed it -- while the program runs, with one symbol
 * cache for the whole run (symbolizer/runcache.h): the root's archive is
 * OUT, the others' OUT.PID.fxt.  A process that converted its own (fxt-run
 * was closing) reports it on FXT_STATUS_FD, or is found in the output
 * directory.  Then fxt-run leaves one archive: it merges them all into OUT
 * (convert/merge.h), the root's first, the others by pid, removes the
 * parts, and prints one summary line that counts them.  A process still
 * running then (a daemon) is not waited for: it converts its own spool at
 * its exit.  --keep-parts leaves the per-process archives, one summary
 * line each.  fxt-run --recover makes the archive of a run whose fxt-run was
 * killed, later: of the spools and the archives the run left (recover.c).
 *
 * Its files, one job each, are listed in launcher/launcher.h.
 *
 * Errors follow the shell: a program that cannot be found exits 127, one
 * that cannot be executed 126; fxt-run's own errors (options, agent, output
 * path) exit 2, before anything runs.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fxt/writer.h>

#include "launcher/drain.h"
#include "launcher/early.h"
#include "launcher/launcher.h"
#include "run/settings.h"
#include "run/names.h"
#include "run/control.h"
#include "run/session.h"

/* ------------------------------------------------- how fxt-run speaks */

void die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("fxt-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

const char *display_name(const char *path)
{
	static char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return path;
	size_t n = strlen(cwd);
	if (strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}


/* ---------------------------------------------------------------- main */

/* --snapshot-if: the snapshots of an earlier run of the same name go
 * with -f; without, they stop the run, as an existing archive does. */
void clear_snapshots(const char *out, bool force)
{
	char *dir = strdup(out);
	struct dirent *de;
	unsigned n;
	DIR *d;

	if (dir == NULL)
		die(EXIT_USAGE, "out of memory");
	*strrchr(dir, '/') = '\0'; /* out is absolute */
	d = opendir(dir[0] != '\0' ? dir : "/");
	while (d != NULL && (de = readdir(d)) != NULL) {
		char path[PATH_MAX + 300];

		if (!run_snapshot_parse(out, de->d_name, &n))
			continue;
		if (!force)
			die(EXIT_USAGE,
			    "%s exists (an earlier run's snapshot); use -f to remove it or -o to "
			    "choose another name",
			    de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0 && errno != ENOENT)
			die(EXIT_USAGE, "cannot remove %s: %s", path, strerror(errno));
	}
	if (d != NULL)
		closedir(d);
	free(dir);
}

/* A run, step by step: options, setup, the program, its archives, the
 * summary, cleaning up. */
int main(int argc, char **argv)
{
	struct options o;

	options_parse(argc, argv, &o);
	summary_mode((enum fxt_mode)o.set.v[FXT_S_MODE].u);
	if (o.set.given[FXT_S_KERNEL] && o.recover)
		die(EXIT_USAGE, "--kernel: not with --recover (the kernel's events are gone)");
	if (o.recover) {
		int rc = recover_main(&o);
		options_free(&o);
		return rc;
	}
	if (o.set.given[FXT_S_PID]) {
		int rc = attach_main(&o);
		options_free(&o);
		return rc;
	}
	char *agent = find_agent();
	char *program = find_program(o.argv[0]);
	time_t start = time(NULL);

	int status_fd = -1;
	if (!o.quiet) {
		status_fd = status_open();
		if (status_fd < 0)
			die(EXIT_USAGE, "cannot create a status file: %s", strerror(-status_fd));
	}
	if (!o.set.given[FXT_S_PATCH] && args_wanted(&o))
		args_check_launch(&o, program);
	if (o.set.given[FXT_S_PATCH] || args_wanted(&o))
		o.patch_dir = patch_report_dir();
	if (args_wanted(&o))
		args_plan_launch(&o, program, o.patch_dir);
	setup_env(&o, agent, status_fd);
	/* The program's process first: the archive's name may hold its pid.
	 * It runs once everything named after the archive is made. */
	struct launch launch;
	launch_start(&launch, program, o.argv);
	pid_t root = launch.pid;
	/* Before the program runs: without the permission to trace, it does
	 * not.  After the fork: the instance's files that kernel_open()'s
	 * thread has open would be the waiting child's too, and the instance
	 * could not be removed on SIGTERM. */
	if (o.set.given[FXT_S_KERNEL])
		kernel_open(o.set.v[FXT_S_KERNEL].s);
	char host[256];
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	const char *base = strrchr(o.argv[0], '/');
	struct run_template_values tv = { (long)root, (long long)start,
					  base != NULL ? base + 1 : o.argv[0], host };
	char *out = output_path(&o, &tv);

	/* With --force the old archive goes first, so that a run that writes
	 * nothing is not reported with the old one's numbers. */
	if (o.force && unlink(out) != 0 && errno != ENOENT)
		die(EXIT_USAGE, "cannot remove %s: %s", display_name(out), strerror(errno));

	if (o.set.given[FXT_S_SNAPSHOT_IF])
		clear_snapshots(out, o.force);

	char ctl[PATH_MAX + 64];
	run_ctl_path(ctl, sizeof(ctl), out, (long)getpid());
	int cerr = run_ctl_set(ctl, RUN_CTL_OPEN);
	if (cerr != 0)
		die(EXIT_USAGE, "cannot create %s: %s", display_name(ctl), strerror(-cerr));

	if (!o.quiet)
		warn_untraceable(program, o.argv[0]);

	struct parts parts = { 0 };
	struct spools r;
	if (spools_init(&r, &parts, out, 0, start, o.quiet) != 0)
		die(EXIT_USAGE, "out of memory");
	r.srcline = o.srcline;
	struct name_list old_parts;
	parts_list_old(&old_parts, out, r.dir);
	/* The drain thread spares busy threads the copies of their chunks;
	 * the run does without it if it cannot start. */
	struct drain drain;
	int derr = drain_start(&drain, out, ctl);
	/* The early converter converts full chunks while the program runs,
	 * on a core it leaves idle. */
	struct early early;
	bool late = getenv(FXT_ENV(RUN_LATE)) != NULL;
	r.early = !late && early_start(&early, out, r.dir, o.srcline) == 0 ? &early : NULL;
	r.spares = true;
	/* Short processes into batches: no archive file each.  Not with
	 * --keep-parts (an archive per process), nor a compressed OUT (a
	 * batch is plain; its parts are named as OUT is). */
	r.batching = !o.keep_parts && fxt_writer_path_flags(out) == 0;
	r.drain = &drain;
	r.bell = run_bell_map(ctl);
	/* The kernel's recording last (its instance's clock is being set
	 * meanwhile), then the program runs. */
	kernel_stream(out);
	kernel_follow(root);
	launch_go(&launch, out);
	int status = supervise(&launch, &r);
	/* The program is done: its patch reports leave TMPDIR before the
	 * conversion, which a signal may end. */
	if (o.patch_dir)
		patch_report_collect(o.patch_dir);
	/* The program is done: its conversions decode what is not kept yet. */
	early_fill_stop(r.early);
	struct timespec t_exit, t_stop, t_kernel, t_end;
	clock_gettime(CLOCK_MONOTONIC, &t_exit);
	/* The kernel's instance goes while the archives are converted. */
	kernel_stop(out);
	clock_gettime(CLOCK_MONOTONIC, &t_stop);
	drain_stop(&drain);
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL) {
		if (derr < 0)
			fprintf(stderr, "fxt-run: no drain thread: %s\n", strerror(-derr));
		else
			fprintf(stderr, "fxt-run: drain: %" PRIu64 " chunks copied\n",
				drain.copied);
	}
	int code = WIFEXITED(status)	 ? WEXITSTATUS(status)
		   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					 : EXIT_USAGE;

	if (!o.quiet && WIFSIGNALED(status))
		fprintf(stderr, "fxt-run: %s: killed by signal %d (%s)\n", o.argv[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));

	/* Every archive of the run: converted, reported, or found. */
	spools_finish(&r, ctl);
	if (r.early) {
		if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
			fprintf(stderr,
				"fxt-run: early: %" PRIu64
				" chunks converted while the program ran\n",
				__atomic_load_n(&early.fed, __ATOMIC_RELAXED));
		early_stop(&early);
		if (getenv(FXT_ENV(RUN_DEBUG)) != NULL) {
			fprintf(stderr, "fxt-run: early: %" PRIu64 " ms at SCHED_IDLE\n",
				early.idle_ms);
			fprintf(stderr,
				"fxt-run: early: source lines of %" PRIu64
				" module(s) decoded and kept while the program ran\n",
				early.kept_ahead);
		}
		r.early = NULL;
	}
	if (status_fd >= 0)
		status_collect(&parts, out, status_fd, o.quiet);
	bool no_root = !parts_have_root(&parts, root, true) &&
		       parts_find_root(&parts, o.argv[0], out, root, o.quiet);
	parts_collect_unreported(&parts, out, r.dir, start, &old_parts, o.quiet);
	/* Not traced (an uninstrumented image it exec'd), nothing recorded
	 * and no exit(): e.g. a shell that only starts the traced programs. */
	if (no_root && !o.quiet) {
		if (parts.n == 0 || o.keep_parts)
			fprintf(stderr, "fxt-run: %s wrote no archive (%s)\n", o.argv[0],
				display_name(out));
		else
			fprintf(stderr, "fxt-run: %s wrote no archive of its own\n", o.argv[0]);
	}
	parts_set_wait_status(&parts, (long)root, status);
	parts_sort(&parts, (long)root);

	kernel_prepare(out, &parts, o.keep_parts);
	if (o.keep_parts || parts_merge(&parts, out, o.quiet) != 0) {
		if (!o.quiet)
			parts_print(&parts);
	}
	clock_gettime(CLOCK_MONOTONIC, &t_kernel);
	kernel_finish(out, &parts, o.keep_parts, o.quiet);
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	/* bench/kernel.sh reads it: the conversion, and the kernel's part. */
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
		fprintf(stderr,
			"fxt-run: after the exit: %.1f ms, of which the kernel's events %.1f ms\n",
			(double)(t_end.tv_sec - t_exit.tv_sec) * 1e3 +
			    (double)(t_end.tv_nsec - t_exit.tv_nsec) / 1e6,
			(double)(t_end.tv_sec - t_kernel.tv_sec + t_stop.tv_sec - t_exit.tv_sec) *
				1e3 +
			    (double)(t_end.tv_nsec - t_kernel.tv_nsec + t_stop.tv_nsec -
				     t_exit.tv_nsec) /
				1e6);
	if (!o.quiet)
		summary_snapshots(&r.snapshots);
	if (o.patch_dir) {
		patch_report_finish(o.patch_dir, o.patch_list, o.quiet,
				    o.set.given[FXT_S_PATCH] ? "--patch" : "--args/--retval");
		free(o.patch_dir);
	}
	if (!o.quiet) {
		/* With filters, no call is a choice, not a build problem. */
		if (!o.set.given[FXT_S_INCLUDE] && !o.set.given[FXT_S_EXCLUDE] &&
		    !o.set.given[FXT_S_MODULE] && !o.set.given[FXT_S_PATCH])
			summary_hint(o.argv[0]);
		summary_filter_hint(&o);
		close(status_fd);
	}

	/* The session file the traced processes shared (run/session.h): the
	 * run is over, and a later run gets a root pid of its own. */
	char session[PATH_MAX + 64];
	run_session_path(session, sizeof(session), out, (long)root);
	unlink(session);

	unlink(ctl);
	parts_free(&parts);
	spools_free(&r);
	name_list_free(&old_parts);
	free(out);
	free(program);
	free(agent);
	options_free(&o);
	return code;
}
