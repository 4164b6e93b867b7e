/* The proc group's wrappers: fork and vfork (with a flow into the child),
 * posix_spawn(p), system, the wait family and the exit family.  The exec
 * family is wrapped in wrap_exec.c: the agent seals first, before the
 * image is replaced.  See agent/libc/libc.h for the rules every wrapper
 * follows.
 *
 * fork: the parent records its fork frame with a FLOW begin of
 * ev_fork_flow_id(parent, child); the child, which starts with fresh
 * buffers (the agent's atfork child handler ran inside the real fork),
 * records a short "fork (child)" frame holding the FLOW end of the same
 * id.  Both sides compute the id from the two pids, so nothing has to be
 * passed between them, and the arrow ends in the child's first slice.
 * A fork is recorded inside another wrapper's call too: the C library
 * never forks through the public fork(), so that call is a signal
 * handler's (PostgreSQL's postmaster forks in one, during its select())
 * or a callback's, the program's own either way.  It nests in that call's
 * slice, whose `wrap` it gives back in the parent.
 *
 * vfork cannot be wrapped: the child borrows the parent's stack, and the
 * wrapper's own frame would be clobbered by the child returning through it
 * before the parent does.  So vfork is implemented as fork.  A program
 * that uses vfork as POSIX allows (the child only calls exec or _exit)
 * behaves the same; it only loses vfork's speed, and a child that (not
 * allowed) writes the parent's memory no longer changes the parent's. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/libc/libc.h"
#include "agent/sys.h"

/* The longest path or command kept in a record. */
#define PROC_STR_MAX 256u

REAL_DECL(fork);
REAL_DECL(posix_spawn);
REAL_DECL(posix_spawnp);
REAL_DECL(system);
REAL_DECL(waitpid);
REAL_DECL(wait);
REAL_DECL(wait4);
REAL_DECL(waitid);
REAL_DECL(exit);
REAL_DECL(_exit);
REAL_DECL(_Exit);

/* ------------------------------------------------------------ fork */

/* The child's side, called in the child right after the real fork
 * returned 0.  `t` is the thread state the parent's wrapper set `wrap` on
 * (the child inherited it, with the parent's `wrap` still set): the
 * frame is recorded under it, and `wrap` is cleared when done.  `ppid` is
 * the parent's pid, read before the fork (getppid() would give 1 if the
 * parent had already died). */
static void fork_child(struct tstate *t, const void *caller, pid_t ppid, bool flow)
{
	struct wrap_arg a = WARG(PARENT_PID, I64, ppid);

	/* The atfork child handler re-read the groups; the fork frame of the
	 * parent is not in the child's (fresh) buffers, so there is nothing
	 * to close here. */
	if ((agent_libc_on & AGENT_G_PROC) &&
	    wrap_call_begin(t, AGENT_FN_FORK_CHILD, caller, &a, 1)) {
		if (flow)
			wrap_flow(t, EV_FLOW_END,
				  ev_fork_flow_id((uint64_t)ppid, (uint64_t)agent.pid), false);
		wrap_call_end(t, AGENT_FN_FORK_CHILD, 0, 0, 0, NULL, 0);
	}
	wrap_leave(t);
}

static AGENT_FORK_CODE pid_t fork_common(unsigned fn, const void *caller)
{
	struct tstate *t = &agent_tls;
	unsigned char outer = t->wrap;
	pid_t ppid, r;
	bool rec;
	int err;

	if (t->busy)
		return REAL(fork)();
	/* The real functions a short child ends with, looked up here once,
	 * whether or not the fork is recorded (_exit and _Exit are the
	 * agent's wrappers with any --libc): else each child of a process
	 * that never exited so looks them up itself (dlsym: the loader's
	 * lookup, its pages faulted in again). */
	(void)REAL(_exit);
	(void)REAL(_Exit);
	if (!(agent_libc_on & AGENT_G_PROC))
		return REAL(fork)();
	rec = wrap_call_begin(t, fn, caller, NULL, 0);
	ppid = agent.pid;
	t->wrap = AGENT_WRAP_FORK; /* the child keeps it (atfork_child()) */
	r = REAL(fork)();
	if (r == 0) {
		fork_child(t, caller, ppid, rec);
		return 0;
	}
	err = errno;
	if (rec) {
		if (r > 0)
			wrap_flow(t, EV_FLOW_BEGIN, ev_fork_flow_id((uint64_t)ppid, (uint64_t)r),
				  false);
		wrap_end_int(t, fn, r, r < 0 ? err : 0);
	}
	t->wrap = outer;
	errno = err;
	return r;
}

