/* libc wrappers, io group: the stdio streams: fopen, fdopen, freopen,
 * fclose, fread, fwrite, fflush (and their _unlocked and fortified
 * forms); fwrite on stdout or stderr is the log group's program output.
 * The shared helpers and the fd cache are io.h's and io_fds.c's.  See
 * libc.h for the rules every wrapper follows.
 */
#include <config.h>

/* We define the functions the fortified headers would make inline. */
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <stdio.h>

#include "agent/libc/io.h"
#include "agent/libc/libc.h"

/* Macros in glibc's optimized stdio headers. */
#undef fread_unlocked
#undef fwrite_unlocked

/* The fortified entry points: glibc exports them, but only its fortified
 * headers declare them. */
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream);

/* A stream's fd, or -1 (memory streams, NULL); errno untouched. */
static int stream_fd(FILE *f)
{
	int saved = errno, fd = f ? fileno_unlocked(f) : -1;

	errno = saved;
	return fd;
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
