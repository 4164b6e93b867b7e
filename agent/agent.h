/* The agent's process-wide state.  Private to agent/. */
#ifndef FXT_AGENT_AGENT_H
#define FXT_AGENT_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/spool.h"
#include "agent/tbuf.h"

struct agent {
	pthread_mutex_t lock; /* threads, slab, serials */
	struct spool spool;
	struct tbuf *threads; /* every thread that recorded, newest first */
	uint32_t next_serial;
	struct tbuf *slab; /* tbufs are carved from mmap'd slabs (signal-safe) */
	unsigned slab_left;
	pthread_key_t key; /* destructor retires a thread's buffer */
	bool key_ok;
	uint64_t lost; /* calls lost before a thread had a tbuf */
	/* Attach windows begun after the first (fxt_attach_start() again):
	 * a tbuf of an earlier window is forgotten by its thread
	 * (agent_tbuf_new_window()). */
	uint32_t window;
	pid_t pid;
	bool forked;   /* a fork child: never the root */
	bool sealed;   /* the archive was written (or given up) */
	bool disabled; /* initialisation failed: record nothing */
	bool late;     /* loaded by dlopen() into a running process: see fxt_attach_start() */
	char spool_path[4096 + 32];
};

extern struct agent agent;

/* Initialises the agent once (config, clock, spool path, key, atfork,
 * atexit).  Hooks can run before the agent's constructor (constructors of
 * libraries loaded before it), so the slow path calls this too.
 * Returns 0 or -errno (the agent then stays disabled). */
int agent_ensure_init(void);

/* The agent's fork handlers, for the calls that make a child without
 * the C library running them (_Fork(), clone() without CLONE_VM, the clone
 * system calls through syscall(): agent/libc/wrap_proc.c): prepare in
 * the parent before the call, false if the handlers are not set up (then
 * call neither of the others); then parent in the parent, child in the
 * child, as pthread_atfork() would.  (lifecycle.c) */
bool agent_fork_prepare(void);
void agent_fork_parent(void);
void agent_fork_child(void);

/* Whether the agent's state is the calling process's: true if getpid()
 * is agent.pid, or once a child made by a clone system call no wrapper
 * saw, with memory of its own, was made a process of its own (its first
 * records went into its parent's chunks: said in its archive as a drop,
 * SPOOL_CAUSE_RAW_CLONE); false in a child that shares the memory of the
 * process the state is of (CLONE_VM), which must leave it alone.
 * (lifecycle.c) */
bool agent_check_process(void);

/* Whether thread `tid` of the program waits in agent_ensure_init() for an
 * attach's start, with every signal blocked by the agent's slow path (not
 * by the program: agent/sample/live.c).  (lifecycle.c) */
bool agent_init_waiter(long tid);

/* Starts fn(arg) on a detached thread of the agent's, named `name` (the
 * agent's threads' names begin with FXT_ATTACH_THREAD_PREFIX, run/attach.h),
 * with every signal blocked (none of the program's goes to it), on a stack
 * of `stack` bytes (0: the default).  Whether it started; once it returns
 * true, the thread bears its name, and fn began only after the caller had
 * its own signal mask back.  (lifecycle.c) */
bool agent_thread_start(void *(*fn)(void *), void *arg, size_t stack, const char *name);

/* Loads the library `name` that lies next to the agent (libfxt-convert.so,
 * libfxt-patch.so): only a process that needs one pays for it.  NULL (and
 * logged) when it cannot. */
void *agent_load_sibling(const char *name);

/* The spool path of image `image` of process `pid` (spool/format.h). */
void agent_spool_path(char *buf, size_t cap, const char *output, long pid, unsigned image);

/* Seals this process's spool and, unless fxt-run converts it, writes the
 * archive (idempotent).  Other threads may
 * still be running; the calling thread records nothing afterwards.
 * (seal.c) */
void agent_seal(void);

/* Before exec replaces the image (the exec wrappers): false in a vfork
 * child, which shares our memory and must do nothing; else sends EXEC to
 * the features, seals (agent_seal()) and returns true. */
bool agent_before_exec(void);

/* The environment `envp` for the new image: FXT_EXEC_PID (so that it does
 * not take the root's archive name) and FXT_IMAGE (the next image's
 * number) replaced, formatted into `var` and `img`.  malloc'd (the
 * strings not copied), NULL when out of memory. */
char **agent_exec_env(char *const envp[], char *var, size_t cap, char *img, size_t icap);

/* A thread's entry of a seal's thread table, its name only when it has
 * exited ("" for a live thread: agent_thread_comm()).  Under agent.lock. */
void agent_seal_thread(const struct tbuf *tb, struct spool_seal_thread *f);

/* Thread `tid`'s comm now ("" if unknown). */
void agent_thread_comm(uint64_t tid, char *name, size_t cap);

/* The number of line `name` of task tid's /proc status in `base` (16: a
 * mask, "SigBlk"; 10: "TracerPid"), or 0 (no such task any more). */
uint64_t agent_task_field(long tid, const char *name, int base);

#endif /* FXT_AGENT_AGENT_H */
