/* bench/forkloop.c: N (500) fork + _exit in a loop, each child waited for
 * before the next, for bench/forks.sh: what a short process costs under
 * fxt-run against the same loop run plainly.  Prints nothing; exits 1
 * if a fork or a child fails. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500;

	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		int st;

		if (p < 0) {
			perror("forkloop: fork");
			return 1;
		}
		if (p == 0)
			_exit(0);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	return 0;
}
