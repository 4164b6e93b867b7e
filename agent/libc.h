/* The libc wrappers: the table of wrapped functions, argument keys, and
 * the helpers every wrapper uses.  Private to agent/.
 *
 * A wrapper records its call as a CALL frame (agent/events.h): an enter
 * record with the caller's address and the arguments known before the
 * call, the real call, an exit record with the result (and errno when it
 * failed).  The flusher turns the frame into a duration slice named after
 * the function, category "libc.<group>", with the arguments as FXT
 * arguments.
 *
 * Rules for wrappers (agent/wrap_*.c):
 *  - Always call the real function, with the same arguments, and return
 *    its result with errno as it left it.  Recording never changes what
 *    the program sees.
 *  - Record only when wrap_enter() says so: the group is on, and the
 *    thread is not inside agent code (hooks' slow paths, the flush) nor
 *    inside another wrapper (libc calling itself, e.g. fopen -> malloc,
 *    is not the program's call).
 *  - No locks, no malloc, no syscalls of our own on the common path.
 */
#ifndef FXT_AGENT_LIBC_H
#define FXT_AGENT_LIBC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/clock.h"
#include "agent/events.h"
#include "agent/tbuf.h"
#include "spool/recording.h"

/* ------------------------------------------------------------ groups */

/* The groups switched on (FXT_LIBC), 0 until the settings are loaded and
 * after the flush started.  Read on every wrapped call. */
extern unsigned agent_libc_on;

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
	X(sched_yield, SLEEP, INT)

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

/* ------------------------------------------------------------ resolving */

/* dlsym(RTLD_NEXT, name) (dlvsym with `version` when not NULL), with the
 * thread marked as resolving: dlsym may call calloc/malloc, which the mem
 * wrappers must then serve from their bootstrap arena (agent_resolving).
 * Returns NULL if not found. */
void *agent_resolve(const char *name, const char *version);
extern __thread unsigned char agent_resolving __attribute__((tls_model("initial-exec")));

/* `static __typeof__(fn) *real_fn;` and its lazy resolution. */
#define REAL_DECL(fn) static __typeof__(fn) *real_##fn
/* (A statement expression: with a conditional assignment instead, GCC's
 * -Wsequence-point warns at every `REAL(fn)(args)`.) */
