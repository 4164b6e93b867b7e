/* The io group's shared state: the session (run/session.h) the
 * pipe/socket flows are logged in, the fd cache that says which fds are
 * pipes or sockets, and the streams' byte counts and PIPE records.  The
 * wrappers reach it through io.h.
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

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "agent/libc/io.h"
#include "agent/libc/libc.h"
#include "agent/log.h"
#include "run/session.h"

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
	run_session_path(path, sizeof(path), agent_cfg.output, agent_cfg.root_pid);
	err = run_session_map(&sess, path);
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

uint64_t fd_cache[FD_CACHE];

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

		self = run_session_pipe_key(st->st_dev, st->st_ino);
		me = run_session_find_stream(s, self);
		peer = me ? __atomic_load_n(&me->peer, __ATOMIC_ACQUIRE) : 0;
		if (!peer)
			return FD_UNTRACKED;
		return stream_entry(me, run_session_stream(s, peer));
	}
	if (getsockname(fd, (struct sockaddr *)&a, &la) != 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) != 0 || !canon_addr(&a, &ca) ||
	    !canon_addr(&b, &cb))
		return FD_UNTRACKED;
	return stream_entry(
	    run_session_stream(s, run_session_addr_key(&ca, sizeof(ca), &cb, sizeof(cb))),
	    run_session_stream(s, run_session_addr_key(&cb, sizeof(cb), &ca, sizeof(ca))));
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
			    run_session_stream(s, run_session_pipe_key(st.st_dev, st.st_ino));
			e = stream_entry(p, p);
		} else {
			e = socket_entry(s, fd, &st);
		}
	}
out:
	if (e)
		fd_set_entry(fd, e);
	agent_busy_leave(self);
	errno = saved;
	return e;
}

/* ------------------------------------------------------------ streams */

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
 * logged in the session for the reader's converter). */
__attribute__((noinline)) void stream_note(struct tstate *t, int fd, int dir, uint64_t n)
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

		if (run_session_log_write(&sess, &w, &first) == 0) {
			wrap_flow(t, EV_FLOW_BEGIN, w.flow_id, false);
		} else if (first) {
			t->busy++;
			agent_dbg("session log full (%u writes): no more pipe/socket flows",
				  SESSION_LOG_SLOTS);
			agent_busy_leave(t);
		}
	}
	pipe_record(t, (unsigned)dir, st->key, off, n);
}

/* Entries of a new pipe or socket pair: both ends known without asking. */
void pipe_learn(const int fds[2])
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
		    run_session_stream(s, run_session_pipe_key(st.st_dev, st.st_ino));
		fd_set_entry(fds[0], stream_entry(p, p));
		fd_set_entry(fds[1], stream_entry(p, p));
	}
	agent_busy_leave(self);
	errno = saved;
}

/* A socket pair: what one end sends, the other receives.  Each socket's
 * peer is published in the session, for processes that inherit one end
 * (they find it by the socket's own inode).  Only stream pairs. */
void socketpair_learn(int type, const int fds[2])
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
		uint64_t ka = run_session_pipe_key(sa.st_dev, sa.st_ino);
		uint64_t kb = run_session_pipe_key(sb.st_dev, sb.st_ino);

		a = run_session_stream(s, ka);
		b = run_session_stream(s, kb);
		if (a && b) {
			__atomic_store_n(&a->peer, kb, __ATOMIC_RELEASE);
			__atomic_store_n(&b->peer, ka, __ATOMIC_RELEASE);
		}
		fd_set_entry(fds[0], stream_entry(a, b));
		fd_set_entry(fds[1], stream_entry(b, a));
	}
	agent_busy_leave(self);
	errno = saved;
}

/* The not-recording path of pipe, pipe2 and socketpair: learn the pair
 * if the program made it (io on, not agent code), else just reset. */
void pair_quiet(const int fds[2], int type, bool sock)
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
