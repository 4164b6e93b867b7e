/* libc wrappers, io group: files, stdio streams, sockets, polling, pipes
 * and dup; with the log group, what the program writes to stdout and
 * stderr; and the pipe/socket flows (session.h).  See libc.h for the rules
 * every wrapper follows.
 *
 * Each wrapper has two paths.  Not recording (the group is off, or the
 * call comes from inside the agent or from another wrapper): the real
 * call, plus the bookkeeping that must see every call of the program
 * (the fd cache below, and the byte counts of pipes, which must stay in
 * step whether or not a call is recorded).  Recording: the enter record
 * with the arguments known before the call, the real call, what happened
 * (FLOW and PIPE records, LOG records), the exit record with the result.
 *
 * Which fds are pipes or sockets: a cache indexed by fd (fd_cache), filled
 * on the first successful read or write of an fd (one fstat, and for a
 * socket a few getsockopt/getsockname calls), and by pipe, pipe2 and
 * socketpair, which know; every wrapper that creates, replaces or closes
 * an fd resets its entry.  So a read or write of a known fd makes no
 * syscall of ours.  Fds closed behind our back (close_range, an untraced
 * library's raw syscalls) may leave a stale entry: a later fd on that
 * number is then misjudged until it is closed through close().
 */
#include <config.h>

/* We define the functions the fortified headers would make inline. */
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/libc.h"
#include "agent/log.h"
#include "spool/session.h"

/* Macros in glibc's optimized stdio headers. */
#undef fread_unlocked
#undef fwrite_unlocked

/* The fortified entry points: glibc exports them, but only its fortified
 * headers declare them. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, __SOCKADDR_ARG addr,
		       socklen_t *addr_len);
int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);

#define PATH_CAP 256 /* bytes of a path argument kept */

/* An argument list and its length, for wrap_call_begin/wrap_call_end. */
#define ARGS(...)                           \
	(struct wrap_arg[]){ __VA_ARGS__ }, \
	    (unsigned)(sizeof((struct wrap_arg[]){ __VA_ARGS__ }) / sizeof(struct wrap_arg))

/* ------------------------------------------------------------ session */

enum { SESS_NONE, SESS_OPENING, SESS_MAPPED, SESS_FAILED };

static struct session sess;
static int sess_state;

/* The session, mapped on first use (a pipe or socket read or written);
 * NULL if it cannot be (logged once with FXT_DEBUG) or another thread is
 * mapping it right now (that call's bytes are then not tracked). */
static struct session *session_get(void)
{
	char path[PATH_MAX + 64];
	int state = __atomic_load_n(&sess_state, __ATOMIC_ACQUIRE);
	int err;

	if (state == SESS_MAPPED)
		return &sess;
	if (state != SESS_NONE ||
	    !__atomic_compare_exchange_n(&sess_state, &state, SESS_OPENING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return state == SESS_MAPPED ? &sess : NULL;
	session_path(path, sizeof(path), agent_cfg.output, agent_cfg.root_pid);
	err = session_map(&sess, path);
	if (err) {
		agent_dbg("session %s: error %d; no pipe/socket flows", path, -err);
		__atomic_store_n(&sess_state, SESS_FAILED, __ATOMIC_RELEASE);
		return NULL;
	}
	agent_dbg("session %s mapped", path);
	__atomic_store_n(&sess_state, SESS_MAPPED, __ATOMIC_RELEASE);
	return &sess;
}

/* ------------------------------------------------------------ fd cache */

/* fd_cache[fd]: 0 = not known yet; FD_UNTRACKED = not a byte stream we
 * track; else the session stream slots of what the fd sends (bits 0..31)
 * and receives (bits 32..63), each + 1.  One 64-bit word, so a racing
 * reader never sees half an entry.  Fds past the cache are classified
 * on each read or write (correct, slower: rare in practice). */
#define FD_CACHE     4096
#define FD_UNTRACKED (~0ull)

static uint64_t fd_cache[FD_CACHE];

static inline void fd_forget(int fd)
{
	if ((unsigned)fd < FD_CACHE)
		__atomic_store_n(&fd_cache[fd], 0, __ATOMIC_RELAXED);
}

static inline void fd_set_entry(int fd, uint64_t e)
{
	if ((unsigned)fd < FD_CACHE)
		__atomic_store_n(&fd_cache[fd], e, __ATOMIC_RELAXED);
}

static uint64_t stream_entry(const struct session_stream *w, const struct session_stream *r)
{
	if (!w || !r)
		return FD_UNTRACKED;
	return (uint64_t)(w - sess.streams + 1) | (uint64_t)(r - sess.streams + 1) << 32;
}

/* An address with IPv4-mapped IPv6 addresses made plain IPv4, so that a
 * dual-stack server and an IPv4 client describe the connection alike. */
struct canon_addr {
	uint16_t family;
	uint16_t port;
	unsigned char addr[16];
};

static bool canon_addr(const struct sockaddr_storage *ss, struct canon_addr *c)
{
	memset(c, 0, sizeof(*c));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		c->family = AF_INET;
		c->port = in->sin_port;
		memcpy(c->addr, &in->sin_addr, 4);
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		c->port = in6->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			c->family = AF_INET;
			memcpy(c->addr, &in6->sin6_addr.s6_addr[12], 4);
		} else {
			c->family = AF_INET6;
			memcpy(c->addr, &in6->sin6_addr, 16);
		}
		return true;
	}
	return false;
}

/* A socket's entry: stream sockets only (datagrams are not a byte
 * stream).  A Unix socket is tracked when socketpair() published its
 * peer; an IP socket by its two addresses. */
