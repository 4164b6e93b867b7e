/* The log group: what the program prints to stdout and stderr, and its
 * syslog messages, as LOG records (spool/records.h); the converter assembles
 * them into lines, each an FXT log record and a "log" instant.
 *
 * The wrappers here record no slices, only the text: the printf family
 * (and the _chk forms that _FORTIFY_SOURCE builds call), puts/fputs/fputc
 * and friends, perror, the err/warn family, error/error_at_line and
 * syslog.  Only output to fd 1 or 2 (a stream whose fileno is 1 or 2) is
 * recorded; the io wrappers feed write/writev/fwrite on 1 and 2 to
 * agent_log_bytes() too.
 *
 * The program's output is never changed: every wrapper calls the real
 * function with the program's arguments (the variadic ones through its
 * v-form: printf -> vprintf), with errno as the program left it.  The text
 * is the program's own bytes where it can be: the argument of fputs (and
 * of fwrite and write, in the io wrappers); the bytes a printf or puts to
 * stdout or stderr left in the stream's buffer (log_buffered()).  Only
 * when the buffer was written out during the call (a line-buffered or
 * unbuffered stream: a terminal, stderr) is the text formatted a second
 * time, with vsnprintf into a buffer of our own, after the real call (with
 * errno as the program left it, for %m; a %n directive is then stored
 * twice, with the same value, and a conversion of the program's own,
 * register_printf_specifier's, runs twice), and always for dprintf,
 * syslog and the messages below.  The real call's result decides whether anything was
 * written: < 0 (EOF) logs nothing.  The functions without a v-form
 * (error, error_at_line) are the exception: they get the text we
 * formatted, through "%s", which prints the same bytes.
 *
 * Binary output (a NUL byte or invalid UTF-8 in a call's first KiB) is not
 * logged, only counted (log_is_text()).
 *
 * Bounds: one call records at most LOG_CALL_MAX bytes (64 KiB), as LOG
 * records of at most EV_LOG_MAX_RECORD bytes; the rest, and records lost
 * because the buffers were full, are counted, and the count is printed
 * under FXT_DEBUG at exit.  The text is formatted into a buffer on the
 * stack, or, for longer output, on the heap (the mem wrappers do not see
 * that malloc: `wrap` is set).
 *
 * Limits: putc_unlocked, putchar_unlocked (and, in programs built with
 * optimization, fputc_unlocked and small fwrite_unlocked) are inline code
 * that stores into the FILE's buffer without a call: their bytes are found
 * in stdout's or stderr's buffer at the next stdio call on it or at exit
 * (see log_marks), except when the buffer was written out in between (a
 * line-buffered or unbuffered stream: a terminal).  perror, the err/warn
 * family, error and syslog return nothing: their text is recorded even if
 * writing it failed.  What error_print_progname prints instead of the
 * program name is not recorded.  Text in a legacy 8-bit encoding is taken
 * for binary.
 *
 * One file past 800 lines because it is one job, the log group's
 * capture of the program's text: the record writer (agent_log_bytes, the
 * catch-up of inline stdio), the reading of a stream's buffer
 * (log_buffered()), the text buffer and the entry helpers serve
 * only the wrappers below and the compiler inlines them into each
 * (log_enter, the text setup, agent_log_bytes into log_leave); in files of
 * their own they would be calls on every printf. */
#include <config.h>

/* Fortified headers turn printf & co. into inline functions (which the
 * definitions below would clash with) and our own vsnprintf into
 * __vsnprintf_chk, which refuses a %n the program's real call may allow. */
#undef _FORTIFY_SOURCE

#include <err.h>
#include <errno.h>
#include <error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/libc/libc.h"
#include "agent/log.h"

/* glibc's fortified entry points; not declared without _FORTIFY_SOURCE. */
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
void __syslog_chk(int prio, int flag, const char *fmt, ...);
void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap);

#define LOG_CALL_MAX (64u * 1024) /* bytes one call records at most */
#define LOG_STACK    1024u	  /* text formatted on the stack */

REAL_DECL(vprintf);
REAL_DECL(vfprintf);
REAL_DECL(vdprintf);
REAL_DECL(__vprintf_chk);
REAL_DECL(__vfprintf_chk);
REAL_DECL(__vdprintf_chk);
REAL_DECL(puts);
REAL_DECL(fputs);
REAL_DECL(fputs_unlocked);
REAL_DECL(fputc);
REAL_DECL(fputc_unlocked);
REAL_DECL(putc);
REAL_DECL(putchar);
REAL_DECL(perror);
REAL_DECL(verr);
REAL_DECL(verrx);
REAL_DECL(vwarn);
REAL_DECL(vwarnx);
REAL_DECL(error);
REAL_DECL(error_at_line);
REAL_DECL(vsyslog);
REAL_DECL(__vsyslog_chk);

