/* The agent's life cycle: initialisation, thread exit, fork (and the
 * children made without fork's handlers), what exec needs of the core
 * (the exec wrappers are agent/libc/wrap_exec.c), and the change of user;
 * the seal at exit and before exec is seal.c.  One file past 800 lines:
 * the fork handlers, the attach's start and stop and the init they share
 * are one state machine, whose statics would otherwise be exported. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/feature.h"
#include "agent/log.h"
#include "agent/modules.h"
#include "agent/real.h"
#include "agent/cfg.h"
#include "agent/ticks.h"
#include "agent/sys.h"
#include "run/settings.h"
#include "run/attach.h"
#include "run/names.h"
#include "run/proc.h"

#define EXPORT __attribute__((visibility("default")))

struct agent agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;
static bool atexit_ok;

/* ------------------------------------------------------------ naming */

void agent_spool_path(char *buf, size_t cap, const char *output, long pid, unsigned image)
{
	run_spool_name(buf, cap, output, pid, image);
}

/* Attaching (fxt_attach_start()): the settings block fxt-run wrote, and
 * whether recording was stopped (fxt_attach_stop()). */
static struct {
	char *block;
	size_t len;
	bool stopped;
} attach;

/* A stop (`stopped` set and recording stopped: stop_once()) and the next
 * window's start (rearm()) one after the other: the watchdog that saw
 * fxt-run die stops recording on its own thread, a tenth of a second
 * with thousands of patches to write back, while a new fxt-run -p may
 * already start the next window (it finds `stopped` set). */
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;

static void watch_fork_child(void);

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
static AGENT_FORK_CODE void atfork_prepare(void)
{
	agent_tls.busy++;
	pthread_mutex_lock(&agent.lock);
	pthread_mutex_lock(&agent.spool.lock);
}

static AGENT_FORK_CODE void atfork_parent(void)
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
static AGENT_FORK_CODE void atfork_child(void)
{
	unsigned interrupted = agent_tls.busy - 1u;
	bool in_call = agent_tls.wrap && agent_tls.wrap != AGENT_WRAP_FORK;

	if (in_call)
		agent_tls.wrap = 0;
	if (attach.stopped)
		agent.disabled = true; /* detached: the child is not recorded */
	stop_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	watch_fork_child();
	/* Not pthread_mutex_init(): the child runs no C library code it can
	 * do without (each function's page faults in again after fork). */
	agent.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	agent.pid = getpid();
	agent.forked = true;
	agent.sealed = false;
	agent.lost = 0;
	agent_tbuf_forget_all(&agent_tls, interrupted != 0);
	agent_cfg.image = 1;
	agent_spool_path(agent.spool_path, sizeof(agent.spool_path), agent_cfg.output,
			 (long)agent.pid, 1);
	spool_forget(&agent.spool, agent.spool_path);
	agent.spool.small_first = true; /* not the root */
	/* The features start again in the child: libc calls recorded, the
	 * forking thread sampled (timers are not inherited). */
	agent_features_emit(AGENT_EV_FORK_CHILD, NULL);
	agent_dbg("fork child%s", interrupted ? ", in a signal handler that interrupted the agent"
				  : in_call   ? ", in a signal handler that interrupted a libc call"
					      : "");
	agent_tls.busy = 0; /* prepare's count, and those of the interrupted code */
}

/* Whether pthread_atfork() took the handlers above (do_init()). */
static bool atfork_on;

AGENT_FORK_CODE bool agent_fork_prepare(void)
{
	if (!__atomic_load_n(&atfork_on, __ATOMIC_ACQUIRE))
		return false;
	atfork_prepare();
	return true;
}

AGENT_FORK_CODE void agent_fork_parent(void)
{
	atfork_parent();
}

AGENT_FORK_CODE void agent_fork_child(void)
{
	atfork_child();
}