static uint64_t socket_entry(struct session *s, int fd, const struct stat *st)
{
	struct sockaddr_storage a, b;
	struct canon_addr ca, cb;
	socklen_t la = sizeof(a), lb = sizeof(b), l = sizeof(int);
	int type, domain;
	uint64_t self, peer;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 || type != SOCK_STREAM)
		return FD_UNTRACKED;
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) != 0)
		return FD_UNTRACKED;
	if (domain == AF_UNIX) {
		const struct session_stream *me;

		self = session_pipe_key(st->st_dev, st->st_ino);
		me = session_find_stream(s, self);
		peer = me ? __atomic_load_n(&me->peer, __ATOMIC_ACQUIRE) : 0;
		if (!peer)
			return FD_UNTRACKED;
		return stream_entry(me, session_stream(s, peer));
	}
	if (getsockname(fd, (struct sockaddr *)&a, &la) != 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) != 0 || !canon_addr(&a, &ca) ||
	    !canon_addr(&b, &cb))
		return FD_UNTRACKED;
	return stream_entry(session_stream(s, session_addr_key(&ca, sizeof(ca), &cb, sizeof(cb))),
			    session_stream(s, session_addr_key(&cb, sizeof(cb), &ca, sizeof(ca))));
}

/* Classifies `fd` (first read or write of it since it was created) and
 * caches the answer; 0 when there is none yet (not cached).  Runs as
 * agent code (busy): the syscalls are ours. */
static uint64_t fd_classify(int fd)
{
	struct tstate *self = &agent_tls;
	struct session *s;
	struct stat st;
	uint64_t e = FD_UNTRACKED;
	int saved = errno;

	self->busy++;
	if (fstat(fd, &st) != 0) {
		e = 0; /* closed under us: not cached, not tracked */
		goto out;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		s = session_get();
		if (!s) {
			/* Another thread is mapping the session: ask again
			 * next time.  It failed: never tracked. */
			if (__atomic_load_n(&sess_state, __ATOMIC_ACQUIRE) != SESS_FAILED)
				e = 0;
			goto out;
		}
		if (S_ISFIFO(st.st_mode)) {
			struct session_stream *p =
			    session_stream(s, session_pipe_key(st.st_dev, st.st_ino));
			e = stream_entry(p, p);
		} else {
			e = socket_entry(s, fd, &st);
		}
	}
out:
	if (e)
		fd_set_entry(fd, e);
	self->busy--;
	errno = saved;
	return e;
}

/* ------------------------------------------------------------ streams */

enum { DIR_WRITE = EV_PIPE_WRITE, DIR_READ = EV_PIPE_READ };

static void pipe_record(struct tstate *t, unsigned op, uint64_t key, uint64_t off, uint64_t n)
{
	uint64_t *p = agent_ev_begin(t, 2, 0, false);

	if (p) {
		p[0] = off;
		p[1] = ev_pipe_w1(op, key);
		p[2] = n;
		p[3] = ev_tag_bits(EV_TAG_DATA);
	}
	agent_ev_end(t);
}

/* `n` bytes moved through `fd`: counts them in the stream, and when `t`
 * is recording, records the PIPE record (and for a write the FLOW begin,
 * logged in the session for the reader's flusher). */
static __attribute__((noinline)) void stream_note(struct tstate *t, int fd, int dir, uint64_t n)
{
	uint64_t e = (unsigned)fd < FD_CACHE ? __atomic_load_n(&fd_cache[fd], __ATOMIC_RELAXED) : 0;
	struct session_stream *st;
	uint64_t off, slot;

	if (!e)
		e = fd_classify(fd);
	if (!e || e == FD_UNTRACKED)
		return;
	slot = (dir == DIR_WRITE ? e & 0xffffffffu : e >> 32) - 1;
	st = &sess.streams[slot];
	off = __atomic_fetch_add(dir == DIR_WRITE ? &st->written : &st->read, n, __ATOMIC_RELAXED);
	if (!t)
		return;
	if (dir == DIR_WRITE) {
		struct session_write w = { st->key, off, n, agent_new_flow_id(EV_FLOWID_PIPE) };
		bool first;

		if (session_log_write(&sess, &w, &first) == 0) {
			wrap_flow(t, EV_FLOW_BEGIN, w.flow_id, false);
		} else if (first) {
			t->busy++;
			agent_dbg("session log full (%u writes): no more pipe/socket flows",
				  SESSION_LOG_SLOTS);
			t->busy--;
		}
	}
	pipe_record(t, (unsigned)dir, st->key, off, n);
}

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

/* Entries of a new pipe or socket pair: both ends known without asking. */
static void pipe_learn(const int fds[2])
{
	struct tstate *self = &agent_tls;
	struct session *s;
	struct stat st;
	int saved = errno;

	fd_forget(fds[0]);
	fd_forget(fds[1]);
	self->busy++;
	if ((s = session_get()) != NULL && fstat(fds[0], &st) == 0) {
		struct session_stream *p =
		    session_stream(s, session_pipe_key(st.st_dev, st.st_ino));
		fd_set_entry(fds[0], stream_entry(p, p));
		fd_set_entry(fds[1], stream_entry(p, p));
	}
	self->busy--;
	errno = saved;
}

/* A socket pair: what one end sends, the other receives.  Each socket's
 * peer is published in the session, for processes that inherit one end
 * (they find it by the socket's own inode).  Only stream pairs. */
static void socketpair_learn(int type, const int fds[2])
{
	struct tstate *self = &agent_tls;
	struct session_stream *a, *b;
	struct session *s;
	struct stat sa, sb;
	int saved = errno;

	fd_forget(fds[0]);
	fd_forget(fds[1]);
	if ((type & 0xf) != SOCK_STREAM) {
		fd_set_entry(fds[0], FD_UNTRACKED);
		fd_set_entry(fds[1], FD_UNTRACKED);
		return;
	}
	self->busy++;
	if ((s = session_get()) != NULL && fstat(fds[0], &sa) == 0 && fstat(fds[1], &sb) == 0) {
		uint64_t ka = session_pipe_key(sa.st_dev, sa.st_ino);
		uint64_t kb = session_pipe_key(sb.st_dev, sb.st_ino);

		a = session_stream(s, ka);
		b = session_stream(s, kb);
		if (a && b) {
			__atomic_store_n(&a->peer, kb, __ATOMIC_RELEASE);
			__atomic_store_n(&b->peer, ka, __ATOMIC_RELEASE);
		}
		fd_set_entry(fds[0], stream_entry(a, b));
		fd_set_entry(fds[1], stream_entry(b, a));
	}
	self->busy--;
	errno = saved;
}

