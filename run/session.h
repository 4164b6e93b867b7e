/* The trace session: state shared by every traced process of one trace,
 * for the pipe/socket flows (a write in one process -> the read that
 * consumed it in another).  Shared by agent/ (which writes it),
 * convert/ (which reads its write log) and fxt-run (which removes it).
 *
 * The session is one file, run_session_path(), that every traced process of
 * the trace maps MAP_SHARED (whoever comes first creates it; the fd is
 * closed right after mmap, so no fd of ours lives in the program).  It is
 * all fixed-size tables, zero-filled when created, updated with atomics
 * only (no locks: processes die anywhere):
 *
 *   header   magic, version, the table sizes, the log's next index
 *   streams  SESSION_STREAMS slots {key, written, read, peer}: one per
 *            byte stream (a pipe, one direction of a socket), found by
 *            key with open addressing; `written` and `read` count the
 *            bytes written to it and read from it so far by traced
 *            processes, so that a write's and a read's positions in the
 *            stream are known without talking to each other
 *   log      SESSION_LOG_SLOTS entries struct session_write, append-only:
 *            the writes, with the flow id their writer recorded
 *
 * Stream keys (48 bits, never 0): a pipe or FIFO is keyed by its inode
 * (both ends share it): run_session_pipe_key(st_dev, st_ino).  A socket has
 * two streams: what it sends is keyed by its own inode, what it receives
 * by its peer's, which socketpair() knows and publishes (`peer`); for
 * connected TCP/UDP sockets the key is a hash of (sender address, receiver
 * address), which both ends compute alike.
 *
 * Protocol: a write of n bytes on stream K takes off = fetch_add(written,
 * n), a flow id, appends {K, off, n, id} to the log and records a FLOW
 * begin and a PIPE record (spool/records.h).  A read of m bytes takes off =
 * fetch_add(read, m) and records a PIPE record {K, off, m}; at flush, the
 * read is paired with every logged write on K whose off lies in
 * [off, off + m).  This is exact when every writer and reader of the
 * stream is traced and uses the wrapped calls; bytes moved otherwise
 * (stdio's internal writes, untraced processes, splice) shift the two
 * counts against each other.
 *
 * Removal: the root process unlinks it after its flush when not under
 * fxt-run; fxt-run unlinks it (run_session_path()) when the trace ends.
 */
#ifndef FXT_RUN_SESSION_H
#define FXT_RUN_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SESSION_MAGIC	  0x3153534554584631ull /* "1FXTSESS" little-endian */
#define SESSION_VERSION	  1u
#define SESSION_STREAMS	  16384u     /* stream slots (a power of two) */
#define SESSION_LOG_SLOTS (1u << 20) /* logged writes: 32 MiB, sparse */
#define SESSION_KEY_MASK  ((1ull << 48) - 1)

/* One write to a pipe or socket, as published in the session log. */
struct session_write {
	uint64_t key;	  /* the pipe's identity (run_session_pipe_key) */
	uint64_t off;	  /* offset of its first byte in the pipe's byte stream */
	uint64_t len;	  /* bytes written */
	uint64_t flow_id; /* the FLOW begin the writer recorded */
};

struct session_stream {
	uint64_t key;	  /* 0 = free slot */
	uint64_t written; /* bytes written so far */
	uint64_t read;	  /* bytes read so far */
	uint64_t peer;	  /* sockets: the key of what it receives; 0 = unknown */
};

struct session_hdr {
	uint64_t magic; /* set last, once the sizes are in */
	uint32_t version;
	uint32_t nstreams;
	uint64_t nlog;
	uint64_t log_next; /* next log index to claim (may run past nlog) */
	uint32_t log_full; /* set by the first writer that found the log full */
	/* Snapshots of the run taken so far (fetch_add: the next one's number
	 * less 1; agent/keep/snapshot.h). */
	uint32_t snapshots;
	char reserved[4096 - 40];
};

/* A mapped session. */
struct session {
	struct session_hdr *hdr; /* NULL = not mapped */
	struct session_stream *streams;
	struct session_write *log;
	size_t size;
};

/* The session file's path: "<output>.<root pid>.session", output being the
 * root's archive path (FXT_OUTPUT made absolute). */
void run_session_path(char *buf, size_t cap, const char *output, long root_pid);

/* Maps the session at `path`, creating it when it does not exist (mode
 * 0600).  No fd stays open.  Returns 0 or -errno (-EPROTO: not a session
 * file of this version). */
int run_session_map(struct session *s, const char *path);

void run_session_unmap(struct session *s);

/* The keys of a pipe (or FIFO, or socket's own send stream) and of one
 * direction between two socket addresses (the sender's first). */
uint64_t run_session_pipe_key(uint64_t dev, uint64_t ino);
uint64_t run_session_addr_key(const void *from, size_t from_len, const void *to, size_t to_len);

/* The slot of stream `key`, taken if it is new; NULL when the table is
 * full.  run_session_find_stream() only looks. */
struct session_stream *run_session_stream(struct session *s, uint64_t key);
struct session_stream *run_session_find_stream(const struct session *s, uint64_t key);

/* Appends a write to the log.  Returns 0, or -ENOSPC when the log is full;
 * *first is then set if this call is the one that found it full (to say
 * so once). */
int run_session_log_write(struct session *s, const struct session_write *w, bool *first);

/* Every write published so far in the session at `path`, sorted by (key,
 * off), in a malloc'd array (*out, *n); for the flusher, which pairs a
 * read of [off, off + len) on `key` with the writes that start in it.
 * Returns 0 (possibly with *n == 0) or -errno (no session file: -ENOENT;
 * not a session file: -EPROTO). */
int run_session_load_writes(const char *path, struct session_write **out, size_t *n);

/* The session at `path` mapped to read (fxt-run keeps it for the run:
 * its writes and mark read without a system call; run_session_unmap()).
 * 0 or -errno (-ENOENT: none yet; -EPROTO: not a session file, or one
 * being made). */
int run_session_open_read(struct session *s, const char *path);

/* run_session_load_writes() and run_session_log_mark() of a session
 * mapped by run_session_open_read(). */
int run_session_writes(const struct session *s, struct session_write **out, size_t *n);
uint64_t run_session_mark(const struct session *s);

/* The log's mark: how many writes it has claimed so far (its next index),
 * to tell whether writes loaded earlier are still all there are.  0 or
 * -errno (-EPROTO: not a session file). */
int run_session_log_mark(const char *path, uint64_t *mark);

#endif /* FXT_RUN_SESSION_H */