/* ------------------------------------------------------------ records */

/* Bytes of output not recorded (over LOG_CALL_MAX in one call, or lost
 * with full buffers), and bytes of binary output left out on purpose. */
static uint64_t log_lost_bytes, log_binary_bytes;

static void log_lost(size_t n)
{
	if (__atomic_fetch_add(&log_lost_bytes, n, __ATOMIC_RELAXED) == 0)
		agent_dbg("log: output not recorded (over %u bytes in one call, or buffers "
			  "full); the total is printed at exit",
			  LOG_CALL_MAX);
}

__attribute__((destructor)) static void log_report(void)
{
	uint64_t n = __atomic_load_n(&log_lost_bytes, __ATOMIC_RELAXED);
	uint64_t b = __atomic_load_n(&log_binary_bytes, __ATOMIC_RELAXED);

	/* Agent code: its write to stderr is not the program's output. */
	agent_tls.busy++;
	if (n)
		agent_dbg("log: %llu bytes of output not recorded", (unsigned long long)n);
	if (b)
		agent_dbg("log: %llu bytes of binary output not logged", (unsigned long long)b);
	agent_busy_leave(&agent_tls);
}

/* Whether output is text, to be logged: no NUL byte in what would be
 * logged (a tar stream's writes can start with a file's text and carry
 * headers further on) and valid UTF-8 in its first LOG_SNIFF bytes.  Binary output (gzip -c, tar
 * -cf - ...) is not logged: it has no lines, and its bytes would make unreadable log instants.  A
 * character cut by a write's start or end is fine (up to 3 continuation bytes first; an incomplete
 * sequence last), as programs write text in chunks of any size.  Overlong forms are not looked for:
 * this is a heuristic, not a validator. */
#define LOG_SNIFF 1024u

static bool log_is_text(const unsigned char *s, size_t len)
{
	size_t n = len < LOG_SNIFF ? len : LOG_SNIFF, i = 0;

	while (i < n && i < 3 && (s[i] & 0xc0) == 0x80)
		i++;
	while (i < n) {
		unsigned c = s[i];
		size_t k;

		if (c < 0x80) {
			if (!c)
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		else
			return false;
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= n)
				return true; /* cut by the end */
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
		}
		i += k + 1;
	}
	return true;
}

/* Whether s[0 .. n) is ASCII without a NUL byte, the common case, seen 8
 * bytes at a time: such output is text (log_is_text()) and has no NUL
 * byte, which then need not be looked for byte by byte. */
static bool log_is_ascii(const unsigned char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		/* A byte 0 borrows its high bit; one of 0x80.. has it. */
		if (((w - ones) | w) & highs)
			return false;
	}
	for (; i < n; i++)
		if (!s[i] || s[i] >= 0x80)
			return false;
	return true;
}

/* Bytes that putc_unlocked & co. (inline code, no call) store into the
 * buffer of stdout or stderr.  After every output logged on stream 1 or 2
 * (agent_log_bytes()), the mark says how far that stream's FILE buffer was
 * filled; at the next wrapped stdio call on that FILE, the bytes between
 * the mark and the buffer's fill pointer were stored by no call we saw,
 * and are logged first (log_catch_up()).  A flush in between (the fill
 * pointer back below the mark) loses them: always so for line-buffered
 * and unbuffered streams (a terminal), where such a byte may write the
 * buffer at once; and an fwrite or write of the io group moves the mark
 * past bytes stored before it.  Marks only move at logging: bytes may be
 * lost, never logged twice.  Other threads may write the stream meanwhile:
 * the catch-up holds the stream's lock. */
static struct {
	FILE *file;
	char *mark;
} log_marks[3];

/* glibc's own FILE objects of stdout and stderr: never freed, unlike a
 * FILE a program may assign to stdout and close.  Only they are tracked. */
extern FILE _IO_2_1_stdout_, _IO_2_1_stderr_;

/* The FILE of stream 1 or 2 that may be tracked, or NULL. */
static FILE *log_std_file(unsigned stream)
{
	FILE *f = stream == 1 ? stdout : stderr;

	if (f != (stream == 1 ? &_IO_2_1_stdout_ : &_IO_2_1_stderr_) ||
	    fileno_unlocked(f) != (int)stream)
		return NULL;
	return f;
}