/* A process made by a clone system call that no wrapper of ours saw
 * (made inline, as Go's runtime or a sandbox does) runs on its parent's
 * state: its records go into its parent's chunks (shared memory) until
 * the agent notices, at the slow path's chunk refill, at exit, _exit or
 * exec.  Then, with memory of its own (kcmp(): not its parent's), it
 * becomes a process of its own as a fork child does, and its first buffer
 * counts one drop with the cause SPOOL_CAUSE_RAW_CLONE: the archive and
 * the tools say so (how many of its calls went into the parent's chunks
 * is not known).  A child that shares its parent's memory (CLONE_VM) must
 * leave the state alone: false.  True when the state is this process's. */
AGENT_FORK_CODE bool agent_check_process(void)
{
	long self = agent_sys(SYS_getpid, 0, 0, 0, 0, 0), same;
	sigset_t old;

	if (self == (long)agent.pid)
		return true;
	same = agent_sys(SYS_kcmp, self, (long)agent.pid, KCMP_VM, 0, 0);
	if (same == 0 || (same < 0 && errno != ESRCH))
		return false; /* CLONE_VM, or cannot tell */
	agent_signals_block(&old);
	agent_tls.busy++; /* as atfork_prepare() leaves it */
	atfork_child();
	agent_tls.busy++;
	agent_tbuf_raw_child(&agent_tls);
	agent_busy_leave(&agent_tls);
	agent_signals_restore(&old);
	agent_dbg("made by a clone system call the agent did not see: a process of its own now");
	return true;
}

/* ------------------------------------------------------------ init */

static void atexit_seal(void)
{
	agent_seal();
}

static void do_init(void)
{
	bool attached = attach.block != NULL;
	char pid[24];

	if (!attached)
		agent_config_load();
	else if (agent_config_load_block(attach.block, attach.len) < 0) {
		init_err = -EINVAL;
		agent.disabled = true;
		return;
	}
	agent_features_configure();
	agent_clock_init();
	agent.pid = getpid();
	if (!agent_cfg.root_pid) {
		/* The first traced process is the root; tell every descendant
		 * (not a process attached to: its environment is its own). */
		agent_cfg.root_pid = (long)agent.pid;
		if (!attached) {
			agent_fmt(pid, sizeof(pid), "%ld", (long)agent.pid);
			setenv(FXT_ENV(ROOT_PID), pid, 0);
			agent_output_export();
		}
	}
	agent_spool_path(agent.spool_path, sizeof(agent.spool_path), agent_cfg.output,
			 (long)agent.pid, agent_cfg.image);
	spool_init(&agent.spool, agent.spool_path, agent_cfg.chunk_size, agent_cfg.buffer_size,
		   agent_cfg.max_size);
	agent.spool.small_first = agent_cfg.root_pid != (long)agent.pid;
	agent.key_ok = pthread_key_create(&agent.key, key_destructor) == 0;
	/* Bound now (its value is NULL already): a process that forks before
	 * it recorded anything never called it, and each of its children
	 * bound it in the loader at its fork reset (agent_tbuf_forget_all():
	 * the lookup's code and the symbol tables faulted in again). */
	if (agent.key_ok)
		pthread_setspecific(agent.key, NULL);
	init_err = -pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	__atomic_store_n(&atfork_on, init_err == 0, __ATOMIC_RELEASE);
	/* Registered from the preloaded library's constructor, before
	 * __libc_start_main registers the dynamic linker's fini: so it runs
	 * after the program's atexit handlers and every destructor. */
	atexit_ok = atexit(atexit_seal) == 0;
	agent_modules_snapshot();
	if (init_err)
		agent.disabled = true;
	/* Before main(), while the process has one thread, or attached to
	 * it with others running: patching starts (even when disabled), libc
	 * calls are recorded (unless disabled). */
	agent_features_emit(AGENT_EV_START,
			    &(const struct agent_event){ .start = { .attached = attached } });
}

