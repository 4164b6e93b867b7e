/* fxt_writer_move_to_fd() (include/fxt/writer.h): an archive's opening
 * records moved in front of records another writer wrote to a file with
 * room before them, padded with FXT_METADATA_PADDING records, and the
 * writer going on after them; the result reads as the same archive
 * written in one go (the same bytes once the padding is taken out, the
 * reader silent about it); compressed, gzip members or zstd frames with
 * empty members or skippable frames as the padding.  And the cases it refuses, the writer then
 * unchanged: room too small, or one word short of a padding record;
 * in-memory output; records written out already. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#define FRONT 4096u

static void opening(struct fxt_writer *w)
{
	fxt_writer_magic(w);
	fxt_writer_provider(w, 7, "p");
	fxt_writer_initialization(w, 1000000000);
	fxt_writer_process_name(w, 7, "proc");
}

/* A thread's events, registering their own strings and thread. */
static void events(struct fxt_writer *w, uint64_t tid, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct fxt_event ev = { 0 };

		ev.type = FXT_EVENT_DURATION_COMPLETE;
		ev.ts = 100 * i;
		ev.extra = 100 * i + 50;
		ev.thread = fxt_writer_thread(w, 7, tid);
		ev.category = fxt_writer_cstring(w, "cat");
		ev.name = fxt_writer_cstring(w, i % 2 ? "odd" : "even");
		fxt_writer_event(w, &ev);
	}
}

static int diags;
static void on_diag(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)off;
	(void)msg;
	diags++;
}

/* Events read from `data`, or -1 on an error. */
static long read_events(const void *data, size_t len)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	long n = 0;
	int rc;

	if (fxt_reader_open_mem(&r, data, len, 0) != 0)
		return -1;
	fxt_reader_set_diag(r, on_diag, NULL);
	while ((rc = fxt_reader_next(r, &rec)) > 0)
		n += rec.type == FXT_RECORD_EVENT;
	fxt_reader_free(r);
	return rc < 0 ? -1 : n;
}

/* The same compressed (`flags`): thread 1's members or frames in a file
 * after FRONT bytes of room, the archive moved there; read back whole,
 * silently. */
static void compressed(unsigned flags, const char *what)
{
	struct fxt_writer *w, *part;
	struct fxt_reader *r;
	struct fxt_record rec;
	int file = memfd_create("thread", MFD_CLOEXEC), out = memfd_create("a", MFD_CLOEXEC), rc;
	uint64_t bytes;
	off_t end;
	long n = 0;

	if (file < 0 || out < 0 || lseek(file, FRONT, SEEK_SET) != FRONT)
		bail_out("memfd_create");
	fxt_writer_open_fd(&part, file, flags | FXT_WRITER_SERIAL);
	events(part, 1, 30000);
	bytes = fxt_writer_bytes(part);
	fxt_writer_close(part);
	end = lseek(file, 0, SEEK_CUR);
	fxt_writer_open_fd(&w, out, flags);
	opening(w);
	fxt_writer_forget(w);
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, FRONT, (uint64_t)end - FRONT, bytes), 0,
		      "%s: moved", what);
	fxt_writer_forget(w);
	events(w, 2, 5);
	fxt_writer_finish(w);
	lseek(fxt_writer_fd(w), 0, SEEK_SET);
	diags = 0;
	rc = fxt_reader_open_fd(&r, fxt_writer_fd(w), 0);
	if (rc == 0) {
		fxt_reader_set_diag(r, on_diag, NULL);
		while ((rc = fxt_reader_next(r, &rec)) > 0)
			n += rec.type == FXT_RECORD_EVENT;
		fxt_reader_free(r);
	}
	ok(rc == 0 && n == 30005 && diags == 0, "%s: every event read, nothing said (%ld, %d)",
	   what, n, diags);
	fxt_writer_close(w);
	close(file);
	close(out);
}

int main(void)
{
	struct fxt_writer *one, *w, *part;
	const void *want;
	size_t want_len;
	int out, file;
	uint64_t len;
	size_t open_len, n;
	unsigned char *got;

	plan(16);
	/* The archive in one go: opening, thread 1, thread 2. */
	fxt_writer_open_mem(&one, 0);
	opening(one);
	fxt_writer_forget(one);
	events(one, 1, 300);
	fxt_writer_forget(one);
	events(one, 2, 5);
	fxt_writer_flush(one);
	want = fxt_writer_mem_data(one, &want_len);

	/* Thread 1 written to a file of its own after FRONT bytes of room. */
	file = memfd_create("thread", MFD_CLOEXEC);
	out = memfd_create("archive", MFD_CLOEXEC);
	if (file < 0 || out < 0 || lseek(file, FRONT, SEEK_SET) != FRONT)
		bail_out("memfd_create");
	fxt_writer_open_fd(&part, file, 0);
	events(part, 1, 300);
	len = fxt_writer_bytes(part);
	ok(fxt_writer_close(part) == 0, "thread 1: %llu bytes in its file",
	   (unsigned long long)len);

	fxt_writer_open_fd(&w, out, 0);
	opening(w);
	fxt_writer_forget(w);
	open_len = (size_t)fxt_writer_bytes(w);
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, 24, len, len), -ENOSPC,
		      "no room for the opening records: refused");
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, open_len + 4, len, len), -ENOSPC,
		      "room, but not for a padding record: refused");
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, FRONT, len, len), 0, "moved");
	ok(fxt_writer_fd(w) != out && fxt_writer_fd(w) >= 0, "the writer writes elsewhere");
	fxt_writer_forget(w);
	events(w, 2, 5);
	ASSERT_EQ_I64(fxt_writer_flush(w), 0, "thread 2 written after it");
	n = (size_t)fxt_writer_bytes(w);
	ASSERT_EQ_I64(n, FRONT + want_len - open_len, "its bytes count the room and the rest");
	got = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fxt_writer_fd(w), 0);
	ok(got != MAP_FAILED && memcmp(got, want, open_len) == 0 &&
	       memcmp(got + FRONT, (const char *)want + open_len, want_len - open_len) == 0,
	   "the opening records, then the threads' bytes, as in one go");
	diags = 0;
	ASSERT_EQ_I64(read_events(got, n), 305, "every event read");
	ASSERT_EQ_I64(diags, 0, "the reader says nothing of the padding");
	munmap(got, n);
	fxt_writer_close(w);

	/* What it cannot move. */
	fxt_writer_open_mem(&w, 0);
	opening(w);
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, FRONT, len, len), -ENOTSUP,
		      "in memory: refused");
	fxt_writer_free(w);
	fxt_writer_open_fd(&w, out, 0);
	opening(w);
	fxt_writer_flush(w);
	ASSERT_EQ_I64(fxt_writer_move_to_fd(w, file, FRONT, len, len), -EAGAIN,
		      "written out already: refused");
	fxt_writer_free(w);
	close(file);
	close(out);
	fxt_writer_free(one);
	compressed(FXT_WRITER_GZIP, "gzip");
	compressed(FXT_WRITER_ZSTD, "zstd");
	return exit_status();
}