static void log_mark(unsigned stream)
{
	FILE *f;

	if (stream != 1 && stream != 2)
		return;
	f = log_std_file(stream);
	__atomic_store_n(&log_marks[stream].mark, f ? f->_IO_write_ptr : NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&log_marks[stream].file, f, __ATOMIC_RELAXED);
}

/* (A NULL mark with the FILE set: nothing logged yet, from the buffer's
 * start.) */
static bool log_catch_up_locked(struct tstate *t, FILE *f, unsigned stream)
{
	char *mark;

	if (__atomic_load_n(&log_marks[stream].file, __ATOMIC_RELAXED) != f)
		return false;
	flockfile(f);
	mark = __atomic_load_n(&log_marks[stream].mark, __ATOMIC_RELAXED);
	if (!mark)
		mark = f->_IO_write_base;
	if (mark && f->_IO_write_base <= mark && mark < f->_IO_write_ptr)
		agent_log_bytes(t, stream, 0, mark, (size_t)(f->_IO_write_ptr - mark));
	return true;
}

/* The catch-up alone.  The log wrappers instead keep the stream locked
 * until their own text is logged (log_catch_up_locked()): the bytes
 * another thread stores meanwhile then wait for the mark to move past
 * ours, and a catch-up never sees text that its own call logs after. */
static void log_catch_up(struct tstate *t, FILE *f, unsigned stream)
{
	if (log_catch_up_locked(t, f, stream))
		funlockfile(f);
}

/* At exit, after the program's atexit handlers and before the seal (see
 * log_init()): what is still in the buffers, which exit() writes out
 * after our seal. */
static void log_at_exit(void)
{
	struct tstate *t = wrap_enter(AGENT_G_LOG);

	if (!t)
		return;
	for (unsigned s = 1; s <= 2; s++) {
		FILE *f = log_std_file(s);

		if (f)
			log_catch_up(t, f, s);
	}
	wrap_leave(t);
}

/* The agent's initialisation registers its seal with atexit(); ours is
 * registered after it, so it runs before the seal. */
__attribute__((constructor)) static void log_init(void)
{
	agent_tls.busy++;
	if (agent_ensure_init() == 0 && atexit(log_at_exit) == 0) {
		log_marks[1].file = log_std_file(1);
		log_marks[2].file = log_std_file(2);
	}
	agent_busy_leave(&agent_tls);
}

void agent_log_bytes(struct tstate *t, enum ev_log_stream stream, unsigned prio, const char *buf,
		     size_t len)
{
	uint64_t ts;

	/* The io wrappers call us whenever io or log is on. */
	if (!(agent_libc_on & AGENT_G_LOG))
		return;
	log_mark(stream);
	if (!len)
		return;
	if (!log_is_ascii((const unsigned char *)buf, len < LOG_CALL_MAX ? len : LOG_CALL_MAX) &&
	    (!log_is_text((const unsigned char *)buf, len) ||
	     memchr(buf, 0, len < LOG_CALL_MAX ? len : LOG_CALL_MAX))) {
		__atomic_fetch_add(&log_binary_bytes, len, __ATOMIC_RELAXED);
		return;
	}
	if (len > LOG_CALL_MAX) {
		log_lost(len - LOG_CALL_MAX);
		len = LOG_CALL_MAX;
	}
	ts = agent_ticks();
	while (len) {
		size_t n = len < EV_LOG_MAX_RECORD ? len : EV_LOG_MAX_RECORD;
		uint64_t *p = agent_ev_begin(t, 1 + ev_data_slots(n), ts, false);

		if (p) {
			p[0] = ts;
			p[1] = ev_log_w1(stream, prio, n);
			ev_put_data(p + 2, buf, n);
		}
		agent_ev_end(t);
		if (!p)
			log_lost(n);
		buf += n;
		len -= n;
	}
}

/* ------------------------------------------------------------ text */

/* Text built from pieces: on the stack while it fits, then on the heap up
 * to `limit` bytes; what does not fit is cut. */
struct text {
	char *s;
	size_t len, cap, limit;
	size_t cut;  /* bytes left out (over the limit, or no memory) */
	bool failed; /* a formatting error: the text is unusable */
	char buf[LOG_STACK];
};

static void text_init(struct text *x, size_t limit)
{
	x->s = x->buf;
	x->len = 0;
	x->cap = sizeof(x->buf);
	x->limit = limit;
	x->cut = 0;
	x->failed = false;
	x->buf[0] = '\0';
}

static void text_free(struct text *x)
{
	if (x->s != x->buf)
		free(x->s);
}

