/* The reader on damaged and suspicious input, written word by word from the
 * spec (and, last, garbled inside a gzip or zstd stream).  Every case asserts what is delivered
 * before the damage, the exact byte offset reported, and the rule named. */
#include <stdlib.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#define MAX_DIAGS 64

struct outcome {
	int rc;			/* the last fxt_reader_next() result */
	unsigned nrec;		/* records delivered */
	struct fxt_record last; /* its strings are dangling after run() */
	char cat[64], name[64]; /* copies of the last event's strings */
	uint64_t err_off;
	char err[200];
	unsigned ndiag;
	struct {
		enum fxt_diag_level level;
		uint64_t off;
		char msg[200];
	} diag[MAX_DIAGS];
};

static void collect(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	struct outcome *o = ctx;
	if (o->ndiag < MAX_DIAGS) {
		o->diag[o->ndiag].level = level;
		o->diag[o->ndiag].off = off;
		snprintf(o->diag[o->ndiag].msg, sizeof(o->diag[0].msg), "%s", msg);
	}
	o->ndiag++;
}

static struct outcome o;

/* Reads every record of `words`; fills the global outcome. */
static void run_bytes(const void *data, size_t len, unsigned flags)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	memset(&o, 0, sizeof(o));
	if (fxt_reader_open_mem(&r, data, len, flags) != 0)
		bail_out("open_mem");
	fxt_reader_set_diag(r, collect, &o);
	while ((o.rc = fxt_reader_next(r, &rec)) == 1) {
		o.nrec++;
		o.last = rec;
		if (rec.type == FXT_RECORD_EVENT) {
			snprintf(o.cat, sizeof(o.cat), "%.*s", (int)rec.u.event.category.len,
				 rec.u.event.category.data);
			snprintf(o.name, sizeof(o.name), "%.*s", (int)rec.u.event.name.len,
				 rec.u.event.name.data);
		}
	}
	const char *e = fxt_reader_error(r, &o.err_off);
	if (e)
		snprintf(o.err, sizeof(o.err), "%s", e);
	if (o.rc < 0) /* sticky */
		ok(fxt_reader_next(r, &rec) == -1, "error is sticky");
	fxt_reader_free(r);
}

static void run(const uint64_t *w, size_t n, unsigned flags)
{
	run_bytes(w, n * 8, flags);
}

/* The index of the first diagnostic at `level` whose message contains
 * `needle`, or -1. */
static int find_diag(enum fxt_diag_level level, const char *needle)
{
	for (unsigned i = 0; i < o.ndiag && i < MAX_DIAGS; i++)
		if (o.diag[i].level == level && strstr(o.diag[i].msg, needle))
			return (int)i;
	return -1;
}

#define ASSERT_DIAG(lvl_, needle_, off_, what_)                                              \
	do {                                                                                 \
		int i_ = find_diag(lvl_, needle_);                                           \
		if (!ok(i_ >= 0, "%s: diagnostic \"%s\"", what_, needle_))                   \
			for (unsigned k_ = 0; k_ < o.ndiag && k_ < MAX_DIAGS; k_++)          \
				diag("  have: %u@%llu %s", o.diag[k_].level,                 \
				     (unsigned long long)o.diag[k_].off, o.diag[k_].msg);    \
		else                                                                         \
			ASSERT_EQ_U64(o.diag[i_].off, off_, "%s: diagnostic offset", what_); \
	} while (0)

#define ASSERT_DAMAGE(nrec_, off_, needle, what)                                          \
	do {                                                                              \
		ASSERT_EQ_I64(o.rc, -1, "%s: reading stops with an error", what);         \
		ASSERT_EQ_U64(o.nrec, nrec_, "%s: records delivered before it", what);    \
		ASSERT_EQ_U64(o.err_off, off_, "%s: error offset", what);                 \
		if (!ok(strstr(o.err, needle) != NULL, "%s: error names the rule", what)) \
			diag("  error: \"%s\", want \"%s\"", o.err, needle);              \
	} while (0)

