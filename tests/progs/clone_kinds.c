/* clone_kinds: children made every way but fork(), for
 * tests/e2e/agent-clone.sh.  The parent calls parent_before(), makes one
 * child, waits for it and calls parent_after(); the child calls
 * child_work() three times and ends.  Prints "clone_kinds KIND: child
 * status S" (and the child's pid into FILE, when given: clone_kinds KIND
 * FILE).
 *
 *	clone_kinds fork        fork() (the reference)
 *	clone_kinds _Fork       glibc's _Fork() (2.34+): no atfork handlers
 *	clone_kinds clone       clone(fn, stack, SIGCHLD): the child runs fn
 *	clone_kinds clone-vfork clone(CLONE_VFORK | SIGCHLD)
 *	clone_kinds clone-vm    clone(CLONE_VM | SIGCHLD): memory and TLS shared
 *	clone_kinds clone-vm-vfork  clone(CLONE_VM | CLONE_VFORK | SIGCHLD)
 *	clone_kinds clone-vm-busy   clone(CLONE_VM | SIGCHLD), the parent
 *			calling parent_spin 20000 times while the child calls
 *			child_work 20000 times, then returns
 *	clone_kinds syscall     syscall(SYS_clone, SIGCHLD, 0, ...)
 *	clone_kinds clone3      syscall(SYS_clone3, {.exit_signal = SIGCHLD})
 *	clone_kinds asm         the clone system call made inline: no libc
 *	clone_kinds clone3-bad  syscall(SYS_clone3, a bad pointer): no child,
 *			prints "clone_kinds clone3-bad: -1 EFAULT" as the kernel
 *			answers
 *
 * A child that has its own memory leaves with exit(3) (its atexit
 * handlers: the agent's seal); one that shares its parent's with _exit(3),
 * as such a child must.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __has_include
#if __has_include(<linux/sched.h>)
#include <linux/sched.h>
#endif
#endif

#include "examples/example.h"

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void parent_before(void)
{
	sink++;
}

EXAMPLE_NOINLINE static void parent_after(void)
{
	sink++;
}

EXAMPLE_NOINLINE static void child_work(void)
{
	sink += 2;
}

/* The child's whole life; `shared`: it shares its parent's memory. */
EXAMPLE_NOINLINE static void child_main(int shared)
{
	for (int i = 0; i < 3; i++)
		child_work();
	if (shared)
		_exit(3);
	exit(3);
}

EXAMPLE_NOINLINE static void parent_spin(void)
{
	sink++;
}

#define SPINS 20000

static int child_busy(void *arg)
{
	(void)arg;
	for (int i = 0; i < SPINS; i++)
		child_work();
	return 3;
}

static int child_fn(void *arg)
{
	child_main(arg != NULL);
	return 0;
}

static char stack[256 << 10] __attribute__((aligned(16)));

/* The clone system call with fork's arguments, made inline. */
static long raw_clone(void)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_clone), "D"((long)SIGCHLD), "S"(0L), "d"(0L)
			 : "rcx", "r11", "r10", "r8", "memory");
	return r;
#else
	return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

EXAMPLE_NOINLINE static long make_child(const char *kind)
{
	void *top = stack + sizeof(stack);

	if (!strcmp(kind, "fork"))
		return fork();
	if (!strcmp(kind, "_Fork"))
		return _Fork();
	if (!strcmp(kind, "clone"))
		return clone(child_fn, top, SIGCHLD, NULL);
	if (!strcmp(kind, "clone-vfork"))
		return clone(child_fn, top, CLONE_VFORK | SIGCHLD, NULL);
	if (!strcmp(kind, "clone-vm"))
		return clone(child_fn, top, CLONE_VM | SIGCHLD, (void *)&sink);
	if (!strcmp(kind, "clone-vm-busy")) {
		long pid = clone(child_busy, top, CLONE_VM | SIGCHLD, NULL);

		for (int i = 0; pid > 0 && i < SPINS; i++)
			parent_spin();
		return pid;
	}
	if (!strcmp(kind, "clone-vm-vfork"))
		return clone(child_fn, top, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)&sink);
	if (!strcmp(kind, "syscall"))
		return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (!strcmp(kind, "clone3")) {
#if defined(SYS_clone3) && defined(CLONE_ARGS_SIZE_VER0)
		struct clone_args a;

		memset(&a, 0, sizeof(a));
		a.exit_signal = SIGCHLD;
		return syscall(SYS_clone3, &a, sizeof(a));
#else
		fprintf(stderr, "clone_kinds: no clone3 in the headers\n");
		exit(77);
#endif
	}
	if (!strcmp(kind, "asm"))
		return raw_clone();
	fprintf(stderr, "usage: clone_kinds fork|_Fork|clone|clone-vfork|clone-vm|"
			"clone-vm-vfork|clone-vm-busy|syscall|clone3|asm\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "";
	int status = -1;
	long pid;

	if (!strcmp(kind, "clone3-bad")) {
#ifdef SYS_clone3
		long r = syscall(SYS_clone3, (void *)16, (size_t)88);
		int err = errno;

		printf("clone_kinds clone3-bad: %ld %s\n", r,
		       err == EFAULT ? "EFAULT" : strerror(err));
		return r == -1 && err == EFAULT ? 0 : 1;
#else
		fprintf(stderr, "clone_kinds: no clone3 in the headers\n");
		exit(77);
#endif
	}
	parent_before();
	fflush(stdout);
	pid = make_child(kind);
	if (pid == 0)
		child_main(0); /* a fork-like child, on this stack */
	if (pid < 0) {
		perror("clone_kinds");
		return 1;
	}
	if (waitpid((pid_t)pid, &status, 0) != pid) {
		perror("clone_kinds: waitpid");
		return 1;
	}
	parent_after();
	printf("clone_kinds %s: child status %d\n", kind,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f || fprintf(f, "%ld\n", pid) < 0 || fclose(f) != 0) {
			perror(argv[2]);
			return 1;
		}
	}
	return 0;
}
