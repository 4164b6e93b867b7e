/* Whether fxt-run may attach to a process, decided before anything is
 * done to it: each refusal is one line that names the reason and what to
 * do instead.
 *
 * Refused: no such process; a zombie or a kernel thread; a process
 * already traced (its tracer named); one we may not trace (another user's
 * without CAP_SYS_PTRACE, Yama's ptrace_scope); a set-user-ID,
 * set-group-ID or file-capability program; a program of another
 * architecture, or a static one (no loader to load the agent); a process
 * that has another fxtrace agent than `lib` loaded; and a library to load that another user could
 * have replaced (the file or a directory above it writable by others, or owned by a user other than
 * root and us) or that the process could not read.
 */
#ifndef FXT_LAUNCHER_ATTACH_PREFLIGHT_H
#define FXT_LAUNCHER_ATTACH_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What the checks read of the process, for the attach that follows. */
struct attach_target {
	pid_t pid;
	char comm[64]; /* its /proc/PID/comm */
	uid_t uid;     /* effective */
	gid_t gid;
	unsigned threads;
	/* `lib` is loaded in it already: preloaded (started under fxt-run or
	 * with LD_PRELOAD), or attached to before (the agent tells which). */
	bool has_agent;
};

/* A small /proc file whole, NUL-terminated: its length, or -errno. */
ssize_t attach_slurp(const char *path, char *buf, size_t cap);

/* 0 with *t filled (t may be NULL), or a negative errno and the line in
 * why: -ESRCH (no such process), -EPERM (not ours to trace), -EBUSY
 * (traced, or has the agent), -ENOEXEC (a program we cannot load into),
 * -EACCES (the library).  `lib` may be NULL: the process alone is
 * checked. */
int attach_preflight(pid_t pid, const char *lib, struct attach_target *t, char *why, size_t cap);

#endif /* FXT_LAUNCHER_ATTACH_PREFLIGHT_H */
