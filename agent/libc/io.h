/* The libc wrappers of the io group: what wrap_fd.c, wrap_stdio.c and
 * wrap_net.c share.  Private to those files and io_fds.c.  See libc.h for
 * the rules every wrapper follows.
 *
 * Each wrapper has two paths.  Not recording (the group is off, or the
 * call comes from inside the agent or from another wrapper): the real
 * call, plus the bookkeeping that must see every call of the program
 * (the fd cache below, and the byte counts of pipes, which must stay in
 * step whether or not a call is recorded).  Recording: the enter record
 * with the arguments known before the call, the real call, what happened
 * (FLOW and PIPE records, LOG records), the exit record with the result.
 *
 * The helpers here are inlined into every wrapper (static inline): the
 * wrappers' code is what it was when they all lived in one file.  The
 * fd cache and the streams' byte counts are io_fds.c's.
 */
#ifndef FXT_AGENT_IO_H
#define FXT_AGENT_IO_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "agent/libc/libc.h"

#define PATH_CAP 256 /* bytes of a path argument kept */

/* An argument list and its length, for wrap_call_begin/wrap_call_end. */
#define ARGS(...)                           \
	(struct wrap_arg[]){ __VA_ARGS__ }, \
	    (unsigned)(sizeof((struct wrap_arg[]){ __VA_ARGS__ }) / sizeof(struct wrap_arg))

/* ------------------------------------------------------------ fd cache */

/* fd_cache[fd]: 0 = not known yet; FD_UNTRACKED = not a byte stream we
 * track; else the session stream slots of what the fd sends (bits 0..31)
 * and receives (bits 32..63), each + 1.  One 64-bit word, so a racing
 * reader never sees half an entry.  Fds past the cache are classified
 * on each read or write (correct, slower: rare in practice). */
#define FD_CACHE     4096
#define FD_UNTRACKED (~0ull)

extern uint64_t fd_cache[FD_CACHE] __attribute__((visibility("hidden")));

