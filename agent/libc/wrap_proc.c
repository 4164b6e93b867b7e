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
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
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

/* A fork-like call: what the child's side needs (read in the child, a
 * copy of the parent's memory), and how the child is made. */
struct forker {
	unsigned fn;	    /* AGENT_FN_* the parent's slice is named after */
	const void *caller; /* the program's call */
	pid_t ppid;	    /* agent.pid before the call */
	bool wrapped;	    /* the proc group is on: `wrap` is AGENT_WRAP_FORK */
	bool rec;	    /* the parent's enter is recorded: a flow into the child */
	bool own;	    /* the wrapper runs the agent's fork handlers, not libc */
	bool held;	    /* ... and their prepare ran */
	/* The real call (0 in the child, as fork), with its arguments. */
	long (*make)(struct forker *);
	int (*fn_clone)(void *); /* clone(): the program's function and arguments */
	void *stack, *arg, *tls;
	int flags;
	pid_t *ptid, *ctid;
	long nr, a[6]; /* syscall(): the number and arguments */
};

/* The child's side of a fork-like call, first thing in the child. */
static AGENT_FORK_CODE void forker_child(struct forker *f)
{
	if (f->held)
		agent_fork_child();
	if (f->wrapped)
		fork_child(&agent_tls, f->caller, f->ppid, f->rec);
}

/* fork, vfork, _Fork, clone() without CLONE_VM, the clone system calls
 * through syscall(): the parent records its call (with a flow into the
 * child), and the child starts afresh (the atfork child handler: its own
 * spool) with its "fork (child)" frame.  Around the calls the C library
 * runs no atfork handler for (`own`), the wrapper runs the agent's, even
 * unrecorded: else the child would write into its parent's chunks (shared
 * memory), clobbering them, and its own records would be lost. */
static AGENT_FORK_CODE long fork_common(struct forker *f)
{
	struct tstate *t = &agent_tls;
	unsigned char outer = t->wrap;
	long r;
	int err;

	f->ppid = agent.pid;
	f->wrapped = f->rec = f->held = false;
	if (!t->busy) {
		/* The real functions a short child ends with, looked up here
		 * once, whether or not the fork is recorded (_exit and _Exit
		 * are the agent's wrappers with any --libc): else each child
		 * of a process that never exited so looks them up itself
		 * (dlsym: the loader's lookup, its pages faulted in again). */
		(void)REAL(_exit);
		(void)REAL(_Exit);
		if (agent_libc_on & AGENT_G_PROC) {
			f->rec = wrap_call_begin(t, f->fn, f->caller, NULL, 0);
			f->wrapped = true;
			t->wrap = AGENT_WRAP_FORK; /* the child keeps it (atfork_child()) */
		}
	}
	if (f->own)
		f->held = agent_fork_prepare();
	r = f->make(f);
	if (r == 0) {
		forker_child(f);
		return 0;
	}
	err = errno;
	if (f->held)
		agent_fork_parent();
	if (f->wrapped) {
		if (f->rec) {
			if (r > 0)
				wrap_flow(t, EV_FLOW_BEGIN,
					  ev_fork_flow_id((uint64_t)f->ppid, (uint64_t)r), false);
			wrap_end_int(t, f->fn, (int64_t)r, r < 0 ? err : 0);
		}
		t->wrap = outer;
	}
	errno = err;
	return r;
}

static AGENT_FORK_CODE long make_fork(struct forker *f)
{
	(void)f;
	return REAL(fork)();
}

WRAP AGENT_FORK_CODE pid_t fork(void)
{
	struct forker f = { .fn = AGENT_FN_fork, .caller = CALLER, .make = make_fork };

	return (pid_t)fork_common(&f);
}

