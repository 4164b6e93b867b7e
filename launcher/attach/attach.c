/* fxt-run -p PID: recording a process already running.
 *
 * The steps: the checks (preflight.c); the run's files as for a launch
 * (the archive's name, the control file fxt-run converts the spools
 * under, the patch reports); the settings the agent would read from its
 * environment, written as a block to a file (run/attach.h); the agent
 * loaded into the process and started by a call in one of its threads
 * (inject.c), which then runs on; waiting for --duration, a signal
 * (SIGINT, SIGTERM, SIGHUP) or the process's exit, converting the spools
 * of processes it forks as they end; the agent stopped by another call
 * (its patches written back); the spools converted and merged into one
 * archive, as after a launch.
 *
 * Each attach is a window of its own: attaching again after a detach
 * starts the agent loaded the first time again (its new settings, a new
 * spool).  Processes the target forks while attached record into spools
 * of their own, stop with it (the agent's watch), and are converted and
 * merged with it; one that execs is not followed.
 *
 * --libc: the agent binds its wrappers into the modules' GOTs at start and
 * writes them back at the detach (agent/got.h).  With --sample, the
 * process's threads are sampled from the attach on (agent/sample/ checks
 * and says what cannot be); threads it starts while attached are counted,
 * not sampled.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/writeall.h"
#include "launcher/attach/inject.h"
#include "launcher/attach/preflight.h"
#include "launcher/attach/sample.h"
#include "launcher/drain.h"
#include "launcher/launcher.h"
#include "run/attach.h"
#include "run/control.h"
#include "run/names.h"
#include "run/session.h"

/* How often the spools are looked at while attached. */
#define SCAN_INTERVAL_MS 50

/* The process may create its spool next to `out`, and write its patch
 * report into `dir`: the folders are given to it when fxt-run may (root
 * attaching to another user's process), else checked. */
static void give_folders(const struct attach_target *t, const char *out, const char *patch_dir)
{
	char *dir = strdup(out), *slash;
	struct stat st;

	if (!dir)
		die(EXIT_USAGE, "out of memory");
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (t->uid != geteuid()) {
		if (stat(dir, &st) != 0 || !(st.st_uid == t->uid   ? (st.st_mode & S_IWUSR)
					     : st.st_gid == t->gid ? (st.st_mode & S_IWGRP)
								   : (st.st_mode & S_IWOTH)))
			die(EXIT_USAGE,
			    "process %d runs as user %u, who may not write in %s, where its "
			    "spool goes: choose -o in a folder that user may write",
			    (int)t->pid, (unsigned)t->uid, dir);
		if (patch_dir && chown(patch_dir, t->uid, t->gid) != 0)
			die(EXIT_USAGE, "cannot give %s to user %u: %s", patch_dir,
			    (unsigned)t->uid, strerror(errno));
	}
	free(dir);
}

/* The settings block the agent reads (run/attach.h), in a file next to
 * the archive that only we may write and the process may read; its path
 * (malloc'd). */