/* The program's threads waiting in agent_ensure_init() while an attach's
 * start runs do_init() on the starter: some callers block every signal
 * of theirs before they come here (the slow path, tbuf.c, waits first:
 * init_wait()).  Their tids, 0 for a free
 * slot; one that finds no slot is not listed. */
#define INIT_WAITERS 64
static long init_waiters[INIT_WAITERS];

bool agent_init_waiter(long tid)
{
	for (unsigned i = 0; i < INIT_WAITERS; i++)
		if (__atomic_load_n(&init_waiters[i], __ATOMIC_ACQUIRE) == tid)
			return true;
	return false;
}

AGENT_FORK_CODE int agent_ensure_init(void)
{
	/* Loaded into a running process: nothing until fxt_attach_start(). */
	if (agent.late && !__atomic_load_n(&attach.block, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	if (!agent.late) {
		pthread_once(&init_once, do_init);
		return init_err;
	}
	long tid = (long)syscall(SYS_gettid), none;
	unsigned i;

	for (i = 0; i < INIT_WAITERS; i++) {
		none = 0;
		if (__atomic_compare_exchange_n(&init_waiters[i], &none, tid, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
	pthread_once(&init_once, do_init);
	if (i < INIT_WAITERS)
		__atomic_store_n(&init_waiters[i], 0, __ATOMIC_RELEASE);
	return init_err;
}

/* dl_iterate_phdr(): whether the agent comes after the C library in the
 * loader's list (*arg: 1 seen the C library, 2 the agent after it). */
static int find_order(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');
	uintptr_t self = (uintptr_t)&agent;
	int *seen = arg;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && self >= lo && self - lo < ph->p_memsz) {
			*seen = *seen == 1 ? 2 : 0;
			return 1;
		}
	}
	if (strncmp(base, "libc.so", 7) == 0)
		*seen = 1;
	return 0;
}

/* Whether the agent was loaded by dlopen() into a program already
 * running (fxt-run -p), not preloaded: the loader lists LD_PRELOAD's
 * libraries before the C library and the program's other libraries, and
 * a library loaded later after them. */
static bool loaded_late(void)
{
	int seen = 0;

	dl_iterate_phdr(find_order, &seen);
	return seen == 2;
}

__attribute__((constructor)) static void agent_constructor(void)
{
	if (loaded_late()) {
		agent.late = true; /* dormant: fxt_attach_start() starts it */
		return;
	}
	agent_tls.busy++;
	agent_ensure_init();
	agent_busy_leave(&agent_tls);
	agent_features_emit(AGENT_EV_THREAD_START, NULL);
}

/* Only a fallback: the atexit handler runs later (see do_init). */
__attribute__((destructor)) static void agent_destructor(void)
{
	if (!atexit_ok)
		agent_seal();
}

/* ------------------------------------------------------------ attach */

/* The settings block fxt-run wrote for an attach ("NAME=VALUE\0...\0\0",
 * run/settings.h), read whole: a regular file that only root or our user
 * could have written, not a link.  0 or -errno. */
static int read_block(const char *path, char **out, size_t *len)
{
	enum { MAX = 1 << 16 };
	struct stat st;
	size_t n = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_uid != 0 && st.st_uid != geteuid())) {
		close(fd);
		return -EPERM;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* While attached, a thread of ours watches fxt-run: if it dies (killed with
 * SIGKILL), recording stops as at a detach (patches written back, the
 * spool sealed and left for fxt-run --recover).  It blocks every signal,
 * records nothing, and ends at the detach.  A process forked while
 * attached watches too, with the same descriptors: the detach's wake
 * (an eventfd nobody reads) ends its recording as well. */
struct watch {
	int pidfd, wake; /* fxt-run's pidfd; an eventfd that ends the watch */
};

static struct {
	pthread_mutex_t lock; /* `cur` */
	struct watch *cur;    /* the watch running, whose wake a detach writes */
} watch = { PTHREAD_MUTEX_INITIALIZER, NULL };

static void stop_recording(void)
{
	unsigned char busy = agent_tls.busy;

	agent_tls.busy++;
	agent_features_emit(AGENT_EV_STOP, NULL);
	agent_seal();
	agent_tbuf_let_go();
	/* The seal leaves the thread counted busy for good (the hooks of an
	 * exiting process take no chunk after it); the process attached to
	 * runs on, and this thread records in the next window. */
	agent_tls.busy = busy;
}

/* Stops recording unless it was stopped already: whether it was not. */
static bool stop_once(void)
{
	bool first;

	agent_tls.busy++; /* the lock is not the program's */
	pthread_mutex_lock(&stop_lock);
	first = !__atomic_exchange_n(&attach.stopped, true, __ATOMIC_ACQ_REL);
	if (first)
		stop_recording();
	pthread_mutex_unlock(&stop_lock);
	agent_busy_leave(&agent_tls);
	return first;
}

static void *watchdog(void *arg)
{
	struct watch *w = arg;
	struct pollfd p[2] = { { w->pidfd, POLLIN, 0 }, { w->wake, POLLIN, 0 } };

	agent_tls.busy++; /* nothing of this thread is the program's */
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	/* fxt-run is gone, or (in a process forked while attached) its
	 * parent was detached from. */
	if (stop_once())
		agent_dbg("%s: recording stopped",
			  (p[0].revents & POLLIN) ? "fxt-run is gone" : "detached");
	pthread_mutex_lock(&watch.lock);
	if (watch.cur == w)
		watch.cur = NULL;
	pthread_mutex_unlock(&watch.lock);
	close(w->pidfd);
	close(w->wake);
	free(w);
	return NULL;
}

REAL_DECL(pthread_sigmask);
REAL_DECL(sem_wait); /* not our wrappers (agent/libc/wrap_sync.c) */
REAL_DECL(sem_post);

/* What a thread of the agent's begins with, on its creator's stack until
 * `named` is posted. */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	const char *name;
	sem_t go, named;
};

/* Waits for its creator to have its own signal mask back (it blocked every
 * signal around pthread_create(), so that the thread starts with them all
 * blocked), then names itself, before anything else: whoever looks at the
 * process's threads once agent_thread_start() returned, or from the
 * thread's work on (the sampling's check for threads blocking SIGPROF,
 * fxt-run's scans), knows it for ours and finds its creator's mask the
 * program's. */
static void *thread_begin(void *p)
{
	struct thread_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	while (REAL(sem_wait)(&s->go) != 0 && errno == EINTR)
		;
	prctl(PR_SET_NAME, s->name, 0, 0, 0);
	REAL(sem_post)(&s->named);
	return fn(arg);
}

bool agent_thread_start(void *(*fn)(void *), void *arg, size_t stack, const char *name)
{
	struct thread_start s = { .fn = fn, .arg = arg, .name = name };
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t th;
	int err;

	if (sem_init(&s.go, 0, 0) != 0)
		return false;
	if (sem_init(&s.named, 0, 0) != 0) {
		sem_destroy(&s.go);
		return false;
	}
	sigfillset(&all);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (stack)
		pthread_attr_setstacksize(&at, stack);
	REAL(pthread_sigmask)(SIG_SETMASK, &all, &old);
	err = pthread_create(&th, &at, thread_begin, &s);
	REAL(pthread_sigmask)(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (err == 0) {
		REAL(sem_post)(&s.go);
		while (REAL(sem_wait)(&s.named) != 0 && errno == EINTR)
			;
	}
	sem_destroy(&s.named);
	sem_destroy(&s.go);
	return err == 0;
}

/* Starts a watchdog thread on w; false if it cannot. */
static bool watch_run(struct watch *w)
{
	bool ok = agent_thread_start(watchdog, w, 64 << 10, FXT_ATTACH_WATCHDOG_NAME);

	if (ok) {
		pthread_mutex_lock(&watch.lock);
		watch.cur = w;
		pthread_mutex_unlock(&watch.lock);
	}
	return ok;
}

/* Starts the watch of fxt-run (FXT_LAUNCHER); false if it cannot (then a
 * killed fxt-run leaves the recording on until exit). */
static bool watch_start(void)
{
	struct watch *w;

	if (!agent_cfg.launcher_pid || !(w = malloc(sizeof(*w))))
		return false;
	w->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)agent_cfg.launcher_pid, 0);
	w->wake = eventfd(0, EFD_CLOEXEC);
	if (w->pidfd >= 0 && w->wake >= 0 && watch_run(w))
		return true;
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->wake >= 0)
		close(w->wake);
	free(w);
	return false;
}

