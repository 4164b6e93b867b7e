/* The records read on a second thread (tools/profile/recpipe.c) and what
 * makes it sound, the reader's kept strings (fxt_reader_keep_strings()):
 * a record's table strings stay as they were after a string record gives
 * their index new text and after a provider info record clears the
 * tables, until released; profile_load() through the pipe gives the rows
 * of reading on the caller's thread (FXT_THREADS=0), on an archive whose
 * strings change all along, across many batches. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/format.h>
#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/unit/raw_test_string.h"
#include "tests/lib/tap.h"
#include "tools/profile/profile.h"

static struct fxt_writer *w;

static void set_string(uint16_t index, const char *s)
{
	raw_test_string(w, index, s);
}

/* A complete event of thread (1, 2) named by string refs. */
static void slice(struct fxt_sref name, uint64_t ts, uint64_t end)
{
	struct fxt_event ev = { 0 };

	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.ts = ts;
	ev.thread = fxt_tref_inline(1, 2);
	ev.category = fxt_sref_index(5);
	ev.name = name;
	ev.extra = end;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

static void start(void)
{
	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	set_string(5, "function");
}

static const void *built(size_t *len)
{
	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	return fxt_writer_mem_data(w, len);
}

/* Each event's name, as the reader gave it, read after the last record. */
static void kept_strings(void)
{
	struct fxt_string names[3];
	struct fxt_reader *r;
	struct fxt_record rec;
	unsigned n = 0;
	const void *data;
	size_t len, bytes;
	uint64_t kept;

	start();
	set_string(6, "alpha");
	slice(fxt_sref_index(6), 0, 1);
	set_string(6, "beta"); /* shorter: the same buffer would do */
	slice(fxt_sref_index(6), 2, 3);
	fxt_writer_provider(w, 1, "test"); /* clears the tables */
	set_string(5, "function");
	set_string(6, "gamma");
	slice(fxt_sref_index(6), 4, 5);
	data = built(&len);
	if (fxt_reader_open_mem(&r, data, len, 0) < 0)
		bail_out("fxt_reader_open_mem");
	ASSERT_EQ_U64(fxt_reader_kept_strings(r, &bytes), 0, "nothing kept before it is asked");
	fxt_reader_keep_strings(r, true);
	while (fxt_reader_next(r, &rec) > 0)
		if (rec.type == FXT_RECORD_EVENT && n < 3)
			names[n++] = rec.u.event.name;
	ASSERT_EQ_U64(n, 3, "three events");
	ok(n == 3 && names[0].len == 5 && memcmp(names[0].data, "alpha", 5) == 0 &&
	       names[1].len == 4 && memcmp(names[1].data, "beta", 4) == 0 && names[2].len == 5 &&
	       memcmp(names[2].data, "gamma", 5) == 0,
	   "each event's name as it was read, after the last record");
	/* alpha (replaced), beta and "function" (cleared) */
	kept = fxt_reader_kept_strings(r, &bytes);
	ASSERT_EQ_U64(kept, 3, "three buffers kept");
	ok(bytes >= strlen("alpha") + strlen("beta") + strlen("function"), "their bytes counted");
	fxt_reader_release_strings(r, kept - 1);
	ASSERT_EQ_U64(fxt_reader_kept_strings(r, NULL), 3, "the count only grows");
	fxt_reader_release_strings(r, kept);
	fxt_reader_kept_strings(r, &bytes);
	ASSERT_EQ_U64(bytes, 0, "all released");
	fxt_reader_free(r);
	fxt_writer_free(w);
}

/* One line per row: name calls total self. */
static void rows_text(const char *path, const char *threads, char *out, size_t cap)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, NULL, NULL };
	struct profile *p;
	char err[256];
	size_t at = 0;

	if (threads)
		setenv("FXT_THREADS", threads, 1);
	else
		unsetenv("FXT_THREADS");
	if (profile_new(&p, &o) < 0)
		bail_out("profile_new");
	if (profile_load(p, path, err, sizeof(err)) < 0)
		bail_out(err);
	for (size_t i = 0; i < profile_nrows(p); i++) {
		const struct profile_row *row = profile_row(p, i);
		int k = snprintf(out + at, cap - at, "%s %llu %llu %llu\n", row->name,
				 (unsigned long long)row->calls, (unsigned long long)row->total_ns,
				 (unsigned long long)row->self_ns);

		if (k < 0 || (size_t)k >= cap - at)
			bail_out("rows_text: too long");
		at += (size_t)k;
	}
	profile_free(p);
}

