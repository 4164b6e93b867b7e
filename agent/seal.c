/* Sealing this process's spool, at exit or before exec (agent_seal()):
 * its thread table, the clock's base and the hooks' cost in the seal,
 * then either fxt-run converts it or, without fxt-run, this process
 * converts its own (libfxt-convert.so, loaded only then). */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/calib.h"
#include "agent/elfsyms.h"
#include "agent/feature.h"
#include "agent/log.h"
#include "agent/cfg.h"
#include "agent/sys.h"
#include "agent/ticks.h"
#include "run/control.h"
#include "run/proc.h"
#include "run/session.h"

static bool is_root(void)
{
	long pid = (long)getpid();

	return !agent.forked && agent_cfg.exec_pid != pid && agent_cfg.root_pid == pid;
}

void agent_thread_comm(uint64_t tid, char *name, size_t cap)
{
	const struct tbuf *me = agent_tls.tb;
	char path[64], own[16];
	ssize_t n;
	int fd;

	name[0] = '\0';
	/* The calling thread's own (the one sealing, often the process's only
	 * thread): one prctl() rather than an open, a read and a close of a
	 * file of /proc, whose path the kernel looks up (a short process
	 * seals once, at its exit or exec).  Made directly, as
	 * spool_chunk_name() does: the agent wraps prctl. */
	if (me && me->tid == tid && cap > 1 &&
	    agent_sys(SYS_prctl, PR_GET_NAME, (long)own, 0, 0, 0) == 0) {
		own[sizeof(own) - 1] = '\0';
		snprintf(name, cap, "%s", own);
		return;
	}
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

/* Appends this process's line to fxt-run's status file, which the program
 * did not inherit: it is fxt-run's descriptor FXT_STATUS_FD, opened anew
 * through /proc while that fxt-run still runs, and only if it is still the
 * file fxt-run named (the pid may be another process's now).  A process
 * that may not open it (it changed user) reports nothing: fxt-run finds
 * its archive in the output directory. */
static void report_status(const struct self_result *res, const char *path)
{
	const struct agent_status_ref *ref = &agent_cfg.status_fd;
	char line[4096 + 160], proc[64];
	struct stat sb;
	size_t n;
	int fd;

	if (ref->fd < 0 || !agent_cfg.launcher_pid ||
	    !run_proc_alive(agent_cfg.launcher_pid, agent_cfg.launcher_start))
		return;
	agent_fmt(proc, sizeof(proc), "/proc/%ld/fd/%d", agent_cfg.launcher_pid, ref->fd);
	fd = open(proc, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (ref->identified && ((unsigned long long)sb.st_dev != ref->dev ||
				 (unsigned long long)sb.st_ino != ref->ino))) {
		close(fd);
		return;
	}
	n = agent_fmt(
	    line, sizeof(line),
	    "fxtrace pid=%ld events=%llu threads=%llu dropped=%llu bytes=%llu output=%s\n",
	    (long)agent.pid, (unsigned long long)res->events, (unsigned long long)res->threads,
	    (unsigned long long)res->dropped, (unsigned long long)res->bytes, path);
	while (write(fd, line, n) < 0 && errno == EINTR)
		;
	close(fd);
}

/* After the seal: whether fxt-run converts the spool (the protocol of
 * run/control.h); if not, this process has claimed it. */
static bool launcher_converts(void)
{
	if (agent_cfg.launcher_pid &&
	    run_proc_alive(agent_cfg.launcher_pid, agent_cfg.launcher_start) &&
	    spool_launcher_state(&agent.spool) == RUN_CTL_OPEN)
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
	run_session_path(session, sizeof(session), agent_cfg.output, agent_cfg.root_pid);
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

void agent_seal(void)
{
	int saved = errno;
	struct spool_seal_thread *threads;
	struct spool_seal seal;
	size_t nthreads = 0;
	int err;

	if (agent_ensure_init() < 0 || agent.disabled)
		return;
	/* A child sharing our memory (CLONE_VM) that calls exit(): the spool
	 * is its parent's. */
	if (!agent_check_process()) {
		agent_tbuf_vm_leaving(&agent_tls);
		return;
	}
	if (__atomic_exchange_n(&agent.sealed, true, __ATOMIC_ACQ_REL))
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
	} else if (agent.late) {
		/* Attached to, fxt-run gone: the spool is converted outside
		 * the process, by fxt-run --recover, never inside it. */
		agent_dbg("fxt-run is gone: %s is left for fxt-run --recover", agent.spool.path);
		spool_release(&agent.spool);
	} else {
		convert_self();
	}
out_threads:
	free(threads);
out:
	errno = saved;
}