/* In a child forked while attached (atfork_child()): the parent's watch
 * was copied with the memory, its descriptors with the process; the
 * child's own watchdog takes them over (or closes them). */
static AGENT_FORK_CODE void watch_fork_child(void)
{
	struct watch *w = watch.cur;

	watch.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	watch.cur = NULL;
	if (!w)
		return;
	if (agent.disabled || !watch_run(w)) {
		close(w->pidfd);
		close(w->wake);
		free(w);
		if (!agent.disabled)
			agent_dbg("fork child: not watched: it records until it exits");
	}
}

/* Ends the watch at a detach: its thread stops, closing its descriptors. */
static void watch_end(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&watch.lock);
	if (watch.cur)
		(void)!write(watch.cur->wake, &one, sizeof(one));
	watch.cur = NULL;
	pthread_mutex_unlock(&watch.lock);
}

/* A second window (fxt_attach_start() after a detach): the settings of
 * the new block, a new spool (the last one fxt-run converted), every
 * thread's next record in it, and the features started again as at the
 * first attach.  0 or -errno; the process stays detached on failure. */
static int rearm(const char *block, size_t len)
{
	if (agent_config_load_block(block, len) < 0)
		return -EINVAL;
	agent_tbuf_new_window();
	agent.sealed = false;
	__atomic_store_n(&agent.lost, 0, __ATOMIC_RELAXED);
	agent_spool_path(agent.spool_path, sizeof(agent.spool_path), agent_cfg.output,
			 (long)agent.pid, agent_cfg.image);
	spool_forget(&agent.spool, agent.spool_path);
	agent.spool.nmods = 0; /* listed again, in the new spool */
	agent.spool.chunk_size = agent_cfg.chunk_size;
	agent.spool.buffer_size = agent_cfg.buffer_size;
	agent.spool.max_size = agent_cfg.max_size;
	agent_features_reconfigure();
	agent_modules_snapshot();
	__atomic_store_n(&attach.stopped, false, __ATOMIC_RELEASE);
	agent_features_emit(AGENT_EV_START,
			    &(const struct agent_event){ .start = { .attached = true } });
	return 0;
}