/* Makes room for `need` more bytes and a NUL, as far as the limit and
 * the memory allow. */
static void text_grow(struct text *x, size_t need)
{
	size_t want = x->len + need + 1;
	char *s;

	if (want > x->limit + 1)
		want = x->limit + 1;
	if (want <= x->cap)
		return;
	s = malloc(want);
	if (!s)
		return;
	memcpy(s, x->s, x->len + 1);
	text_free(x);
	x->s = s;
	x->cap = want;
}

/* Appends the formatted text, with errno = `err` for %m. */
__attribute__((format(printf, 3, 0))) static void text_vadd(struct text *x, int err,
							    const char *fmt, va_list ap)
{
	va_list aq;
	size_t cap;
	int n;

	if (x->failed)
		return;
	va_copy(aq, ap);
	errno = err;
	n = vsnprintf(x->s + x->len, x->cap - x->len, fmt, aq);
	va_end(aq);
	if (n < 0) {
		x->failed = true;
		return;
	}
	if (x->len + (size_t)n < x->cap) {
		x->len += (size_t)n;
		return;
	}
	cap = x->cap;
	text_grow(x, (size_t)n);
	if (x->cap != cap) {
		va_copy(aq, ap);
		errno = err;
		n = vsnprintf(x->s + x->len, x->cap - x->len, fmt, aq);
		va_end(aq);
		if (n < 0) {
			x->failed = true;
			return;
		}
	}
	/* Cut to what the buffer holds. */
	if (x->len + (size_t)n < x->cap) {
		x->len += (size_t)n;
	} else {
		x->cut += x->len + (size_t)n - (x->cap - 1);
		x->len = x->cap - 1;
	}
}

__attribute__((format(printf, 3, 4))) static void text_add(struct text *x, int err, const char *fmt,
							   ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vadd(x, err, fmt, ap);
	va_end(ap);
}

/* Appends `len` bytes as they are (no formatting), cut like the rest. */
static void text_put(struct text *x, const char *s, size_t len)
{
	size_t room;

	if (x->failed)
		return;
	if (x->len + len >= x->cap)
		text_grow(x, len);
	room = x->cap - 1 - x->len;
	if (len > room) {
		x->cut += len - room;
		len = room;
	}
	memcpy(x->s + x->len, s, len);
	x->len += len;
	x->s[x->len] = '\0';
}

static void text_str(struct text *x, const char *s)
{
	text_put(x, s, strlen(s));
}

static void text_strerror(struct text *x, int errnum)
{
	char buf[128];

	/* The GNU strerror_r: what glibc's own messages print. */
	text_str(x, strerror_r(errnum, buf, sizeof(buf)));
}

/* ------------------------------------------------------------ entering */

/* The stream (1, 2) of a fd, or 0 when its output is not recorded. */
static inline unsigned fd_stream(int fd)
{
	return fd == 1 || fd == 2 ? (unsigned)fd : 0;
}

static inline unsigned file_stream(FILE *f)
{
	return f ? fd_stream(fileno_unlocked(f)) : 0;
}

void agent_log_catch_up(struct tstate *t, FILE *f)
{
	unsigned stream;
	int err = errno;

	if (!(agent_libc_on & AGENT_G_LOG) || !(stream = file_stream(f)))
		return;
	log_catch_up(t, f, stream);
	errno = err;
}

/* One call of a log wrapper. */
struct logcall {
	struct tstate *t;
	unsigned stream;
	unsigned prio; /* syslog's */
	int err;       /* errno as the program left it */
	FILE *locked;  /* the stream, locked from the catch-up to the record */
	char *base;    /* its buffer and fill pointer after the catch-up */
	char *before;
	const char *bytes; /* the text, when it is the program's own bytes */
	size_t nbytes;	   /* (an argument, or the stream's buffer); else: */
	struct text text;
};

/* Whether to record output to `stream` (0: no); then enter. */
static inline bool log_enter(struct logcall *c, unsigned stream)
{
	if (!stream || !(agent_libc_on & AGENT_G_LOG))
		return false;
	c->t = wrap_enter(AGENT_G_LOG);
	if (!c->t)
		return false;
	c->stream = stream;
	c->prio = 0;
	c->locked = NULL;
	c->bytes = NULL;
	c->err = errno;
	text_init(&c->text, LOG_CALL_MAX);
	return true;
}

/* The same for a stream; its fd is looked up only if the group is on. */
static inline bool log_enter_file(struct logcall *c, FILE *f)
{
	if (!(agent_libc_on & AGENT_G_LOG) || !log_enter(c, file_stream(f)))
		return false;
	if (log_catch_up_locked(c->t, f, c->stream)) {
		c->locked = f;
		c->base = f->_IO_write_base;
		c->before = f->_IO_write_ptr;
	}
	errno = c->err;
	return true;
}