/* A fork: see the top of the file. */
WRAP AGENT_FORK_CODE pid_t vfork(void)
{
	struct forker f = { .fn = AGENT_FN_vfork, .caller = CALLER, .make = make_fork };

	return (pid_t)fork_common(&f);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
REAL_DECL(_Fork);

static AGENT_FORK_CODE long make__Fork(struct forker *f)
{
	(void)f;
	return REAL(_Fork)();
}

/* glibc's fork without its atfork handlers (async-signal-safe): the
 * agent's run all the same.  Its prepare takes the agent's locks, which
 * no code a signal can interrupt holds (the slow paths block signals). */
WRAP AGENT_FORK_CODE pid_t _Fork(void)
{
	struct forker f = {
		.fn = AGENT_FN__Fork, .caller = CALLER, .make = make__Fork, .own = true
	};

	return (pid_t)fork_common(&f);
}
#endif

/* ------------------------------------------------------------ clone */

REAL_DECL(clone);
REAL_DECL(syscall);

/* The function a clone() child without CLONE_VM runs instead of the
 * program's: the child's side first, on the copy of the wrapper's frame
 * the child has (f is on the parent's stack, copied with its memory). */
static AGENT_FORK_CODE int clone_child(void *arg)
{
	struct forker *f = arg;
	int (*fn)(void *) = f->fn_clone;
	void *fn_arg = f->arg;

	forker_child(f);
	return fn(fn_arg);
}

static AGENT_FORK_CODE long make_clone(struct forker *f)
{
	return REAL(clone)(clone_child, f->stack, f->flags, f, f->ptid, f->tls, f->ctid);
}

/* A clone() child that shares our memory and, without CLONE_SETTLS, this
 * thread's state (agent/tbuf.h, vm_children): it runs vm_child() first,
 * then the program's function; the thread's state is its own again when
 * the last such child is gone (here, or in _exit, exit or an exec:
 * agent_tbuf_vm_leaving()).  What vm_child() needs is in a slot the child
 * frees once it read it: the parent's frame may be gone by then (with
 * CLONE_VFORK the parent waits, and the slot is its frame). */
struct vm_start {
	int (*fn)(void *);
	void *arg;
	int used; /* the slot is taken */
	int ran;  /* the child read it */
};

#define VM_STARTS 64
static struct vm_start vm_starts[VM_STARTS];

static int vm_child(void *arg)
{
	struct vm_start *v = arg;
	int (*fn)(void *) = v->fn;
	void *fn_arg = v->arg;
	int r;

	__atomic_store_n(&v->ran, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&v->used, 0, __ATOMIC_RELEASE);
	r = fn(fn_arg);
	agent_tbuf_vm_gone(&agent_tls);
	return r;
}

/* CLONE_VM without CLONE_SETTLS: the child runs on this thread's state,
 * which records only the thread's own calls until the child is gone; the
 * child's calls are counted as the thread's drops, with their cause
 * (SPOOL_CAUSE_VM_CHILD).  With CLONE_VFORK the thread waits for the
 * child inside the call, and takes its state back when it returns.  With
 * every slot taken (64 such children starting at once), as before: the
 * child records into the thread's chunk. */
static long clone_vm(int (*fn)(void *), void *stack, int flags, void *arg, pid_t *ptid, void *tls,
		     pid_t *ctid)
{
	struct vm_start own = { .fn = fn, .arg = arg, .used = 1 }, *v = NULL;
	struct tstate *t = &agent_tls;
	unsigned char busy = t->busy, wrap = t->wrap;
	long r;
	int err;

	if (agent.disabled)
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	if (flags & CLONE_VFORK)
		v = &own;
	for (unsigned i = 0; !v && i < VM_STARTS; i++)
		if (!__atomic_exchange_n(&vm_starts[i].used, 1, __ATOMIC_ACQ_REL))
			v = &vm_starts[i];
	if (!v)
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	v->fn = fn;
	v->arg = arg;
	__atomic_store_n(&v->ran, 0, __ATOMIC_RELEASE);
	agent_tbuf_vm_child(t);
	r = REAL(clone)(vm_child, stack, flags, v, ptid, tls, ctid);
	err = errno;
	if (r < 0) {
		agent_tbuf_vm_gone(t);
		__atomic_store_n(&v->used, 0, __ATOMIC_RELEASE);
	} else if (flags & CLONE_VFORK) {
		/* The child ended or exec'd: whatever it left in the state it
		 * shared is undone. */
		t->busy = busy;
		t->wrap = wrap;
		if (!__atomic_load_n(&v->ran, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&t->vm_children, __ATOMIC_ACQUIRE))
			agent_tbuf_vm_gone(t); /* it never ran, or did not say it ended */
	}
	errno = err;
	return r;
}

/* clone(): with CLONE_VM the child shares our memory (see clone_vm(); with
 * CLONE_SETTLS too it is a thread of ours with a TLS of its own, recorded
 * as any); without, it is a fork whose child runs `fn`, and clone_child()
 * makes it a process of its own first.  The optional arguments are read
 * as the C library's clone reads them, whether given or not. */
WRAP int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct forker f = {
		.fn = AGENT_FN_clone, .caller = CALLER, .make = make_clone, .own = true
	};
	va_list ap;

	va_start(ap, arg);
	f.ptid = va_arg(ap, pid_t *);
	f.tls = va_arg(ap, void *);
	f.ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (flags & CLONE_VM) {
		if (flags & CLONE_SETTLS)
			return REAL(clone)(fn, stack, flags, arg, f.ptid, f.tls, f.ctid);
		return (int)clone_vm(fn, stack, flags, arg, f.ptid, f.tls, f.ctid);
	}
	f.fn_clone = fn;
	f.stack = stack;
	f.flags = flags;
	f.arg = arg;
	return (int)fork_common(&f);
}

