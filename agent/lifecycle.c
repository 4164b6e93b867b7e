/* The agent's life cycle: initialisation, thread exit, fork, exec and the
 * exit-time flush. */
#include <config.h>

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/calib.h"
#include "agent/clock.h"
#include "agent/elfsyms.h"
#include "agent/feature.h"
#include "agent/settings.h"
#include "agent/libc.h"
#include "agent/log.h"
#include "agent/modules.h"
#include "run/settings.h"
#include "spool/session.h"
#include "spool/launcher.h"
#include "spool/names.h"
#include "spool/proc.h"

#define EXPORT __attribute__((visibility("default")))

struct agent agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;
static bool atexit_ok;
static dev_t status_dev;
static ino_t status_ino;

/* ------------------------------------------------------------ naming */

void agent_spool_path(char *buf, size_t cap, const char *output, long pid, unsigned image)
{
	run_spool_name(buf, cap, output, pid, image);
}

static bool is_root(void)
{
	long pid = (long)getpid();

	return !agent.forked && agent_cfg.exec_pid != pid && agent_cfg.root_pid == pid;
}

/* ------------------------------------------------------------ threads */

static void key_destructor(void *arg)
{
	(void)arg;
	agent_features_emit(AGENT_EV_THREAD_END, NULL);
	agent_tbuf_retire(&agent_tls);
	agent_features_emit(AGENT_EV_THREAD_GONE, NULL);
}

/* ------------------------------------------------------------ fork */

/* The agent's locks are taken as agent code (busy): the sync wrappers
 * must neither record them as the program's nor, recording, need a new
 * chunk while the spool lock is held (its refill takes that lock). */
static void atfork_prepare(void)
{
	agent_tls.busy++;
	pthread_mutex_lock(&agent.lock);
	pthread_mutex_lock(&agent.spool.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&agent.spool.lock);
	pthread_mutex_unlock(&agent.lock);
	agent_busy_leave(&agent_tls);
}

/* The child starts afresh: its own spool and archive, no buffer of the
 * parent's (their chunks are shared memory: writing them would clobber the
 * parent's records).
 *
 * A fork inside a signal handler (PostgreSQL's postmaster starts its
 * workers so) inherits the state of the code the handler interrupted on
 * this thread.  A libc wrapper's `wrap` (say select()'s) would keep every
 * call of the child from being recorded: it is cleared, but for fork's own
 * wrapper's (which the child ends itself).  Should the handler return,
 * that call ends with an exit whose enter is in the parent's archive: the
 * converter ignores it.  Agent code (`busy` beyond prepare's count: most
 * often a hook, as the signal came in its rdtsc) is counted from 0 again:
 * the handler's hooks and wrappers record as any, and the interrupted
 * code, if the handler returns, ends its counts at 0 (agent_busy_leave()),
 * storing the slot it may have reserved in the parent's chunk into private
 * memory left in its place. */
static void atfork_child(void)
{
	unsigned interrupted = agent_tls.busy - 1u;
	bool in_call = agent_tls.wrap && agent_tls.wrap != AGENT_WRAP_FORK;

	if (in_call)
		agent_tls.wrap = 0;
	pthread_mutex_init(&agent.lock, NULL);
	agent.pid = getpid();
	agent.forked = true;
	agent.flushed = false;
	agent.lost = 0;
	agent_tbuf_forget_all(&agent_tls, interrupted != 0);
	agent_cfg.image = 1;
	agent_spool_path(agent.spool_path, sizeof(agent.spool_path), agent_cfg.output,
			 (long)agent.pid, 1);
	spool_forget(&agent.spool, agent.spool_path);
	/* The features start again in the child: libc calls recorded, the
	 * forking thread sampled (timers are not inherited). */
	agent_features_emit(AGENT_EV_FORK_CHILD, NULL);
	agent_dbg("fork child%s", interrupted ? ", in a signal handler that interrupted the agent"
				  : in_call   ? ", in a signal handler that interrupted a libc call"
					      : "");
	agent_tls.busy = 0; /* prepare's count, and those of the interrupted code */
}

/* ------------------------------------------------------------ init */

static void atexit_flush(void)
{
	agent_flush();
}