WRAP pid_t fork(void)
{
	return fork_common(AGENT_FN_fork, CALLER);
}

/* A fork: see the top of the file. */
WRAP pid_t vfork(void)
{
	return fork_common(AGENT_FN_vfork, CALLER);
}

/* ------------------------------------------------------------ spawn */

/* posix_spawn and posix_spawnp: the path (or file), and the child's pid
 * when it succeeded.  The result is an error number, not -1/errno. */
static int spawn_common(unsigned fn, unsigned key, const void *caller, pid_t *pid, const char *path,
			const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
			char *const argv[], char *const envp[])
{
	__typeof__(posix_spawn) *real =
	    fn == AGENT_FN_posix_spawn ? REAL(posix_spawn) : REAL(posix_spawnp);
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	struct wrap_arg a;
	pid_t child = 0;
	int r, err;

	if (!t)
		return real(pid, path, fa, attr, argv, envp);
	if (!wrap_call_begin(t, fn, caller, NULL, 0)) {
		wrap_leave(t);
		return real(pid, path, fa, attr, argv, envp);
	}
	wrap_str(t, key, path, PROC_STR_MAX);
	/* The caller may pass NULL for the pid: ours is then the only copy. */
	r = real(pid ? pid : &child, path, fa, attr, argv, envp);
	err = errno;
	if (pid)
		child = *pid;
	a = WARG(PID, I64, child);
	wrap_call_end(t, fn, ev_int_payload(r), r, 0, &a, r == 0);
	wrap_leave(t);
	errno = err;
	return r;
}

/* The child gets the mask the program means it to (agent/sample/sample.h). */
WRAP int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	bool hold = agent_sample_hold_prof();
	int r = spawn_common(AGENT_FN_posix_spawn, AGENT_KEY_PATH, CALLER, pid, path, fa, attr,
			     argv, envp);

	agent_sample_release_prof(hold);
	return r;
}

WRAP int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	bool hold = agent_sample_hold_prof();
	int r = spawn_common(AGENT_FN_posix_spawnp, AGENT_KEY_FILE, CALLER, pid, file, fa, attr,
			     argv, envp);

	agent_sample_release_prof(hold);
	return r;
}

static int system_call(const char *command, const void *caller)
{
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	int r, err;

	if (!t)
		return REAL(system)(command);
	if (!wrap_call_begin(t, AGENT_FN_system, caller, NULL, 0)) {
		wrap_leave(t);
		return REAL(system)(command);
	}
	wrap_str(t, AGENT_KEY_COMMAND, command, PROC_STR_MAX);
	r = REAL(system)(command);
	err = errno;
	wrap_end_int(t, AGENT_FN_system, r, r == -1 ? err : 0);
	wrap_leave(t);
	errno = err;
	return r;
}

WRAP int system(const char *command)
{
	bool hold = agent_sample_hold_prof();
	int r = system_call(command, CALLER);

	agent_sample_release_prof(hold);
	return r;
}

/* ------------------------------------------------------------ wait */

/* The exit record of waitpid, wait and wait4: the result (the pid that
 * changed state, 0 for WNOHANG with none, -1 with errno) and, when a child
 * was reaped and the caller asked for it, its raw wait status (as given
 * by the kernel: WEXITSTATUS(s) = s >> 8 ...). */
static void wait_end(struct tstate *t, unsigned fn, pid_t r, int err, const int *status)
{
	bool has = r > 0 && status;
	struct wrap_arg a = WARG(STATUS, I64, has ? *status : 0);

	wrap_call_end(t, fn, ev_int_payload(r), r, r < 0 ? err : 0, &a, has);
}

WRAP pid_t waitpid(pid_t pid, int *status, int options)
{
	struct wrap_arg a[2] = { WARG(PID, I64, pid), WARG(OPTIONS, I64, options) };
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	pid_t r;
	int err;

	if (!t)
		return REAL(waitpid)(pid, status, options);
	if (!wrap_call_begin(t, AGENT_FN_waitpid, CALLER, a, 2)) {
		wrap_leave(t);
		return REAL(waitpid)(pid, status, options);
	}
	r = REAL(waitpid)(pid, status, options);
	err = errno;
	wait_end(t, AGENT_FN_waitpid, r, err, status);
	wrap_leave(t);
	errno = err;
	return r;
}

