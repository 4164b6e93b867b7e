/* libc_proc: an uninstrumented program (built without
 * -finstrument-functions) for tests/e2e/libc-proc.sh.  It exercises the
 * proc group's wrappers and prints what they returned, so that a traced
 * run can be compared with a plain one and with the archive.
 *
 *	libc_proc fork     fork, the child exits with 7, waitpid reaps it
 *	libc_proc vfork    the same with vfork (the child calls _exit(7))
 *	libc_proc waits    three children reaped by wait, wait4 and waitid
 *	libc_proc spawn    posix_spawnp("sh -c 'exit 6'"), waitpid
 *	libc_proc system   system("echo from-system; exit 5")
 *	libc_proc execfail execv of a missing file: -1 and ENOENT
 *	libc_proc exec     execl of itself, which runs "libc_proc exit 0"
 *	libc_proc exit N | _exit N | _Exit N   leaves with status N
 *	libc_proc atexit   exit(0) runs a handler that calls waitpid
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* make check builds with the user's CFLAGS (-O2 by default): the callers
 * the test expects must stay functions of their own. */
#define NOINLINE __attribute__((noinline))

/* The child exits with 7; the parent reaps it with waitpid. */
NOINLINE static int do_fork(int use_vfork)
{
	int status = -1;
	pid_t pid, r;

	fflush(stdout);
	pid = use_vfork ? vfork() : fork();
	if (pid < 0) {
		perror("libc_proc: fork");
		return 1;
	}
	if (pid == 0)
		_exit(7);
	r = waitpid(pid, &status, 0);
	printf("waitpid %s status=%d exit=%d\n", r == pid ? "=pid" : "!=pid", status,
	       WEXITSTATUS(status));
	return 0;
}

NOINLINE static pid_t child_exiting(int code)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(code);
	return pid;
}

NOINLINE static int do_waits(void)
{
	struct rusage ru;
	siginfo_t info;
	int status = -1;
	pid_t pid, r;

	pid = child_exiting(1);
	r = wait(&status);
	printf("wait %s status=%d\n", r == pid ? "=pid" : "!=pid", status);
	pid = child_exiting(2);
	r = wait4(pid, &status, 0, &ru);
	printf("wait4 %s status=%d\n", r == pid ? "=pid" : "!=pid", status);
	pid = child_exiting(3);
	memset(&info, 0, sizeof(info));
	r = waitid(P_PID, (id_t)pid, &info, WEXITED);
	printf("waitid %d %s status=%d\n", (int)r, info.si_pid == pid ? "=pid" : "!=pid",
	       info.si_status);
	/* No child left: -1 with ECHILD, errno unchanged by the agent. */
	errno = 0;
	r = waitpid(-1, &status, 0);
	printf("waitpid %d %s\n", (int)r, errno == ECHILD ? "ECHILD" : strerror(errno));
	return 0;
}

NOINLINE static int do_spawn(void)
{
	static char a0[] = "sh", a1[] = "-c", a2[] = "exit 6";
	char *argv[] = { a0, a1, a2, NULL };
	int status = -1, r;
	pid_t pid = 0;

	r = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	if (r != 0) {
		printf("posix_spawnp %d\n", r);
		return 1;
	}
	r = waitpid(pid, &status, 0) == pid;
	printf("posix_spawnp 0 waitpid %s exit=%d\n", r ? "=pid" : "!=pid", WEXITSTATUS(status));
	return 0;
}

NOINLINE static int do_system(void)
{
	int r;

	fflush(stdout);
	r = system("echo from-system; exit 5");
	printf("system status=%d exit=%d\n", r, WEXITSTATUS(r));
	return 0;
}

NOINLINE static int do_execfail(void)
{
	static char a0[] = "missing";
	char *argv[] = { a0, NULL };
	int r, e;

	errno = 0;
	r = execv("/nonexistent/libc_proc", argv);
	e = errno;
	printf("execv %d %s\n", r, e == ENOENT ? "ENOENT" : strerror(e));
	return 0;
}

/* Runs inside exit(): its waitpid (no child: -1, ECHILD) nests in exit's
 * slice. */
static void at_exit(void)
{
	waitpid(-1, NULL, WNOHANG);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int code = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(what, "fork"))
		return do_fork(0);
	if (!strcmp(what, "vfork"))
		return do_fork(1);
	if (!strcmp(what, "waits"))
		return do_waits();
	if (!strcmp(what, "spawn"))
		return do_spawn();
	if (!strcmp(what, "system"))
		return do_system();
	if (!strcmp(what, "execfail"))
		return do_execfail();
	if (!strcmp(what, "exec")) {
		fflush(stdout);
		execl(argv[0], "libc_proc", "exit", "0", (char *)NULL);
		perror("libc_proc: execl");
		return 1;
	}
	if (!strcmp(what, "atexit")) {
		atexit(at_exit);
		exit(0);
	}
	if (!strcmp(what, "exit")) {
		printf("exit %d\n", code);
		exit(code);
	}
	if (!strcmp(what, "_exit")) {
		printf("_exit %d\n", code);
		fflush(stdout);
		_exit(code);
	}
	if (!strcmp(what, "_Exit")) {
		printf("_Exit %d\n", code);
		fflush(stdout);
		_Exit(code);
	}
	fprintf(stderr, "usage: libc_proc fork|vfork|waits|spawn|system|execfail|exec|exit N|_exit "
			"N|_Exit N\n");
	return 2;
}
