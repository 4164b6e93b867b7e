/* libc wrappers, io group: the fd calls: open and creat, close and dup,
 * read and write (the log group's program output on fd 1 and 2), pread
 * and pwrite, fsync and lseek; and the syscall() door libunwind uses to
 * reach the agent's fake pipe (io.h).  The shared helpers and the fd
 * cache are io.h's and io_fds.c's.  See libc.h for the rules every wrapper
 * follows.
 */
#include <config.h>

/* We define the functions the fortified headers would make inline. */
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/libc/io.h"
#include "agent/libc/libc.h"

/* The fortified entry points: glibc exports them, but only its fortified
 * headers declare them. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen);

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
 * The clone system calls are the proc group's (agent_syscall_clone()).
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
#ifdef SYS_clone3
	if (__builtin_expect(number == SYS_clone || number == SYS_clone3, 0))
#else
	if (__builtin_expect(number == SYS_clone, 0))
#endif
		return agent_syscall_clone(number, a, CALLER);
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
