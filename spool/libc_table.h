/* The libc functions the agent records and the keys of their arguments:
 * the ids a CALL, ARG or STR record carries (spool/records.h), and what
 * the converter names them.  Written by the agent's wrappers (agent/libc/libc.h),
 * read by the converter; the one owner of those ids and names.
 */
#ifndef FXT_SPOOL_LIBC_TABLE_H
#define FXT_SPOOL_LIBC_TABLE_H

#include <stdbool.h>

#include "spool/records.h"

/* ------------------------------------------------------------ functions */

enum agent_res {
	AGENT_RES_VOID,	 /* no result */
	AGENT_RES_INT,	 /* an integer, -1 (or < 0) on failure with errno */
	AGENT_RES_PTR,	 /* a pointer */
	AGENT_RES_ERRNO, /* 0 or an error number (pthread_*) */
};

/* X(name, group, result): every function the agent records.  The order
 * gives the ids stored in the spool: append only (recovered spools of an
 * older agent would otherwise be misnamed).  THREAD_LIFE and FORK_CHILD
 * are frames of our own: a thread's whole life (from the start routine's
 * entry to its return), and the child's side of fork. */
#define AGENT_LIBC_FUNCS(X)                        \
	/* io */                                   \
	X(open, IO, INT)                           \
	X(open64, IO, INT)                         \
	X(openat, IO, INT)                         \
	X(openat64, IO, INT)                       \
	X(creat, IO, INT)                          \
	X(creat64, IO, INT)                        \
	X(__open_2, IO, INT)                       \
	X(__open64_2, IO, INT)                     \
	X(__openat_2, IO, INT)                     \
	X(__openat64_2, IO, INT)                   \
	X(close, IO, INT)                          \
	X(read, IO, INT)                           \
	X(__read_chk, IO, INT)                     \
	X(write, IO, INT)                          \
	X(pread, IO, INT)                          \
	X(pread64, IO, INT)                        \
	X(__pread_chk, IO, INT)                    \
	X(__pread64_chk, IO, INT)                  \
	X(pwrite, IO, INT)                         \
	X(pwrite64, IO, INT)                       \
	X(readv, IO, INT)                          \
	X(writev, IO, INT)                         \
	X(fsync, IO, INT)                          \
	X(fdatasync, IO, INT)                      \
	X(lseek, IO, INT)                          \
	X(lseek64, IO, INT)                        \
	X(fopen, IO, PTR)                          \
	X(fopen64, IO, PTR)                        \
	X(fdopen, IO, PTR)                         \
	X(freopen, IO, PTR)                        \
	X(fclose, IO, INT)                         \
	X(fread, IO, INT)                          \
	X(fread_unlocked, IO, INT)                 \
	X(__fread_chk, IO, INT)                    \
	X(__fread_unlocked_chk, IO, INT)           \
	X(fwrite, IO, INT)                         \
	X(fwrite_unlocked, IO, INT)                \
	X(fflush, IO, INT)                         \
	X(fflush_unlocked, IO, INT)                \
	X(socket, IO, INT)                         \
	X(socketpair, IO, INT)                     \
	X(connect, IO, INT)                        \
	X(bind, IO, INT)                           \
	X(listen, IO, INT)                         \
	X(accept, IO, INT)                         \
	X(accept4, IO, INT)                        \
	X(send, IO, INT)                           \
	X(recv, IO, INT)                           \
	X(__recv_chk, IO, INT)                     \
	X(sendto, IO, INT)                         \
	X(recvfrom, IO, INT)                       \
	X(__recvfrom_chk, IO, INT)                 \
	X(sendmsg, IO, INT)                        \
	X(recvmsg, IO, INT)                        \
	X(shutdown, IO, INT)                       \
	X(poll, IO, INT)                           \
	X(__poll_chk, IO, INT)                     \
	X(ppoll, IO, INT)                          \
	X(select, IO, INT)                         \
	X(pselect, IO, INT)                        \
	X(epoll_wait, IO, INT)                     \
	X(epoll_pwait, IO, INT)                    \
	X(pipe, IO, INT)                           \
	X(pipe2, IO, INT)                          \
	X(dup, IO, INT)                            \
	X(dup2, IO, INT)                           \
	X(dup3, IO, INT)                           \
	/* mem */                                  \
	X(malloc, MEM, PTR)                        \
	X(calloc, MEM, PTR)                        \
	X(realloc, MEM, PTR)                       \
	X(reallocarray, MEM, PTR)                  \
	X(free, MEM, VOID)                         \
	X(posix_memalign, MEM, ERRNO)              \
	X(aligned_alloc, MEM, PTR)                 \
	X(memalign, MEM, PTR)                      \
	X(valloc, MEM, PTR)                        \
	X(pvalloc, MEM, PTR)                       \
	X(mmap, MEM, PTR)                          \
	X(mmap64, MEM, PTR)                        \
	X(munmap, MEM, INT)                        \
	X(mremap, MEM, PTR)                        \
	/* thread */                               \
	X(pthread_create, THREAD, ERRNO)           \
	X(pthread_join, THREAD, ERRNO)             \
	X(pthread_timedjoin_np, THREAD, ERRNO)     \
	X(pthread_tryjoin_np, THREAD, ERRNO)       \
	X(pthread_detach, THREAD, ERRNO)           \
	X(pthread_exit, THREAD, VOID)              \
	X(THREAD_LIFE, THREAD, VOID)               \
	/* sync */                                 \
	X(pthread_mutex_lock, SYNC, ERRNO)         \
	X(pthread_mutex_trylock, SYNC, ERRNO)      \
	X(pthread_mutex_timedlock, SYNC, ERRNO)    \
	X(pthread_mutex_unlock, SYNC, ERRNO)       \
	X(pthread_rwlock_rdlock, SYNC, ERRNO)      \
	X(pthread_rwlock_wrlock, SYNC, ERRNO)      \
	X(pthread_rwlock_tryrdlock, SYNC, ERRNO)   \
	X(pthread_rwlock_trywrlock, SYNC, ERRNO)   \
	X(pthread_rwlock_timedrdlock, SYNC, ERRNO) \
	X(pthread_rwlock_timedwrlock, SYNC, ERRNO) \
	X(pthread_rwlock_unlock, SYNC, ERRNO)      \
	X(pthread_cond_wait, SYNC, ERRNO)          \
	X(pthread_cond_timedwait, SYNC, ERRNO)     \
	X(pthread_cond_signal, SYNC, ERRNO)        \
	X(pthread_cond_broadcast, SYNC, ERRNO)     \
	X(sem_wait, SYNC, INT)                     \
	X(sem_timedwait, SYNC, INT)                \
	X(sem_trywait, SYNC, INT)                  \
	X(sem_post, SYNC, INT)                     \
	X(pthread_barrier_wait, SYNC, ERRNO)       \
	/* proc */                                 \
	X(fork, PROC, INT)                         \
	X(vfork, PROC, INT)                        \
	X(FORK_CHILD, PROC, VOID)                  \
	X(execve, PROC, INT)                       \
	X(execv, PROC, INT)                        \
	X(execvp, PROC, INT)                       \
	X(execvpe, PROC, INT)                      \
	X(execl, PROC, INT)                        \
	X(execlp, PROC, INT)                       \
	X(execle, PROC, INT)                       \
	X(posix_spawn, PROC, ERRNO)                \
	X(posix_spawnp, PROC, ERRNO)               \
	X(system, PROC, INT)                       \
	X(waitpid, PROC, INT)                      \
	X(wait, PROC, INT)                         \
	X(wait4, PROC, INT)                        \
	X(waitid, PROC, INT)                       \
	X(exit, PROC, VOID)                        \
	X(_exit, PROC, VOID)                       \
	X(_Exit, PROC, VOID)                       \
	/* sleep */                                \
	X(sleep, SLEEP, INT)                       \
	X(usleep, SLEEP, INT)                      \
	X(nanosleep, SLEEP, INT)                   \
	X(clock_nanosleep, SLEEP, ERRNO)           \
	X(sched_yield, SLEEP, INT)                 \
	/* proc, added later: the children made    \
	 * without fork() (clone3 and clone        \
	 * also through syscall()) */              \
	X(_Fork, PROC, INT)                        \
	X(clone, PROC, INT)                        \
	X(clone3, PROC, INT)

