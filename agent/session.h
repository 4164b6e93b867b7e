/* The trace session: state shared by every traced process of one trace,
 * for the pipe/socket flows (a write in one process -> the read that
 * consumed it in another).  Private to agent/.
 *
 * TODO(owner: io wrappers): layout and protocol.
 */
#ifndef FXT_AGENT_SESSION_H
#define FXT_AGENT_SESSION_H

#include <stddef.h>
#include <stdint.h>

/* One write to a pipe or socket, as published in the session log. */
struct session_write {
	uint64_t key;	  /* the pipe's identity (session_pipe_key) */
	uint64_t off;	  /* offset of its first byte in the pipe's byte stream */
	uint64_t len;	  /* bytes written */
	uint64_t flow_id; /* the FLOW begin the writer recorded */
};

/* The session file's path: "<output>.<root pid>.session", output being the
 * root's archive path (FXT_OUTPUT made absolute). */
void session_path(char *buf, size_t cap, const char *output, long root_pid);

/* Every write published so far in the session at `path`, sorted by (key,
 * off), in a malloc'd array (*out, *n); for the flusher, which pairs a
 * read of [off, off + len) on `key` with the writes that start in it.
 * Returns 0 (possibly with *n == 0) or -errno (no session file: -ENOENT). */
int session_load_writes(const char *path, struct session_write **out, size_t *n);

#endif /* FXT_AGENT_SESSION_H */
