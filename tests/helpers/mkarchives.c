/* mkarchives DIR: writes small FXT archives, valid and broken, into DIR.
 *
 * They are the seed corpus of the reader's fuzzer and the inputs of the
 * fxt-dump end-to-end tests (tests/e2e/dump-*.sh), which know their exact
 * byte offsets: change a file here, update the offsets there.
 *
 *   valid.fxt         every record type, nested calls, flows, counters, args
 *   valid.fxt.gz      the same, gzip-compressed
 *   warn.fxt          legal but unusual: a duration end without begin, a
 *                     begin never ended, a flow never ended
 *   flow-order.fxt    flows whose end comes first in the file (fine), one
 *                     that ends before it begins in time, one never begun
 *   two-providers.fxt two providers with their own tables and clocks
 *   late-begins.fxt   magic-trace's shape: begins at time 0 at the end of
 *                     the file, for the frames open at its start
 *   unknown.fxt       a reserved record type and an unknown argument type
 *   bad-*.fxt         one broken rule each (see the table at the bottom)
 *   extreme.fxt       three threads busy for the whole 64-bit clock, one
 *                     function named with control and non-UTF-8 bytes
 *   empty.fxt, garbage.fxt
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/writer.h>

static const char *dir;

/* ------------------------------------------------------------ helpers */

struct buf {
	uint64_t w[4096];
	size_t n;
};

static void add(struct buf *b, uint64_t word)
{
	if (b->n >= sizeof(b->w) / sizeof(b->w[0])) {
		fprintf(stderr, "mkarchives: buffer full\n");
		exit(1);
	}
	b->w[b->n++] = word;
}

