/* The session file (run/session.c): two processes map it, share stream
 * counters and the write log; the flusher's view (run_session_load_writes)
 * is sorted and skips unpublished entries; bad files are refused; fxt-run's
 * mapping kept for the run sees what is logged after it was made. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/session.h"
#include "tests/lib/tap.h"

static char dir[] = "/tmp/fxt-session-XXXXXX";

static void test_path(void)
{
	char buf[64];

	run_session_path(buf, sizeof(buf), "/tmp/out.fxt", 1234);
	ASSERT_STR_EQ(buf, "/tmp/out.fxt.1234.session", "run_session_path");
}

static void test_keys(void)
{
	const char a[] = "addr-a", b[] = "addr-b";
	uint64_t k1 = run_session_pipe_key(12, 34), k2 = run_session_pipe_key(12, 35);
	uint64_t ab = run_session_addr_key(a, sizeof(a), b, sizeof(b));
	uint64_t ba = run_session_addr_key(b, sizeof(b), a, sizeof(a));

	ok(k1 != 0 && k1 <= SESSION_KEY_MASK, "pipe key: 48 bits, not 0");
	ok(k1 != k2, "pipe keys of two inodes differ");
	ASSERT_EQ_U64(run_session_pipe_key(12, 34), k1, "pipe key is a function of (dev, ino)");
	ok(ab != ba, "the two directions of a connection differ");
	ok(ab != 0 && ab <= SESSION_KEY_MASK && ba <= SESSION_KEY_MASK, "address keys: 48 bits");
	ASSERT_EQ_U64(run_session_addr_key(a, sizeof(a), b, sizeof(b)), ab,
		      "address key: same on both ends");
}

/* The parent and a child share counters and the log through the file. */
static void test_shared(const char *path)
{
	struct session s;
	struct session_stream *st;
	struct session_write *w = NULL;
	size_t n = 0;
	bool first;
	pid_t pid;
	int status, err;

	err = run_session_map(&s, path);
	ASSERT_EQ_I64(err, 0, "run_session_map creates the file");
	st = run_session_stream(&s, 0x1111);
	ok(st != NULL, "stream slot taken");
	ASSERT_EQ_U64(__atomic_fetch_add(&st->written, 10, __ATOMIC_RELAXED), 0,
		      "first write at offset 0");
	run_session_log_write(&s, &(struct session_write){ 0x1111, 0, 10, 501 }, &first);

	pid = fork();
	if (pid == 0) {
		/* A new mapping, as a process that execs would make. */
		struct session c;
		struct session_stream *cs;

		if (run_session_map(&c, path) != 0)
			_exit(1);
		cs = run_session_stream(&c, 0x1111);
		if (cs != run_session_find_stream(&c, 0x1111) || !cs)
			_exit(2);
		if (__atomic_fetch_add(&cs->written, 5, __ATOMIC_RELAXED) != 10)
			_exit(3);
		if (run_session_log_write(&c, &(struct session_write){ 0x1111, 10, 5, 502 },
					  &first) != 0)
			_exit(4);
		run_session_log_write(&c, &(struct session_write){ 0x0aaa, 0, 3, 503 }, &first);
		run_session_unmap(&c);
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0,
	   "child mapped the same session (status %d)", status);
	ASSERT_EQ_U64(__atomic_load_n(&st->written, __ATOMIC_RELAXED), 15,
		      "the child's bytes are counted in the parent's view");
	ok(run_session_find_stream(&s, 0x2222) == NULL, "unknown stream not found");

	/* Claimed but never published (a writer killed half-way): skipped. */
	__atomic_fetch_add(&s.hdr->log_next, 1, __ATOMIC_RELAXED);
	run_session_log_write(&s, &(struct session_write){ 0x1111, 15, 1, 504 }, &first);

	err = run_session_load_writes(path, &w, &n);
	ASSERT_EQ_I64(err, 0, "run_session_load_writes");
	ASSERT_EQ_U64(n, 4, "four published writes");
	if (n == 4) {
		uint64_t got[12],
		    want[12] = { 0x0aaa, 0, 503, 0x1111, 0, 501, 0x1111, 10, 502, 0x1111, 15, 504 };
		for (size_t i = 0; i < 4; i++) {
			got[3 * i] = w[i].key;
			got[3 * i + 1] = w[i].off;
			got[3 * i + 2] = w[i].flow_id;
		}
		ASSERT_WORDS(got, 12, want, 12, "sorted by (key, off), with their flow ids");
		ASSERT_EQ_U64(w[2].len, 5, "length kept");
	}
	free(w);
	run_session_unmap(&s);
}