static uint64_t hdr(unsigned type, unsigned size, uint64_t rest)
{
	return fxt_field(type, 0, 3) | fxt_field(size, 4, 15) | rest;
}

static uint64_t ev_hdr(unsigned size, unsigned etype, unsigned nargs, unsigned thread, unsigned cat,
		       unsigned name)
{
	return hdr(FXT_RECORD_EVENT, size,
		   fxt_field(etype, 16, 19) | fxt_field(nargs, 20, 23) | fxt_field(thread, 24, 31) |
		       fxt_field(cat, 32, 47) | fxt_field(name, 48, 63));
}

static uint64_t str_hdr(unsigned index, unsigned len)
{
	return hdr(FXT_RECORD_STRING, 1 + (unsigned)fxt_stream_words(len),
		   fxt_field(index, 16, 30) | fxt_field(len, 32, 46));
}

/* Up to 8 bytes of a C string as one stream word, zero padded. */
static uint64_t text(const char *s)
{
	uint64_t w = 0;
	memcpy(&w, s, strlen(s) < 8 ? strlen(s) : 8);
	return w;
}

#define M    FXT_MAGIC_RECORD
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_framing(void)
{
	/* A 3-word instant event (inline thread would need 5) cut to 2. */
	uint64_t trunc[] = { M, ev_hdr(3, FXT_EVENT_DURATION_COMPLETE, 0, 1, 0, 0), 5 };
	run(trunc, N(trunc), 0);
	ASSERT_DAMAGE(1, 8, "runs past the end of the input", "truncated last record");

	uint64_t zero[] = { M, 0, 0 };
	run(zero, N(zero), 0);
	ASSERT_DAMAGE(1, 8, "record of size 0", "zero-size record");

	uint64_t past[] = {
		M, hdr(FXT_RECORD_STRING, 200, fxt_field(1, 16, 30) | fxt_field(3, 32, 46)),
		text("abc")
	};
	run(past, N(past), 0);
	ASSERT_DAMAGE(1, 8, "header says 200 words, 16 bytes left", "size past end of input");

	uint8_t partial[11] = { 0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00, 1, 2, 3 };
	run_bytes(partial, sizeof(partial), 0);
	ASSERT_DAMAGE(1, 8, "truncated record header: 3 bytes", "partial trailing word");

	/* Large record claiming more than there is. */
	uint64_t large[] = { M, hdr(15, 0, 0) | fxt_field(1000, 4, 35), 0 };
	run(large, N(large), 0);
	ASSERT_DAMAGE(1, 8, "large record runs past the end", "truncated large record");

	/* An argument larger than its record. */
	uint64_t arg[] = { M, ev_hdr(5, FXT_EVENT_INSTANT, 1, 0, 0, 0),
			   1, 2,
			   3, fxt_field(FXT_ARG_INT32, 0, 3) | fxt_field(5, 4, 15) };
	run(arg, N(arg), 0);
	ASSERT_DAMAGE(1, 40, "argument size 5 words exceeds its record", "arg size too big");

	uint64_t arg0[] = { M, ev_hdr(5, FXT_EVENT_INSTANT, 1, 0, 0, 0),
			    1, 2,
			    3, fxt_field(FXT_ARG_INT32, 0, 3) };
	run(arg0, N(arg0), 0);
	ASSERT_DAMAGE(1, 40, "argument of size 0", "arg size 0");

	/* An int64 argument of one word: no room for its value. */
	uint64_t argv[] = { M, ev_hdr(5, FXT_EVENT_INSTANT, 1, 0, 0, 0),
			    1, 2,
			    3, fxt_field(FXT_ARG_INT64, 0, 3) | fxt_field(1, 4, 15) };
	run(argv, N(argv), 0);
	ASSERT_DAMAGE(1, 40, "i64 argument has no value word", "arg without value");

	/* Inline name of 100 bytes in a 4-word record. */
	uint64_t inl[] = { M, ev_hdr(4, FXT_EVENT_INSTANT, 0, 0, 0, FXT_STRREF_INLINE(100)), 1, 2,
			   3 };
	run(inl, N(inl), 0);
	ASSERT_DAMAGE(1, 8, "inline name string (100 bytes) runs past", "inline string past end");

	/* A complete event without its end time word. */
	uint64_t noend[] = { M, ev_hdr(2, FXT_EVENT_DURATION_COMPLETE, 0, 1, 0, 0), 5 };
	run(noend, N(noend), 0);
	ASSERT_DAMAGE(1, 8, "complete event without its end time word", "complete without end");
}