static void do_init(void)
{
	char pid[24];
	struct stat st;

	agent_config_load();
	agent_features_configure();
	agent_clock_init();
	agent.pid = getpid();
	if (!agent_cfg.root_pid) {
		/* The first traced process is the root; tell every descendant. */
		agent_cfg.root_pid = (long)agent.pid;
		agent_fmt(pid, sizeof(pid), "%ld", (long)agent.pid);
		setenv(FXT_ENV(ROOT_PID), pid, 0);
		agent_output_export();
	}
	if (agent_cfg.status_fd >= 0 && fstat(agent_cfg.status_fd, &st) == 0) {
		status_dev = st.st_dev;
		status_ino = st.st_ino;
	}
	agent_spool_path(agent.spool_path, sizeof(agent.spool_path), agent_cfg.output,
			 (long)agent.pid, agent_cfg.image);
	spool_init(&agent.spool, agent.spool_path, agent_cfg.chunk_size, agent_cfg.buffer_size,
		   agent_cfg.max_size);
	agent.key_ok = pthread_key_create(&agent.key, key_destructor) == 0;
	init_err = -pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	/* Registered from the preloaded library's constructor, before
	 * __libc_start_main registers the dynamic linker's fini: so it runs
	 * after the program's atexit handlers and every destructor. */
	atexit_ok = atexit(atexit_flush) == 0;
	agent_modules_snapshot();
	if (init_err)
		agent.disabled = true;
	/* Before main(), while the process has one thread: patching starts
	 * (even when disabled), libc calls are recorded (unless disabled). */
	agent_features_emit(AGENT_EV_START, NULL);
}

int agent_ensure_init(void)
{
	pthread_once(&init_once, do_init);
	return init_err;
}

__attribute__((constructor)) static void agent_constructor(void)
{
	agent_tls.busy++;
	agent_ensure_init();
	agent_busy_leave(&agent_tls);
	agent_features_emit(AGENT_EV_THREAD_START, NULL);
}

/* Only a fallback: the atexit handler runs later (see do_init). */
__attribute__((destructor)) static void agent_destructor(void)
{
	if (!atexit_ok)
		agent_flush();
}

/* ------------------------------------------------------------ flush */

void agent_thread_comm(uint64_t tid, char *name, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	name[0] = '\0';
	agent_fmt(path, sizeof(path), "/proc/self/task/%llu/comm", (unsigned long long)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, cap - 1);
	close(fd);
	if (n <= 0) {
		name[0] = '\0';
		return;
	}
	name[n] = '\0';
	if (name[n - 1] == '\n')
		name[n - 1] = '\0';
}

void agent_seal_thread(const struct tbuf *tb, struct spool_seal_thread *f)
{
	memset(f, 0, sizeof(*f));
	f->serial = tb->serial;
	f->tid = tb->tid;
	f->dropped = __atomic_load_n(&tb->dropped, __ATOMIC_RELAXED);
	f->first_drop_ts = __atomic_load_n(&tb->first_drop_ts, __ATOMIC_RELAXED);
	f->stop_ts = __atomic_load_n(&tb->stop_ts, __ATOMIC_RELAXED);
	f->end_ts = __atomic_load_n(&tb->end_ts, __ATOMIC_RELAXED);
	f->overwritten = __atomic_load_n(&tb->overwritten, __ATOMIC_RELAXED);
	f->drop_cause = __atomic_load_n(&tb->drop_cause, __ATOMIC_RELAXED);
	if (__atomic_load_n(&tb->state, __ATOMIC_RELAXED) == TBUF_RETIRED)
		memcpy(f->name, tb->name, sizeof(f->name));
}

/* Snapshot of the thread table for the seal; *n threads (malloc'd). */
static struct spool_seal_thread *collect_threads(size_t *n)
{
	struct spool_seal_thread *v;
	size_t len = 0, cap = 0;
	struct tbuf *tb;

	pthread_mutex_lock(&agent.lock);
	for (tb = agent.threads; tb; tb = tb->next)
		cap++;
	v = calloc(cap ? cap : 1, sizeof(*v));
	for (tb = agent.threads; v && tb; tb = tb->next)
		agent_seal_thread(tb, &v[len++]);
	pthread_mutex_unlock(&agent.lock);
	/* Live threads: their comm now (outside the lock: it opens files). */
	for (size_t i = 0; v && i < len; i++)
		if (!v[i].name[0])
			agent_thread_comm(v[i].tid, v[i].name, sizeof(v[i].name));
	*n = len;
	return v;
}

/* What the converter said of the archive it wrote. */
struct self_result {
	uint64_t events, threads, dropped, bytes;
};

