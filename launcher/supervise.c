/* Running the program as a shell runs it: fork and exec (a script without
 * "#!" through sh), SIGINT and SIGQUIT left to the program, its status
 * returned; and, while it runs, waking at each SIGCHLD or every 50 ms to
 * convert the spools of the processes that are done (spools.c).  The
 * fork comes first and the exec once the archive's name is known, which
 * may hold the program's pid (struct launch). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/writeall.h"
#include "launcher/launcher.h"
#include "run/settings.h"
#include "run/names.h"

extern char **environ;

/* How often the spools are looked at while the program runs. */
#define SCAN_INTERVAL_NS (50 * 1000 * 1000)

/* The program's process: reads the archive's name, then execs.  Exits
 * without running anything when fxt-run went away first. */
static void __attribute__((noreturn))
child(struct launch *l, int in, const char *path, char *const argv[])
{
	char out[PATH_MAX + 1], escaped[2 * PATH_MAX + 1], buf[24];
	size_t n = 0;
	ssize_t got;

	/* The program gets the dispositions we were given. */
	sigaction(SIGINT, &l->old_int, NULL);
	sigaction(SIGQUIT, &l->old_quit, NULL);
	sigprocmask(SIG_SETMASK, &l->old_mask, NULL);
	while (n < PATH_MAX && (got = read(in, out + n, PATH_MAX - n)) != 0) {
		if (got < 0 && errno != EINTR)
			_exit(EXIT_USAGE);
		if (got > 0)
			n += (size_t)got;
	}
	close(in);
	if (n == 0 || n >= PATH_MAX)
		_exit(EXIT_USAGE); /* fxt-run died before it sent the name */
	out[n] = '\0';
	/* Escaped: the agent reads FXT_OUTPUT as a template, and this name
	 * must come out of it as it is. */
	if (run_output_escape(escaped, sizeof(escaped), out) != 0 ||
	    setenv(FXT_ENV(OUTPUT), escaped, 1) != 0)
		_exit(EXIT_USAGE);
	/* It is the root process, the one that writes exactly FXT_OUTPUT,
	 * even if it forks before the agent starts. */
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	setenv(FXT_ENV(ROOT_PID), buf, 1);
	execve(path, argv, environ);
	int err = errno;
	if (err == ENOEXEC) {
		/* A script without "#!": a shell runs it with sh. */
		size_t argc = 0;
		while (argv[argc] != NULL)
			argc++;
		char **sh_argv = calloc(argc + 2, sizeof(*sh_argv));
		if (sh_argv != NULL) {
			sh_argv[0] = (char *)"sh";
			sh_argv[1] = (char *)path;
			for (size_t i = 1; i <= argc; i++)
				sh_argv[i + 1] = argv[i];
			execve("/bin/sh", sh_argv, environ);
			err = errno;
		}
	}
	fprintf(stderr, "fxt-run: %s: %s\n", argv[0], strerror(err));
	_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* The signals that would end fxt-run while the program runs, and that it
 * passes on to the program instead: SIGTERM, and SIGHUP unless it was
 * ignored (nohup).  Ignored ones are left so. */
static void forwarded_set(sigset_t *set)
{
	static const int sigs[] = { SIGTERM, SIGHUP };
	struct sigaction sa;

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(set, sigs[i]);
}

/* While the program runs we ignore SIGINT and SIGQUIT, as a shell does:
 * the terminal sends them to the whole foreground group, the program
 * decides, and we report.  SIGTERM and SIGHUP, which come to fxt-run
 * alone (kill, a closed terminal), go on to the program, which decides
 * too; fxt-run converts what it recorded and leaves nothing behind.  They
 * and SIGCHLD are blocked, so that supervise()'s sigtimedwait() takes
 * them. */
void launch_start(struct launch *l, const char *path, char *const argv[])
{
	struct sigaction ign;
	sigset_t chld;
	int p[2];

	forwarded_set(&l->fwd);
	chld = l->fwd;
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &l->old_mask);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &l->old_int);
	sigaction(SIGQUIT, &ign, &l->old_quit);

	/* Close-on-exec: the program never sees either end. */
	if (pipe2(p, O_CLOEXEC) != 0)
		die(EXIT_USAGE, "pipe: %s", strerror(errno));
	fflush(NULL);
	l->pid = fork();
	if (l->pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (l->pid == 0) {
		close(p[1]);
		child(l, p[0], path, argv);
	}
	close(p[0]);
	l->go_fd = p[1];
}

void launch_go(struct launch *l, const char *out)
{
	/* A path is shorter than the pipe's buffer: this never blocks.  A
	 * failure means the child is gone: supervise() sees its status. */
	(void)fxt_write_all(l->go_fd, out, strlen(out));
	close(l->go_fd);
	l->go_fd = -1;
}

/* Waits for the program; converts the spools of the processes that are
 * done, waking at SIGCHLD or every interval; passes SIGTERM and SIGHUP on
 * to the program. */
int supervise(struct launch *l, struct spools *r)
{
	sigset_t wake, fwd;
	int status;
	pid_t pid = l->pid;
	const struct timespec zero = { 0, 0 };

	fwd = l->fwd;
	wake = fwd;
	sigaddset(&wake, SIGCHLD);
	spools_set_root(r, (long)pid);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die(EXIT_USAGE, "waitpid: %s", strerror(errno));
		spools_scan(r, false);
		struct timespec ts = { 0, SCAN_INTERVAL_NS };
		int sig = sigtimedwait(&wake, NULL, &ts);
		if (sig > 0 && sig != SIGCHLD)
			kill(pid, sig);
	}
	/* One that came as the program ended was for it: the run ends. */
	while (sigtimedwait(&fwd, NULL, &zero) > 0)
		;
	sigprocmask(SIG_SETMASK, &l->old_mask, NULL);
	sigaction(SIGINT, &l->old_int, NULL);
	sigaction(SIGQUIT, &l->old_quit, NULL);
	return status;
}
