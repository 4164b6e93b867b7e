/* fork_child: the parent calls parent_work, forks, and waits; the child
 * calls child_work three times and exits through exit(), so that its own
 * archive (OUT.PID.fxt) is written.  Prints "fork_child: child PID".
 * With the argument "_exit", the child leaves through _exit() instead: no
 * flush, its spool is left for fxt-run to recover.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void parent_work(void)
{
	sink++;
}

EXAMPLE_NOINLINE static void child_work(void)
{
	sink += 2;
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "_exit") == 0;

	parent_work();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork_child: fork");
		return 1;
	}
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			child_work();
		if (quick)
			_exit(0);
		exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror("fork_child: waitpid");
		return 1;
	}
	parent_work();
	printf("fork_child: child %ld\n", (long)pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
