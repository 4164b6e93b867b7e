/* The exec family's wrappers (proc group): execve and friends seal the
 * spool first (agent_before_exec()): the new image replaces this one, and
 * it loads the agent again through LD_PRELOAD.  If exec fails, this image
 * is no longer traced (its archive is written).  The new image gets
 * FXT_EXEC_PID=<pid> so that it does not take the root's archive name
 * (agent_exec_env()).  In a vfork child (pid differs from ours and no
 * fork handler ran), nothing is done: it shares our memory.  In a process
 * attached to (fxt-run -p), the spool is sealed and the environment left
 * as it is: the new image is not recorded.  See
 * agent/libc/libc.h for the rules every wrapper follows. */
#include <config.h>

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/libc/libc.h"

#define EXPORT __attribute__((visibility("default")))

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);

static int do_exec(execve_fn *fn, const char *file, char *const argv[], char *const envp[])
{
	char var[48], img[32];
	char **env;
	int ret, saved;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	/* Attached to (fxt-run -p): sealed, but the image it execs is not
	 * recorded (nothing preloads the agent into it), so its environment is
	 * the program's. */
	if (!agent_before_exec() || agent.late) {
		/* A CLONE_VM child gives its parent's thread state back
		 * (agent/tbuf.h, vm_children), and takes it again if the exec
		 * fails. */
		bool vm = agent_tbuf_vm_leaving(&agent_tls);

		ret = fn(file, argv, envp);
		if (vm) {
			saved = errno;
			agent_tbuf_vm_child(&agent_tls);
			errno = saved;
		}
		return ret;
	}
	env = agent_exec_env(envp, var, sizeof(var), img, sizeof(img));
	ret = fn(file, argv, env ? env : envp);
	saved = errno;
	free(env);
	errno = saved;
	return ret;
}

static execve_fn *real_fn(const char *name)
{
	return (execve_fn *)agent_resolve(name, NULL);
}

/* The exec frame (proc group), recorded before the seal so that the
 * archive shows it: the path (or file) and the argument vector, joined
 * with spaces.  It stays open: the converter closes it at flush time, the
 * last moment this image is traced.  Only the outermost exec wrapper
 * records (one reached from inside another wrapper finds `wrap` set).
 * Returns the thread state for exec_end(),
 * or NULL. */
#define EXEC_STR_MAX 256u

static struct tstate *exec_begin(unsigned fn, unsigned key, const char *file, char *const argv[],
				 const void *caller)
{
	struct tstate *t = wrap_enter(AGENT_G_PROC);
	/* One byte more than kept, so that wrap_str() sees a cut. */
	char args[EXEC_STR_MAX + 2];
	size_t n = 0, cap = EXEC_STR_MAX + 1;

	if (!t)
		return NULL;
	if (getpid() != agent.pid || !wrap_call_begin(t, fn, caller, NULL, 0)) {
		wrap_leave(t);
		return NULL;
	}
	wrap_str(t, key, file, EXEC_STR_MAX);
	for (size_t i = 0; argv && argv[i] && n < cap; i++) {
		size_t len;

		if (i)
			args[n++] = ' ';
		len = strnlen(argv[i], cap - n);
		memcpy(args + n, argv[i], len);
		n += len;
	}
	args[n] = '\0';
	wrap_str(t, AGENT_KEY_ARGV, args, EXEC_STR_MAX);
	return t;
}

/* After a failed exec (a successful one does not return): nothing more is
 * recorded, the archive is written already; the thread is free again. */
static int exec_end(struct tstate *t, int ret)
{
	int saved = errno;

	if (t)
		wrap_leave(t);
	errno = saved;
	return ret;
}

/* The real execve and execvpe behind the seal (do_exec()), for every
 * wrapper: called directly, not through our exported names, which the
 * agent's own calls reach only when preloaded (attached to, they go to
 * the C library's, past the seal). */
static int sealed_execve(const char *path, char *const argv[], char *const envp[])
{
	static execve_fn *fn;

	if (!fn)
		fn = real_fn("execve");
	return do_exec(fn, path, argv, envp);
}

static int sealed_execvpe(const char *file, char *const argv[], char *const envp[])
{
	static execve_fn *fn;

	if (!fn)
		fn = real_fn("execvpe");
	return do_exec(fn, file, argv, envp);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct tstate *t = exec_begin(AGENT_FN_execve, AGENT_KEY_PATH, path, argv, CALLER);

	return exec_end(t, sealed_execve(path, argv, envp));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct tstate *t = exec_begin(AGENT_FN_execvpe, AGENT_KEY_FILE, file, argv, CALLER);

	return exec_end(t, sealed_execvpe(file, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	struct tstate *t = exec_begin(AGENT_FN_execv, AGENT_KEY_PATH, path, argv, CALLER);

	return exec_end(t, sealed_execve(path, argv, environ));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	struct tstate *t = exec_begin(AGENT_FN_execvp, AGENT_KEY_FILE, file, argv, CALLER);

	return exec_end(t, sealed_execvpe(file, argv, environ));
}

/* The list forms: glibc implements them with its internal execve, which
 * our wrapper does not see, so they are wrapped too.  They usually run in
 * a fork or vfork child, where malloc is not safe, so the argument vector
 * is built on the caller's stack (its size is bounded by ARG_MAX anyway).
 *
 * list_count() gives the number of pointers to store: the arguments from
 * arg0 up to and including the terminating NULL.  list_fill() stores them
 * and, for execle, takes the environment that follows the NULL. */
static size_t list_count(const char *arg0, va_list ap)
{
	va_list aq;
	size_t n = 1;

	if (!arg0)
		return 1;
	va_copy(aq, ap);
	while (va_arg(aq, char *))
		n++;
	va_end(aq);
	return n + 1;
}

static void list_fill(char **v, size_t n, const char *arg0, va_list ap, char *const **envp)
{
	v[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		v[i] = va_arg(ap, char *); /* the last one read is the NULL */
	if (envp)
		*envp = va_arg(ap, char *const *);
}

#define EXEC_LIST_ARGV(argv, arg0, ap, envp)             \
	size_t argv##_n = list_count((arg0), (ap));      \
	char **argv = alloca(argv##_n * sizeof(char *)); \
	list_fill(argv, argv##_n, (arg0), (ap), (envp))

EXPORT int execl(const char *path, const char *arg, ...)
{
	struct tstate *t;
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGV(argv, arg, ap, NULL);
	va_end(ap);
	t = exec_begin(AGENT_FN_execl, AGENT_KEY_PATH, path, argv, CALLER);
	return exec_end(t, sealed_execve(path, argv, environ));
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	struct tstate *t;
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGV(argv, arg, ap, NULL);
	va_end(ap);
	t = exec_begin(AGENT_FN_execlp, AGENT_KEY_FILE, file, argv, CALLER);
	return exec_end(t, sealed_execvpe(file, argv, environ));
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp = NULL;
	struct tstate *t;
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGV(argv, arg, ap, &envp);
	va_end(ap);
	t = exec_begin(AGENT_FN_execle, AGENT_KEY_PATH, path, argv, CALLER);
	return exec_end(t, sealed_execve(path, argv, envp));
}