/* Whether the call just made on the locked stream left its `n` bytes in
 * the stream's buffer, after what was there before it (or from the start
 * of the buffer the call made: the stream's first output): then they are
 * the text, and no second formatting is needed.  The fill pointer `n`
 * bytes further in the same buffer says so: had the buffer been written
 * out meanwhile (full; line-buffered or unbuffered), the pointer would be
 * at most `n` bytes from the buffer's start, which equals `n` past the old
 * one only if that was the start, and then those `n` bytes are the call's
 * all the same. */
static bool log_buffered(struct logcall *c, size_t n)
{
	FILE *f = c->locked;
	char *from = c->before;

	if (!f)
		return false;
	if (!c->base)
		from = f->_IO_write_base;
	else if (f->_IO_write_base != c->base)
		return false;
	if (!from || from < f->_IO_write_base || f->_IO_write_ptr < from ||
	    (size_t)(f->_IO_write_ptr - from) != n)
		return false;
	c->bytes = from;
	c->nbytes = n;
	return true;
}

/* Records the text, leaves, and gives the program errno as `err`. */
static void log_leave(struct logcall *c, int err)
{
	if (c->bytes) {
		agent_log_bytes(c->t, c->stream, c->prio, c->bytes, c->nbytes);
	} else if (!c->text.failed) {
		agent_log_bytes(c->t, c->stream, c->prio, c->text.s, c->text.len);
		if (c->text.cut)
			log_lost(c->text.cut);
	} else {
		log_mark(c->stream); /* what the call stored is not macros' */
	}
	if (c->locked)
		funlockfile(c->locked);
	text_free(&c->text);
	wrap_leave(c->t);
	errno = err;
}

/* The end of a printf-like call that returned `r`: the text is recorded
 * only if the real call wrote it (r >= 0). */
static int log_result(struct logcall *c, int r)
{
	int err = errno;

	if (r < 0) {
		c->bytes = NULL;
		c->text.failed = true;
	}
	log_leave(c, err);
	return r;
}

/* Formats the program's text; errno is the program's again afterwards. */
__attribute__((format(printf, 2, 0))) static void log_format(struct logcall *c, const char *fmt,
							     va_list ap)
{
	text_vadd(&c->text, c->err, fmt, ap);
	errno = c->err;
}

/* The end of a printf-like call on a stream that returned `r`: its text is
 * the bytes it left in the stream's buffer (log_buffered()), or else
 * formatted again from `ap` (a copy of the program's arguments, taken
 * before the call), with the program's errno for %m. */
__attribute__((format(printf, 3, 0))) static int log_printed(struct logcall *c, int r,
							     const char *fmt, va_list ap)
{
	int err = errno;

	if (r >= 0 && !log_buffered(c, (size_t)r))
		log_format(c, fmt, ap);
	errno = err;
	return log_result(c, r);
}

/* The v-forms as the other wrappers here call them (printf -> vprintf):
 * through a hidden alias, bound inside the agent.  Preloaded, a call of
 * the exported name would reach our wrapper anyway; loaded late (fxt-run
 * -p), the agent's own calls of its exported names go to the C library's,
 * and the text would not be recorded. */
#define LOCAL(fn) local_##fn
#define LOCAL_ALIAS(fn)                  \
	extern __typeof__(fn) local_##fn \
	    __attribute__((copy(fn), alias(#fn), visibility("hidden")))

/* ------------------------------------------------------------ printf */

WRAP int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	struct logcall c;
	va_list aq;
	int r;

	if (!log_enter_file(&c, f))
		return REAL(vfprintf)(f, fmt, ap);
	va_copy(aq, ap);
	r = log_printed(&c, REAL(vfprintf)(f, fmt, ap), fmt, aq);
	va_end(aq);
	return r;
}
LOCAL_ALIAS(vfprintf);

WRAP int vprintf(const char *fmt, va_list ap)
{
	struct logcall c;
	va_list aq;
	int r;

	if (!log_enter_file(&c, stdout))
		return REAL(vprintf)(fmt, ap);
	va_copy(aq, ap);
	r = log_printed(&c, REAL(vprintf)(fmt, ap), fmt, aq);
	va_end(aq);
	return r;
}
LOCAL_ALIAS(vprintf);

WRAP int vdprintf(int fd, const char *fmt, va_list ap)
{
	struct logcall c;

	if (!log_enter(&c, fd_stream(fd)))
		return REAL(vdprintf)(fd, fmt, ap);
	log_format(&c, fmt, ap);
	return log_result(&c, REAL(vdprintf)(fd, fmt, ap));
}
LOCAL_ALIAS(vdprintf);

WRAP int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	struct logcall c;
	va_list aq;
	int r;

	if (!log_enter_file(&c, f))
		return REAL(__vfprintf_chk)(f, flag, fmt, ap);
	va_copy(aq, ap);
	r = log_printed(&c, REAL(__vfprintf_chk)(f, flag, fmt, ap), fmt, aq);
	va_end(aq);
	return r;
}
LOCAL_ALIAS(__vfprintf_chk);

WRAP int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	struct logcall c;
	va_list aq;
	int r;

	if (!log_enter_file(&c, stdout))
		return REAL(__vprintf_chk)(flag, fmt, ap);
	va_copy(aq, ap);
	r = log_printed(&c, REAL(__vprintf_chk)(flag, fmt, ap), fmt, aq);
	va_end(aq);
	return r;
}
LOCAL_ALIAS(__vprintf_chk);