static inline void fd_forget(int fd)
{
	if ((unsigned)fd < FD_CACHE)
		__atomic_store_n(&fd_cache[fd], 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ streams */

enum { DIR_WRITE = EV_PIPE_WRITE, DIR_READ = EV_PIPE_READ };

/* `n` bytes moved through `fd`: counts them in the stream, and when `t`
 * is recording, records the PIPE record (and for a write the FLOW begin,
 * logged in the session for the reader's converter).  (io_fds.c) */
void stream_note(struct tstate *t, int fd, int dir, uint64_t n);

/* After a read-like or write-like call returned r: the stream's byte
 * count, and its records when `t` is not NULL (recording).  Calls of the
 * agent itself (busy) are not the program's: not counted. */
static inline __attribute__((always_inline)) void io_stream(struct tstate *t, int fd, int dir,
							    ssize_t r)
{
	if (r <= 0 || !(agent_libc_on & AGENT_G_IO) || agent_tls.busy)
		return;
	if ((unsigned)fd < FD_CACHE &&
	    __atomic_load_n(&fd_cache[fd], __ATOMIC_RELAXED) == FD_UNTRACKED)
		return;
	stream_note(t, fd, dir, (uint64_t)r);
}

/* The not-recording path's bookkeeping of a read or write; errno kept. */
static inline __attribute__((always_inline)) ssize_t io_quiet(int fd, int dir, ssize_t r)
{
	int err;

	if (r <= 0)
		return r;
	err = errno;
	io_stream(NULL, fd, dir, r);
	errno = err;
	return r;
}

/* Entries of a new pipe or socket pair: both ends known without asking.
 * (io_fds.c) */
void pipe_learn(const int fds[2]);

/* A socket pair: what one end sends, the other receives (stream pairs
 * only).  (io_fds.c) */
void socketpair_learn(int type, const int fds[2]);

/* The not-recording path of pipe, pipe2 and socketpair: learn the pair
 * if the program made it (io on, not agent code), else just reset.
 * (io_fds.c) */
void pair_quiet(const int fds[2], int type, bool sock);

/* ------------------------------------------------------------ helpers */

/* Begins the slice when the io group is on (a wrapper that also serves
 * the log group may be entered with io off). */
static inline __attribute__((always_inline)) bool
io_begin(struct tstate *t, unsigned fn, const void *caller, const struct wrap_arg *a, unsigned n)
{
	return (agent_libc_on & AGENT_G_IO) && wrap_call_begin(t, fn, caller, a, n);
}

/* Ends an integer-returning call: the exit record if recording (errno
 * with it when r < 0), then errno as the call left it. */
static inline __attribute__((always_inline)) int64_t io_end(struct tstate *t, bool rec, unsigned fn,
							    int64_t r, int err)
{
	if (rec)
		wrap_end_int(t, fn, r, r < 0 ? err : 0);
	wrap_leave(t);
	errno = err;
	return r;
}

/* The end of a read-like call on fd. */
static inline __attribute__((always_inline)) ssize_t io_read_end(struct tstate *t, bool rec,
								 unsigned fn, int fd, ssize_t r)
{
	int err = errno;

	io_stream(rec ? t : NULL, fd, DIR_READ, r);
	return io_end(t, rec, fn, r, err);
}

/* Program output: bytes written to fd 1 or 2, for the log group. */
static inline __attribute__((always_inline)) void log_out(struct tstate *t, int fd, const void *buf,
							  size_t n)
{
	if ((fd == 1 || fd == 2) && n && (agent_libc_on & AGENT_G_LOG))
		agent_log_bytes(t, fd == 1 ? EV_LOG_STDOUT : EV_LOG_STDERR, 0, buf, n);
}

/* The end of a write-like call on fd from one buffer. */
static inline __attribute__((always_inline)) ssize_t
io_write_end(struct tstate *t, bool rec, unsigned fn, int fd, const void *buf, ssize_t r)
{
	int err = errno;

	io_stream(rec ? t : NULL, fd, DIR_WRITE, r);
	if (r > 0)
		log_out(t, fd, buf, (size_t)r);
	return io_end(t, rec, fn, r, err);
}

/* The end of a call that made a new fd (r). */
static inline __attribute__((always_inline)) int io_fd_end(struct tstate *t, bool rec, unsigned fn,
							   int r)
{
	int err = errno;

	fd_forget(r);
	return (int)io_end(t, rec, fn, r, err);
}

/* Bytes described by an iovec array. */
static inline uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* The first `n` bytes of an iovec array, as program output. */
static inline void log_iov(struct tstate *t, int fd, const struct iovec *iov, int cnt, size_t n)
{
	for (int i = 0; i < cnt && n; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		log_out(t, fd, iov[i].iov_base, k);
		n -= k;
	}
}

/* ------------------------------------------------------------ fake pipe */

/* A pipe the agent's own code asks for (busy): only libunwind does, to
 * check that an address is readable before it loads from it while it
 * walks a stack for a sample (it writes one byte from the address into
 * the pipe and drains it; write fails with EFAULT if the address is not
 * readable).  A real pipe would live in the program's fd space, and
 * libunwind closes and re-creates it by NUMBER when a read on it fails,
 * which closes the program's own files once the program has reused the
 * numbers (or closed every fd).  So the agent hands out two numbers no
 * kernel ever gives (above any RLIMIT_NOFILE: the kernel's limit is
 * 2^20): pipe and pipe2 hand them out (wrap_net.c), and read, write,
 * close and syscall serve them (wrap_fd.c): a read finds nothing
 * (EAGAIN), a write checks the address with process_vm_readv on our own
 * pid (no fd), a close succeeds.  No fd is ever created for the agent. */
#define FAKE_PIPE_READ	0x7ffffff0
#define FAKE_PIPE_WRITE 0x7ffffff1

static inline bool fake_fd(int fd)
{
	return __builtin_expect(fd >= FAKE_PIPE_READ && fd <= FAKE_PIPE_WRITE, 0);
}

/* A call that makes a new fd (dup*, socket, accept*): `call` is the real
 * call's parenthesized arguments, the rest its recorded arguments.  The
 * new fd gets a fresh cache entry rather than a copy of the old one's: in
 * a vfork child the cache is the parent's, whose fd of that number is
 * another file. */
#define NEW_FD_BODY(fn, call, ...)                                             \
	do {                                                                   \
		struct tstate *t_ = wrap_enter(AGENT_G_IO);                    \
		bool rec_;                                                     \
		int r_;                                                        \
                                                                               \
		if (!t_) {                                                     \
			r_ = REAL(fn) call;                                    \
			fd_forget(r_);                                         \
			return r_;                                             \
		}                                                              \
		rec_ = io_begin(t_, AGENT_FN_##fn, CALLER, ARGS(__VA_ARGS__)); \
		r_ = REAL(fn) call;                                            \
		return io_fd_end(t_, rec_, AGENT_FN_##fn, r_);                 \
	} while (0)

#endif /* FXT_AGENT_IO_H */