/* Appends an encoded record; enc was called with (b->w + b->n, room). */
#define ENC(b, call)                                                              \
	do {                                                                      \
		size_t n_ = (call);                                               \
		if (n_ == 0) {                                                    \
			fprintf(stderr, "mkarchives: cannot encode %s\n", #call); \
			exit(1);                                                  \
		}                                                                 \
		(b)->n += n_;                                                     \
	} while (0)
#define AT(b)	(b)->w + (b)->n
#define ROOM(b) (sizeof((b)->w) / sizeof((b)->w[0]) - (b)->n)

static void save(const char *name, const void *data, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0) {
		fprintf(stderr, "mkarchives: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void save_buf(const char *name, const struct buf *b)
{
	save(name, b->w, b->n * 8);
}

static struct fxt_event event(enum fxt_event_type type, uint64_t ts, uint8_t thread, uint16_t name,
			      uint64_t extra)
{
	struct fxt_event ev = { .type = type,
				.ts = ts,
				.thread = fxt_tref_index(thread),
				.category = fxt_sref_index(1),
				.name = fxt_sref_index(name),
				.extra = extra };
	return ev;
}

/* Magic, provider 10 "demo", 2 ticks per ns, strings 1 .. 5, threads 1 and
 * 2 of process 10.  Offsets: magic 0, provider info 8, init 24, strings
 * from 40 (2 words each), threads from 120 (3 words each), then 168. */
static void preamble(struct buf *b)
{
	static const char *const names[] = { "cat", "main", "work", "inner", "flow" };
	ENC(b, fxt_enc_magic(AT(b), ROOM(b)));
	ENC(b, fxt_enc_provider_info(AT(b), ROOM(b), 10, "demo", 4));
	ENC(b, fxt_enc_initialization(AT(b), ROOM(b), 2000000000));
	for (unsigned i = 0; i < 5; i++)
		ENC(b,
		    fxt_enc_string(AT(b), ROOM(b), (uint16_t)(i + 1), names[i], strlen(names[i])));
	ENC(b, fxt_enc_thread(AT(b), ROOM(b), 1, 10, 11));
	ENC(b, fxt_enc_thread(AT(b), ROOM(b), 2, 10, 12));
}

static void add_event(struct buf *b, struct fxt_event ev)
{
	ENC(b, fxt_enc_event(AT(b), ROOM(b), &ev));
}

/* -------------------------------------------------------------- valid */

static void valid(struct buf *b)
{
	preamble(b);
	struct fxt_arg pa = { .type = FXT_ARG_KOID,
			      .name = fxt_sref_inline("process", 7),
			      .v.koid = 10 };
	ENC(b, fxt_enc_kernel_object(AT(b), ROOM(b), FXT_OBJ_PROCESS, 10,
				     fxt_sref_inline("demo", 4), NULL, 0));
	ENC(b, fxt_enc_kernel_object(AT(b), ROOM(b), FXT_OBJ_THREAD, 11, fxt_sref_inline("main", 4),
				     &pa, 1));
	/* main [100, 1000] > work [200, 500] > inner [300, 400]; work [600, 900] */
	add_event(b, event(FXT_EVENT_DURATION_COMPLETE, 300, 1, 4, 400));
	add_event(b, event(FXT_EVENT_DURATION_COMPLETE, 200, 1, 3, 500));
	add_event(b, event(FXT_EVENT_DURATION_COMPLETE, 600, 1, 3, 900));
	add_event(b, event(FXT_EVENT_DURATION_COMPLETE, 100, 1, 2, 1000));
	/* thread 2: begin/end pair with a flow from thread 1 */
	add_event(b, event(FXT_EVENT_FLOW_BEGIN, 350, 1, 5, 77));
	add_event(b, event(FXT_EVENT_DURATION_BEGIN, 700, 2, 3, 0));
	add_event(b, event(FXT_EVENT_FLOW_END, 710, 2, 5, 77));
	add_event(b, event(FXT_EVENT_DURATION_END, 800, 2, 3, 0));
	struct fxt_arg args[] = {
		{ .type = FXT_ARG_INT32, .name = fxt_sref_inline("n", 1), .v.i32 = -3 },
		{ .type = FXT_ARG_STRING,
		  .name = fxt_sref_inline("s", 1),
		  .v.str = fxt_sref_inline("a \"q\"", 5) },
		{ .type = FXT_ARG_DOUBLE, .name = fxt_sref_inline("d", 1), .v.f64 = 0.5 },
		{ .type = FXT_ARG_BOOL, .name = fxt_sref_inline("b", 1), .v.b = true },
		{ .type = FXT_ARG_POINTER, .name = fxt_sref_inline("p", 1), .v.ptr = 0x1000 },
	};
	struct fxt_event ev = event(FXT_EVENT_INSTANT, 450, 1, 2, 0);
	ev.args = args;
	ev.nargs = 5;
	add_event(b, ev);
	struct fxt_arg cv = { .type = FXT_ARG_UINT64,
			      .name = fxt_sref_inline("bytes", 5),
			      .v.u64 = 4096 };
	ev = event(FXT_EVENT_COUNTER, 460, 1, 3, 1);
	ev.args = &cv;
	ev.nargs = 1;
	add_event(b, ev);
	ev = event(FXT_EVENT_INSTANT, 470, 2, 0, 0);
	ev.name = fxt_sref_inline("fxt: 12 records dropped", 23);
	add_event(b, ev);
	ENC(b, fxt_enc_log(AT(b), ROOM(b), 480, fxt_tref_index(2), "hello\n", 6));
	ENC(b, fxt_enc_provider_event(AT(b), ROOM(b), 10, FXT_PROVIDER_EVENT_BUFFER_FULL));
	ENC(b, fxt_enc_blob(AT(b), ROOM(b), fxt_sref_inline("raw", 3), FXT_BLOB_DATA, "xyz", 3));
	ENC(b, fxt_enc_userspace_object(AT(b), ROOM(b), 0x1000, fxt_tref_index(1),
					fxt_sref_inline("obj", 3), NULL, 0));
	struct fxt_context_switch cs = { .cpu = 1,
					 .out_state = FXT_THREAD_BLOCKED,
					 .out_thread = fxt_tref_index(1),
					 .in_thread = fxt_tref_index(2),
					 .ts = 490 };
	ENC(b, fxt_enc_context_switch(AT(b), ROOM(b), &cs));
}

static void write_gzip(const char *name, const struct buf *b)
{
	struct fxt_writer *w;
	size_t len;
	if (fxt_writer_open_mem(&w, FXT_WRITER_GZIP) != 0 || fxt_writer_words(w, b->w, b->n) ||
	    fxt_writer_finish(w) != 0) {
		fprintf(stderr, "mkarchives: gzip writer failed\n");
		exit(1);
	}
	const void *data = fxt_writer_mem_data(w, &len);
	save(name, data, len);
	fxt_writer_free(w);
}

/* -------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	static struct buf b;
	if (argc != 2) {
		fprintf(stderr, "usage: mkarchives DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkarchives: %s: %s\n", dir, strerror(errno));
		return 1;
	}

	valid(&b);
	save_buf("valid.fxt", &b);
	write_gzip("valid.fxt.gz", &b);

	/* A cut last record: the context switch (2 words) loses its last. */
	b.n--;
	save_buf("bad-truncated.fxt", &b);

	/* Legal but unusual.  Events start at 168. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_END, 100, 1, 2, 0));	   /* 168 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 200, 2, 3, 0));	   /* 184 */
	add_event(&b, event(FXT_EVENT_FLOW_BEGIN, 210, 2, 5, 9));	   /* 200 */
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 300, 1, 4, 300)); /* 224: zero length */
	save_buf("warn.fxt", &b);

	/* Flows in any file order (writers emit thread by thread; Perfetto
	 * sorts by time).  Events start at 168, 24 bytes each. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_FLOW_END, 500, 1, 5, 5));	  /* 168: begun later in the file */
	add_event(&b, event(FXT_EVENT_FLOW_END, 100, 1, 5, 6));	  /* 192: ends before it begins */
	add_event(&b, event(FXT_EVENT_FLOW_STEP, 150, 1, 5, 7));  /* 216: never begun */
	add_event(&b, event(FXT_EVENT_FLOW_BEGIN, 300, 2, 5, 5)); /* 240 */
	add_event(&b, event(FXT_EVENT_FLOW_BEGIN, 200, 2, 5, 6)); /* 264 */
	save_buf("flow-order.fxt", &b);

	/* Three threads each busy for the whole 64-bit clock: sums of their
	 * times overflow 64 bits (fxt-report's shares must not).  Not valid
	 * (see below), but every tool must read it. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 0, 1, 2, UINT64_MAX - 1));
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 0, 2, 3, UINT64_MAX - 1));
	/* The third one's name has control characters and a byte that is not
	 * UTF-8, which no output of the tools may pass through raw. */
	ENC(&b, fxt_enc_string(AT(&b), ROOM(&b), 6, "a\tb\x1b[1m\xff", 9));
	struct fxt_event third = event(FXT_EVENT_DURATION_COMPLETE, 0, 0, 6, UINT64_MAX - 1);
	third.thread = fxt_tref_inline(10, 13);
	add_event(&b, third);
	save_buf("extreme.fxt", &b);

	/* Complete events overlapping partly: [100, 500] and [300, 700]. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 100, 1, 2, 500)); /* 168 */
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 300, 1, 3, 700)); /* 192 */
	save_buf("bad-overlap.fxt", &b);

	/* A zero word where a record header should be. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_INSTANT, 100, 1, 2, 0)); /* 168 */
	add(&b, 0);					       /* 184 */
	add_event(&b, event(FXT_EVENT_INSTANT, 200, 1, 2, 0));
	save_buf("bad-zero.fxt", &b);

	/* An unregistered string ref (index 9) and thread ref (7). */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_INSTANT, 100, 1, 9, 0)); /* 168 */
	add_event(&b, event(FXT_EVENT_INSTANT, 100, 7, 2, 0)); /* 184 */
	save_buf("bad-ref.fxt", &b);

	/* A call named by an unregistered string ref (index 9) between two
	 * named ones: main (5 .. 100 ns) around it (10 .. 20 ns). */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 20, 1, 9, 40));
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 10, 1, 2, 200));
	save_buf("bad-ref-call.fxt", &b);

	/* Invalid UTF-8 in a string record (index 6). */
	b.n = 0;
	preamble(&b);
	ENC(&b, fxt_enc_string(AT(&b), ROOM(&b), 6, "bad\xff", 4)); /* 168 */
	save_buf("bad-utf8.fxt", &b);

	/* Reserved bits set in a thread record. */
	b.n = 0;
	preamble(&b);
	ENC(&b, fxt_enc_thread(AT(&b), ROOM(&b), 3, 10, 13)); /* 168 */
	b.w[b.n - 3] |= UINT64_C(1) << 40;
	save_buf("bad-reserved.fxt", &b);

	/* A complete event ending before it starts. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 500, 1, 2, 100)); /* 168 */
	save_buf("bad-endbefore.fxt", &b);

	/* No magic record: the preamble without its first word. */
	b.n = 0;
	preamble(&b);
	save("bad-nomagic.fxt", b.w + 1, (b.n - 1) * 8);

	/* 515 complete events nested on thread 1, written children first:
	 * depths 0 .. 514, two of them past Perfetto's 512. */
	b.n = 0;
	preamble(&b);
	for (unsigned k = 515; k-- > 0;)
		add_event(&b, event(FXT_EVENT_DURATION_COMPLETE, 100 + k, 1, 3, 2000 - k));
	save_buf("deep.fxt", &b);

	/* Two providers sharing string index 2 and thread index 1. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_INSTANT, 100, 1, 2, 0));
	ENC(&b, fxt_enc_provider_info(AT(&b), ROOM(&b), 20, "other", 5));
	ENC(&b, fxt_enc_string(AT(&b), ROOM(&b), 1, "cat2", 4));
	ENC(&b, fxt_enc_string(AT(&b), ROOM(&b), 2, "other_main", 10));
	ENC(&b, fxt_enc_thread(AT(&b), ROOM(&b), 1, 20, 21));
	add_event(&b, event(FXT_EVENT_INSTANT, 100, 1, 2, 0));
	ENC(&b, fxt_enc_provider_section(AT(&b), ROOM(&b), 10));
	add_event(&b, event(FXT_EVENT_INSTANT, 200, 1, 2, 0));
	save_buf("two-providers.fxt", &b);

	/* A reserved record type (12, 2 words) and an unknown argument type. */
	b.n = 0;
	preamble(&b);
	add(&b, fxt_field(12, 0, 3) | fxt_field(2, 4, 15)); /* 168 */
	add(&b, 0x1234);
	add(&b, fxt_field(FXT_RECORD_EVENT, 0, 3) | fxt_field(5, 4, 15) |
		    fxt_field(FXT_EVENT_INSTANT, 16, 19) | fxt_field(1, 20, 23) |
		    fxt_field(1, 24, 31) | fxt_field(1, 32, 47) | fxt_field(2, 48, 63)); /* 184 */
	add(&b, 100);
	add(&b, fxt_field(13, 0, 3) | fxt_field(3, 4, 15)); /* 200: argument type 13 */
	add(&b, 1);
	add(&b, 2);
	save_buf("unknown.fxt", &b);

	/* Perfetto's needs: a thread object whose "process" is a u64 (error),
	 * one without it and a counter with a string argument (warnings). */
	b.n = 0;
	preamble(&b);
	struct fxt_arg pu = { .type = FXT_ARG_UINT64,
			      .name = fxt_sref_inline("process", 7),
			      .v.u64 = 10 };
	ENC(&b, fxt_enc_kernel_object(AT(&b), ROOM(&b), FXT_OBJ_THREAD, 11,
				      fxt_sref_inline("t1", 2), &pu, 1)); /* 168 */
	ENC(&b, fxt_enc_kernel_object(AT(&b), ROOM(&b), FXT_OBJ_THREAD, 12,
				      fxt_sref_inline("t2", 2), NULL, 0)); /* 216 */
	struct fxt_arg cs_arg = { .type = FXT_ARG_STRING,
				  .name = fxt_sref_inline("v", 1),
				  .v.str = fxt_sref_inline("x", 1) };
	struct fxt_event cev = event(FXT_EVENT_COUNTER, 100, 1, 2, 1);
	cev.args = &cs_arg;
	cev.nargs = 1;
	add_event(&b, cev); /* 240 */
	save_buf("bad-perfetto.fxt", &b);

	/* magic-trace's shape: the begins of the frames open at the start,
	 * at time 0, at the end of the file.  Perfetto sorts each thread's
	 * events by time (equal times in file order) before pairing:
	 * main [0, 1000]; work [0, 600], [700, 800]; inner [0, 100],
	 * [300, 400] (ticks; 2 a ns).  Events from 168, 16 bytes each. */
	b.n = 0;
	preamble(&b);
	add_event(&b, event(FXT_EVENT_DURATION_END, 100, 1, 4, 0));	/* 168 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 300, 1, 4, 0));	/* 184 */
	add_event(&b, event(FXT_EVENT_DURATION_END, 400, 1, 4, 0));	/* 200 */
	add_event(&b, event(FXT_EVENT_DURATION_END, 600, 1, 3, 0));	/* 216 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 700, 1, 3, 0));	/* 232 */
	add_event(&b, event(FXT_EVENT_DURATION_END, 800, 1, 3, 0));	/* 248 */
	add_event(&b, event(FXT_EVENT_DURATION_END, 1000, 1, 2, 0));	/* 264 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 0, 1, 2, 0));	/* 280 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 0, 1, 3, 0));	/* 296 */
	add_event(&b, event(FXT_EVENT_DURATION_BEGIN, 0, 1, 4, 0));	/* 312 */
	save_buf("late-begins.fxt", &b);

	save("empty.fxt", "", 0);
	save("garbage.fxt", "this is not a trace, only text\n", 31);
	return 0;
}
