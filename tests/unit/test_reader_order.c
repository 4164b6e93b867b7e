/* FXT_READER_TIME_ORDER (include/fxt/reader.h, fxt/order.c): each
 * thread's duration begins and ends come as a stable sort by time, as
 * Perfetto sorts them before pairing: from memory, from a file, from a
 * pipe, in a clone made where a late event was given, in a clone made
 * past where late events further on in the file were given (they are not
 * given again); the late events
 * keep their offset, names and arguments; an instant out of order stays
 * where it is; late events found through thread refs, per provider;
 * without the flag, file order. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

/* Events in file order: (thread, ts, name), begins or ends as the name
 * says ("i": an instant); thread 1 has late ones. */
static const struct {
	uint64_t tid, ts;
	const char *name;
} evs[] = {
	{ 1, 100, "e100" }, { 1, 300, "b300" },	    { 2, 50, "e50" },	{ 1, 400, "e400" },
	{ 1, 600, "e600" }, { 2, 10, "b10" },	    { 1, 200, "i200" }, { 1, 1000, "e1000" },
	{ 1, 0, "b0a" },    { 1, 300, "b300late" }, { 1, 0, "b0b" },
};
#define NEVS (sizeof(evs) / sizeof(evs[0]))

/* Thread 1's names in Perfetto's order (a stable sort by time). */
static const char want1[] = "b0a b0b e100 b300 b300late e400 e600 i200 e1000 ";