#define REAL(fn)                                                                \
	({                                                                      \
		if (__builtin_expect(real_##fn == NULL, 0))                     \
			real_##fn = (__typeof__(fn) *)agent_resolve(#fn, NULL); \
		real_##fn;                                                      \
	})
#define REALV(fn, version)                                                         \
	({                                                                         \
		if (__builtin_expect(real_##fn == NULL, 0))                        \
			real_##fn = (__typeof__(fn) *)agent_resolve(#fn, version); \
		real_##fn;                                                         \
	})

/* ------------------------------------------------------------ recording */

#define WRAP __attribute__((visibility("default"), no_instrument_function))

/* The arguments a record carries: up to a few, chosen per call. */
struct wrap_arg {
	unsigned key;
	enum ev_arg_type type;
	uint64_t value;
};

#define WARG(k, t, v) ((struct wrap_arg){ AGENT_KEY_##k, EV_ARG_##t, (uint64_t)(v) })

/* Whether to record this call: the thread to record on, or NULL.  When
 * not NULL, the wrapper must end with wrap_leave(t) (after the exit
 * record). */
static inline __attribute__((always_inline)) struct tstate *wrap_enter(unsigned group)
{
	struct tstate *t = &agent_tls;

	if (__builtin_expect(!(agent_libc_on & group), 0) || t->busy || t->wrap)
		return NULL;
	t->wrap = 1;
	return t;
}

static inline __attribute__((always_inline)) void wrap_leave(struct tstate *t)
{
	t->wrap = 0;
}

/* The slot writers the records below are made of: each fills slots at
 * `p` and returns the slot after them. */
static inline __attribute__((always_inline)) uint64_t *slot_enter(uint64_t *p, unsigned fn,
								  const void *caller, uint64_t ts)
{
	p[0] = ts;
	p[1] = EV_CALL_ADDR(fn) | ((uint64_t)(uintptr_t)caller & EV_PAYLOAD_MASK);
	return p + 2;
}

static inline __attribute__((always_inline)) uint64_t *
slot_args(uint64_t *p, const struct wrap_arg *args, unsigned n)
{
	for (unsigned i = 0; i < n; i++, p += 2) {
		p[0] = args[i].value;
		p[1] = ev_arg_w1(args[i].key, args[i].type);
	}
	return p;
}

static inline __attribute__((always_inline)) uint64_t *slot_sync(uint64_t *p, enum ev_sync_op op,
								 const void *obj)
{
	p[0] = (uint64_t)(uintptr_t)obj;
	p[1] = ev_tag_bits(EV_TAG_SYNC) | (unsigned)op;
	return p + 2;
}

/* Slots the exit of a call needs besides its own: an errno ARG when `err`,
 * an ARG with the full result when it did not fit the payload. */
static inline __attribute__((always_inline)) unsigned slot_exit_extra(uint64_t payload, int err)
{
	return (payload == EV_RESULT_SPILLED) + (err != 0);
}

/* Those slots, then the CALL exit itself. */
static inline __attribute__((always_inline)) void slot_exit(uint64_t *p, unsigned fn, uint64_t ts,
							    uint64_t payload, int64_t full, int err)
{
	if (err) {
		p[0] = (uint64_t)(int64_t)err;
		p[1] = ev_arg_w1(AGENT_KEY_ERRNO, EV_ARG_ERRNO);
		p += 2;
	}
	if (payload == EV_RESULT_SPILLED) {
		p[0] = (uint64_t)full;
		p[1] = ev_arg_w1(AGENT_KEY_RESULT, EV_ARG_I64);
		p += 2;
	}
	p[0] = ts;
	p[1] = EV_EXIT_BIT | EV_CALL_ADDR(fn) | payload;
}

/* The enter record: CALL enter with the caller, then `n` arguments, at
 * `ts` (agent_ticks(), read by the caller).  Returns false if it was
 * dropped (then record nothing more for the call, just wrap_leave()). */
static inline __attribute__((always_inline)) bool wrap_call_begin_ts(struct tstate *t, unsigned fn,
								     const void *caller,
								     const struct wrap_arg *args,
								     unsigned n, uint64_t ts)
{
	uint64_t *p = agent_ev_begin(t, 1 + n, ts, true);

	if (__builtin_expect(p != NULL, 1))
		slot_args(slot_enter(p, fn, caller, ts), args, n);
	agent_ev_end(t);
	return p != NULL;
}

/* The same, with the timestamp taken here. */
static inline __attribute__((always_inline)) bool wrap_call_begin(struct tstate *t, unsigned fn,
								  const void *caller,
								  const struct wrap_arg *args,
								  unsigned n)
{
	return wrap_call_begin_ts(t, fn, caller, args, n, agent_ticks());
}

/* The exit record: `n` arguments, then CALL exit with the result payload
 * (ev_int_payload / ev_ptr_payload, or 0 for AGENT_RES_VOID); a result
 * that does not fit goes in an extra ARG.  `err` != 0 adds an errno ARG. */
static inline __attribute__((always_inline)) void
wrap_call_end(struct tstate *t, unsigned fn, uint64_t payload, int64_t full, int err,
	      const struct wrap_arg *args, unsigned n)
{
	uint64_t ts = agent_ticks();
	uint64_t *p = agent_ev_begin(t, 1 + n + slot_exit_extra(payload, err), ts, false);

	if (__builtin_expect(p != NULL, 1))
		slot_exit(slot_args(p, args, n), fn, ts, payload, full, err);
	agent_ev_end(t);
}

/* A whole call in one record, written after the call, with ONE
 * timestamp `ts` (read before the call): the enter, its arguments, a SYNC
 * record of `op` on `obj` when op is not 0, the exit at the same time (the
 * flusher gives each slot the next tick: the slice lasts a few ticks).
 * For calls too short for a second timestamp to be worth its cost (the
 * heap allocator, a lock that did not wait, an unlock): on this machine a
 * timestamp costs more than malloc.  Arguments and result as for
 * wrap_call_begin() and wrap_call_end(). */
static inline __attribute__((always_inline)) void
wrap_call_once(struct tstate *t, unsigned fn, const void *caller, uint64_t ts,
	       const struct wrap_arg *args, unsigned n, enum ev_sync_op op, const void *obj,
	       uint64_t payload, int64_t full, int err)
{
	uint64_t *p =
	    agent_ev_begin(t, 2 + n + (op != 0) + slot_exit_extra(payload, err), ts, true);

	if (__builtin_expect(p != NULL, 1)) {
		p = slot_args(slot_enter(p, fn, caller, ts), args, n);
		if (op)
			p = slot_sync(p, op, obj);
		slot_exit(p, fn, ts, payload, full, err);
	}
	agent_ev_end(t);
}

/* Common shapes of the exit record. */
static inline __attribute__((always_inline)) void wrap_end_int(struct tstate *t, unsigned fn,
							       int64_t r, int err)
{
	wrap_call_end(t, fn, ev_int_payload(r), r, err, NULL, 0);
}

static inline __attribute__((always_inline)) void wrap_end_ptr(struct tstate *t, unsigned fn,
							       const void *r, int err)
{
	uint64_t v = (uint64_t)(uintptr_t)r;

	wrap_call_end(t, fn, ev_ptr_payload(v), (int64_t)v, err, NULL, 0);
}

/* A string argument of the open frame (a path, a command): one STR head
 * and its DATA slots, at most `max` bytes (longer ones are cut and marked
 * truncated).  NULL strings are not recorded. */
void wrap_str(struct tstate *t, unsigned key, const char *s, size_t max);

/* A FLOW record bound to the open frame. */
void wrap_flow(struct tstate *t, enum ev_flow_phase phase, uint64_t id, bool at_end);

/* A SYNC record inside the open frame. */
static inline __attribute__((always_inline)) void wrap_sync(struct tstate *t, enum ev_sync_op op,
							    const void *obj)
{
	uint64_t *p = agent_ev_begin(t, 1, 0, false);

	if (__builtin_expect(p != NULL, 1))
		slot_sync(p, op, obj);
	agent_ev_end(t);
}

/* A new flow id of kind `kind`, unique in this process (and across the
 * trace, with the pid in it). */
uint64_t agent_new_flow_id(enum ev_flowid_kind kind);

/* The log group: bytes the program wrote to stdout or stderr (a write on
 * fd 1/2, stdio on stdout/stderr) or a syslog message (stream
 * EV_LOG_SYSLOG, with its priority) as LOG records; lines are assembled at
 * flush time.  Called by any wrapper that writes program output, with
 * `t` from wrap_enter().  (wrap_log.c) */
void agent_log_bytes(struct tstate *t, enum ev_log_stream stream, unsigned prio, const char *buf,
		     size_t len);

/* Before a stdio call on `stream` whose text the log group does not take
 * itself (fwrite, fflush, fclose): logs what inline stdio code (putc_unlocked
 * & co.: no call) stored into stdout's or stderr's buffer since the last
 * output logged on it.  errno is kept.  (wrap_log.c) */
struct _IO_FILE;
void agent_log_catch_up(struct tstate *t, struct _IO_FILE *stream);

/* The mem group's heap counter: writes the calling thread's pending heap
 * delta as a COUNTER record now, if it has one (thread end: wrap_thread.c).
 * (wrap_mem.c) */
void agent_mem_flush_delta(struct tstate *t);

#define CALLER __builtin_return_address(0)

#endif /* FXT_AGENT_LIBC_H */
