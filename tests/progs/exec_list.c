/* Re-executes itself through one of the list forms of exec, which the agent
 * wraps (glibc's own execl* call an internal execve it cannot see):
 *
 *   exec_list l|lp|le    the first image: before() once, then
 *                        execl / execlp / execle of itself as "child"
 *   exec_list child A B  the second image: after() once, prints its
 *                        arguments and $FXT_TEST_ENV
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/example.h"

EXAMPLE_NOINLINE static void before(void)
{
	puts("first image");
	fflush(stdout);
}

EXAMPLE_NOINLINE static void after(int argc, char **argv)
{
	const char *env = getenv("FXT_TEST_ENV");
	printf("second image:");
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf(" env=%s\n", env ? env : "(unset)");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		after(argc, argv);
		return 0;
	}
	if (argc < 2)
		return 2;
	before();
	if (strcmp(argv[1], "l") == 0) {
		execl(argv[0], argv[0], "child", "via-execl", (char *)NULL);
	} else if (strcmp(argv[1], "lp") == 0) {
		execlp(argv[0], argv[0], "child", "via-execlp", (char *)NULL);
	} else if (strcmp(argv[1], "le") == 0) {
		/* The agent's own variables must survive a replaced environment
		 * for the new image to be traced: pass them on. */
		static char test_env[] = "FXT_TEST_ENV=from-execle";
		char *envp[8];
		int n = 0;
		envp[n++] = test_env;
		static const char *keep[] = { "LD_PRELOAD", "FXT_OUTPUT", "FXT_ROOT_PID",
					      "FXT_LIBC", NULL };
		static char bufs[4][4096];
		for (int i = 0; keep[i]; i++) {
			const char *v = getenv(keep[i]);
			if (v) {
				snprintf(bufs[i], sizeof(bufs[i]), "%s=%s", keep[i], v);
				envp[n++] = bufs[i];
			}
		}
		envp[n] = NULL;
		execle(argv[0], argv[0], "child", "via-execle", (char *)NULL, envp);
	}
	perror("exec");
	return 1;
}