/* Starts recording (the first window) or again (rearm()) with `block`,
 * which it keeps or frees.  0 or -errno. */
static int start_window(char *block, size_t len)
{
	int err;

	agent_tls.busy++;
	if (attach.block) {
		char *old = attach.block;

		pthread_mutex_lock(&stop_lock); /* a stop under way ends first */
		err = rearm(block, len);
		pthread_mutex_unlock(&stop_lock);
		if (!err) {
			attach.block = block;
			attach.len = len;
			free(old);
		} else {
			free(block);
		}
	} else {
		attach.len = len;
		__atomic_store_n(&attach.block, block, __ATOMIC_RELEASE);
		err = agent_ensure_init();
		if (!err && agent.disabled)
			err = -EIO;
	}
	agent_busy_leave(&agent_tls);
	if (!err && !watch_start()) {
		/* fxt-run died while we started: as the watchdog would. */
		if (agent_cfg.launcher_pid &&
		    !run_proc_alive(agent_cfg.launcher_pid, agent_cfg.launcher_start) &&
		    stop_once()) {
			agent_dbg("fxt-run is gone: recording stopped");
		} else {
			agent_dbg("fxt-run is not watched: if it dies, recording goes on until "
				  "exit");
		}
	}
	agent_dbg("attached (window %u): %s", agent.window + 1, err ? strerror(-err) : "recording");
	return err;
}