static void test_full(const char *path)
{
	struct session s;
	bool first = false;
	int err;

	if (run_session_map(&s, path) != 0) {
		ok(0, "map for the full-log test");
		return;
	}
	/* Pretend the log was filled. */
	__atomic_store_n(&s.hdr->log_next, SESSION_LOG_SLOTS, __ATOMIC_RELAXED);
	err = run_session_log_write(&s, &(struct session_write){ 1, 0, 1, 1 }, &first);
	ASSERT_EQ_I64(err, -ENOSPC, "full log refuses");
	ok(first, "the first refusal says so");
	err = run_session_log_write(&s, &(struct session_write){ 1, 1, 1, 2 }, &first);
	ok(err == -ENOSPC && !first, "later refusals are quiet");
	run_session_unmap(&s);
}

static void test_bad(void)
{
	char path[64];
	struct session s;
	struct session_write *w;
	size_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/none", dir);
	ASSERT_EQ_I64(run_session_load_writes(path, &w, &n), -ENOENT, "no session file: -ENOENT");

	snprintf(path, sizeof(path), "%s/junk", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; fd >= 0 && i < 2048; i++)
		if (write(fd, "junkjunk", 8) != 8)
			break;
	if (fd >= 0)
		close(fd);
	ASSERT_EQ_I64(run_session_load_writes(path, &w, &n), -EPROTO, "junk refused by the loader");
	ASSERT_EQ_I64(run_session_map(&s, path), -EPROTO, "junk refused by run_session_map");

	snprintf(path, sizeof(path), "%s/short", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
	ASSERT_EQ_I64(run_session_load_writes(path, &w, &n), -EPROTO, "empty file refused");
}

/* fxt-run's mapping, kept for the run (run_session_open_read()): the
 * mark and the writes logged after it was made are seen through it, as
 * the path's loader sees them; no file: -ENOENT. */
static void test_kept(const char *path)
{
	struct session s, r;
	struct session_write *w = NULL;
	size_t n = 0;
	bool first;
	char none[80];

	snprintf(none, sizeof(none), "%s/none.session", dir);
	ASSERT_EQ_I64(run_session_open_read(&r, none), -ENOENT, "kept: no file, -ENOENT");
	unlink(path);
	if (run_session_map(&s, path) != 0)
		bail_out("run_session_map");
	ASSERT_EQ_I64(run_session_open_read(&r, path), 0, "kept: mapped to read");
	ASSERT_EQ_U64(run_session_mark(&r), 0, "kept: an empty log's mark");
	run_session_log_write(&s, &(struct session_write){ 0x2222, 0, 4, 601 }, &first);
	run_session_log_write(&s, &(struct session_write){ 0x1111, 0, 2, 602 }, &first);
	ASSERT_EQ_U64(run_session_mark(&r), 2, "kept: the mark follows later writes");
	ASSERT_EQ_I64(run_session_writes(&r, &w, &n), 0, "kept: run_session_writes");
	ASSERT_EQ_U64(n, 2, "kept: both writes");
	if (n == 2)
		ok(w[0].key == 0x1111 && w[1].key == 0x2222, "kept: sorted by key");
	free(w);
	run_session_unmap(&r);
	run_session_unmap(&s);
}

int main(void)
{
	char path[64];

	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	snprintf(path, sizeof(path), "%s/s.session", dir);
	test_path();
	test_keys();
	test_shared(path);
	test_full(path);
	test_bad();
	test_kept(path);
	unlink(path);
	snprintf(path, sizeof(path), "%s/junk", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/short", dir);
	unlink(path);
	rmdir(dir);
	done_testing();
	return exit_status();
}