/* The not-recording path of pipe, pipe2 and socketpair: learn the pair
 * if the program made it (io on, not agent code), else just reset. */
static void pair_quiet(const int fds[2], int type, bool sock)
{
	if (!(agent_libc_on & AGENT_G_IO) || agent_tls.busy) {
		fd_forget(fds[0]);
		fd_forget(fds[1]);
	} else if (sock) {
		socketpair_learn(type, fds);
	} else {
		pipe_learn(fds);
	}
}

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
static uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* The first `n` bytes of an iovec array, as program output. */
static void log_iov(struct tstate *t, int fd, const struct iovec *iov, int cnt, size_t n)
{
	for (int i = 0; i < cnt && n; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		log_out(t, fd, iov[i].iov_base, k);
		n -= k;
	}
}

/* A stream's fd, or -1 (memory streams, NULL); errno untouched. */
static int stream_fd(FILE *f)
{
	int saved = errno, fd = f ? fileno_unlocked(f) : -1;

	errno = saved;
	return fd;
}

static inline int64_t ts_ns(const struct timespec *ts)
{
	return ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
}

static inline int64_t tv_ns(const struct timeval *tv)
{
	return tv ? (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000 : -1;
}

/* open's optional mode: read only when the flags say it was passed, as
 * glibc does. */
static inline bool open_has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* ------------------------------------------------------------ open */

/* The enter record of the open family: dirfd (openat), flags, mode (when
 * given, else -1), path. */
static bool open_begin(struct tstate *t, unsigned fn, const void *caller, int dirfd, bool at,
		       const char *path, int flags, long mode)
{
	struct wrap_arg a[3];
	unsigned n = 0;

	if (at)
		a[n++] = WARG(FD, I64, dirfd);
	a[n++] = WARG(FLAGS, I64, flags);
	if (mode >= 0)
		a[n++] = WARG(MODE, U64, mode);
	if (!io_begin(t, fn, caller, a, n))
		return false;
	wrap_str(t, AGENT_KEY_PATH, path, PATH_CAP);
	return true;
}

REAL_DECL(open);
REAL_DECL(open64);
REAL_DECL(openat);
REAL_DECL(openat64);
REAL_DECL(creat);
REAL_DECL(creat64);
REAL_DECL(__open_2);
REAL_DECL(__open64_2);
REAL_DECL(__openat_2);
REAL_DECL(__openat64_2);

/* open, open64, openat, openat64: one body, the real function differing. */
#define OPEN_BODY(fn, at, dirfd, ...)                                              \
	do {                                                                       \
		mode_t mode = 0;                                                   \
		bool has_mode = open_has_mode(flags), rec;                         \
		struct tstate *t;                                                  \
		int r;                                                             \
		if (has_mode) {                                                    \
			va_list ap;                                                \
			va_start(ap, flags);                                       \
			mode = va_arg(ap, mode_t);                                 \
			va_end(ap);                                                \
		}                                                                  \
		t = wrap_enter(AGENT_G_IO);                                        \
		if (!t) {                                                          \
			r = REAL(fn)(__VA_ARGS__, flags, mode);                    \
			fd_forget(r);                                              \
			return r;                                                  \
		}                                                                  \
		rec = open_begin(t, AGENT_FN_##fn, CALLER, dirfd, at, path, flags, \
				 has_mode ? (long)mode : -1);                      \
		r = REAL(fn)(__VA_ARGS__, flags, mode);                            \
		return io_fd_end(t, rec, AGENT_FN_##fn, r);                        \
	} while (0)

WRAP int open(const char *path, int flags, ...)
{
	OPEN_BODY(open, false, -1, path);
}

WRAP int open64(const char *path, int flags, ...)
{
	OPEN_BODY(open64, false, -1, path);
}

WRAP int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY(openat, true, dirfd, dirfd, path);
}

WRAP int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY(openat64, true, dirfd, dirfd, path);
}