static char *write_block(const struct options *o, const char *out, pid_t pid)
{
	struct fxt_block b = { 0 };
	char escaped[2 * PATH_MAX + 1], id[24], *path;
	int fd, err;

	setup_export(o, -1, fxt_block_sink, &b);
	snprintf(id, sizeof(id), "%ld", (long)pid);
	if (run_output_escape(escaped, sizeof(escaped), out) != 0 ||
	    fxt_block_sink(&b, FXT_ENV(OUTPUT), escaped) != 0 ||
	    fxt_block_sink(&b, FXT_ENV(ROOT_PID), id) != 0 ||
	    /* The agent's log, as a launched program's environment would
	     * pass it on (on the process's standard error). */
	    (getenv(FXT_ENV(DEBUG)) &&
	     fxt_block_sink(&b, FXT_ENV(DEBUG), getenv(FXT_ENV(DEBUG))) != 0))
		die(EXIT_USAGE, "out of memory");
	if (asprintf(&path, "%s.%ld.attach", out, (long)pid) < 0)
		die(EXIT_USAGE, "out of memory");
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		die(EXIT_USAGE, "cannot create %s: %s", display_name(path), strerror(errno));
	fchmod(fd, 0644); /* whatever the umask: the process reads it */
	err = fxt_write_all(fd, b.buf, b.len);
	close(fd);
	if (err) {
		unlink(path);
		die(EXIT_USAGE, "cannot write %s: %s", display_name(path), strerror(-err));
	}
	free(b.buf);
	return path;
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Calls the agent's function `name`(arg) in the process: 0 with what it
 * returned in *result (a negative errno is said in `why`), or the
 * injector's negative errno, with `why`.  FXT_RUN_DEBUG: how long each step
 * took, and the borrowed thread was stopped (make bench-attach reads it). */
static int call_agent(pid_t pid, const char *agent, bool load, const char *name, const char *arg,
		      long *result, char *why, size_t cap)
{
	const char *base = strrchr(agent, '/');
	struct inject *in;
	uint64_t fn, a = 0, ret = 0, h;
	struct timespec t0;
	double ms[4], stopped;
	pid_t tid;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = inject_open(pid, &in, why, cap);
	if (err)
		return err;
	ms[0] = since(&t0) * 1e3;
	if (load)
		err = inject_dlopen(in, agent, &h, why, cap);
	ms[1] = since(&t0) * 1e3;
	if (!err && inject_symbol(in, base ? base + 1 : agent, name, &fn) != 0) {
		snprintf(why, cap, "the agent in process %d has no %s", (int)pid, name);
		err = -ENOENT;
	}
	if (!err && arg && inject_push(in, arg, strlen(arg) + 1, &a) != 0) {
		snprintf(why, cap, "cannot write into process %d", (int)pid);
		err = -EFAULT;
	}
	if (!err)
		err = inject_call(in, fn, &a, 1, &ret, why, cap);
	ms[2] = since(&t0) * 1e3;
	stopped = inject_stopped_ms(in) - ms[2];
	tid = inject_tid(in);
	inject_close(in);
	ms[3] = since(&t0) * 1e3;
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
		fprintf(stderr,
			"fxt-run: %s: open and seize %.2f ms, dlopen %.2f ms, call %.2f ms, "
			"release %.2f ms; thread %d stopped %.2f ms (the others ran on)\n",
			name, ms[0], ms[1] - ms[0], ms[2] - ms[1], ms[3] - ms[2], (int)tid,
			stopped + ms[3]);
	*result = (long)ret;
	if (!err && *result < 0)
		snprintf(why, cap, "the agent in process %d says: %s", (int)pid,
			 strerror((int)-*result));
	return err;
}

/* The spool of process `pid`'s start that failed, and its session
 * file, if it made them. */
static void remove_spool(const char *out, pid_t pid)
{
	char path[PATH_MAX + 64];

	run_spool_name(path, sizeof(path), out, (long)pid, 1);
	unlink(path);
	run_session_path(path, sizeof(path), out, (long)pid);
	unlink(path);
}

/* The start goes on in a thread of the agent's (run/attach.h): waits
 * until its status at `addr` says how it went.  0 or a negative errno
 * (the agent's, or -ESRCH: the process ended), with `why`.  Signals that
 * come meanwhile stay pending, for the window's wait. */
static int wait_started(pid_t pid, uint64_t addr, char *why, size_t cap)
{
	struct fxt_attach_status st = { FXT_ATTACH_STARTING };
	struct timespec ms = { 0, 1000000 };

	for (;;) {
		struct iovec local = { &st, sizeof(st) },
			     remote = { (void *)(uintptr_t)addr, sizeof(st) };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(st)) {
			snprintf(why, cap, "process %d ended while the agent started", (int)pid);
			return -ESRCH;
		}
		if (st.state != FXT_ATTACH_STARTING)
			break;
		nanosleep(&ms, NULL);
	}
	if (st.state == FXT_ATTACH_RECORDING)
		return 0;
	snprintf(why, cap, "the agent in process %d says: %s", (int)pid, strerror(-st.state));
	return st.state < 0 ? st.state : -EIO;
}

