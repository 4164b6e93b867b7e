/* privdrop: a process that gives up root the way nginx's workers do
 * (`user nobody`), then works: the agent must go on recording after the
 * change of user, though its spool is root's.
 *
 * "privdrop fork N": the parent forks; the child calls work() once (so
 * that its spool exists before the change), sets its group and user to
 * 65534 (setgroups, setgid, setuid), calls work() N more times, each call
 * making one libc call (close(-1)), and exits through exit().  The parent
 * reaps it.
 * "privdrop thread N": the main thread starts a worker thread that calls
 * work() once and waits; the main thread changes the whole process to
 * 65534; the worker then calls work() N more times and the process exits.
 *
 * With a third argument "closefds", the process closes every descriptor
 * above stderr after the change, as daemons do: the agent then loses what
 * it held, and must say why it drops the calls.
 *
 * Prints "privdrop: uid 65534, N calls" from the process that made them.
 * Must run as root: otherwise it prints "privdrop: not root" and exits 77.
 */
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "examples/example.h"

#define NOBODY 65534

static volatile unsigned long sink;
static long ncalls;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;
static int close_fds;

EXAMPLE_NOINLINE static void work(void)
{
	sink++;
	close(-1);
}

static int drop(void)
{
	gid_t g = NOBODY;

	if (setgroups(1, &g) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
		perror("privdrop: dropping root");
		return -1;
	}
	for (int fd = 3; close_fds && fd < 1024; fd++)
		close(fd);
	return 0;
}

static void calls(void)
{
	for (long i = 0; i < ncalls; i++)
		work();
	printf("privdrop: uid %ld, %ld calls\n", (long)getuid(), ncalls);
}

static int run_fork(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("privdrop: fork");
		return 1;
	}
	if (pid == 0) {
		work();
		if (drop() < 0)
			exit(1);
		calls();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void *worker(void *arg)
{
	(void)arg;
	work();
	pthread_mutex_lock(&mu);
	stage = 1;
	pthread_cond_broadcast(&cv);
	while (stage != 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	calls();
	return NULL;
}

static int run_thread(void)
{
	pthread_t th;
	int err = 0;

	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	pthread_mutex_lock(&mu);
	while (stage != 1)
		pthread_cond_wait(&cv, &mu);
	if (drop() < 0)
		err = 1;
	stage = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	return err;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[1], "fork") != 0 && strcmp(argv[1], "thread") != 0) ||
	    (argc == 4 && strcmp(argv[3], "closefds") != 0)) {
		fprintf(stderr, "usage: privdrop fork|thread N [closefds]\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("privdrop: not root\n");
		return 77;
	}
	ncalls = atol(argv[2]);
	close_fds = argc == 4;
	return strcmp(argv[1], "fork") == 0 ? run_fork() : run_thread();
}
