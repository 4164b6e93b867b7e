/* Signal-safe agent logging.  Private to agent/.
 *
 * Messages are formatted into a stack buffer by a tiny formatter that
 * understands only %s, %d/%ld/%lld, %u/%lu/%llu/%zu, %x/%lx/%llx, %p and %%
 * (no locale, no malloc, no stdio), then written with one write(2) to
 * stderr, so logging is safe in hooks, signal handlers, atfork handlers and
 * destructors alike.  errno is preserved.
 *
 * agent_dbg() prints only when FXT_DEBUG is set; agent_err() is for the one
 * line printed when the trace is lost, and also prints without FXT_DEBUG.
 */
#ifndef FXT_AGENT_LOG_H
#define FXT_AGENT_LOG_H

#include <stdarg.h>
#include <stddef.h>

#include "agent/cfg.h"

/* Formats into buf (always NUL-terminated when cap > 0); returns the length
 * written, excluding the NUL. */
size_t agent_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t agent_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes "fxtrace[PID]: MESSAGE\n" (debug) or "fxtrace: MESSAGE\n" to fd 2. */
void agent_log(int always, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define agent_dbg(...)                             \
	do {                                       \
		if (agent_cfg.debug)               \
			agent_log(0, __VA_ARGS__); \
	} while (0)
#define agent_err(...) agent_log(1, __VA_ARGS__)

#endif /* FXT_AGENT_LOG_H */