static void on_signal(int sig)
{
	(void)sig; /* blocked: taken by sigtimedwait() */
}

static bool catch_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) == 0;
}

/* The signals that end the window (SIGINT, SIGTERM, SIGHUP). */
static void window_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* From the attach to the detach, the window's signals are held, taken by
 * wait_window(): one that comes while fxt-run is inside a call in the
 * process (loading the agent, starting or stopping it) must not kill
 * fxt-run then, which would leave the thread it borrowed in our call.
 * With `on` false, their actions are the default again, and one that came
 * meanwhile is delivered. */
static void hold_signals(bool on)
{
	struct sigaction hup;
	sigset_t set;

	window_signals(&set);
	if (!on) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
			signal(SIGHUP, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		return;
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* An ignored signal never reaches sigtimedwait(): a shell starts a
	 * background job with SIGINT ignored, and `kill -INT` must still end
	 * the window.  SIGHUP stays ignored if it was (nohup). */
	if (!catch_signal(SIGINT) || !catch_signal(SIGTERM))
		die(EXIT_USAGE, "sigaction: %s", strerror(errno));
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
		catch_signal(SIGHUP);
}

/* How a window ended. */
enum window_end {
	END_DETACH, /* --duration or a signal: fxt-run detaches */
	END_EXIT,   /* the process exited */
	END_EXEC,   /* the process ran another program: the agent is gone */
};

/* Whether process pid is gone, or goes within `ms`: an exiting process
 * has lost its maps (proc_has_agent() false) a moment before it is gone,
 * which is not an exec. */
static bool gone_within(pid_t pid, int ms)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool gone;

	if (pidfd < 0)
		return errno == ESRCH;
	struct pollfd p = { pidfd, POLLIN, 0 };

	gone = poll(&p, 1, ms) == 1;
	close(pidfd);
	return gone;
}

/* Waits for --duration, a signal, the process's end or its exec,
 * converting the spools that are done meanwhile (the signals held:
 * hold_signals()); *why_end says which signal or limit ended a detach. */
static enum window_end wait_window(pid_t pid, uint64_t duration_ns, struct spools *r,
				   struct attach_threads *th, const char **why_end)
{
	struct timespec t0, now;
	sigset_t set;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	enum window_end end = END_DETACH;