/* creat and the fortified opens (no mode): the real call's arguments. */
#define OPEN_FIXED_BODY(fn, at, dirfd, path, flags, mode, ...)                            \
	do {                                                                              \
		struct tstate *t = wrap_enter(AGENT_G_IO);                                \
		bool rec;                                                                 \
		int r;                                                                    \
		if (!t) {                                                                 \
			r = REAL(fn)(__VA_ARGS__);                                        \
			fd_forget(r);                                                     \
			return r;                                                         \
		}                                                                         \
		rec = open_begin(t, AGENT_FN_##fn, CALLER, dirfd, at, path, flags, mode); \
		r = REAL(fn)(__VA_ARGS__);                                                \
		return io_fd_end(t, rec, AGENT_FN_##fn, r);                               \
	} while (0)

WRAP int creat(const char *path, mode_t mode)
{
	OPEN_FIXED_BODY(creat, false, -1, path, O_CREAT | O_WRONLY | O_TRUNC, (long)mode, path,
			mode);
}

WRAP int creat64(const char *path, mode_t mode)
{
	OPEN_FIXED_BODY(creat64, false, -1, path, O_CREAT | O_WRONLY | O_TRUNC, (long)mode, path,
			mode);
}

WRAP int __open_2(const char *path, int flags)
{
	OPEN_FIXED_BODY(__open_2, false, -1, path, flags, -1, path, flags);
}

WRAP int __open64_2(const char *path, int flags)
{
	OPEN_FIXED_BODY(__open64_2, false, -1, path, flags, -1, path, flags);
}

WRAP int __openat_2(int dirfd, const char *path, int flags)
{
	OPEN_FIXED_BODY(__openat_2, true, dirfd, path, flags, -1, dirfd, path, flags);
}

WRAP int __openat64_2(int dirfd, const char *path, int flags)
{
	OPEN_FIXED_BODY(__openat64_2, true, dirfd, path, flags, -1, dirfd, path, flags);
}

/* ------------------------------------------------------------ close, dup */

/* A pipe the agent's own code asks for (busy): only libunwind does, to
 * check that an address is readable before it loads from it while it
 * walks a stack for a sample (it writes one byte from the address into
 * the pipe and drains it; write fails with EFAULT if the address is not
 * readable).  A real pipe would live in the program's fd space, and
 * libunwind closes and re-creates it by NUMBER when a read on it fails,
 * which closes the program's own files once the program has reused the
 * numbers (or closed every fd).  So the agent hands out two numbers no
 * kernel ever gives (above any RLIMIT_NOFILE: the kernel's limit is
 * 2^20), and serves them here: a read finds nothing (EAGAIN), a write
 * checks the address with process_vm_readv on our own pid (no fd), a
 * close succeeds.  No fd is ever created for the agent. */
#define FAKE_PIPE_READ	0x7ffffff0
#define FAKE_PIPE_WRITE 0x7ffffff1

static inline bool fake_fd(int fd)
{
	return __builtin_expect(fd >= FAKE_PIPE_READ && fd <= FAKE_PIPE_WRITE, 0);
}

static bool agent_own_pipe(int fds[2])
{
	if (!agent_tls.busy)
		return false;
	fds[0] = FAKE_PIPE_READ;
	fds[1] = FAKE_PIPE_WRITE;
	return true;
}

/* What read/write/close do on the fake numbers. */
static ssize_t fake_read(void)
{
	errno = EAGAIN;
	return -1;
}

static ssize_t fake_write(const void *buf, size_t count)
{
	struct iovec local, remote;
	char byte[16];
	ssize_t r;

	local.iov_base = byte;
	local.iov_len = count < sizeof(byte) ? count : sizeof(byte);
	remote.iov_base = (void *)(uintptr_t)buf;
	remote.iov_len = local.iov_len;
	r = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1ul, &remote, 1ul, 0ul);
	if (r == (ssize_t)local.iov_len)
		return r;
	errno = EFAULT; /* unreadable, or the check itself is refused */
	return -1;
}

/* libunwind writes to and reads from its pipe with syscall(SYS_write,
 * ...) and syscall(SYS_read, ...): those reach the fake numbers here.
 * Anything else passes through with its six argument registers (what the
 * C library's own syscall() reads too). */
REAL_DECL(syscall);

WRAP long syscall(long number, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (__builtin_expect(agent_tls.busy != 0, 0) &&
	    (number == SYS_read || number == SYS_write) && a[0] >= 0 && a[0] <= INT_MAX &&
	    fake_fd((int)a[0]))
		return number == SYS_write ? fake_write((const void *)a[1], (size_t)a[2])
					   : fake_read();
	return REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

REAL_DECL(close);
REAL_DECL(dup);
REAL_DECL(dup2);
REAL_DECL(dup3);

WRAP int close(int fd)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;
	int r, err;

	if (!t) {
		if (fake_fd(fd))
			return 0;
		r = REAL(close)(fd);
		fd_forget(fd);
		return r;
	}
	rec = io_begin(t, AGENT_FN_close, CALLER, ARGS(WARG(FD, I64, fd)));
	r = REAL(close)(fd);
	err = errno;
	/* Even on failure: Linux releases the fd whatever close returns. */
	fd_forget(fd);
	return (int)io_end(t, rec, AGENT_FN_close, r, err);
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

WRAP int dup(int fd)
{
	NEW_FD_BODY(dup, (fd), WARG(FD, I64, fd));
}

WRAP int dup2(int fd, int newfd)
{
	NEW_FD_BODY(dup2, (fd, newfd), WARG(FD, I64, fd), WARG(NEWFD, I64, newfd));
}

WRAP int dup3(int fd, int newfd, int flags)
{
	NEW_FD_BODY(dup3, (fd, newfd, flags), WARG(FD, I64, fd), WARG(NEWFD, I64, newfd),
		    WARG(FLAGS, I64, flags));
}

/* ------------------------------------------------------------ read */

REAL_DECL(read);
REAL_DECL(__read_chk);
REAL_DECL(readv);
REAL_DECL(pread);
REAL_DECL(pread64);
REAL_DECL(__pread_chk);
REAL_DECL(__pread64_chk);

WRAP ssize_t read(int fd, void *buf, size_t count)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;

	if (!t) {
		if (fake_fd(fd))
			return fake_read();
		return io_quiet(fd, DIR_READ, REAL(read)(fd, buf, count));
	}
	rec = io_begin(t, AGENT_FN_read, CALLER, ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count)));
	return io_read_end(t, rec, AGENT_FN_read, fd, REAL(read)(fd, buf, count));
}

WRAP ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;

	if (!t)
		return io_quiet(fd, DIR_READ, REAL(__read_chk)(fd, buf, count, buflen));
	rec = io_begin(t, AGENT_FN___read_chk, CALLER,
		       ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count)));
	return io_read_end(t, rec, AGENT_FN___read_chk, fd,
			   REAL(__read_chk)(fd, buf, count, buflen));
}

WRAP ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;

	if (!t)
		return io_quiet(fd, DIR_READ, REAL(readv)(fd, iov, iovcnt));
	rec = io_begin(t, AGENT_FN_readv, CALLER,
		       ARGS(WARG(FD, I64, fd), WARG(IOVCNT, I64, iovcnt),
			    WARG(NBYTES, U64, iov_bytes(iov, iovcnt))));
	return io_read_end(t, rec, AGENT_FN_readv, fd, REAL(readv)(fd, iov, iovcnt));
}

/* pread and pwrite: at an offset, so never on a pipe or socket (ESPIPE):
 * no stream bookkeeping. */
#define PREAD_BODY(fn, ...)                                                                        \
	do {                                                                                       \
		struct tstate *t = wrap_enter(AGENT_G_IO);                                         \
		bool rec;                                                                          \
		ssize_t r;                                                                         \
		if (!t)                                                                            \
			return REAL(fn)(__VA_ARGS__);                                              \
		rec = io_begin(                                                                    \
		    t, AGENT_FN_##fn, CALLER,                                                      \
		    ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count), WARG(OFFSET, I64, offset))); \
		r = REAL(fn)(__VA_ARGS__);                                                         \
		return io_end(t, rec, AGENT_FN_##fn, r, errno);                                    \
	} while (0)

WRAP ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	PREAD_BODY(pread, fd, buf, count, offset);
}