WRAP pid_t wait(int *status)
{
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	pid_t r;
	int err;

	if (!t)
		return REAL(wait)(status);
	if (!wrap_call_begin(t, AGENT_FN_wait, CALLER, NULL, 0)) {
		wrap_leave(t);
		return REAL(wait)(status);
	}
	r = REAL(wait)(status);
	err = errno;
	wait_end(t, AGENT_FN_wait, r, err, status);
	wrap_leave(t);
	errno = err;
	return r;
}

WRAP pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	struct wrap_arg a[2] = { WARG(PID, I64, pid), WARG(OPTIONS, I64, options) };
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	pid_t r;
	int err;

	if (!t)
		return REAL(wait4)(pid, status, options, ru);
	if (!wrap_call_begin(t, AGENT_FN_wait4, CALLER, a, 2)) {
		wrap_leave(t);
		return REAL(wait4)(pid, status, options, ru);
	}
	r = REAL(wait4)(pid, status, options, ru);
	err = errno;
	wait_end(t, AGENT_FN_wait4, r, err, status);
	wrap_leave(t);
	errno = err;
	return r;
}

/* waitid: the kind of id (P_PID, P_PGID, P_ALL ...), the pid when it is
 * one, and the options; at the end, when a child changed state, its
 * status as siginfo gives it (the exit code, or the signal number) and,
 * when the caller did not name it, its pid. */
WRAP int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	struct wrap_arg a[3] = { WARG(TYPE, I64, idtype), WARG(OPTIONS, I64, options),
				 WARG(PID, I64, id) };
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	struct wrap_arg e[2];
	unsigned ne = 0;
	int r, err;

	if (!t)
		return REAL(waitid)(idtype, id, info, options);
	if (!wrap_call_begin(t, AGENT_FN_waitid, CALLER, a, idtype == P_PID ? 3 : 2)) {
		wrap_leave(t);
		return REAL(waitid)(idtype, id, info, options);
	}
	r = REAL(waitid)(idtype, id, info, options);
	err = errno;
	/* With WNOHANG and no child ready, si_pid is 0. */
	if (r == 0 && info && info->si_pid) {
		e[ne++] = WARG(STATUS, I64, info->si_status);
		if (idtype != P_PID)
			e[ne++] = WARG(PID, I64, info->si_pid);
	}
	wrap_call_end(t, AGENT_FN_waitid, ev_int_payload(r), r, r < 0 ? err : 0, e, ne);
	wrap_leave(t);
	errno = err;
	return r;
}

/* ------------------------------------------------------------ exit */

/* exit: the enter record only.  The frame stays open while the atexit
 * handlers and destructors run (their calls nest inside it: `wrap` is
 * cleared first), and the converter, which runs last, closes it. */
WRAP void exit(int status)
{
	struct wrap_arg a = WARG(STATUS, I64, status);
	struct tstate *t = wrap_enter(AGENT_G_PROC);

	if (t) {
		wrap_call_begin(t, AGENT_FN_exit, CALLER, &a, 1);
		wrap_leave(t);
	}
	REAL(exit)(status);
	__builtin_unreachable();
}

/* _exit and _Exit seal nothing (a signal handler may call them): the
 * frame is closed here, the spool's header says that the process exited
 * and with which status, whatever the groups recorded, and fxt-run
 * converts the spool as it is. */
static AGENT_FORK_CODE void quick_exit_record(unsigned fn, const void *caller, int status)
{
	struct wrap_arg a = WARG(STATUS, I64, status);
	struct tstate *t = wrap_enter(AGENT_G_PROC);

	if (t) {
		if (wrap_call_begin(t, fn, caller, &a, 1))
			wrap_call_end(t, fn, 0, 0, 0, NULL, 0);
		wrap_leave(t);
	}
	/* Not in a child that shares our memory without fork (clone with
	 * CLONE_VM): the spool is its parent's. */
	if (agent_ensure_init() == 0 && !agent.disabled && getpid() == agent.pid)
		spool_mark_exit(&agent.spool, status);
}

WRAP AGENT_FORK_CODE void _exit(int status)
{
	quick_exit_record(AGENT_FN__exit, CALLER, status);
	REAL(_exit)(status);
	__builtin_unreachable();
}

WRAP void _Exit(int status)
{
	quick_exit_record(AGENT_FN__Exit, CALLER, status);
	REAL(_Exit)(status);
	__builtin_unreachable();
}
