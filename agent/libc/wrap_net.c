/* libc wrappers, io group: sockets (socket, socketpair, connect, bind,
 * listen, accept, shutdown), send and recv, the calls that wait (poll,
 * select, epoll), and pipes; with the fd cache (io_fds.c), the pipe and
 * socket flows (session.h).  The shared helpers are io.h's.  See libc.h
 * for the rules every wrapper follows.
 */
#include <config.h>

/* We define the functions the fortified headers would make inline. */
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "agent/libc/io.h"
#include "agent/libc/libc.h"
#include "agent/log.h"

/* The fortified entry points: glibc exports them, but only its fortified
 * headers declare them. */
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, __SOCKADDR_ARG addr,
		       socklen_t *addr_len);
int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);

static inline int64_t ts_ns(const struct timespec *ts)
{
	return ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
}

static inline int64_t tv_ns(const struct timeval *tv)
{
	return tv ? (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000 : -1;
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
	if (r == 0 && rec)
		fds_arg(t, fds);
	r = (int)io_end(t, rec, AGENT_FN_socketpair, r, err);
	/* After the slice's end: the first pair maps the session (a file),
	 * the agent's cost, not the call's. */
	if (r == 0)
		socketpair_learn(domain == AF_UNIX ? type : -1, fds);
	return r;
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

/* The agent's own pipe (libunwind's, while agent code runs): the fake
 * numbers of io.h, no fd. */
static bool agent_own_pipe(int fds[2])
{
	if (!agent_tls.busy)
		return false;
	fds[0] = FAKE_PIPE_READ;
	fds[1] = FAKE_PIPE_WRITE;
	return true;
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
	if (r == 0 && rec)
		fds_arg(t, fds);
	r = (int)io_end(t, rec, AGENT_FN_pipe, r, err);
	/* After the slice's end: the first pair maps the session (a file),
	 * the agent's cost, not the call's. */
	if (r == 0)
		pipe_learn(fds);
	return r;
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
	if (r == 0 && rec)
		fds_arg(t, fds);
	r = (int)io_end(t, rec, AGENT_FN_pipe2, r, err);
	/* After the slice's end: the first pair maps the session (a file),
	 * the agent's cost, not the call's. */
	if (r == 0)
		pipe_learn(fds);
	return r;
}
