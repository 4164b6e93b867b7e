/* proctitle: retitles itself for ps the way nginx, PostgreSQL, redis and
 * sshd do (setproctitle): it writes TITLE over its argument area, from
 * argv[0] to the end of the last argument, NUL-padded, so that argv[0] and
 * the names pointing into it (program_invocation_short_name) read the
 * title, or nothing.  Usage: proctitle [TITLE] (default "proctitle:
 * master").  Then it forks; the child retitles itself "proctitle: worker",
 * both call work() once, and the parent waits.  Prints "proctitle: child
 * PID".  Run it by a path with a directory: the short name then lies past
 * the title's start.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;
static char *area;
static size_t area_len;

EXAMPLE_NOINLINE static void work(void)
{
	sink++;
}

/* The title, as ps shows it: the whole area, NUL-padded. */
static void set_title(const char *title)
{
	size_t n = strlen(title);

	if (n >= area_len)
		n = area_len - 1;
	memset(area, 0, area_len);
	memcpy(area, title, n);
}

int main(int argc, char **argv)
{
	const char *title = argc > 1 ? argv[1] : "proctitle: master";
	char copy[256];
	pid_t pid;
	int st;

	snprintf(copy, sizeof(copy), "%s", title);
	area = argv[0];
	area_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	set_title(copy);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		set_title("proctitle: worker");
		work();
		return 0;
	}
	work();
	printf("proctitle: child %ld\n", (long)pid);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
