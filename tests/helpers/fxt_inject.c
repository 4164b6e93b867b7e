/* The injector (launcher/attach/inject.c) by hand, for attach-inject.sh:
 *
 *   fxt_inject PID                  borrow a thread of PID and give it back
 *   fxt_inject PID LIB FUNC ARG     and, meanwhile, dlopen LIB in PID and
 *                                   call FUNC(ARG) (ARG a string)
 *   fxt_inject --again PID LIB FUNC ARG
 *                                   the same without the checks (a second
 *                                   call into the agent loaded by a first)
 *   fxt_inject --check PID [LIB]    only the checks before an attach
 *                                   (launcher/attach/preflight.c): "ok"
 *   fxt_inject --peek PID ADDR      the int at ADDR in PID's memory (the
 *                                   status fxt_attach_start() returns)
 *
 * The first two run the checks on the process first.  Prints "thread TID"
 * (the thread borrowed) and "returned N" (N signed as an int when rax's
 * upper half is 0, as a function returning int leaves it); on error one line
 * "fxt_inject: WHY" and exit 1. */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "launcher/attach/inject.h"
#include "launcher/attach/preflight.h"

int main(int argc, char **argv)
{
	struct inject *in;
	char why[512];
	uint64_t h, fn, arg, ret;
	const char *base;
	bool again = false;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0); /* "thread TID" seen while a call runs */

	if (argc >= 3 && argc <= 4 && strcmp(argv[1], "--check") == 0) {
		if (attach_preflight((pid_t)atol(argv[2]), argv[3], NULL, why, sizeof(why)) != 0) {
			fprintf(stderr, "fxt_inject: %s\n", why);
			return 1;
		}
		printf("ok\n");
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "--peek") == 0) {
		int v;
		struct iovec local = { &v, sizeof(v) },
			     remote = { (void *)(uintptr_t)strtoull(argv[3], NULL, 0), sizeof(v) };

		if (process_vm_readv((pid_t)atol(argv[2]), &local, 1, &remote, 1, 0) !=
		    (ssize_t)sizeof(v)) {
			perror("fxt_inject: process_vm_readv");
			return 1;
		}
		printf("%d\n", v);
		return 0;
	}
	if (argc == 6 && strcmp(argv[1], "--again") == 0) {
		again = true;
		argc--;
		argv++;
	}
	if (argc != 2 && argc != 5) {
		fprintf(stderr, "usage: fxt_inject [--check|--again] PID [LIB FUNC ARG]\n");
		return 2;
	}
	err = again ? 0 : attach_preflight((pid_t)atol(argv[1]), NULL, NULL, why, sizeof(why));
	if (!err)
		err = inject_open((pid_t)atol(argv[1]), &in, why, sizeof(why));
	if (err) {
		fprintf(stderr, "fxt_inject: %s\n", why);
		return 1;
	}
	printf("thread %d\n", (int)inject_tid(in));
	if (argc == 5) {
		base = strrchr(argv[2], '/');
		base = base ? base + 1 : argv[2];
		err = inject_dlopen(in, argv[2], &h, why, sizeof(why));
		if (!err && inject_symbol(in, base, argv[3], &fn) != 0) {
			snprintf(why, sizeof(why), "%s: no function %s", argv[2], argv[3]);
			err = -1;
		}
		if (!err)
			err = inject_push(in, argv[4], strlen(argv[4]) + 1, &arg);
		if (!err)
			err = inject_call(in, fn, &arg, 1, &ret, why, sizeof(why));
		if (err) {
			inject_close(in);
			fprintf(stderr, "fxt_inject: %s\n", why);
			return 1;
		}
		/* An int's result leaves rax's upper half 0: shown signed. */
		printf("returned %lld\n",
		       ret >> 32 ? (long long)ret : (long long)(int32_t)(uint32_t)ret);
	}
	err = inject_close(in);
	if (err) {
		fprintf(stderr, "fxt_inject: giving the thread back: error %d\n", err);
		return 1;
	}
	return 0;
}