	window_signals(&set);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*why_end = "until the process exits or a signal";
	for (unsigned n = 0;; n++) {
		struct timespec ts = { 0, SCAN_INTERVAL_MS * 1000000L };
		bool gone;
		int sig;

		if (pidfd >= 0) {
			struct pollfd p = { pidfd, POLLIN, 0 };

			gone = poll(&p, 1, 0) == 1;
		} else {
			gone = kill(pid, 0) != 0 && errno == ESRCH;
		}
		if (gone) {
			end = END_EXIT;
			break;
		}
		/* An exec seals nothing it has not interposed: its maps say. */
		if (n % 5 == 4 && !proc_has_agent(pid)) {
			end = gone_within(pid, 500) ? END_EXIT : END_EXEC;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (duration_ns && (uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000u +
					   (uint64_t)now.tv_nsec - (uint64_t)t0.tv_nsec >=
				       duration_ns) {
			*why_end = "--duration";
			break;
		}
		spools_scan(r, false);
		if (th)
			attach_threads_scan(th);
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig > 0) {
			*why_end = strsignal(sig);
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return end;
}

int attach_main(const struct options *opts)
{
	struct options o = *opts;
	pid_t pid = (pid_t)o.set.v[FXT_S_PID].u;
	struct attach_target t;
	char why[1024], host[256], ctl[PATH_MAX + 64], session[PATH_MAX + 64];
	const char *end = "";
	struct timespec t0;
	struct spools r;
	struct parts parts = { 0 };
	struct name_list old_parts;
	struct drain drain;
	struct attach_threads threads;
	time_t start = time(NULL);
	char *agent, *out, *block;
	enum window_end wend;
	bool agent_said;
	long result;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!o.set.given[FXT_S_PATCH] && !o.set.given[FXT_S_LIBC] && !o.set.given[FXT_S_SAMPLE])
		die(EXIT_USAGE,
		    "-p: say what to record: --patch=REGEX, the functions to record "
		    "(--patch=. for all of the program's), --libc=GROUPS or --sample: a "
		    "running process has no hooks of ours");
	/* No libc calls unless --libc asks (a launch records the default
	 * groups: there, the wrappers are in anyway). */
	if (!o.set.given[FXT_S_LIBC]) {
		o.set.v[FXT_S_LIBC].s = (char *)"none";
		o.set.given[FXT_S_LIBC] = true;
	}
	agent = find_agent();
	if (attach_preflight(pid, agent, &t, why, sizeof(why)) != 0 ||
	    (o.set.given[FXT_S_SAMPLE] && attach_sample_preflight(pid, why, sizeof(why)) != 0))
		die(EXIT_USAGE, "%s", why);
	/* Without the permission to trace, nothing is done to the process. */
	if (o.set.given[FXT_S_KERNEL])
		kernel_open(o.set.v[FXT_S_KERNEL].s);
	double preflight = since(&t0) * 1e3;

	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	struct run_template_values tv = { (long)t.pid, (long long)start, t.comm, host };
	out = output_path(&o, &tv);
	kernel_stream(out);
	if (o.force && unlink(out) != 0 && errno != ENOENT)
		die(EXIT_USAGE, "cannot remove %s: %s", display_name(out), strerror(errno));
	if (o.set.given[FXT_S_SNAPSHOT_IF])
		clear_snapshots(out, o.force);
	if (o.set.given[FXT_S_PATCH])
		o.patch_dir = patch_report_dir();
	if (args_wanted(&o))
		args_plan_attach(&o, (long)t.pid, o.patch_dir);
	give_folders(&t, out, o.patch_dir);
	run_ctl_path(ctl, sizeof(ctl), out, (long)getpid());
	err = run_ctl_set(ctl, RUN_CTL_OPEN);
	if (err != 0)
		die(EXIT_USAGE, "cannot create %s: %s", display_name(ctl), strerror(-err));
	/* The process reads it (and rings its bell) as its own user: a
	 * server's worker attached to by root. */
	if (t.uid != geteuid() && chown(ctl, t.uid, t.gid) != 0)
		die(EXIT_USAGE, "cannot give %s to user %u: %s", display_name(ctl), (unsigned)t.uid,
		    strerror(errno));
	if (spools_init(&r, &parts, out, (long)t.pid, start, o.quiet) != 0)
		die(EXIT_USAGE, "out of memory");
	r.srcline = o.srcline;
	r.attached = true;
	parts_list_old(&old_parts, out, r.dir);
	block = write_block(&o, out, t.pid);
	if (o.set.given[FXT_S_SAMPLE])
		attach_threads_init(&threads, t.pid);

	kernel_follow(t.pid);
	hold_signals(true);
	/* Loaded already (attached to before): dlopen() finds it. */
	err = call_agent(t.pid, agent, true, FXT_ATTACH_START, block, &result, why, sizeof(why));
	/* The agent's own answer, not the injector's: its -EBUSY says another
	 * fxt-run -p records; the injector's (no thread at a safe point) is
	 * said by `why`. */
	agent_said = !err && result < 0;
	if (agent_said)
		err = (int)result;
	else if (!err) {
		struct timespec w0;

		clock_gettime(CLOCK_MONOTONIC, &w0);
		err = wait_started(t.pid, (uint64_t)result, why, sizeof(why));
		if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
			fprintf(stderr,
				"fxt-run: %s: started (patching) in %.2f ms, on a thread "
				"of the agent's\n",
				FXT_ATTACH_START, since(&w0) * 1e3);
	}
	unlink(block);
	if (err) {
		/* The process may have made its spool before it ended: a start
		 * that failed leaves nothing (its records are not a window). */
		if (err == -ESRCH)
			remove_spool(out, t.pid);
		unlink(ctl);
		if (o.patch_dir)
			rmdir(o.patch_dir);
		if (agent_said && err == -EALREADY && t.has_agent)
			die(EXIT_USAGE,
			    "process %d (%s) is recorded already: it was started under fxt-run or "
			    "with LD_PRELOAD, and its trace is written when it exits",
			    (int)t.pid, t.comm);
		if (agent_said && err == -EBUSY)
			die(EXIT_USAGE,
			    "process %d (%s) is being recorded by another fxt-run -p: attach "
			    "again once it has detached",
			    (int)t.pid, t.comm);
		die(EXIT_USAGE, "cannot attach to process %d: %s", (int)t.pid, why);
	}
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL) {
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		fprintf(stderr,
			"fxt-run: recording: preflight %.2f ms, total %.2f ms, at %lld.%09ld\n",
			preflight, since(&t0) * 1e3, (long long)rt.tv_sec, rt.tv_nsec);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!o.quiet)
		fprintf(stderr, "fxt-run: attached to %d (%s, %u thread%s)\n", (int)t.pid, t.comm,
			t.threads, t.threads == 1 ? "" : "s");
	if (o.set.given[FXT_S_SAMPLE])
		attach_threads_sampled(&threads);
	drain_start(&drain, out, ctl);
	wend = wait_window(t.pid, o.set.given[FXT_S_DURATION] ? o.set.v[FXT_S_DURATION].u : 0, &r,
			   o.set.given[FXT_S_SAMPLE] ? &threads : NULL, &end);
	if (o.set.given[FXT_S_SAMPLE])
		attach_threads_end(&threads);
	if (wend == END_DETACH) {
		err = call_agent(t.pid, agent, false, FXT_ATTACH_STOP, NULL, &result, why,
				 sizeof(why));
		if (!err && result != 0)
			err = (int)result;
		if (err == -ESRCH)
			wend = END_EXIT;
		else if (err && !proc_has_agent(t.pid))
			wend = gone_within(t.pid, 500) ? END_EXIT : END_EXEC;
		else if (err)
			fprintf(stderr, "fxt-run: cannot detach from %d: %s\n", (int)t.pid, why);
	}
	hold_signals(false);
	kernel_signals();
	if (!o.quiet && wend == END_DETACH)
		fprintf(stderr, "fxt-run: detached from %d after %.1f s (%s)\n", (int)t.pid,
			since(&t0), end);
	else if (!o.quiet && wend == END_EXIT)
		fprintf(stderr, "fxt-run: process %d exited after %.1f s\n", (int)t.pid,
			since(&t0));
	else if (!o.quiet)
		fprintf(stderr,
			"fxt-run: process %d ran another program (exec) after %.1f s: not "
			"followed; its records until then are kept\n",
			(int)t.pid, since(&t0));
	drain_stop(&drain);

	/* The archives, as after a launch (fxt-run.c). */
	if (o.patch_dir)
		patch_report_collect(o.patch_dir);
	spools_finish(&r, ctl);
	spools_say_execs(&r);
	if (!parts_have_root(&parts, t.pid, true))
		parts_find_root(&parts, t.comm, out, t.pid, o.quiet);
	parts_collect_unreported(&parts, out, r.dir, start, &old_parts, o.quiet);
	parts_sort(&parts, (long)t.pid);
	kernel_prepare(out, &parts, o.keep_parts);
	if (o.keep_parts || parts_merge(&parts, out, o.quiet) != 0) {
		if (!o.quiet)
			parts_print(&parts);
	}
	kernel_finish(out, &parts, o.keep_parts, o.quiet);
	if (!o.quiet)
		summary_snapshots(&r.snapshots);
	if (o.patch_dir)
		patch_report_finish(o.patch_dir, o.patch_list, o.quiet, "--patch");
	if (o.set.given[FXT_S_SAMPLE]) {
		if (!o.quiet)
			attach_threads_report(&threads);
		attach_threads_free(&threads);
	}
	run_session_path(session, sizeof(session), out, (long)t.pid);
	unlink(session);
	unlink(ctl);
	parts_free(&parts);
	spools_free(&r);
	name_list_free(&old_parts);
	free(o.patch_dir);
	free(block);
	free(out);
	free(agent);
	return 0;
}