static void test_input_kinds(void)
{
	run(NULL, 0, 0);
	ASSERT_EQ_I64(o.rc, 0, "empty input: clean end");
	ASSERT_EQ_U64(o.nrec, 0, "empty input: no records");

	uint64_t nomagic[] = { hdr(FXT_RECORD_INITIALIZATION, 2, 0), 1000 };
	run(nomagic, N(nomagic), 0);
	ASSERT_EQ_I64(o.rc, 0, "no magic: still read");
	ASSERT_EQ_U64(o.nrec, 1, "no magic: the record is delivered");
	ASSERT_DIAG(FXT_DIAG_ERROR, "no magic record at offset 0", 0, "no magic");

	/* Garbage: all ones is a large record of 2^32-1 words. */
	uint8_t garbage[16];
	memset(garbage, 0xff, sizeof(garbage));
	run_bytes(garbage, sizeof(garbage), 0);
	ASSERT_DAMAGE(0, 0, "large record runs past the end", "garbage");
	ASSERT_DIAG(FXT_DIAG_ERROR, "no magic record", 0, "garbage");

	/* Text: "he" = 0x6568 is type 8 (context switch) of 0x656 = 1622 words. */
	static const char hello[] = "hello, world, this is not a trace";
	run_bytes(hello, sizeof(hello) - 1, 0);
	ASSERT_DAMAGE(0, 0, "header says 1622 words", "text");

	/* A big-endian writer's archive starts 00 16 54 78 46 04 00 10: named
	 * as such, not read as garbage records. */
	static const uint8_t be_magic[8] = { 0x00, 0x16, 0x54, 0x78, 0x46, 0x04, 0x00, 0x10 };
	run_bytes(be_magic, sizeof(be_magic), 0);
	ASSERT_DAMAGE(0, 0, "big-endian FXT archive", "big-endian");
}

static void test_skipped(void)
{
	/* Record type 10 (reserved) of 3 words, then an instant event. */
	uint64_t unk[] = {
		M, hdr(10, 3, 0xabc0000), 1, 2, ev_hdr(4, FXT_EVENT_INSTANT, 0, 0, 0, 0), 77, 1, 2
	};
	run(unk, N(unk), FXT_READER_VALIDATE);
	ASSERT_EQ_I64(o.rc, 0, "unknown record type: no error");
	ASSERT_EQ_U64(o.nrec, 2, "unknown record type: skipped");
	ASSERT_EQ_U64(o.last.offset, 32, "the event after it is read");
	ASSERT_EQ_U64(o.last.u.event.ts, 77, "the event after it is intact");
	ASSERT_DIAG(FXT_DIAG_INFO, "unknown record type 10", 8, "unknown record type");

	/* Unknown argument type 12 (2 words), then an i32 argument. */
	uint64_t unkarg[] = {
		M,
		ev_hdr(7, FXT_EVENT_INSTANT, 2, 0, 0, 0),
		5,
		1,
		2,
		fxt_field(12, 0, 3) | fxt_field(2, 4, 15) | fxt_field(0xffff, 32, 47),
		0x1234,
		fxt_field(FXT_ARG_INT32, 0, 3) | fxt_field(1, 4, 15) | fxt_field((uint32_t)-3, 32, 63)
	};
	run(unkarg, N(unkarg), FXT_READER_VALIDATE);
	ASSERT_EQ_I64(o.rc, 0, "unknown arg type: no error");
	ASSERT_EQ_U64(o.last.nargs, 1, "unknown arg type: left out");
	ASSERT_EQ_U64(o.last.args[0].type, FXT_ARG_INT32, "the next argument is read");
	ASSERT_EQ_I64(o.last.args[0].v.i, -3, "the next argument's value");
	ASSERT_DIAG(FXT_DIAG_INFO, "unknown argument type 12", 40, "unknown arg type");

	/* Unknown metadata type and trailing words in a known record. */
	uint64_t ext[] = { M, hdr(0, 1, fxt_field(9, 16, 19)), hdr(1, 3, 0), 500, 0xffff };
	run(ext, N(ext), FXT_READER_VALIDATE);
	ASSERT_EQ_I64(o.rc, 0, "extensions: no error");
	ASSERT_EQ_U64(o.nrec, 2, "unknown metadata skipped, longer init read");
	ASSERT_EQ_U64(o.last.u.init.ticks_per_second, 500, "extended init record");
	ASSERT_DIAG(FXT_DIAG_INFO, "unknown metadata type 9", 8, "unknown metadata");
}