static void piped_rows(void)
{
	static char direct[1 << 16], piped[1 << 16];
	char path[] = "/tmp/fxt-test-recpipe.XXXXXX";
	const void *data;
	uint64_t calls = 0;
	size_t len;
	FILE *f;
	int fd;

	start();
	for (unsigned i = 0; i < 60000; i++) {
		char name[16];

		if (i % 7 == 0) {
			snprintf(name, sizeof(name), "f%u", i / 7 % 13);
			set_string(6, name);
		}
		if (i % 5000 == 4999) {
			fxt_writer_provider(w, 1, "test");
			set_string(5, "function");
			set_string(6, "after");
		}
		slice(fxt_sref_index(6), 10 * (uint64_t)i, 10 * (uint64_t)i + 1 + i % 3);
		if (i % 11 == 0) /* inline: copied whole */
			slice(fxt_sref_inline("inl", 3), 10 * (uint64_t)i + 5,
			      10 * (uint64_t)i + 6);
	}
	data = built(&len);
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")) || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("writing the archive");
	fxt_writer_free(w);
	rows_text(path, "0", direct, sizeof(direct));
	rows_text(path, NULL, piped, sizeof(piped));
	unlink(path);
	ok(strcmp(direct, piped) == 0, "the same rows read on a second thread");
	for (const char *l = direct; *l; l = strchr(l, '\n') + 1)
		calls += strtoull(strchr(l, ' ') + 1, NULL, 10);
	ASSERT_EQ_U64(calls, 60000 + 60000 / 11 + 1, "every slice counted");
	ok(strstr(direct, "\nafter ") && strstr(direct, "\ninl ") && strstr(direct, "f12 "),
	   "the names of every part");
}

/* A clock of 3 ticks a second whose initialization record is the last
 * record before the events: each record that is no event goes over with
 * the reader's clock after it, and the engine takes that clock for it,
 * not the record's before (then every event was taken for ns: 7 ns, not
 * 2.333 s; each time floor(ticks * 1e9 / 3)). */
static void piped_clock(void)
{
	static char direct[256], piped[256];
	char path[] = "/tmp/fxt-test-recpipe.XXXXXX";
	struct fxt_event ev = { 0 };
	const void *data;
	size_t len;
	FILE *f;
	int fd;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_initialization(w, 3);
	ev.thread = fxt_tref_inline(7, 8);
	ev.category = fxt_sref_inline("c", 1);
	ev.name = fxt_sref_inline("f", 1);
	ev.type = FXT_EVENT_DURATION_BEGIN;
	ev.ts = 5;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
	ev.type = FXT_EVENT_DURATION_END;
	ev.ts = 12;
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
	data = built(&len);
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")) || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("writing the archive");
	fxt_writer_free(w);
	rows_text(path, "0", direct, sizeof(direct));
	rows_text(path, NULL, piped, sizeof(piped));
	unlink(path);
	ASSERT_STR_EQ(direct, "f 1 2333333334 2333333334\n", "3 ticks a second, on one thread");
	ASSERT_STR_EQ(piped, direct, "3 ticks a second, read on a second thread");
}

/* profile_buffer_full() of the archive at path, read as FXT_THREADS says. */
static uint64_t buffer_full_of(const char *path, const char *threads)
{
	struct profile_opts o = { PROFILE_BY_FUNCTION, NULL, NULL };
	struct profile *p;
	char err[256];
	uint64_t n;

	if (threads)
		setenv("FXT_THREADS", threads, 1);
	else
		unsetenv("FXT_THREADS");
	if (profile_new(&p, &o) < 0)
		bail_out("profile_new");
	if (profile_load(p, path, err, sizeof(err)) < 0)
		bail_out(err);
	n = profile_buffer_full(p);
	profile_free(p);
	return n;
}

/* Another writer's provider event "a buffer filled up, records were likely
 * dropped", twice: counted on either thread (nothing said it before). */
static void buffer_full(void)
{
	char path[] = "/tmp/fxt-test-recpipe.XXXXXX";
	const void *data;
	size_t len;
	FILE *f;
	int fd;

	start();
	slice(fxt_sref_inline("a", 1), 0, 1);
	fxt_writer_provider_event(w, 1, FXT_PROVIDER_EVENT_BUFFER_FULL);
	slice(fxt_sref_inline("b", 1), 2, 3);
	fxt_writer_provider_event(w, 1, 7); /* another event: not counted */
	fxt_writer_provider_event(w, 1, FXT_PROVIDER_EVENT_BUFFER_FULL);
	data = built(&len);
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")) || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("writing the archive");
	fxt_writer_free(w);
	ASSERT_EQ_U64(buffer_full_of(path, "0"), 2, "buffer full twice, on one thread");
	ASSERT_EQ_U64(buffer_full_of(path, NULL), 2, "buffer full twice, read on a second thread");
	unlink(path);
}

int main(void)
{
	kept_strings();
	piped_rows();
	piped_clock();
	buffer_full();
	done_testing();
	return exit_status();
}