static void report_status(const struct self_result *res, const char *path)
{
	struct stat sb;
	char line[4096 + 160];
	size_t n;

	if (agent_cfg.status_fd < 0 || fstat(agent_cfg.status_fd, &sb) != 0 ||
	    sb.st_dev != status_dev || sb.st_ino != status_ino)
		return;
	n = agent_fmt(
	    line, sizeof(line),
	    "fxtrace pid=%ld events=%llu threads=%llu dropped=%llu bytes=%llu output=%s\n",
	    (long)agent.pid, (unsigned long long)res->events, (unsigned long long)res->threads,
	    (unsigned long long)res->dropped, (unsigned long long)res->bytes, path);
	while (write(agent_cfg.status_fd, line, n) < 0 && errno == EINTR)
		;
}

/* After the seal: whether fxt-run converts the spool (the protocol of
 * spool/launcher.h); if not, this process has claimed it. */
static bool launcher_converts(void)
{
	if (agent_cfg.launcher_pid &&
	    proc_alive(agent_cfg.launcher_pid, agent_cfg.launcher_start) &&
	    spool_launcher_state(&agent.spool) == LAUNCHER_OPEN)
		return true;
	/* fxt-run may take it all the same, the spool being sealed. */
	return !spool_claim(agent.spool.hdr, SPOOL_OWNER_NONE, SPOOL_OWNER_SELF);
}

typedef int convert_self_fn(const char *spool_path, const char *output, long pid, unsigned n,
			    const char *session, char *path, size_t cap, uint64_t *events,
			    uint64_t *threads, uint64_t *dropped, uint64_t *bytes);

/* The converter, libfxt-convert.so next to this library (convert/self.c),
 * loaded now: only a process that converts its own spool pays for it and
 * for libdw. */
void *agent_load_sibling(const char *name)
{
	char path[4096];
	const char *slash;
	Dl_info info;
	size_t dir, len = strlen(name) + 1;
	void *h;

	if (!dladdr((void *)agent_load_sibling, &info) || !info.dli_fname ||
	    !(slash = strrchr(info.dli_fname, '/')))
		return NULL;
	dir = (size_t)(slash - info.dli_fname) + 1;
	if (dir + len > sizeof(path))
		return NULL;
	memcpy(path, info.dli_fname, dir);
	memcpy(path + dir, name, len);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		agent_err("cannot load %s: %s", path, dlerror());
	return h;
}

/* Its entry for spools; its handle in *h (NULL if it cannot be loaded),
 * where the features find theirs (snapshots). */
static convert_self_fn *load_converter(void **h)
{
	*h = agent_load_sibling("libfxt-convert.so");
	if (!*h)
		return NULL;
	return (convert_self_fn *)dlsym(*h, "fxt_convert_spool_self");
}

/* Converts this process's own sealed spool into its archive, in this
 * process: without fxt-run, or when fxt-run is gone. */
static void convert_self(void)
{
	char path[4096 + 64], session[4096 + 64];
	void *converter;
	convert_self_fn *convert = load_converter(&converter);
	struct self_result res;
	uint64_t t0 = agent_mono_ns();
	int err;

	memset(&res, 0, sizeof(res));
	session_path(session, sizeof(session), agent_cfg.output, agent_cfg.root_pid);
	agent_features_emit(AGENT_EV_SELF_CONVERT,
			    &(struct agent_event){ .convert = { converter, session } });
	snprintf(path, sizeof(path), "%s", agent_cfg.output);
	/* The root's archive is OUT; any other process's OUT.PID[.N]. */
	err = convert ? convert(agent.spool.path, agent_cfg.output, (long)agent.pid,
				is_root() ? 0 : 1, session, path, sizeof(path), &res.events,
				&res.threads, &res.dropped, &res.bytes)
		      : -ENOSYS;
	/* The root removes the session when no fxt-run does (it removes it
	 * when the whole trace ends). */
	if (is_root() && !agent_cfg.launcher_pid)
		unlink(session);
	if (err < 0) {
		agent_err("writing %s failed: %s; records left in %s (fxt-run --recover turns "
			  "them into the archive)",
			  path, strerror(-err), agent.spool.path);
		spool_release(&agent.spool);
		return;
	}
	agent_dbg("wrote %s: %llu events, %llu threads, %llu dropped, %llu bytes in %llu us", path,
		  (unsigned long long)res.events, (unsigned long long)res.threads,
		  (unsigned long long)res.dropped, (unsigned long long)res.bytes,
		  (unsigned long long)((agent_mono_ns() - t0) / 1000));
	report_status(&res, path);
	if (spool_destroy(&agent.spool) < 0)
		spool_release(&agent.spool); /* converted all the same */
}