WRAP ssize_t pread64(int fd, void *buf, size_t count, off64_t offset)
{
	PREAD_BODY(pread64, fd, buf, count, offset);
}

WRAP ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen)
{
	PREAD_BODY(__pread_chk, fd, buf, count, offset, buflen);
}

WRAP ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen)
{
	PREAD_BODY(__pread64_chk, fd, buf, count, offset, buflen);
}

/* ------------------------------------------------------------ write */

REAL_DECL(write);
REAL_DECL(writev);
REAL_DECL(pwrite);
REAL_DECL(pwrite64);

WRAP ssize_t write(int fd, const void *buf, size_t count)
{
	struct tstate *t = wrap_enter(AGENT_G_IO | AGENT_G_LOG);
	bool rec;

	if (!t) {
		if (fake_fd(fd))
			return fake_write(buf, count);
		return io_quiet(fd, DIR_WRITE, REAL(write)(fd, buf, count));
	}
	rec =
	    io_begin(t, AGENT_FN_write, CALLER, ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count)));
	return io_write_end(t, rec, AGENT_FN_write, fd, buf, REAL(write)(fd, buf, count));
}

WRAP ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct tstate *t = wrap_enter(AGENT_G_IO | AGENT_G_LOG);
	bool rec;
	ssize_t r;
	int err;

	if (!t)
		return io_quiet(fd, DIR_WRITE, REAL(writev)(fd, iov, iovcnt));
	rec = io_begin(t, AGENT_FN_writev, CALLER,
		       ARGS(WARG(FD, I64, fd), WARG(IOVCNT, I64, iovcnt),
			    WARG(NBYTES, U64, iov_bytes(iov, iovcnt))));
	r = REAL(writev)(fd, iov, iovcnt);
	err = errno;
	io_stream(rec ? t : NULL, fd, DIR_WRITE, r);
	if (r > 0 && (fd == 1 || fd == 2))
		log_iov(t, fd, iov, iovcnt, (size_t)r);
	return io_end(t, rec, AGENT_FN_writev, r, err);
}

WRAP ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
	PREAD_BODY(pwrite, fd, buf, count, offset);
}

WRAP ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
	PREAD_BODY(pwrite64, fd, buf, count, offset);
}

/* ------------------------------------------------------------ fd misc */

REAL_DECL(fsync);
REAL_DECL(fdatasync);
REAL_DECL(lseek);
REAL_DECL(lseek64);