static void test_checks(void)
{
	/* An event naming string 9 and thread 4, never registered. */
	uint64_t refs[] = { M, ev_hdr(2, FXT_EVENT_INSTANT, 0, 4, 0, 9), 1 };
	run(refs, N(refs), 0);
	ASSERT_EQ_I64(o.rc, 0, "unregistered refs: read on");
	ASSERT_STR_EQ(o.name, FXT_UNREGISTERED_STRING, "unregistered string named (not empty)");
	ASSERT_EQ_U64(o.last.u.event.pid, 0, "unregistered thread is 0");
	ASSERT_DIAG(FXT_DIAG_ERROR, "name string ref 9 used before registration", 8,
		    "unregistered string");
	ASSERT_DIAG(FXT_DIAG_ERROR, "thread ref 4 used before registration", 8,
		    "unregistered thread");

	/* Invalid UTF-8: a string record (always checked) and an inline name
	 * (checked with FXT_READER_VALIDATE only). */
	uint64_t utf_full[] = { M,
				str_hdr(1, 2),
				text("\xc3\x28"),
				hdr(FXT_RECORD_THREAD, 3, fxt_field(1, 16, 23)),
				1,
				2,
				ev_hdr(3, FXT_EVENT_INSTANT, 0, 1, 0, FXT_STRREF_INLINE(3)),
				1,
				text("\xed\xa0\x80") };
	run(utf_full, N(utf_full), 0);
	ASSERT_DIAG(FXT_DIAG_ERROR, "string 1 is not valid UTF-8", 8, "bad UTF-8 string record");
	ok(find_diag(FXT_DIAG_ERROR, "inline name") < 0, "inline UTF-8 unchecked by default");
	run(utf_full, N(utf_full), FXT_READER_VALIDATE);
	ASSERT_DIAG(FXT_DIAG_ERROR, "inline name string is not valid UTF-8", 64,
		    "bad UTF-8 inline (surrogate)");

	/* Reserved bits, index 0, magic with extra words, end before start. */
	uint64_t bad[] = { M,
			   hdr(FXT_RECORD_THREAD, 3, fxt_field(1, 16, 23) | fxt_field(1, 40, 40)),
			   1,
			   2,
			   hdr(FXT_RECORD_THREAD, 3, 0),
			   3,
			   4,
			   str_hdr(0, 1),
			   text("z"),
			   hdr(0, 2, fxt_field(4, 16, 19) | fxt_field(FXT_MAGIC_NUMBER, 24, 55)),
			   0,
			   ev_hdr(3, FXT_EVENT_DURATION_COMPLETE, 0, 1, 0, 0),
			   100,
			   99,
			   hdr(FXT_RECORD_INITIALIZATION, 2, fxt_field(1, 63, 63)),
			   0 };
	run(bad, N(bad), FXT_READER_VALIDATE);
	ASSERT_EQ_I64(o.rc, 0, "rule violations: read on");
	ASSERT_EQ_U64(o.nrec, 7, "rule violations: all records delivered");
	ASSERT_DIAG(FXT_DIAG_ERROR, "thread record with reserved bits set", 8, "thread reserved");
	ASSERT_DIAG(FXT_DIAG_ERROR, "thread record with index 0", 32, "thread index 0");
	ASSERT_DIAG(FXT_DIAG_ERROR, "string record with index 0", 56, "string index 0");
	ASSERT_DIAG(FXT_DIAG_ERROR, "magic record of 2 words", 72, "magic with extra words");
	ASSERT_DIAG(FXT_DIAG_ERROR, "complete event ends (99) before it starts (100)", 88,
		    "end before start");
	ASSERT_DIAG(FXT_DIAG_ERROR, "reserved bits [16 .. 63] of the initialization header", 112,
		    "init reserved bits");
	ASSERT_DIAG(FXT_DIAG_ERROR, "0 ticks per second", 112, "zero ticks per second");
}