void agent_flush(void)
{
	int saved = errno;
	struct spool_seal_thread *threads;
	struct spool_seal seal;
	size_t nthreads = 0;
	int err;

	if (agent_ensure_init() < 0 || agent.disabled)
		return;
	if (__atomic_exchange_n(&agent.flushed, true, __ATOMIC_ACQ_REL))
		return;
	/* Sampling and libc calls stop (for every thread). */
	agent_features_emit(AGENT_EV_BEFORE_SEAL, NULL);
	/* Hooks of this thread (signal handlers) that come to the slow path
	 * from now on count as nested: they never take a chunk. */
	agent_tls.busy++;

	memset(&seal, 0, sizeof(seal));
	seal.magic = SPOOL_SEAL_MAGIC;
	seal.now_ts = agent_ticks();
	spool_close_grants(&agent.spool);
	/* 0: the converter measures the rate, later and so more precisely,
	 * and this process does not wait for it at its exit. */
	seal.ticks_per_second = 0;
	agent_clock_start(&seal.base_ticks, &seal.base_ns);
	seal.lost = __atomic_load_n(&agent.lost, __ATOMIC_RELAXED);
	/* Worth it once the trace fills more than a thread's first chunk
	 * (a short process's exit does not wait for it), and when some
	 * module calls the hooks (not for libc calls alone). */
	if (agent.spool.granted > AGENT_FLOOR_CHUNK_SIZE && agent_elf_loaded_instrumented())
		agent_calibrate(&seal.hook_pair_ticks, &seal.hook_inside_ticks,
				&seal.hook_stub_ticks);
	agent_dbg("hooks: extra %llu, inside %llu, empty pair %llu thousandths of a tick",
		  (unsigned long long)seal.hook_pair_ticks,
		  (unsigned long long)seal.hook_inside_ticks,
		  (unsigned long long)seal.hook_stub_ticks);
	threads = collect_threads(&nthreads);
	pthread_mutex_lock(&agent.lock);
	for (struct tbuf *tb = agent.threads; tb; tb = tb->next)
		seal.refill_ticks += __atomic_load_n(&tb->refill_ticks, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&agent.lock);
	if (!threads) {
		agent_err("out of memory; records left in %s", agent.spool.path);
		spool_release(&agent.spool);
		goto out;
	}
	/* Calls lost are said in an archive, even with nothing recorded. */
	if (!nthreads && !is_root() && !seal.lost) {
		err = spool_destroy(&agent.spool);
		if (!err) {
			agent_dbg("nothing recorded; no archive");
			goto out_threads;
		}
		/* The process may no longer remove it (it changed user): an
		 * empty archive rather than a spool left behind. */
		agent_dbg("cannot remove %s: %s", agent.spool.path, strerror(-err));
	}
	seal.nthreads = nthreads;
	seal.size = sizeof(seal) + nthreads * sizeof(*threads);
	err = spool_seal(&agent.spool, &seal, threads);
	if (err < 0) {
		/* fxt-run (or fxt-run --recover) still converts it, as a
		 * killed process's. */
		agent_err("cannot seal %s: %s; its records stay in it", agent.spool.path,
			  strerror(-err));
		spool_release(&agent.spool);
		goto out_threads;
	}
	if (launcher_converts()) {
		agent_dbg("sealed %s for fxt-run", agent.spool.path);
		spool_release(&agent.spool);
	} else {
		convert_self();
	}
out_threads:
	free(threads);
out:
	errno = saved;
}

/* ------------------------------------------------------------ exec */

/* execve and friends flush first: the new image replaces this one, and it
 * loads the agent again through LD_PRELOAD.  If exec fails, this image is
 * no longer traced (its archive is written).  The new image gets
 * FXT_EXEC_PID=<pid> so that it does not take the root's archive name.
 * In a vfork child (pid differs from ours and no fork handler ran), nothing
 * is done: it shares our memory. */

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);