WRAP int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	struct logcall c;

	if (!log_enter(&c, fd_stream(fd)))
		return REAL(__vdprintf_chk)(fd, flag, fmt, ap);
	log_format(&c, fmt, ap);
	return log_result(&c, REAL(__vdprintf_chk)(fd, flag, fmt, ap));
}
LOCAL_ALIAS(__vdprintf_chk);

/* The variadic forms go through the v-forms above (ours: one place
 * records), which call the real v-forms. */
WRAP int printf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(vprintf)(fmt, ap);
	va_end(ap);
	return r;
}

WRAP int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(vfprintf)(f, fmt, ap);
	va_end(ap);
	return r;
}

WRAP int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(vdprintf)(fd, fmt, ap);
	va_end(ap);
	return r;
}

WRAP int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(__vprintf_chk)(flag, fmt, ap);
	va_end(ap);
	return r;
}

WRAP int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(__vfprintf_chk)(f, flag, fmt, ap);
	va_end(ap);
	return r;
}

WRAP int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = LOCAL(__vdprintf_chk)(fd, flag, fmt, ap);
	va_end(ap);
	return r;
}

/* ------------------------------------------------------------ puts */

WRAP int puts(const char *s)
{
	struct logcall c;
	int r;

	if (!log_enter_file(&c, stdout))
		return REAL(puts)(s);
	r = REAL(puts)(s);
	if (r >= 0 && !log_buffered(&c, strlen(s) + 1)) {
		text_str(&c.text, s);
		text_put(&c.text, "\n", 1);
	}
	return log_result(&c, r);
}

WRAP int fputs(const char *s, FILE *f)
{
	struct logcall c;
	int r;

	/* An empty string prints nothing (git's colours, when off). */
	if (!*s || !log_enter_file(&c, f))
		return REAL(fputs)(s, f);
	r = REAL(fputs)(s, f);
	c.bytes = s; /* the argument, as it is */
	c.nbytes = strlen(s);
	return log_result(&c, r);
}

WRAP int fputs_unlocked(const char *s, FILE *f)
{
	struct logcall c;
	int r;

	/* An empty string prints nothing (git's colours, when off). */
	if (!*s || !log_enter_file(&c, f))
		return REAL(fputs_unlocked)(s, f);
	r = REAL(fputs_unlocked)(s, f);
	c.bytes = s; /* the argument, as it is */
	c.nbytes = strlen(s);
	return log_result(&c, r);
}

/* One character: no text buffer needed. */
static int log_char(struct tstate *t, unsigned stream, FILE *locked, int r)
{
	int err = errno;
	char ch = (char)(unsigned char)r;

	if (r != EOF)
		agent_log_bytes(t, stream, 0, &ch, 1);
	else
		log_mark(stream);
	if (locked)
		funlockfile(locked);
	wrap_leave(t);
	errno = err;
	return r;
}
/* The character functions' common part: the thread to record on (and
 * the stream), or NULL.  The group is tested first: the cheapest test,
 * and the one that fails when the group is off. */
static inline struct tstate *char_enter(FILE *f, unsigned *stream, FILE **locked)
{
	struct tstate *t;

	if (!(agent_libc_on & AGENT_G_LOG))
		return NULL;
	*stream = file_stream(f);
	if (!*stream || !(t = wrap_enter(AGENT_G_LOG)))
		return NULL;
	*locked = log_catch_up_locked(t, f, *stream) ? f : NULL;
	return t;
}
/* A character function's whole body: `f` is the stream, the rest the
 * real call's arguments. */