static void test_tables(void)
{
	/* All 32767 string indices, then index 1 and 32767 re-registered. */
	size_t cap = 3 + 32767 * 2 + 3 * 3 + 2 * 3 + 8;
	uint64_t *w = calloc(cap, 8);
	size_t n = 0;
	w[n++] = M;
	for (unsigned i = 1; i <= FXT_MAX_STRING_INDEX; i++) {
		char s[8];
		snprintf(s, sizeof(s), "s%u", i);
		w[n++] = str_hdr(i, (unsigned)strlen(s));
		w[n++] = text(s);
	}
	w[n++] = hdr(FXT_RECORD_THREAD, 3, fxt_field(1, 16, 23));
	w[n++] = 1;
	w[n++] = 1;
	size_t ev1 = n;
	w[n++] = ev_hdr(2, FXT_EVENT_INSTANT, 0, 1, 1, 0x7fff);
	w[n++] = 10;
	w[n++] = str_hdr(1, 3);
	w[n++] = text("new");
	w[n++] = str_hdr(0x7fff, 3);
	w[n++] = text("top");
	w[n++] = ev_hdr(2, FXT_EVENT_INSTANT, 0, 1, 1, 0x7fff);
	w[n++] = 11;
	run(w, n, 0);
	ASSERT_EQ_I64(o.rc, 0, "32767 strings: read");
	ASSERT_EQ_U64(o.nrec, 1 + 32767 + 1 + 1 + 2 + 1, "32767 strings: records");
	ASSERT_STR_EQ(o.cat, "new", "index 1 re-registered");
	ASSERT_STR_EQ(o.name, "top", "index 32767 re-registered");
	ASSERT_EQ_U64(o.ndiag, 0, "32767 strings: no diagnostics");
	/* The first event saw the first registrations. */
	run(w, ev1 + 2, 0);
	ASSERT_STR_EQ(o.cat, "s1", "index 1 before re-registration");
	ASSERT_STR_EQ(o.name, "s32767", "index 32767 before re-registration");
	free(w);

	/* 300 threads through 255 indices: 1 .. 255, then 1 .. 45 again. */
	w = calloc(300 * 5 + 8, 8);
	n = 0;
	w[n++] = M;
	for (unsigned t = 0; t < 300; t++) {
		unsigned index = t % 255 + 1;
		w[n++] = hdr(FXT_RECORD_THREAD, 3, fxt_field(index, 16, 23));
		w[n++] = 1000;
		w[n++] = 2000 + t;
		w[n++] = ev_hdr(2, FXT_EVENT_INSTANT, 0, index, 0, 0);
		w[n++] = t;
	}
	struct fxt_reader *r;
	struct fxt_record rec;
	unsigned good = 0, events = 0;
	fxt_reader_open_mem(&r, w, n * 8, FXT_READER_VALIDATE);
	while (fxt_reader_next(r, &rec) == 1)
		if (rec.type == FXT_RECORD_EVENT) {
			events++;
			good += rec.u.event.tid == 2000 + rec.u.event.ts && rec.u.event.pid == 1000;
		}
	fxt_reader_free(r);
	ASSERT_EQ_U64(events, 300, "300 threads: events");
	ASSERT_EQ_U64(good, 300, "300 threads: each resolves to its latest registration");
	free(w);
}

/* A large record bigger than the window, cut short, read from a file: its
 * header is delivered (payload NULL), then the cut is reported at its
 * offset. */