enum agent_fn {
#define AGENT_FN_ENUM(name, group, res) AGENT_FN_##name,
	AGENT_LIBC_FUNCS(AGENT_FN_ENUM)
#undef AGENT_FN_ENUM
	    AGENT_FN_COUNT
};

struct agent_fn_info {
	const char *name;     /* "read"; "thread" and "fork" for our frames */
	const char *category; /* "libc.io" */
	unsigned group;	      /* AGENT_G_* */
	enum agent_res res;
};

/* Indexed by enum agent_fn; the names are the enum's (use
 * agent_fn_lookup() for the names shown). */
extern const struct agent_fn_info agent_fn_table[AGENT_FN_COUNT];

/* The info of a function id read from a spool, or NULL if unknown; our
 * own frames are named "thread" and "fork (child)". */
const struct agent_fn_info *agent_fn_lookup(unsigned fn);

/* ------------------------------------------------------------ keys */

/* X(name, "shown as"): argument keys, stored in 8 bits.  Append only. */
#define AGENT_LIBC_KEYS(X)                \
	X(CALLER, "caller")               \
	X(RESULT, "result")               \
	X(ERRNO, "errno")                 \
	X(FD, "fd")                       \
	X(NBYTES, "count")                \
	X(PATH, "path")                   \
	X(FLAGS, "flags")                 \
	X(MODE, "mode")                   \
	X(OFFSET, "offset")               \
	X(WHENCE, "whence")               \
	X(SIZE, "size")                   \
	X(NMEMB, "nmemb")                 \
	X(PTR, "ptr")                     \
	X(ALIGNMENT, "alignment")         \
	X(ADDR, "addr")                   \
	X(LENGTH, "length")               \
	X(PROT, "prot")                   \
	X(STREAM, "stream")               \
	X(NEWFD, "newfd")                 \
	X(DOMAIN, "domain")               \
	X(TYPE, "type")                   \
	X(PROTOCOL, "protocol")           \
	X(NFDS, "nfds")                   \
	X(TIMEOUT_MS, "timeout_ms")       \
	X(TIMEOUT_NS, "timeout_ns")       \
	X(THREAD, "thread")               \
	X(START_ROUTINE, "start_routine") \
	X(MUTEX, "mutex")                 \
	X(RWLOCK, "rwlock")               \
	X(COND, "cond")                   \
	X(SEM, "sem")                     \
	X(BARRIER, "barrier")             \
	X(WAITED, "waited")               \
	X(PID, "pid")                     \
	X(STATUS, "status")               \
	X(OPTIONS, "options")             \
	X(COMMAND, "command")             \
	X(FILE, "file")                   \
	X(SECONDS, "seconds")             \
	X(USECONDS, "useconds")           \
	X(NS, "ns")                       \
	X(CLOCK, "clock")                 \
	X(MODE_STR, "mode")               \
	X(IOVCNT, "iovcnt")               \
	X(PIPE_FDS, "fds")                \
	X(TID, "tid")                     \
	X(PARENT_PID, "parent_pid")       \
	X(HOW, "how")                     \
	X(BACKLOG, "backlog")             \
	X(OLD_SIZE, "old_size")           \
	X(NEW_SIZE, "new_size")           \
	X(ARGV, "argv")                   \
	X(SIGNAL, "signal")               \
	X(FILE_KIND, "kind")