#define CHAR_BODY(fn, f, ...)                                                 \
	do {                                                                  \
		unsigned stream_ = 0;                                         \
		FILE *locked_ = NULL;                                         \
		struct tstate *t_ = char_enter((f), &stream_, &locked_);      \
                                                                              \
		if (!t_)                                                      \
			return REAL(fn)(__VA_ARGS__);                         \
		return log_char(t_, stream_, locked_, REAL(fn)(__VA_ARGS__)); \
	} while (0)

WRAP int fputc(int ch, FILE *f)
{
	CHAR_BODY(fputc, f, ch, f);
}

WRAP int fputc_unlocked(int ch, FILE *f)
{
	CHAR_BODY(fputc_unlocked, f, ch, f);
}

WRAP int putc(int ch, FILE *f)
{
	CHAR_BODY(putc, f, ch, f);
}

WRAP int putchar(int ch)
{
	CHAR_BODY(putchar, stdout, ch);
}

/* ------------------------------------------------------------ messages */

/* The functions below return nothing, so whether their text reached the
 * stream is not known: it is recorded before the real call (some of them
 * exit), and they leave the wrapper before it too, so that the calls of
 * the atexit handlers that err() & co. run are the program's again. */

/* perror: "S: STRERROR\n", or "STRERROR\n" for a NULL or empty S. */
WRAP void perror(const char *s)
{
	struct logcall c;

	if (!log_enter_file(&c, stderr)) {
		REAL(perror)(s);
		return;
	}
	if (s && *s)
		text_add(&c.text, 0, "%s: ", s);
	text_strerror(&c.text, c.err);
	text_str(&c.text, "\n");
	log_leave(&c, c.err);
	REAL(perror)(s);
}

/* The err/warn family: "PROG: MSG: STRERROR\n" (err, warn: with errno),
 * "PROG: MSG\n" (the x forms), PROG being the short program name; with a
 * NULL format, "PROG: STRERROR\n" and "PROG: \n". */
__attribute__((format(printf, 3, 0))) static void warn_record(struct logcall *c, bool with_errno,
							      const char *fmt, va_list ap)
{
	if (!log_enter_file(c, stderr))
		return;
	text_add(&c->text, 0, "%s: ", program_invocation_short_name);
	if (fmt)
		text_vadd(&c->text, c->err, fmt, ap);
	if (with_errno) {
		if (fmt)
			text_str(&c->text, ": ");
		text_strerror(&c->text, c->err);
	}
	text_str(&c->text, "\n");
	log_leave(c, c->err);
}

WRAP void vwarn(const char *fmt, va_list ap)
{
	struct logcall c;

	warn_record(&c, true, fmt, ap);
	REAL(vwarn)(fmt, ap);
}
LOCAL_ALIAS(vwarn);

WRAP void vwarnx(const char *fmt, va_list ap)
{
	struct logcall c;

	warn_record(&c, false, fmt, ap);
	REAL(vwarnx)(fmt, ap);
}
LOCAL_ALIAS(vwarnx);

WRAP void verr(int status, const char *fmt, va_list ap)
{
	struct logcall c;

	warn_record(&c, true, fmt, ap);
	REAL(verr)(status, fmt, ap);
	__builtin_unreachable();
}
LOCAL_ALIAS(verr);

WRAP void verrx(int status, const char *fmt, va_list ap)
{
	struct logcall c;

	warn_record(&c, false, fmt, ap);
	REAL(verrx)(status, fmt, ap);
	__builtin_unreachable();
}
LOCAL_ALIAS(verrx);

WRAP void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(vwarn)(fmt, ap);
	va_end(ap);
}

WRAP void warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(vwarnx)(fmt, ap);
	va_end(ap);
}

WRAP void err(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(verr)(status, fmt, ap);
}

WRAP void errx(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(verrx)(status, fmt, ap);
}

/* error and error_at_line have no v-form: the message is formatted here
 * in full (on the heap if long) and passed to the real function as "%s".
 * glibc prints "PROG: MSG[: STRERROR]\n" (error) and
 * "PROG:FILE:LINE: MSG[: STRERROR]\n" (error_at_line), PROG being the full
 * program name, or whatever error_print_progname prints instead (not
 * recorded); error_at_line prints nothing when error_one_per_line is set
 * and the file and line are those of its previous message. */
__attribute__((format(printf, 2, 0))) static void error_text(struct text *msg, const char *fmt,
							     va_list ap)
{
	int err = errno;

	/* No bound: the program's message must reach the real call whole.
	 * Only without memory would it be cut. */
	text_init(msg, (size_t)-2);
	text_vadd(msg, err, fmt, ap);
	errno = err;
}