/* How the start under way went (run/attach.h), and whether one is. */
static struct fxt_attach_status status;
static int starting;

struct start_args {
	char *block;
	size_t len;
};

static void *starter(void *arg)
{
	struct start_args a = *(struct start_args *)arg;
	int err;

	free(arg);
	agent_tls.busy++; /* nothing of this thread is the program's */
	err = start_window(a.block, a.len);
	__atomic_store_n(&status.state, err ? err : FXT_ATTACH_RECORDING, __ATOMIC_RELEASE);
	__atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
	return NULL;
}

/* fxt-run -p (launcher/attach/): the agent was loaded by dlopen() into the
 * running process, whose thread fxt-run borrowed calls this with the path
 * of the settings block.  Recording starts as at a launch, but features
 * act on a process whose other threads run (START .attached).  Each
 * attach after a detach is a window of its own (rearm()).  The work is
 * done by a thread of ours (FXT_ATTACH_STARTER_NAME), so that the thread
 * fxt-run borrowed goes back to its work at once: the address of the
 * status fxt-run then reads (run/attach.h), or -EALREADY (preloaded:
 * recorded since its start), -EBUSY (recording, or starting, for another
 * attach), -EPERM (the block's file is not fxt-run's), -EINVAL (a
 * malformed block), another -errno. */
EXPORT long fxt_attach_start(const char *path)
{
	struct start_args *a;
	char *block = NULL;
	size_t len = 0;
	int err;

	if (!agent.late)
		return -EALREADY;
	if (__atomic_load_n(&attach.block, __ATOMIC_ACQUIRE) &&
	    (init_err || agent.disabled || !__atomic_load_n(&attach.stopped, __ATOMIC_ACQUIRE)))
		return init_err ? init_err : agent.disabled ? -EIO : -EBUSY;
	if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQ_REL))
		return -EBUSY;
	err = read_block(path, &block, &len);
	if (err || !(a = malloc(sizeof(*a)))) {
		free(block);
		__atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
		return err ? err : -ENOMEM;
	}
	a->block = block;
	a->len = len;
	__atomic_store_n(&status.state, FXT_ATTACH_STARTING, __ATOMIC_RELEASE);
	/* The default stack: the planner and the symbol tables need room. */
	if (!agent_thread_start(starter, a, 0, FXT_ATTACH_STARTER_NAME))
		starter(a); /* here, then */
	return (long)(uintptr_t)&status;
}

/* Detaching: features undo what they did at START (STOP: patched entries
 * written back), and the spool is sealed as at an exit.  The process runs
 * on without recording; what cannot be unloaded stays, dormant.  0, or
 * -EINVAL when not attached, -EALREADY when stopped already. */
EXPORT int fxt_attach_stop(void)
{
	if (!__atomic_load_n(&attach.block, __ATOMIC_ACQUIRE) || init_err || agent.disabled)
		return -EINVAL;
	if (!stop_once())
		return -EALREADY;
	watch_end();
	agent_dbg("detached");
	return 0;
}

/* ------------------------------------------------------------ exec */

/* What the exec wrappers (agent/libc/wrap_exec.c) need of the core: see
 * agent.h. */
char **agent_exec_env(char *const envp[], char *var, size_t cap, char *img, size_t icap)
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

bool agent_before_exec(void)
{
	if (!agent_check_process())
		return false; /* a child sharing our memory (CLONE_VM) */
	agent_features_emit(AGENT_EV_EXEC, NULL);
	agent_seal();
	return true;
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