#define FD_ONLY_BODY(fn)                                                           \
	do {                                                                       \
		struct tstate *t = wrap_enter(AGENT_G_IO);                         \
		bool rec;                                                          \
		int r;                                                             \
		if (!t)                                                            \
			return REAL(fn)(fd);                                       \
		rec = io_begin(t, AGENT_FN_##fn, CALLER, ARGS(WARG(FD, I64, fd))); \
		r = REAL(fn)(fd);                                                  \
		return (int)io_end(t, rec, AGENT_FN_##fn, r, errno);               \
	} while (0)

WRAP int fsync(int fd)
{
	FD_ONLY_BODY(fsync);
}

WRAP int fdatasync(int fd)
{
	FD_ONLY_BODY(fdatasync);
}

#define LSEEK_BODY(fn)                                                            \
	do {                                                                      \
		struct tstate *t = wrap_enter(AGENT_G_IO);                        \
		bool rec;                                                         \
		int64_t r;                                                        \
		if (!t)                                                           \
			return REAL(fn)(fd, offset, whence);                      \
		rec = io_begin(t, AGENT_FN_##fn, CALLER,                          \
			       ARGS(WARG(FD, I64, fd), WARG(OFFSET, I64, offset), \
				    WARG(WHENCE, I64, whence)));                  \
		r = REAL(fn)(fd, offset, whence);                                 \
		return io_end(t, rec, AGENT_FN_##fn, r, errno);                   \
	} while (0)

WRAP off_t lseek(int fd, off_t offset, int whence)
{
	LSEEK_BODY(lseek);
}

WRAP off64_t lseek64(int fd, off64_t offset, int whence)
{
	LSEEK_BODY(lseek64);
}

/* ------------------------------------------------------------ stdio */

REAL_DECL(fopen);
REAL_DECL(fopen64);
REAL_DECL(fdopen);
REAL_DECL(freopen);
REAL_DECL(fclose);
REAL_DECL(fread);
REAL_DECL(fread_unlocked);
REAL_DECL(__fread_chk);
REAL_DECL(__fread_unlocked_chk);
REAL_DECL(fwrite);
REAL_DECL(fwrite_unlocked);
REAL_DECL(fflush);
REAL_DECL(fflush_unlocked);

/* The end of a call that returns a stream: its fd as an exit argument
 * (unless the call had it as an argument already) and a fresh cache entry
 * for it (it may be new). */
static inline __attribute__((always_inline)) FILE *stream_end(struct tstate *t, bool rec,
							      unsigned fn, FILE *r, bool show_fd)
{
	int err = errno, fd = stream_fd(r);

	fd_forget(fd);
	if (rec) {
		uint64_t v = (uint64_t)(uintptr_t)r;

		if (r && show_fd)
			wrap_call_end(t, fn, ev_ptr_payload(v), (int64_t)v, 0,
				      ARGS(WARG(FD, I64, fd)));
		else
			wrap_end_ptr(t, fn, r, r ? 0 : err);
	}
	wrap_leave(t);
	errno = err;
	return r;
}

#define FOPEN_BODY(fn)                                               \
	do {                                                         \
		struct tstate *t = wrap_enter(AGENT_G_IO);           \
		bool rec;                                            \
		FILE *r;                                             \
		if (!t) {                                            \
			r = REAL(fn)(path, mode);                    \
			fd_forget(stream_fd(r));                     \
			return r;                                    \
		}                                                    \
		rec = io_begin(t, AGENT_FN_##fn, CALLER, NULL, 0);   \
		if (rec) {                                           \
			wrap_str(t, AGENT_KEY_PATH, path, PATH_CAP); \
			wrap_str(t, AGENT_KEY_MODE_STR, mode, 16);   \
		}                                                    \
		r = REAL(fn)(path, mode);                            \
		return stream_end(t, rec, AGENT_FN_##fn, r, true);   \
	} while (0)

WRAP FILE *fopen(const char *path, const char *mode)
{
	FOPEN_BODY(fopen);
}

WRAP FILE *fopen64(const char *path, const char *mode)
{
	FOPEN_BODY(fopen64);
}

WRAP FILE *fdopen(int fd, const char *mode)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;
	FILE *r;

	if (!t)
		return REAL(fdopen)(fd, mode);
	rec = io_begin(t, AGENT_FN_fdopen, CALLER, ARGS(WARG(FD, I64, fd)));
	if (rec)
		wrap_str(t, AGENT_KEY_MODE_STR, mode, 16);
	r = REAL(fdopen)(fd, mode);
	return stream_end(t, rec, AGENT_FN_fdopen, r, false);
}

WRAP FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	int old = stream_fd(stream);
	bool rec;
	FILE *r;

	if (!t) {
		r = REAL(freopen)(path, mode, stream);
		fd_forget(old);
		fd_forget(stream_fd(r));
		return r;
	}
	rec = io_begin(t, AGENT_FN_freopen, CALLER,
		       ARGS(WARG(STREAM, PTR, stream), WARG(FD, I64, old)));
	if (rec) {
		wrap_str(t, AGENT_KEY_PATH, path, PATH_CAP);
		wrap_str(t, AGENT_KEY_MODE_STR, mode, 16);
	}
	r = REAL(freopen)(path, mode, stream);
	fd_forget(old);
	return stream_end(t, rec, AGENT_FN_freopen, r, false);
}

WRAP int fclose(FILE *stream)
{
	struct tstate *t = wrap_enter(AGENT_G_IO | AGENT_G_LOG);
	int fd = stream_fd(stream), r, err;
	bool rec;

	if (!t) {
		r = REAL(fclose)(stream);
		fd_forget(fd);
		return r;
	}
	agent_log_catch_up(t, stream);
	rec = io_begin(t, AGENT_FN_fclose, CALLER,
		       ARGS(WARG(STREAM, PTR, stream), WARG(FD, I64, fd)));
	r = REAL(fclose)(stream);
	err = errno;
	fd_forget(fd);
	return (int)io_end(t, rec, AGENT_FN_fclose, r, err);
}

/* fread and fwrite return the items transferred; a short count is not
 * an error by itself (end of file), so no errno is recorded. */
#define FREAD_BODY(fn, ...)                                                                        \
	do {                                                                                       \
		struct tstate *t = wrap_enter(AGENT_G_IO);                                         \
		size_t r;                                                                          \
		bool rec;                                                                          \
		int err;                                                                           \
		if (!t)                                                                            \
			return REAL(fn)(__VA_ARGS__);                                              \
		rec = io_begin(t, AGENT_FN_##fn, CALLER,                                           \
			       ARGS(WARG(SIZE, U64, size), WARG(NMEMB, U64, n),                    \
				    WARG(STREAM, PTR, stream), WARG(FD, I64, stream_fd(stream)))); \
		r = REAL(fn)(__VA_ARGS__);                                                         \
		err = errno;                                                                       \
		if (rec)                                                                           \
			wrap_end_int(t, AGENT_FN_##fn, (int64_t)r, 0);                             \
		wrap_leave(t);                                                                     \
		errno = err;                                                                       \
		return r;                                                                          \
	} while (0)

WRAP size_t fread(void *ptr, size_t size, size_t n, FILE *stream)
{
	FREAD_BODY(fread, ptr, size, n, stream);
}

WRAP size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *stream)
{
	FREAD_BODY(fread_unlocked, ptr, size, n, stream);
}

WRAP size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream)
{
	FREAD_BODY(__fread_chk, ptr, ptrlen, size, n, stream);
}

WRAP size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream)
{
	FREAD_BODY(__fread_unlocked_chk, ptr, ptrlen, size, n, stream);
}

/* fwrite to stdout or stderr is program output (log group) when the
 * stream's fd is 1 or 2: the bytes of the items written. */
#define FWRITE_BODY(fn)                                                             \
	do {                                                                        \
		struct tstate *t = wrap_enter(AGENT_G_IO | AGENT_G_LOG);            \
		int fd = stream_fd(stream), err;                                    \
		size_t r;                                                           \
		bool rec;                                                           \
		if (!t)                                                             \
			return REAL(fn)(ptr, size, n, stream);                      \
		agent_log_catch_up(t, stream);                                      \
		rec = io_begin(t, AGENT_FN_##fn, CALLER,                            \
			       ARGS(WARG(SIZE, U64, size), WARG(NMEMB, U64, n),     \
				    WARG(STREAM, PTR, stream), WARG(FD, I64, fd))); \
		r = REAL(fn)(ptr, size, n, stream);                                 \
		err = errno;                                                        \
		if (r)                                                              \
			log_out(t, fd, ptr, r *size);                               \
		if (rec)                                                            \
			wrap_end_int(t, AGENT_FN_##fn, (int64_t)r, 0);              \
		wrap_leave(t);                                                      \
		errno = err;                                                        \
		return r;                                                           \
	} while (0)

WRAP size_t fwrite(const void *ptr, size_t size, size_t n, FILE *stream)
{
	FWRITE_BODY(fwrite);
}

WRAP size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *stream)
{
	FWRITE_BODY(fwrite_unlocked);
}

#define FFLUSH_BODY(fn)                                                                            \
	do {                                                                                       \
		struct tstate *t = wrap_enter(AGENT_G_IO | AGENT_G_LOG);                           \
		bool rec;                                                                          \
		int r;                                                                             \
		if (!t)                                                                            \
			return REAL(fn)(stream);                                                   \
		agent_log_catch_up(t, stream);                                                     \
		rec = io_begin(t, AGENT_FN_##fn, CALLER,                                           \
			       ARGS(WARG(STREAM, PTR, stream), WARG(FD, I64, stream_fd(stream)))); \
		r = REAL(fn)(stream);                                                              \
		return (int)io_end(t, rec, AGENT_FN_##fn, r, errno);                               \
	} while (0)

WRAP int fflush(FILE *stream)
{
	FFLUSH_BODY(fflush);
}

WRAP int fflush_unlocked(FILE *stream)
{
	FFLUSH_BODY(fflush_unlocked);
}

/* ------------------------------------------------------------ sockets */

REAL_DECL(socket);
REAL_DECL(socketpair);
REAL_DECL(connect);
REAL_DECL(bind);
REAL_DECL(listen);
REAL_DECL(accept);
REAL_DECL(accept4);
REAL_DECL(shutdown);

WRAP int socket(int domain, int type, int protocol)
{
	NEW_FD_BODY(socket, (domain, type, protocol), WARG(DOMAIN, I64, domain),
		    WARG(TYPE, I64, type), WARG(PROTOCOL, I64, protocol));
}

/* "3,4": the two fds of pipe and socketpair, as one argument. */
static void fds_arg(struct tstate *t, const int fds[2])
{
	char buf[32];

	agent_fmt(buf, sizeof(buf), "%d,%d", fds[0], fds[1]);
	wrap_str(t, AGENT_KEY_PIPE_FDS, buf, sizeof(buf));
}

WRAP int socketpair(int domain, int type, int protocol, int fds[2])
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;
	int r, err;

	if (!t) {
		r = REAL(socketpair)(domain, type, protocol, fds);
		if (r == 0)
			pair_quiet(fds, domain == AF_UNIX ? type : -1, true);
		return r;
	}
	rec = io_begin(
	    t, AGENT_FN_socketpair, CALLER,
	    ARGS(WARG(DOMAIN, I64, domain), WARG(TYPE, I64, type), WARG(PROTOCOL, I64, protocol)));
	r = REAL(socketpair)(domain, type, protocol, fds);
	err = errno;
	if (r == 0) {
		socketpair_learn(domain == AF_UNIX ? type : -1, fds);
		if (rec)
			fds_arg(t, fds);
	}
	return (int)io_end(t, rec, AGENT_FN_socketpair, r, err);
}

#define SOCKADDR_BODY(fn)                                                          \
	do {                                                                       \
		struct tstate *t = wrap_enter(AGENT_G_IO);                         \
		bool rec;                                                          \
		int r, err;                                                        \
		if (!t) {                                                          \
			r = REAL(fn)(fd, addr, len);                               \
			fd_forget(fd);                                             \
			return r;                                                  \
		}                                                                  \
		rec = io_begin(t, AGENT_FN_##fn, CALLER, ARGS(WARG(FD, I64, fd))); \
		r = REAL(fn)(fd, addr, len);                                       \
		err = errno;                                                       \
		fd_forget(fd); /* its addresses changed */                         \
		return (int)io_end(t, rec, AGENT_FN_##fn, r, err);                 \
	} while (0)

WRAP int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	SOCKADDR_BODY(connect);
}

WRAP int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	SOCKADDR_BODY(bind);
}

WRAP int listen(int fd, int backlog)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;
	int r;

	if (!t)
		return REAL(listen)(fd, backlog);
	rec = io_begin(t, AGENT_FN_listen, CALLER,
		       ARGS(WARG(FD, I64, fd), WARG(BACKLOG, I64, backlog)));
	r = REAL(listen)(fd, backlog);
	return (int)io_end(t, rec, AGENT_FN_listen, r, errno);
}