static void test_large_cut(void)
{
	const size_t words = 300000, present = 1500000 / 8;
	uint64_t *w = calloc(1 + present, 8);
	char path[] = "/tmp/fxt-test-malformed-XXXXXX";
	int fd = mkstemp(path);
	if (!w || fd < 0)
		bail_out("temp file");
	w[0] = M;
	w[1] = fxt_field(FXT_RECORD_LARGE, 0, 3) | fxt_field(words, 4, 35) |
	       fxt_field(FXT_LARGE_BLOB, 36, 39) | fxt_field(FXT_BLOB_FORMAT_ATTACHMENT, 40, 43);
	w[2] = 0;		/* category and name empty */
	w[3] = (words - 4) * 8; /* payload bytes: the rest of the record */
	if (write(fd, w, (1 + present) * 8) != (ssize_t)((1 + present) * 8))
		bail_out("write");
	lseek(fd, 0, SEEK_SET);
	struct fxt_reader *r;
	struct fxt_record rec;
	if (fxt_reader_open_fd(&r, fd, 0) != 0)
		bail_out("open_fd");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 1, "large cut: magic");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 1, "large cut: header delivered");
	ASSERT_EQ_U64(rec.nwords, words, "large cut: its size in words");
	ASSERT_EQ_U64(rec.u.large.size, (words - 4) * 8, "large cut: payload size");
	ok(rec.u.large.payload == NULL, "large cut: payload not held");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), -1, "large cut: then an error");
	uint64_t off = 0;
	const char *why = fxt_reader_error(r, &off);
	ASSERT_EQ_U64(off, 8, "large cut: offset of the record");
	ASSERT_STR_EQ(why, "large record runs past the end of the input (900000 bytes missing)",
		      "large cut: rule");
	fxt_reader_free(r);
	close(fd);
	unlink(path);
	free(w);
}

/* An archive whose bytes were damaged before they were compressed (a
 * record one word long where an event needs two): in a sound gzip or zstd
 * stream, the reader says what the decoder found; when the stream's own
 * check fails too (its last checksum byte flipped), it says that, the
 * cause, though the decoder met the garbled record first. */
static void test_compressed(unsigned flag, const char *what)
{
	static const uint64_t short_event = 4 | 1u << 4;
	struct fxt_writer *w;
	size_t len;

	if (fxt_writer_open_mem(&w, flag) != 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	struct fxt_tref th = fxt_writer_thread(w, 1, 2);
	struct fxt_sref name = fxt_writer_cstring(w, "f");
	for (unsigned i = 0; i < 2000; i++) {
		struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
					.ts = i,
					.thread = th,
					.category = name,
					.name = name };
		if (i == 1000)
			fxt_writer_words(w, &short_event, 1);
		fxt_writer_event(w, &ev);
	}
	if (fxt_writer_finish(w) != 0)
		bail_out("finish");
	const uint8_t *data = fxt_writer_mem_data(w, &len);
	uint8_t *copy = malloc(len);
	if (!copy)
		bail_out("out of memory");
	memcpy(copy, data, len);

	run_bytes(copy, len, 0);
	ok(o.rc == -1 && strstr(o.err, "without its timestamp word"),
	   "%s, sound stream, a bad record: the decoder's error (%s)", what, o.err);
	/* zstd's content checksum is the frame's last 4 bytes; gzip's CRC-32
	 * the member's last 8 but 4. */
	copy[flag == FXT_WRITER_GZIP ? len - 8 : len - 1] ^= 0x55;
	run_bytes(copy, len, 0);
	ok(o.rc == -1 && strncmp(o.err, what, strlen(what)) == 0,
	   "%s, its checksum wrong too: the compressed stream's error (%s)", what, o.err);
	free(copy);
	fxt_writer_free(w);
}

int main(void)
{
	test_framing();
	test_input_kinds();
	test_skipped();
	test_checks();
	test_tables();
	test_large_cut();
	test_compressed(FXT_WRITER_GZIP, "gzip");
	test_compressed(FXT_WRITER_ZSTD, "zstd");
	done_testing();
	return exit_status();
}