static AGENT_FORK_CODE long make_syscall(struct forker *f)
{
	return REAL(syscall)(f->nr, f->a[0], f->a[1], f->a[2], f->a[3], f->a[4], f->a[5]);
}

/* The clone system calls made through syscall() (agent/libc/wrap_fd.c
 * wraps it): one without CLONE_VM (a fork: the child returns there, on
 * a copy of our stack) is a fork of ours; any other goes straight
 * through. */
#ifdef SYS_clone3
/* clone3's flags, the first word of its struct clone_args at a[0] (a[1]
 * bytes), read by the kernel (process_vm_readv() of our own memory): a
 * bad pointer is the kernel's to refuse (EFAULT), never a fault here.
 * Whether they could be read. */
static bool clone3_flags(const long a[6], uint64_t *flags)
{
	struct iovec local = { flags, sizeof(*flags) },
		     remote = { (void *)(uintptr_t)a[0], sizeof(*flags) };

	if (!a[0] || (size_t)a[1] < sizeof(*flags))
		return false;
	return agent_sys_raw6(SYS_process_vm_readv,
			      (long)__atomic_load_n(&agent.pid, __ATOMIC_RELAXED),
			      (long)(uintptr_t)&local, 1, (long)(uintptr_t)&remote, 1,
			      0) == (long)sizeof(*flags);
}
#endif

long agent_syscall_clone(long nr, const long a[6], const void *caller)
{
	struct forker f = { .caller = caller, .make = make_syscall, .own = true, .nr = nr };
#ifdef SYS_clone3
	uint64_t flags;
#endif

	memcpy(f.a, a, sizeof(f.a));
	if (nr == SYS_clone && !(a[0] & CLONE_VM))
		f.fn = AGENT_FN_clone;
#ifdef SYS_clone3
	else if (nr == SYS_clone3 && clone3_flags(a, &flags) && !(flags & CLONE_VM))
		f.fn = AGENT_FN_clone3;
#endif
	else
		return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	return fork_common(&f);
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
	/* Not in a child that shares our memory without fork (clone with
	 * CLONE_VM): the spool is its parent's. */
	bool own = agent_ensure_init() == 0 && !agent.disabled && agent_check_process();
	struct tstate *t = wrap_enter(AGENT_G_PROC);

	if (t) {
		if (wrap_call_begin(t, fn, caller, &a, 1))
			wrap_call_end(t, fn, 0, 0, 0, NULL, 0);
		wrap_leave(t);
	}
	if (own)
		spool_mark_exit(&agent.spool, status);
	else
		agent_tbuf_vm_leaving(&agent_tls);
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