WRAP int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	NEW_FD_BODY(accept, (fd, addr, len), WARG(FD, I64, fd));
}

WRAP int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len, int flags)
{
	NEW_FD_BODY(accept4, (fd, addr, len, flags), WARG(FD, I64, fd), WARG(FLAGS, I64, flags));
}

WRAP int shutdown(int fd, int how)
{
	struct tstate *t = wrap_enter(AGENT_G_IO);
	bool rec;
	int r;

	if (!t)
		return REAL(shutdown)(fd, how);
	rec = io_begin(t, AGENT_FN_shutdown, CALLER, ARGS(WARG(FD, I64, fd), WARG(HOW, I64, how)));
	r = REAL(shutdown)(fd, how);
	return (int)io_end(t, rec, AGENT_FN_shutdown, r, errno);
}

/* ------------------------------------------------------------ send, recv */

REAL_DECL(send);
REAL_DECL(sendto);
REAL_DECL(sendmsg);
REAL_DECL(recv);
REAL_DECL(__recv_chk);
REAL_DECL(recvfrom);
REAL_DECL(__recvfrom_chk);
REAL_DECL(recvmsg);

/* A peek leaves the bytes in the socket: it does not consume them. */
#define RECV_DIR(flags) ((flags)&MSG_PEEK ? -1 : DIR_READ)

/* send family: bytes sent are the stream's; `count` requested. */
#define SEND_BODY(fn, count, ...)                                                                \
	do {                                                                                     \
		struct tstate *t = wrap_enter(AGENT_G_IO);                                       \
		bool rec;                                                                        \
		ssize_t r;                                                                       \
		int err;                                                                         \
		if (!t)                                                                          \
			return io_quiet(fd, DIR_WRITE, REAL(fn)(__VA_ARGS__));                   \
		rec = io_begin(                                                                  \
		    t, AGENT_FN_##fn, CALLER,                                                    \
		    ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count), WARG(FLAGS, I64, flags))); \
		r = REAL(fn)(__VA_ARGS__);                                                       \
		err = errno;                                                                     \
		io_stream(rec ? t : NULL, fd, DIR_WRITE, r);                                     \
		return io_end(t, rec, AGENT_FN_##fn, r, err);                                    \
	} while (0)

#define RECV_BODY(fn, count, ...)                                                                \
	do {                                                                                     \
		struct tstate *t = wrap_enter(AGENT_G_IO);                                       \
		bool rec;                                                                        \
		ssize_t r;                                                                       \
		int err;                                                                         \
		if (!t) {                                                                        \
			r = REAL(fn)(__VA_ARGS__);                                               \
			return RECV_DIR(flags) < 0 ? r : io_quiet(fd, DIR_READ, r);              \
		}                                                                                \
		rec = io_begin(                                                                  \
		    t, AGENT_FN_##fn, CALLER,                                                    \
		    ARGS(WARG(FD, I64, fd), WARG(NBYTES, U64, count), WARG(FLAGS, I64, flags))); \
		r = REAL(fn)(__VA_ARGS__);                                                       \
		err = errno;                                                                     \
		if (RECV_DIR(flags) >= 0)                                                        \
			io_stream(rec ? t : NULL, fd, DIR_READ, r);                              \
		return io_end(t, rec, AGENT_FN_##fn, r, err);                                    \
	} while (0)

WRAP ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	SEND_BODY(send, len, fd, buf, len, flags);
}