static void error_record(struct logcall *c, const struct text *msg, int errnum)
{
	text_str(&c->text, msg->failed ? "" : msg->s);
	if (errnum) {
		text_str(&c->text, ": ");
		text_strerror(&c->text, errnum);
	}
	text_str(&c->text, "\n");
	log_leave(c, c->err);
}

WRAP void error(int status, int errnum, const char *fmt, ...)
{
	struct logcall c;
	struct text msg;
	va_list ap;

	if (!log_enter_file(&c, stderr)) {
		va_start(ap, fmt);
		error_text(&msg, fmt, ap);
		va_end(ap);
	} else {
		/* Our buffers: nothing the program does is recorded meanwhile. */
		va_start(ap, fmt);
		error_text(&msg, fmt, ap);
		va_end(ap);
		if (!error_print_progname)
			text_add(&c.text, 0, "%s: ", program_invocation_name);
		error_record(&c, &msg, errnum);
	}
	REAL(error)(status, errnum, "%s", msg.failed ? "" : msg.s);
	text_free(&msg);
}

WRAP void error_at_line(int status, int errnum, const char *file, unsigned line, const char *fmt,
			...)
{
	/* error_one_per_line's memory, as glibc keeps it (every call of the
	 * program's comes through here). */
	static const char *last_file;
	static unsigned last_line;
	struct logcall c;
	struct text msg;
	bool same = false;
	va_list ap;

	va_start(ap, fmt);
	error_text(&msg, fmt, ap);
	va_end(ap);
	if (error_one_per_line) {
		same = last_line == line &&
		       (file == last_file || (file && last_file && !strcmp(file, last_file)));
		last_file = file;
		last_line = line;
	}
	if (!same && log_enter_file(&c, stderr)) {
		if (!error_print_progname)
			text_add(&c.text, 0, "%s:", program_invocation_name);
		if (file)
			text_add(&c.text, 0, "%s:%u: ", file, line);
		else
			text_str(&c.text, " ");
		error_record(&c, &msg, errnum);
	}
	REAL(error_at_line)(status, errnum, file, line, "%s", msg.failed ? "" : msg.s);
	text_free(&msg);
}

/* ------------------------------------------------------------ syslog */

/* A syslog message: stream EV_LOG_SYSLOG with its priority (facility and
 * level, as given), one line (a newline is added if missing, so that two
 * messages never merge into one line). */
__attribute__((format(printf, 2, 0))) static void syslog_record(int prio, const char *fmt,
								va_list ap)
{
	struct logcall c;

	if (!log_enter(&c, EV_LOG_SYSLOG))
		return;
	c.prio = (unsigned)prio & 0xffu;
	text_vadd(&c.text, c.err, fmt, ap);
	if (!c.text.len || c.text.s[c.text.len - 1] != '\n')
		text_str(&c.text, "\n");
	log_leave(&c, c.err);
}

WRAP void vsyslog(int prio, const char *fmt, va_list ap)
{
	syslog_record(prio, fmt, ap);
	REAL(vsyslog)(prio, fmt, ap);
}
LOCAL_ALIAS(vsyslog);

WRAP void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap)
{
	syslog_record(prio, fmt, ap);
	REAL(__vsyslog_chk)(prio, flag, fmt, ap);
}
LOCAL_ALIAS(__vsyslog_chk);

WRAP void syslog(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(vsyslog)(prio, fmt, ap);
	va_end(ap);
}

WRAP void __syslog_chk(int prio, int flag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	LOCAL(__vsyslog_chk)(prio, flag, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ names */

/* The wrappers above, by name: what an attach binds (libc.c). */
bool agent_log_wrapped(const char *name)
{
	static const char *const names[] = {
		"vfprintf",	  "vprintf",	    "vdprintf",	      "__vfprintf_chk",
		"__vprintf_chk",  "__vdprintf_chk", "printf",	      "fprintf",
		"dprintf",	  "__printf_chk",   "__fprintf_chk",  "__dprintf_chk",
		"puts",		  "fputs",	    "fputs_unlocked", "fputc",
		"fputc_unlocked", "putc",	    "putchar",	      "perror",
		"vwarn",	  "vwarnx",	    "verr",	      "verrx",
		"warn",		  "warnx",	    "err",	      "errx",
		"error",	  "error_at_line",  "vsyslog",	      "__vsyslog_chk",
		"syslog",	  "__syslog_chk",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}