static const void *archive(size_t *len)
{
	static struct fxt_writer *w;
	struct fxt_arg arg = { .type = FXT_ARG_STRING };

	if (fxt_writer_open_mem(&w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 3, "p");
	fxt_writer_initialization(w, 1000000000);
	for (size_t i = 0; i < NEVS; i++) {
		struct fxt_event ev = { .type = evs[i].name[0] == 'b'	? FXT_EVENT_DURATION_BEGIN
						: evs[i].name[0] == 'e' ? FXT_EVENT_DURATION_END
									: FXT_EVENT_INSTANT,
					.ts = evs[i].ts,
					.thread = fxt_writer_thread(w, 9, evs[i].tid),
					.category = fxt_writer_cstring(w, "c"),
					.name = fxt_writer_cstring(w, evs[i].name),
					.args = &arg,
					.nargs = 1 };
		arg.name = fxt_writer_cstring(w, "k");
		arg.v.str = fxt_writer_cstring(w, evs[i].name);
		if (fxt_writer_event(w, &ev) != 0)
			bail_out("fxt_writer_event failed");
	}
	if (fxt_writer_flush(w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(w, len);
}

/* Thread record: index `idx` is (9, tid). */
static void put_thread(struct fxt_writer *w, unsigned idx, uint64_t tid)
{
	uint64_t words[3] = { FXT_RECORD_THREAD | 3u << 4 | (uint64_t)idx << 16, 9, tid };
	if (fxt_writer_words(w, words, 3) != 0)
		bail_out("fxt_writer_words failed");
}

/* A begin or end at `ts` through thread ref `ref`, no names. */
static void put_event(struct fxt_writer *w, unsigned type, unsigned ref, uint64_t ts)
{
	uint64_t words[2] = {
		FXT_RECORD_EVENT | 2u << 4 | (uint64_t)type << 16 | (uint64_t)ref << 24, ts
	};
	if (fxt_writer_words(w, words, 2) != 0)
		bail_out("fxt_writer_words failed");
}

/* Late events found only through the thread table as the decoder keeps
 * it (an index given to another thread, then the thread under another
 * index) and per provider (a provider section back to the first one):
 * what the first pass reads in place without decoding events must be the
 * decoder's threads.  Thread (9, 1) of provider 3: b100, its e50 late
 * (ref 2, after ref 1 became (9, 2)), b10 of provider 4's (9, 1) not
 * late, then provider 3's e60 late. */
static const void *refs_archive(size_t *len)
{
	static struct fxt_writer *w;

	if (fxt_writer_open_mem(&w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 3, "p");
	fxt_writer_initialization(w, 1000000000);
	put_thread(w, 1, 1);
	put_event(w, FXT_EVENT_DURATION_BEGIN, 1, 100);
	put_thread(w, 1, 2);
	put_event(w, FXT_EVENT_DURATION_BEGIN, 1, 300);
	put_thread(w, 2, 1);
	put_event(w, FXT_EVENT_DURATION_END, 2, 50);
	fxt_writer_provider(w, 4, "q");
	put_thread(w, 1, 1);
	put_event(w, FXT_EVENT_DURATION_BEGIN, 1, 10);
	fxt_writer_provider_section(w, 3);
	put_event(w, FXT_EVENT_DURATION_END, 2, 60);
	if (fxt_writer_flush(w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(w, len);
}

/* Thread `tid`'s names as r gives them, each followed by a space; *ok_args
 * false if an event's argument is not its name. */
static void names_of(struct fxt_reader *r, uint64_t tid, char *out, size_t cap, bool *ok_args)
{
	struct fxt_record rec;
	size_t n = 0;

	out[0] = '\0';
	while (fxt_reader_next(r, &rec) == 1) {
		if (rec.type != FXT_RECORD_EVENT || rec.u.event.tid != tid)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)rec.u.event.name.len,
				      rec.u.event.name.data);
		if (rec.nargs != 1 || rec.args[0].v.s.len != rec.u.event.name.len ||
		    memcmp(rec.args[0].v.s.data, rec.u.event.name.data, rec.u.event.name.len) != 0)
			*ok_args = false;
	}
}

int main(void)
{
	struct fxt_reader *r, *c;
	struct fxt_record rec;
	char got[256], path[] = "/tmp/test_reader_order.XXXXXX";
	bool args_ok = true, sorted = false;
	size_t len;
	const void *data = archive(&len);
	uint64_t pos = 0, late_off = 0, clone_pos = 0;
	int fd, p[2];
	pid_t pid;

	plan(18);

	if (fxt_reader_open_mem(&r, data, len, 0) != 0)
		bail_out("open failed");
	names_of(r, 1, got, sizeof(got), &args_ok);
	ASSERT_STR_EQ(got, "e100 b300 e400 e600 i200 e1000 b0a b300late b0b ",
		      "without the flag: file order");
	fxt_reader_free(r);

	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	names_of(r, 1, got, sizeof(got), &args_ok);
	ASSERT_STR_EQ(got, want1,
		      "memory: thread 1's begins and ends in time order, equal times in file "
		      "order; the instant where it is");
	ASSERT_EQ_U64(fxt_reader_late(r, &sorted), 4, "four late events (one on thread 2)");
	ok(sorted, "all of them sorted");
	ok(args_ok, "the late events keep their names and arguments");
	fxt_reader_free(r);

	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	names_of(r, 2, got, sizeof(got), &args_ok);
	ASSERT_STR_EQ(got, "b10 e50 ", "memory: thread 2 too");
	fxt_reader_free(r);

	/* A file, read twice. */
	fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		bail_out("temporary file");
	unlink(path);
	lseek(fd, 0, SEEK_SET);
	if (fxt_reader_open_fd(&r, fd, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	names_of(r, 1, got, sizeof(got), &args_ok);
	ASSERT_STR_EQ(got, want1, "a file: the same");
	fxt_reader_free(r);
	close(fd);

	/* A pipe, copied into a file to be read twice. */
	if (pipe(p) != 0 || (pid = fork()) < 0)
		bail_out("pipe");
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], data, len) == (ssize_t)len ? 0 : 1);
	}
	close(p[1]);
	if (fxt_reader_open_fd(&r, p[0], FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	names_of(r, 1, got, sizeof(got), &args_ok);
	ASSERT_STR_EQ(got, want1, "a pipe: the same");
	fxt_reader_free(r);
	close(p[0]);
	waitpid(pid, NULL, 0);

	/* A clone where the first late event was given: that event first,
	 * then the rest in time order; record positions never go back. */
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	bool mono = true;
	c = NULL;
	while (fxt_reader_next(r, &rec) == 1) {
		mono &= fxt_reader_record_pos(r) >= pos;
		pos = fxt_reader_record_pos(r);
		if (!c && rec.type == FXT_RECORD_EVENT && rec.u.event.tid == 1) {
			late_off = rec.offset;
			clone_pos = pos;
			if (fxt_reader_clone_at(r, pos, &c) != 0)
				bail_out("clone failed");
		}
	}
	ok(mono, "record positions never go back");
	ok(c && late_off > clone_pos,
	   "the first event given is a late one, with its own offset (%llu), given at %llu",
	   (unsigned long long)late_off, (unsigned long long)clone_pos);
	if (c) {
		names_of(c, 1, got, sizeof(got), &args_ok);
		ASSERT_STR_EQ(got, want1, "a clone there: the same");
		fxt_reader_free(c);
	} else {
		ok(false, "a clone there: the same");
	}
	fxt_reader_free(r);

	/* A clone where r is, past e100: b0a and b0b, further on in the
	 * file, were given before e100, and are not given again (fxt-view's
	 * marks are such clones); one where r is between a late event and
	 * the event it was given before gives that late event again. */
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	c = NULL;
	bool between = false;
	while (fxt_reader_next(r, &rec) == 1 && !c) {
		if (rec.type != FXT_RECORD_EVENT || rec.u.event.tid != 1)
			continue;
		if (rec.u.event.name.len == 3 && memcmp(rec.u.event.name.data, "b0a", 3) == 0)
			between = fxt_reader_record_pos(r) == fxt_reader_offset(r);
		if (rec.u.event.name.len == 4 && memcmp(rec.u.event.name.data, "e100", 4) == 0 &&
		    fxt_reader_clone_at(r, fxt_reader_offset(r), &c) != 0)
			bail_out("clone failed");
	}
	ok(between, "between a late event and the event it came before: record_pos is the offset");
	if (c) {
		names_of(c, 1, got, sizeof(got), &args_ok);
		ASSERT_STR_EQ(got, "b300 b300late e400 e600 i200 e1000 ",
			      "a clone past e100: the rest, b0a and b0b not again");
		fxt_reader_free(c);
	} else {
		ok(false, "a clone past e100: the rest, b0a and b0b not again");
	}
	fxt_reader_free(r);
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	c = NULL;
	while (!c && fxt_reader_next(r, &rec) == 1)
		if (rec.type == FXT_RECORD_EVENT && rec.u.event.tid == 1 &&
		    fxt_reader_clone_at(r, fxt_reader_offset(r), &c) != 0)
			bail_out("clone failed");
	if (c) {
		names_of(c, 1, got, sizeof(got), &args_ok);
		ASSERT_STR_EQ(got, want1, "a clone between b0a and e100: b0a again, then on");
		fxt_reader_free(c);
	} else {
		ok(false, "a clone between b0a and e100: b0a again, then on");
	}
	fxt_reader_free(r);

	/* Raw framing ignores the flag. */
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER | FXT_READER_RAW) != 0)
		bail_out("open failed");
	size_t n = 0;
	uint64_t last = 0;
	bool forward = true;
	while (fxt_reader_next(r, &rec) == 1) {
		forward &= n++ == 0 || rec.offset > last;
		last = rec.offset;
	}
	ok(forward, "raw framing: file order");
	ASSERT_EQ_U64(fxt_reader_late(r, NULL), 0, "raw framing: nothing held");
	fxt_reader_free(r);

	/* Threads through refs, per provider. */
	data = refs_archive(&len);
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	got[0] = '\0';
	n = 0;
	while (fxt_reader_next(r, &rec) == 1)
		if (rec.type == FXT_RECORD_EVENT && rec.provider_id == 3 && rec.u.event.tid == 1)
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%llu ",
					      (unsigned long long)rec.u.event.ts);
	ASSERT_EQ_U64(fxt_reader_late(r, NULL), 2,
		      "thread refs: two late events, found through the thread table per provider");
	ASSERT_STR_EQ(got, "50 60 100 ", "thread refs: provider 3's thread 1 in time order");
	fxt_reader_free(r);
	return exit_status();
}
