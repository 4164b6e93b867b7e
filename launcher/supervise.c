/* Running the program as a shell runs it: fork and exec (a script without
 * "#!" through sh), SIGINT and SIGQUIT left to the program, its status
 * returned; and, while it runs, waking at each SIGCHLD or every 50 ms to
 * convert the spools of the processes that are done (spools.c). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "spool/env.h"

extern char **environ;

/* How often the spools are looked at while the program runs. */
#define SCAN_INTERVAL_NS (50 * 1000 * 1000)

/* Forks and execs the program; returns its wait status.  While it runs we
 * ignore SIGINT and SIGQUIT, as a shell does: the terminal sends them to
 * the whole foreground group, the program decides, and we report.  And we
 * convert the spools of the processes that are done, waking at SIGCHLD
 * (blocked here, so that sigtimedwait() takes it) or every interval. */
int supervise(const char *path, char *const argv[], pid_t *child, struct spools *r)
{
	struct sigaction ign, old_int, old_quit;
	sigset_t chld, old_mask;
	int status;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* The program gets the dispositions we were given. */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		/* It is the root process, the one that writes exactly
		 * FXT_OUTPUT, even if it forks before the agent starts. */
		char buf[24];
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		setenv(FXT_ENV_ROOT_PID, buf, 1);
		execve(path, argv, environ);
		int err = errno;
		if (err == ENOEXEC) {
			/* A script without "#!": a shell runs it with sh. */
			size_t n = 0;
			while (argv[n] != NULL)
				n++;
			char **sh_argv = calloc(n + 2, sizeof(*sh_argv));
			if (sh_argv != NULL) {
				sh_argv[0] = (char *)"sh";
				sh_argv[1] = (char *)path;
				for (size_t i = 1; i <= n; i++)
					sh_argv[i + 1] = argv[i];
				execve("/bin/sh", sh_argv, environ);
				err = errno;
			}
		}
		fprintf(stderr, "fxt-run: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}

	*child = pid;
	spools_set_root(r, (long)pid);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die(EXIT_USAGE, "waitpid: %s", strerror(errno));
		spools_scan(r, false);
		struct timespec ts = { 0, SCAN_INTERVAL_NS };
		sigtimedwait(&chld, NULL, &ts);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return status;
}