static char **exec_env(char *const envp[], char *var, size_t cap, char *img, size_t icap)
{
	size_t n = 0, j = 0;
	char **v;

	agent_fmt(var, cap, FXT_ENV(EXEC_PID) "=%ld", (long)agent.pid);
	agent_fmt(img, icap, FXT_ENV(IMAGE) "=%u", agent_cfg.image + 1);
	while (envp && envp[n])
		n++;
	v = malloc((n + 3) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], FXT_ENV(EXEC_PID) "=", sizeof(FXT_ENV(EXEC_PID))) != 0 &&
		    strncmp(envp[i], FXT_ENV(IMAGE) "=", sizeof(FXT_ENV(IMAGE))) != 0)
			v[j++] = envp[i];
	v[j++] = var;
	v[j++] = img;
	v[j] = NULL;
	return v;
}

static bool before_exec(void)
{
	if (getpid() != agent.pid)
		return false; /* vfork child */
	agent_features_emit(AGENT_EV_EXEC, NULL);
	agent_flush();
	return true;
}

static int do_exec(execve_fn *fn, const char *file, char *const argv[], char *const envp[])
{
	char var[48], img[32];
	char **env;
	int ret, saved;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	if (!before_exec())
		return fn(file, argv, envp);
	env = exec_env(envp, var, sizeof(var), img, sizeof(img));
	ret = fn(file, argv, env ? env : envp);
	saved = errno;
	free(env);
	errno = saved;
	return ret;
}

static execve_fn *real_fn(const char *name)
{
	return (execve_fn *)dlsym(RTLD_NEXT, name);
}

/* The exec frame (proc group), recorded before the flush so that the
 * archive shows it: the path (or file) and the argument vector, joined
 * with spaces.  It stays open: the flusher closes it at flush time, the
 * last moment this image is traced.  Only the outermost exec wrapper
 * records (execl -> execv -> execve is one call of the program's: the
 * inner ones find `wrap` set).  Returns the thread state for exec_end(),
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

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct tstate *t = exec_begin(AGENT_FN_execve, AGENT_KEY_PATH, path, argv, CALLER);
	static execve_fn *fn;

	if (!fn)
		fn = real_fn("execve");
	return exec_end(t, do_exec(fn, path, argv, envp));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct tstate *t = exec_begin(AGENT_FN_execvpe, AGENT_KEY_FILE, file, argv, CALLER);
	static execve_fn *fn;

	if (!fn)
		fn = real_fn("execvpe");
	return exec_end(t, do_exec(fn, file, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	struct tstate *t = exec_begin(AGENT_FN_execv, AGENT_KEY_PATH, path, argv, CALLER);

	return exec_end(t, execve(path, argv, environ));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	struct tstate *t = exec_begin(AGENT_FN_execvp, AGENT_KEY_FILE, file, argv, CALLER);

	return exec_end(t, execvpe(file, argv, environ));
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
	return exec_end(t, execv(path, argv));
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	struct tstate *t;
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGV(argv, arg, ap, NULL);
	va_end(ap);
	t = exec_begin(AGENT_FN_execlp, AGENT_KEY_FILE, file, argv, CALLER);
	return exec_end(t, execvp(file, argv));
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
	return exec_end(t, execve(path, argv, envp));
}

/* ------------------------------------------------------------ change of user */

/* A process that changes user (a server's workers giving up root) may no
 * longer open its spool afterwards: the agent holds it just before
 * (spool_hold()).  Only the effective or file system user decides who may
 * open a file; `euid` is the one the call asks for, -1 for "unchanged". */
static void before_user_change(uid_t euid)
{
	int err;

	if (euid == (uid_t)-1 || euid == geteuid() || agent_ensure_init() < 0 || agent.disabled)
		return;
	agent_tls.busy++; /* our open() and mmap() are not the program's */
	err = spool_hold(&agent.spool);
	agent_busy_leave(&agent_tls);
	if (err < 0 && err != -ESHUTDOWN)
		agent_dbg("cannot hold %s before the change of user: %s", agent.spool.path,
			  strerror(-err));
}

REAL_DECL(setuid);
REAL_DECL(seteuid);
REAL_DECL(setreuid);
REAL_DECL(setresuid);
REAL_DECL(setfsuid);

EXPORT int setuid(uid_t uid)
{
	before_user_change(uid);
	return REAL(setuid)(uid);
}

EXPORT int seteuid(uid_t euid)
{
	before_user_change(euid);
	return REAL(seteuid)(euid);
}

EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	before_user_change(euid);
	return REAL(setreuid)(ruid, euid);
}

EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	before_user_change(euid);
	return REAL(setresuid)(ruid, euid, suid);
}

EXPORT int setfsuid(uid_t fsuid)
{
	before_user_change(fsuid);
	return REAL(setfsuid)(fsuid);
}
