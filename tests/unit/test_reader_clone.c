/* fxt_reader_clone_at() (include/fxt/reader.h): a reader copied at a
 * record decodes what follows as the original did, with its own copy of
 * the string and thread tables, providers and tick rates; a reader of a
 * file is not copied. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

static void put_words(struct fxt_writer *w, const uint64_t *words, size_t n)
{
	if (n == 0 || fxt_writer_words(w, words, n) != 0)
		bail_out("writing raw words failed");
}

/* fxt_reader_clone_at(): a copy made at the first event of provider 2
 * reads the same events as the original did from there (string 5 and
 * thread 3 per provider, the tick rates), after the original is freed;
 * a reader of a file is not copied. */
int main(void)
{
	struct fxt_writer *w;
	uint64_t buf[16], evw[4];
	size_t n, len;
	struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
				.ts = 7,
				.thread = fxt_tref_index(3),
				.category = fxt_sref_index(5),
				.name = fxt_sref_index(5) };

	plan(14);
	if (fxt_writer_open_mem(&w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(w);
	put_words(w, buf, fxt_enc_provider_info(buf, 16, 1, "p1", 2));
	put_words(w, buf, fxt_enc_string(buf, 16, 5, "one", 3));
	put_words(w, buf, fxt_enc_thread(buf, 16, 3, 10, 11));
	put_words(w, buf, fxt_enc_provider_info(buf, 16, 2, "p2", 2));
	put_words(w, buf, fxt_enc_initialization(buf, 16, 1000000));
	put_words(w, buf, fxt_enc_string(buf, 16, 5, "two", 3));
	put_words(w, buf, fxt_enc_thread(buf, 16, 3, 20, 21));
	n = fxt_enc_event(evw, 4, &ev);
	put_words(w, evw, n);
	put_words(w, buf, fxt_enc_provider_section(buf, 16, 1));
	put_words(w, evw, n);
	put_words(w, buf, fxt_enc_provider_section(buf, 16, 2));
	put_words(w, evw, n);

	const void *data;
	struct fxt_reader *r = NULL, *c = NULL;
	struct fxt_record rec;
	uint64_t want_ns[3] = { 7000, 7, 7000 };
	const char *want_name[3] = { "two", "one", "two" };
	uint64_t want_pid[3] = { 20, 10, 20 };

	if (fxt_writer_flush(w) != 0 || !(data = fxt_writer_mem_data(w, &len)) ||
	    fxt_reader_open_mem(&r, data, len, FXT_READER_VALIDATE) != 0)
		bail_out("writing or reading the archive failed");
	do {
		if (fxt_reader_next(r, &rec) != 1)
			break;
	} while (rec.type != FXT_RECORD_EVENT);
	ASSERT_EQ_I64(fxt_reader_clone_at(r, rec.offset, &c), 0, "clone at the first event");
	fxt_reader_free(r);
	for (int i = 0; c && i < 3; i++) {
		do {
			if (fxt_reader_next(c, &rec) != 1)
				break;
		} while (rec.type != FXT_RECORD_EVENT);
		ASSERT_MEM_STR(rec.u.event.name.data, rec.u.event.name.len, want_name[i],
			       "clone: string 5 per provider (%d)", i);
		ASSERT_EQ_U64(rec.u.event.pid, want_pid[i], "clone: thread 3 per provider (%d)", i);
		ASSERT_EQ_U64(fxt_reader_ticks_to_ns(c, rec.u.event.ts), want_ns[i],
			      "clone: ticks per second per provider (%d)", i);
	}
	if (c)
		ASSERT_EQ_I64(fxt_reader_next(c, &rec), 0, "clone: the end");
	fxt_reader_free(c);

	/* a file's reader: not cloned */
	{
		char path[] = "/tmp/fxt-test-clone.XXXXXX";
		int fd = mkstemp(path);

		ok(fd >= 0 && write(fd, data, len) == (ssize_t)len, "scratch file written");
		if (fd >= 0) {
			lseek(fd, 0, SEEK_SET);
			ASSERT_EQ_I64(fxt_reader_open_fd(&r, fd, 0), 0, "file reader");
			fxt_reader_next(r, &rec);
			ASSERT_EQ_I64(fxt_reader_clone_at(r, 0, &c), -EINVAL, "a file's reader: -EINVAL");
			fxt_reader_free(r);
			close(fd);
			unlink(path);
		}
	}
	fxt_writer_free(w);
	return exit_status();
}