enum agent_key {
	AGENT_KEY_NONE = 0,
#define AGENT_KEY_ENUM(id, shown) AGENT_KEY_##id,
	AGENT_LIBC_KEYS(AGENT_KEY_ENUM)
#undef AGENT_KEY_ENUM
	    AGENT_KEY_COUNT
};

/* The shown name of a key, or NULL if unknown. */
const char *agent_key_name(unsigned key);

/* ------------------------------------------------------------ ONCE */

/* The calls a ONCE record (spool/records.h) may hold, with the key and
 * type of their one argument and the SYNC op they make on it (0: none).
 * Inline and constant per function: a wrapper's check folds away. */
struct agent_once {
	unsigned key;
	enum ev_arg_type type;
	enum ev_sync_op op;
};

static inline bool agent_fn_once(unsigned fn, struct agent_once *o)
{
	switch (fn) {
	case AGENT_FN_malloc:
		*o = (struct agent_once){ AGENT_KEY_SIZE, EV_ARG_U64, 0 };
		return true;
	case AGENT_FN_free:
		*o = (struct agent_once){ AGENT_KEY_PTR, EV_ARG_PTR, 0 };
		return true;
	case AGENT_FN_pthread_mutex_lock:
	case AGENT_FN_pthread_mutex_timedlock:
	case AGENT_FN_pthread_mutex_trylock:
		*o = (struct agent_once){ AGENT_KEY_MUTEX, EV_ARG_PTR, 0 };
		return true;
	case AGENT_FN_pthread_mutex_unlock:
		*o = (struct agent_once){ AGENT_KEY_MUTEX, EV_ARG_PTR, EV_SYNC_UNLOCK };
		return true;
	case AGENT_FN_pthread_rwlock_rdlock:
	case AGENT_FN_pthread_rwlock_wrlock:
	case AGENT_FN_pthread_rwlock_timedrdlock:
	case AGENT_FN_pthread_rwlock_timedwrlock:
	case AGENT_FN_pthread_rwlock_tryrdlock:
	case AGENT_FN_pthread_rwlock_trywrlock:
		*o = (struct agent_once){ AGENT_KEY_RWLOCK, EV_ARG_PTR, 0 };
		return true;
	case AGENT_FN_pthread_rwlock_unlock:
		*o = (struct agent_once){ AGENT_KEY_RWLOCK, EV_ARG_PTR, EV_SYNC_UNLOCK };
		return true;
	case AGENT_FN_pthread_cond_signal:
		*o = (struct agent_once){ AGENT_KEY_COND, EV_ARG_PTR, EV_SYNC_SIGNAL };
		return true;
	case AGENT_FN_pthread_cond_broadcast:
		*o = (struct agent_once){ AGENT_KEY_COND, EV_ARG_PTR, EV_SYNC_BROADCAST };
		return true;
	case AGENT_FN_sem_wait:
	case AGENT_FN_sem_timedwait:
	case AGENT_FN_sem_trywait:
		*o = (struct agent_once){ AGENT_KEY_SEM, EV_ARG_PTR, 0 };
		return true;
	case AGENT_FN_sem_post:
		*o = (struct agent_once){ AGENT_KEY_SEM, EV_ARG_PTR, EV_SYNC_POST };
		return true;
	default:
		return false;
	}
}

#endif /* FXT_SPOOL_LIBC_TABLE_H */