WRAP ssize_t sendto(int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG addr,
		    socklen_t alen)
{
	SEND_BODY(sendto, len, fd, buf, len, flags, addr, alen);
}

WRAP ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	SEND_BODY(sendmsg, msg ? iov_bytes(msg->msg_iov, (int)msg->msg_iovlen) : 0, fd, msg, flags);
}

WRAP ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	RECV_BODY(recv, len, fd, buf, len, flags);
}

WRAP ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	RECV_BODY(__recv_chk, len, fd, buf, len, buflen, flags);
}

WRAP ssize_t recvfrom(int fd, void *buf, size_t len, int flags, __SOCKADDR_ARG addr,
		      socklen_t *alen)
{
	RECV_BODY(recvfrom, len, fd, buf, len, flags, addr, alen);
}

WRAP ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
			    __SOCKADDR_ARG addr, socklen_t *alen)
{
	RECV_BODY(__recvfrom_chk, len, fd, buf, len, buflen, flags, addr, alen);
}

WRAP ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	RECV_BODY(recvmsg, msg ? iov_bytes(msg->msg_iov, (int)msg->msg_iovlen) : 0, fd, msg, flags);
}

/* ------------------------------------------------------------ polling */

REAL_DECL(poll);
REAL_DECL(__poll_chk);
REAL_DECL(ppoll);
REAL_DECL(select);
REAL_DECL(pselect);
REAL_DECL(epoll_wait);
REAL_DECL(epoll_pwait);

/* Calls that wait: the arguments, the real call, the result. */
#define WAIT_BODY(fn, args, ...)                                     \
	do {                                                         \
		struct tstate *t = wrap_enter(AGENT_G_IO);           \
		bool rec;                                            \
		int r;                                               \
		if (!t)                                              \
			return REAL(fn)(__VA_ARGS__);                \
		rec = io_begin(t, AGENT_FN_##fn, CALLER, args);      \
		r = REAL(fn)(__VA_ARGS__);                           \
		return (int)io_end(t, rec, AGENT_FN_##fn, r, errno); \
	} while (0)

WRAP int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	WAIT_BODY(poll, ARGS(WARG(NFDS, U64, nfds), WARG(TIMEOUT_MS, I64, timeout)), fds, nfds,
		  timeout);
}

WRAP int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
	WAIT_BODY(__poll_chk, ARGS(WARG(NFDS, U64, nfds), WARG(TIMEOUT_MS, I64, timeout)), fds,
		  nfds, timeout, fdslen);
}

WRAP int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const sigset_t *mask)
{
	WAIT_BODY(ppoll, ARGS(WARG(NFDS, U64, nfds), WARG(TIMEOUT_NS, I64, ts_ns(tmo))), fds, nfds,
		  tmo, mask);
}

WRAP int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tmo)
{
	WAIT_BODY(select, ARGS(WARG(NFDS, I64, nfds), WARG(TIMEOUT_NS, I64, tv_ns(tmo))), nfds, rd,
		  wr, ex, tmo);
}

WRAP int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *tmo,
		 const sigset_t *mask)
{
	WAIT_BODY(pselect, ARGS(WARG(NFDS, I64, nfds), WARG(TIMEOUT_NS, I64, ts_ns(tmo))), nfds, rd,
		  wr, ex, tmo, mask);
}

WRAP int epoll_wait(int epfd, struct epoll_event *ev, int maxevents, int timeout)
{
	WAIT_BODY(
	    epoll_wait,
	    ARGS(WARG(FD, I64, epfd), WARG(NFDS, I64, maxevents), WARG(TIMEOUT_MS, I64, timeout)),
	    epfd, ev, maxevents, timeout);
}

WRAP int epoll_pwait(int epfd, struct epoll_event *ev, int maxevents, int timeout,
		     const sigset_t *mask)
{
	WAIT_BODY(
	    epoll_pwait,
	    ARGS(WARG(FD, I64, epfd), WARG(NFDS, I64, maxevents), WARG(TIMEOUT_MS, I64, timeout)),
	    epfd, ev, maxevents, timeout, mask);
}

/* ------------------------------------------------------------ pipes */

REAL_DECL(pipe);
REAL_DECL(pipe2);

WRAP int pipe(int fds[2])
{
	struct tstate *t;
	bool rec;
	int r, err;

	if (agent_own_pipe(fds))
		return 0;
	t = wrap_enter(AGENT_G_IO);
	if (!t) {
		r = REAL(pipe)(fds);
		if (r == 0)
			pair_quiet(fds, 0, false);
		return r;
	}
	rec = io_begin(t, AGENT_FN_pipe, CALLER, NULL, 0);
	r = REAL(pipe)(fds);
	err = errno;
	if (r == 0) {
		pipe_learn(fds);
		if (rec)
			fds_arg(t, fds);
	}
	return (int)io_end(t, rec, AGENT_FN_pipe, r, err);
}

WRAP int pipe2(int fds[2], int flags)
{
	struct tstate *t;
	bool rec;
	int r, err;

	if (agent_own_pipe(fds))
		return 0;
	t = wrap_enter(AGENT_G_IO);
	if (!t) {
		r = REAL(pipe2)(fds, flags);
		if (r == 0)
			pair_quiet(fds, 0, false);
		return r;
	}
	rec = io_begin(t, AGENT_FN_pipe2, CALLER, ARGS(WARG(FLAGS, I64, flags)));
	r = REAL(pipe2)(fds, flags);
	err = errno;
	if (r == 0) {
		pipe_learn(fds);
		if (rec)
			fds_arg(t, fds);
	}
	return (int)io_end(t, rec, AGENT_FN_pipe2, r, err);
}
