/* Reader round trips: archives made by the writer, read back field by
 * field.  Covers every record type and argument type, provider contexts
 * with their own tables and clocks, gzip and zstd (memory and file,
 * concatenated, cut, damaged), streaming a 200 MB archive through a pipe
 * in bounded memory, large records bigger than the window, records framed
 * without decoding (FXT_READER_RAW) and copied back byte for byte, a
 * plain file read through a map of it, and measures decoding speed.
 *
 * Past 800 lines: the cases of the reader's sources (memory, descriptor,
 * map, compressed, raw) build on the same archives and helpers
 * (raw_archive(), put_events(), count_events()), kept in one file. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static unsigned ndiag_errors;
static char last_diag[256];

static void count_diag(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	(void)ctx;
	(void)off;
	if (level == FXT_DIAG_ERROR) {
		ndiag_errors++;
		snprintf(last_diag, sizeof(last_diag), "%s", msg);
		diag("unexpected diagnostic at %llu: %s", (unsigned long long)off, msg);
	}
}

static struct fxt_reader *open_mem(const void *data, size_t len)
{
	struct fxt_reader *r = NULL;
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_VALIDATE) != 0)
		bail_out("fxt_reader_open_mem failed");
	fxt_reader_set_diag(r, count_diag, NULL);
	return r;
}

/* The next record that is not string or thread table bookkeeping. */
static int next_real(struct fxt_reader *r, struct fxt_record *rec)
{
	int rc;
	while ((rc = fxt_reader_next(r, rec)) == 1 &&
	       (rec->type == FXT_RECORD_STRING || rec->type == FXT_RECORD_THREAD))
		;
	return rc;
}

static struct fxt_writer *new_mem_writer(unsigned flags)
{
	struct fxt_writer *w;
	if (fxt_writer_open_mem(&w, flags) != 0)
		bail_out("fxt_writer_open_mem failed");
	return w;
}

static const void *writer_bytes(struct fxt_writer *w, size_t *len)
{
	if (fxt_writer_flush(w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(w, len);
}

/* ------------------------------------------------- every event type */

static void test_events(void)
{
	struct fxt_writer *w = new_mem_writer(0);
	fxt_writer_magic(w);
	fxt_writer_provider(w, 7, "prov");
	fxt_writer_initialization(w, 2000000000); /* 2 ticks per ns */
	struct fxt_sref cat = fxt_writer_cstring(w, "cat");
	struct fxt_tref th = fxt_writer_thread(w, 100, 101);

	for (unsigned t = 0; t < FXT_EVENT_TYPE_COUNT; t++) {
		char name[16];
		snprintf(name, sizeof(name), "ev%u", t);
		struct fxt_event ev = {
			.type = (enum fxt_event_type)t,
			.ts = 1000 + t,
			.thread = th,
			.category = cat,
			/* odd types inline, even types indexed */
			.name = t % 2 ? fxt_sref_inline(name, strlen(name))
				      : fxt_writer_cstring(w, name),
			.extra = t == FXT_EVENT_DURATION_COMPLETE ? 5000 : 0xabc0 + t,
		};
		if (fxt_writer_event(w, &ev) != 0)
			bail_out("writer_event failed");
	}
	/* An inline thread. */
	struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
				.ts = 9,
				.thread = fxt_tref_inline(5, 6),
				.category = fxt_sref_empty(),
				.name = fxt_sref_inline("x", 1) };
	fxt_writer_event(w, &ev);

	size_t len;
	const void *data = writer_bytes(w, &len);
	struct fxt_reader *r = open_mem(data, len);
	struct fxt_record rec;

	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 1, "magic read");
	ASSERT_EQ_U64(rec.offset, 0, "magic at offset 0");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_METADATA, "magic is metadata");
	ASSERT_EQ_U64(rec.u.meta.type, FXT_METADATA_TRACE_INFO, "magic is trace info");
	ok(fxt_reader_saw_magic(r), "saw_magic");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "provider info read");
	ASSERT_EQ_U64(rec.u.meta.type, FXT_METADATA_PROVIDER_INFO, "provider info");
	ASSERT_EQ_U64(rec.u.meta.provider_id, 7, "provider id");
	ASSERT_MEM_STR(rec.u.meta.name.data, rec.u.meta.name.len, "prov", "provider name");
	ASSERT_EQ_U64(rec.provider_id, 7, "record belongs to provider 7");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "init read");
	ASSERT_EQ_U64(rec.u.init.ticks_per_second, 2000000000, "ticks per second");
	ASSERT_EQ_U64(fxt_reader_ticks_to_ns(r, 3000), 1500, "ticks to ns");

	for (unsigned t = 0; t < FXT_EVENT_TYPE_COUNT; t++) {
		char name[16];
		snprintf(name, sizeof(name), "ev%u", t);
		ASSERT_EQ_I64(next_real(r, &rec), 1, "event %u read", t);
		ASSERT_EQ_U64(rec.type, FXT_RECORD_EVENT, "event %u: record type", t);
		ASSERT_EQ_U64(rec.u.event.type, t, "event %u: type", t);
		ASSERT_EQ_U64(rec.u.event.ts, 1000 + t, "event %u: ts", t);
		ASSERT_EQ_U64(rec.u.event.pid, 100, "event %u: pid", t);
		ASSERT_EQ_U64(rec.u.event.tid, 101, "event %u: tid", t);
		ASSERT_MEM_STR(rec.u.event.category.data, rec.u.event.category.len, "cat",
			       "event %u: category", t);
		ASSERT_MEM_STR(rec.u.event.name.data, rec.u.event.name.len, name, "event %u: name",
			       t);
		uint64_t want = t == FXT_EVENT_DURATION_COMPLETE ? 5000
				: (t == FXT_EVENT_INSTANT || t == FXT_EVENT_DURATION_BEGIN ||
				   t == FXT_EVENT_DURATION_END)
				    ? 0
				    : 0xabc0 + t;
		ASSERT_EQ_U64(rec.u.event.extra, want, "event %u: extra word", t);
	}
	ASSERT_EQ_I64(next_real(r, &rec), 1, "inline-thread event read");
	ASSERT_EQ_U64(rec.u.event.pid, 5, "inline pid");
	ASSERT_EQ_U64(rec.u.event.tid, 6, "inline tid");
	ASSERT_EQ_U64(rec.u.event.category.len, 0, "empty category");
	ASSERT_MEM_STR(rec.u.event.name.data, rec.u.event.name.len, "x", "inline name");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 0, "clean end");
	ASSERT_EQ_U64(fxt_reader_offset(r), len, "offset at the end is the length");
	ok(fxt_reader_error(r, NULL) == NULL, "no error");
	ASSERT_EQ_U64(ndiag_errors, 0, "no diagnostics");
	fxt_reader_free(r);
	fxt_writer_free(w);
}

/* ------------------------------------------------- every argument type */

static void test_args(void)
{
	struct fxt_writer *w = new_mem_writer(0);
	fxt_writer_magic(w);
	struct fxt_arg args[FXT_ARG_TYPE_COUNT] = {
		{ .type = FXT_ARG_NULL, .name = fxt_sref_inline("nul", 3) },
		{ .type = FXT_ARG_INT32, .name = fxt_writer_cstring(w, "i32"), .v.i32 = -7 },
		{ .type = FXT_ARG_UINT32, .name = fxt_sref_inline("u32", 3), .v.u32 = 0xfffffffe },
		{ .type = FXT_ARG_INT64,
		  .name = fxt_sref_inline("i64", 3),
		  .v.i64 = INT64_MIN + 1 },
		{ .type = FXT_ARG_UINT64, .name = fxt_sref_inline("u64", 3), .v.u64 = UINT64_MAX },
		{ .type = FXT_ARG_DOUBLE, .name = fxt_sref_inline("f64", 3), .v.f64 = -0.15625 },
		{ .type = FXT_ARG_STRING,
		  .name = fxt_sref_inline("str", 3),
		  .v.str = fxt_sref_inline("h\xc3\xa9llo", 6) },
		{ .type = FXT_ARG_POINTER,
		  .name = fxt_sref_inline("ptr", 3),
		  .v.ptr = 0xdeadbeef0 },
		{ .type = FXT_ARG_KOID, .name = fxt_sref_inline("process", 7), .v.koid = 42 },
		{ .type = FXT_ARG_BOOL, .name = fxt_sref_inline("b", 1), .v.b = true },
	};
	struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
				.ts = 1,
				.thread = fxt_tref_inline(1, 2),
				.category = fxt_sref_inline("c", 1),
				.name = fxt_sref_inline("n", 1),
				.args = args,
				.nargs = FXT_ARG_TYPE_COUNT };
	if (fxt_writer_event(w, &ev) != 0)
		bail_out("writer_event with all args failed");
	/* Indexed string value and an argument on a kernel object. */
	struct fxt_arg sarg = { .type = FXT_ARG_STRING,
				.name = fxt_writer_cstring(w, "k"),
				.v.str = fxt_writer_cstring(w, "indexed value") };
	fxt_writer_kernel_object(w, FXT_OBJ_THREAD, 11, fxt_writer_cstring(w, "worker"), &sarg, 1);

	size_t len;
	const void *data = writer_bytes(w, &len);
	struct fxt_reader *r = open_mem(data, len);
	struct fxt_record rec;
	ASSERT_EQ_I64(next_real(r, &rec), 1, "magic");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "event with args");
	ASSERT_EQ_U64(rec.nargs, FXT_ARG_TYPE_COUNT, "all args decoded");
	for (unsigned i = 0; i < rec.nargs && i < FXT_ARG_TYPE_COUNT; i++)
		ASSERT_EQ_U64(rec.args[i].type, i, "arg %u type", i);
	ASSERT_MEM_STR(rec.args[0].name.data, rec.args[0].name.len, "nul", "null arg name");
	ASSERT_MEM_STR(rec.args[1].name.data, rec.args[1].name.len, "i32", "indexed arg name");
	ASSERT_EQ_I64(rec.args[1].v.i, -7, "i32 value");
	ASSERT_EQ_U64(rec.args[2].v.u, 0xfffffffe, "u32 value");
	ASSERT_EQ_I64(rec.args[3].v.i, INT64_MIN + 1, "i64 value");
	ASSERT_EQ_U64(rec.args[4].v.u, UINT64_MAX, "u64 value");
	ok(rec.args[5].v.d == -0.15625, "f64 value");
	ASSERT_MEM_STR(rec.args[6].v.s.data, rec.args[6].v.s.len, "h\xc3\xa9llo", "str value");
	ASSERT_EQ_U64(rec.args[7].v.u, 0xdeadbeef0, "ptr value");
	ASSERT_EQ_U64(rec.args[8].v.u, 42, "koid value");
	ok(rec.args[9].v.b == true, "bool value");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "kernel object");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_KERNEL_OBJECT, "kobj type");
	ASSERT_EQ_U64(rec.u.kobj.obj_type, FXT_OBJ_THREAD, "kobj obj type");
	ASSERT_EQ_U64(rec.u.kobj.koid, 11, "kobj koid");
	ASSERT_MEM_STR(rec.u.kobj.name.data, rec.u.kobj.name.len, "worker", "kobj name");
	ASSERT_EQ_U64(rec.nargs, 1, "kobj args");
	ASSERT_MEM_STR(rec.args[0].v.s.data, rec.args[0].v.s.len, "indexed value",
		       "indexed string arg value");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 0, "end");
	fxt_reader_free(r);
	fxt_writer_free(w);
}

/* ------------------------------------------- the other record types */

static void test_other_records(void)
{
	struct fxt_writer *w = new_mem_writer(0);
	static const char payload[] = "0123456789abcdefXYZ";
	fxt_writer_magic(w);
	fxt_writer_blob(w, fxt_sref_inline("blb", 3), FXT_BLOB_DATA, payload, 19);
	fxt_writer_userspace_object(w, 0x1000, fxt_tref_inline(77, 0), fxt_sref_inline("obj", 3),
				    NULL, 0);
	struct fxt_context_switch cs = { .cpu = 3,
					 .out_state = FXT_THREAD_BLOCKED,
					 .out_thread = fxt_tref_inline(1, 2),
					 .in_thread = fxt_writer_thread(w, 3, 4),
					 .out_prio = 10,
					 .in_prio = 20,
					 .ts = 555 };
	fxt_writer_context_switch(w, &cs);
	fxt_writer_log(w, 777, fxt_tref_inline(8, 9), "hello log", 9);
	struct fxt_arg a = { .type = FXT_ARG_INT32, .name = fxt_sref_inline("a", 1), .v.i32 = 5 };
	struct fxt_large_blob lb = { .format = FXT_BLOB_FORMAT_EVENT,
				     .category = fxt_sref_inline("lc", 2),
				     .name = fxt_sref_inline("ln", 2),
				     .ts = 999,
				     .thread = fxt_tref_inline(12, 13),
				     .args = &a,
				     .nargs = 1,
				     .payload = payload,
				     .size = 19 };
	if (fxt_writer_large_blob(w, &lb) != 0)
		bail_out("large blob failed");
	lb.format = FXT_BLOB_FORMAT_ATTACHMENT;
	lb.size = 3;
	fxt_writer_large_blob(w, &lb);
	fxt_writer_provider_event(w, 0, FXT_PROVIDER_EVENT_BUFFER_FULL);

	size_t len;
	const void *data = writer_bytes(w, &len);
	struct fxt_reader *r = open_mem(data, len);
	struct fxt_record rec;
	next_real(r, &rec);
	ASSERT_EQ_I64(next_real(r, &rec), 1, "blob");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_BLOB, "blob type");
	ASSERT_MEM_STR(rec.u.blob.name.data, rec.u.blob.name.len, "blb", "blob name");
	ASSERT_EQ_U64(rec.u.blob.blob_type, FXT_BLOB_DATA, "blob data type");
	ASSERT_EQ_U64(rec.u.blob.size, 19, "blob size");
	ok(memcmp(rec.u.blob.payload, payload, 19) == 0, "blob payload");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "uobj");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_USERSPACE_OBJECT, "uobj type");
	ASSERT_EQ_U64(rec.u.uobj.pointer, 0x1000, "uobj pointer");
	ASSERT_EQ_U64(rec.u.uobj.pid, 77, "uobj pid");
	ASSERT_MEM_STR(rec.u.uobj.name.data, rec.u.uobj.name.len, "obj", "uobj name");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "cswitch");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_CONTEXT_SWITCH, "cswitch type");
	ASSERT_EQ_U64(rec.u.cswitch.cpu, 3, "cpu");
	ASSERT_EQ_U64(rec.u.cswitch.out_state, FXT_THREAD_BLOCKED, "out state");
	ASSERT_EQ_U64(rec.u.cswitch.out_pid * 10 + rec.u.cswitch.out_tid, 12, "out thread");
	ASSERT_EQ_U64(rec.u.cswitch.in_pid * 10 + rec.u.cswitch.in_tid, 34, "in thread");
	ASSERT_EQ_U64(rec.u.cswitch.out_prio, 10, "out prio");
	ASSERT_EQ_U64(rec.u.cswitch.in_prio, 20, "in prio");
	ASSERT_EQ_U64(rec.u.cswitch.ts, 555, "cswitch ts");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "log");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_LOG, "log type");
	ASSERT_EQ_U64(rec.u.log.ts, 777, "log ts");
	ASSERT_EQ_U64(rec.u.log.pid * 10 + rec.u.log.tid, 89, "log thread");
	ASSERT_MEM_STR(rec.u.log.msg.data, rec.u.log.msg.len, "hello log", "log message");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "large blob (event)");
	ASSERT_EQ_U64(rec.type, FXT_RECORD_LARGE, "large type");
	ASSERT_EQ_U64(rec.u.large.format, FXT_BLOB_FORMAT_EVENT, "large format");
	ASSERT_MEM_STR(rec.u.large.category.data, rec.u.large.category.len, "lc", "large cat");
	ASSERT_MEM_STR(rec.u.large.name.data, rec.u.large.name.len, "ln", "large name");
	ASSERT_EQ_U64(rec.u.large.ts, 999, "large ts");
	ASSERT_EQ_U64(rec.u.large.pid * 100 + rec.u.large.tid, 1213, "large thread");
	ASSERT_EQ_U64(rec.nargs, 1, "large args");
	ASSERT_EQ_I64(rec.args[0].v.i, 5, "large arg value");
	ASSERT_EQ_U64(rec.u.large.size, 19, "large size");
	ok(rec.u.large.payload && memcmp(rec.u.large.payload, payload, 19) == 0, "large payload");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "large blob (attachment)");
	ASSERT_EQ_U64(rec.u.large.format, FXT_BLOB_FORMAT_ATTACHMENT, "attachment format");
	ASSERT_EQ_U64(rec.u.large.size, 3, "attachment size");
	ok(rec.u.large.payload && memcmp(rec.u.large.payload, "012", 3) == 0, "attachment payload");
	ASSERT_EQ_I64(next_real(r, &rec), 1, "provider event");
	ASSERT_EQ_U64(rec.u.meta.type, FXT_METADATA_PROVIDER_EVENT, "provider event type");
	ASSERT_EQ_U64(rec.u.meta.event, FXT_PROVIDER_EVENT_BUFFER_FULL, "buffer full");
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 0, "end");
	ASSERT_EQ_U64(ndiag_errors, 0, "no diagnostics");
	fxt_reader_free(r);
	fxt_writer_free(w);
}

/* ---------------------------------------------- provider contexts */

static void put_words(struct fxt_writer *w, const uint64_t *words, size_t n)
{
	if (n == 0 || fxt_writer_words(w, words, n) != 0)
		bail_out("writing raw words failed");
}

static void test_providers(void)
{
	struct fxt_writer *w = new_mem_writer(0);
	uint64_t buf[16];
	size_t n;
	fxt_writer_magic(w);
	/* Provider 1: index 5 = "one", thread 3 = 10/11, 1 GHz (default). */
	put_words(w, buf, fxt_enc_provider_info(buf, 16, 1, "p1", 2));
	put_words(w, buf, fxt_enc_string(buf, 16, 5, "one", 3));
	put_words(w, buf, fxt_enc_thread(buf, 16, 3, 10, 11));
	/* Provider 2: index 5 = "two", thread 3 = 20/21, 1 MHz. */
	put_words(w, buf, fxt_enc_provider_info(buf, 16, 2, "p2", 2));
	put_words(w, buf, fxt_enc_initialization(buf, 16, 1000000));
	put_words(w, buf, fxt_enc_string(buf, 16, 5, "two", 3));
	put_words(w, buf, fxt_enc_thread(buf, 16, 3, 20, 21));
	struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
				.ts = 7,
				.thread = fxt_tref_index(3),
				.category = fxt_sref_index(5),
				.name = fxt_sref_index(5) };
	uint64_t evw[4];
	n = fxt_enc_event(evw, 4, &ev);
	put_words(w, evw, n); /* in provider 2 */
	put_words(w, buf, fxt_enc_provider_section(buf, 16, 1));
	put_words(w, evw, n); /* the same bytes, in provider 1 */
	put_words(w, buf, fxt_enc_provider_section(buf, 16, 2));
	put_words(w, evw, n);

	size_t len;
	const void *data = writer_bytes(w, &len);
	struct fxt_reader *r = open_mem(data, len);
	struct fxt_record rec;
	uint64_t want_ns[3] = { 7000, 7, 7000 };
	const char *want_name[3] = { "two", "one", "two" };
	uint64_t want_pid[3] = { 20, 10, 20 };
	for (int i = 0; i < 3; i++) {
		do {
			if (fxt_reader_next(r, &rec) != 1)
				break;
		} while (rec.type != FXT_RECORD_EVENT);
		ASSERT_EQ_U64(rec.type, FXT_RECORD_EVENT, "provider event %d read", i);
		ASSERT_MEM_STR(rec.u.event.name.data, rec.u.event.name.len, want_name[i],
			       "string index 5 resolves per provider (%d)", i);
		ASSERT_EQ_U64(rec.u.event.pid, want_pid[i], "thread 3 resolves per provider (%d)",
			      i);
		ASSERT_EQ_U64(rec.provider_id, i == 1 ? 1 : 2, "provider id (%d)", i);
		ASSERT_EQ_U64(fxt_reader_ticks_to_ns(r, rec.u.event.ts), want_ns[i],
			      "ticks per second per provider (%d)", i);
	}
	ASSERT_EQ_I64(fxt_reader_next(r, &rec), 0, "end");
	ASSERT_EQ_U64(ndiag_errors, 0, "no diagnostics");
	fxt_reader_free(r);
	fxt_writer_free(w);
}

/* ------------------------------------------------------ gzip, zstd */

/* n complete events named `name`, at ts 0 .. n - 1, each one tick long. */
static void put_events(struct fxt_writer *w, struct fxt_tref th, struct fxt_sref name, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct fxt_event ev = { .type = FXT_EVENT_DURATION_COMPLETE,
					.ts = i,
					.thread = th,
					.category = name,
					.name = name,
					.extra = i + 1 };
		fxt_writer_event(w, &ev);
	}
}

static int count_events(struct fxt_reader *r, uint64_t *sum_ts)
{
	struct fxt_record rec;
	int rc, n = 0;
	*sum_ts = 0;
	while ((rc = fxt_reader_next(r, &rec)) == 1)
		if (rec.type == FXT_RECORD_EVENT) {
			n++;
			*sum_ts += rec.u.event.ts;
		}
	return rc < 0 ? -1 : n;
}

/* gzip or zstd as the writer makes them (`flag`), read from memory and
 * from a file; two streams one after the other are one; a cut or damaged
 * file stops the reader with an error. */
static void test_compressed(unsigned flag, const char *what)
{
	struct fxt_writer *w = new_mem_writer(flag);
	fxt_writer_magic(w);
	struct fxt_tref th = fxt_writer_thread(w, 1, 2);
	struct fxt_sref name = fxt_writer_cstring(w, "f");
	/* 300000 events * 24 bytes = 7.2 MB: several windows, and several
	 * gzip members. */
	put_events(w, th, name, 300000);
	if (fxt_writer_finish(w) != 0)
		bail_out("finish failed");
	size_t len;
	const uint8_t *data = fxt_writer_mem_data(w, &len);
	if (flag == FXT_WRITER_GZIP)
		ok(len > 2 && data[0] == 0x1f && data[1] == 0x8b, "writer made gzip");
	else
		ok(len > 4 && memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0, "writer made zstd");
	uint64_t want_sum = (uint64_t)299999 * 300000 / 2, sum;

	struct fxt_reader *r = open_mem(data, len);
	ASSERT_EQ_I64(count_events(r, &sum), 300000, "%s from memory: all events", what);
	ASSERT_EQ_U64(sum, want_sum, "%s from memory: timestamps", what);
	ASSERT_EQ_U64(fxt_reader_offset(r), 8 + 24 + 16 + 300000 * 24,
		      "%s: offsets count decompressed bytes", what);
	fxt_reader_free(r);

	/* Through a file, twice over (cat a b), cut short, then damaged. */
	char path[] = "/tmp/fxt-test-reader-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || write(fd, data, len) != (ssize_t)len)
		bail_out("temp file");
	close(fd);
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("open_path");
	ASSERT_EQ_I64(count_events(r, &sum), 600000, "%s, two streams from a file: all events",
		      what);
	ASSERT_EQ_U64(sum, 2 * want_sum, "%s, two streams from a file: timestamps", what);
	fxt_reader_free(r);
	if (truncate(path, (off_t)(len / 2)) != 0)
		bail_out("truncate");
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("open_path");
	int n = count_events(r, &sum);
	uint64_t off;
	const char *why = fxt_reader_error(r, &off);
	ok(n == -1 && why && strstr(why, "truncated"), "cut %s file: error (%s)", what,
	   why ? why : "none");
	fxt_reader_free(r);
	/* The whole stream again, with 16 bytes overwritten. */
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len ||
	    pwrite(fd, "garbage!garbage!", 16, (off_t)(len / 4)) != 16)
		bail_out("damage");
	close(fd);
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("open_path");
	n = count_events(r, &sum);
	why = fxt_reader_error(r, &off);
	ok(n == -1 && why && strncmp(why, what, strlen(what)) == 0, "damaged %s file: error (%s)",
	   what, why ? why : "none");
	fxt_reader_free(r);
	unlink(path);
	fxt_writer_free(w);
}

/* ---------------------------------------------------------------- raw */

/* An archive with a record of every kind a copy must keep: an unknown
 * type, a large record twice the window, more events after it. */
static void raw_archive(struct fxt_writer *w)
{
	static const uint64_t unknown[3] = { 11 | 3 << 4, 0x1234, 0x5678 };
	size_t big = 2u << 20;
	char *payload = calloc(1, big);
	struct fxt_tref th;
	struct fxt_sref name;

	if (!payload)
		bail_out("out of memory");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 7, "p");
	fxt_writer_initialization(w, 1000);
	th = fxt_writer_thread(w, 1, 2);
	name = fxt_writer_cstring(w, "f");
	put_events(w, th, name, 100);
	fxt_writer_words(w, unknown, 3);
	struct fxt_large_blob lb = { .format = FXT_BLOB_FORMAT_ATTACHMENT,
				     .category = name,
				     .name = name,
				     .payload = payload,
				     .size = big };
	if (fxt_writer_large_blob(w, &lb) != 0)
		bail_out("large blob failed");
	struct fxt_event last = {
		.type = FXT_EVENT_INSTANT, .ts = 200, .thread = th, .category = name, .name = name
	};
	fxt_writer_event(w, &last);
	free(payload);
}

/* Reads `path` with FXT_READER_RAW and compares what it frames with the
 * plain bytes of the archive.  Returns the records framed, or -1. */
static long raw_copy(struct fxt_reader *r, const uint8_t *plain, size_t len, bool *same,
		     unsigned *unknown)
{
	struct fxt_record rec;
	size_t off = 0;
	long n = 0;
	int rc;

	*same = true;
	*unknown = 0;
	while ((rc = fxt_reader_next(r, &rec)) == 1) {
		const void *b = fxt_reader_record_bytes(r);
		size_t nb = (size_t)rec.nwords * 8;
		if (!b || rec.offset != off || off + nb > len || memcmp(b, plain + off, nb) != 0)
			*same = false;
		*unknown += rec.type == 11;
		off += nb;
		n++;
	}
	if (off != len)
		*same = false;
	return rc < 0 ? -1 : n;
}

static void test_raw(void)
{
	struct fxt_writer *w = new_mem_writer(0), *gz = new_mem_writer(FXT_WRITER_GZIP);
	size_t len, gzlen;
	bool same;
	unsigned unknown;

	raw_archive(w);
	raw_archive(gz);
	const uint8_t *plain = writer_bytes(w, &len);
	if (fxt_writer_finish(gz) != 0)
		bail_out("gzip finish failed");
	const uint8_t *zipped = fxt_writer_mem_data(gz, &gzlen);

	/* magic, provider, init, string, thread, 100 events, unknown, large,
	 * instant */
	struct fxt_reader *r;
	if (fxt_reader_open_mem(&r, plain, len, FXT_READER_RAW) != 0)
		bail_out("open_mem");
	ASSERT_EQ_I64(raw_copy(r, plain, len, &same, &unknown), 108, "raw, memory: every record");
	ok(same, "raw, memory: the bytes as written, in order");
	ASSERT_EQ_U64(unknown, 1, "raw: an unknown record type is returned");
	ok(fxt_reader_saw_magic(r), "raw: the magic record is seen");
	fxt_reader_free(r);

	char path[] = "/tmp/fxt-test-raw-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, zipped, gzlen) != (ssize_t)gzlen)
		bail_out("temp file");
	close(fd);
	if (fxt_reader_open_path(&r, path, FXT_READER_RAW) != 0)
		bail_out("open_path");
	ASSERT_EQ_I64(raw_copy(r, plain, len, &same, &unknown), 108,
		      "raw, gzip file: every record, the large one held whole");
	ok(same, "raw, gzip file: the bytes as written");
	fxt_reader_free(r);

	/* Decoding, the large record (twice the window) is not held. */
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("open_path");
	struct fxt_record rec;
	int rc, held_events = 0, large_held = -1;
	while ((rc = fxt_reader_next(r, &rec)) == 1) {
		if (rec.type == FXT_RECORD_EVENT)
			held_events += fxt_reader_record_bytes(r) != NULL;
		if (rec.type == FXT_RECORD_LARGE)
			large_held = fxt_reader_record_bytes(r) != NULL;
	}
	ok(rc == 0 && held_events == 101 && large_held == 0,
	   "decoding: small records held, a large one bigger than the window not");
	fxt_reader_free(r);

	/* Cut inside the last record: the records before it, then damage,
	 * which is no read error. */
	if (truncate(path, 0) != 0 || (fd = open(path, O_WRONLY)) < 0 ||
	    write(fd, plain, len - 8) != (ssize_t)(len - 8))
		bail_out("rewrite");
	close(fd);
	if (fxt_reader_open_path(&r, path, FXT_READER_RAW) != 0)
		bail_out("open_path");
	long n = 0;
	while ((rc = fxt_reader_next(r, &rec)) == 1)
		n++;
	ok(rc == -1 && n == 107 && fxt_reader_errno(r) == 0 && fxt_reader_record_bytes(r) == NULL,
	   "raw, cut: the whole records, then damage (no errno)");
	fxt_reader_free(r);
	unlink(path);
	fxt_writer_free(w);
	fxt_writer_free(gz);
}

static long max_rss_kb(void);

/* ------------------------------------------------------------- mapped */

/* A plain file past MAP_MIN (1 MiB) is read through a map of it
 * (fxt/source.c's map_file()): every record where the file has it, its
 * bytes held as they are in the file, a large record twice the window
 * still not held whole when decoding (as read() gives it), a file read
 * from a descriptor past its first bytes, a file cut inside its last
 * record (damage, no errno); a 64 MB file read in bounded memory (the
 * pages read are given back). */
static void test_mapped(void)
{
	struct fxt_writer *w = new_mem_writer(0);
	struct fxt_tref th;
	struct fxt_sref name;
	struct fxt_record rec;
	struct fxt_reader *r;
	size_t len;
	int rc, fd;

	raw_archive(w);
	th = fxt_writer_thread(w, 1, 2);
	name = fxt_writer_cstring(w, "g");
	put_events(w, th, name, 100000);
	const uint8_t *plain = writer_bytes(w, &len);
	long want = 0;
	if (fxt_reader_open_mem(&r, plain, len, 0) != 0)
		bail_out("open_mem");
	while (fxt_reader_next(r, &rec) == 1)
		want++;
	fxt_reader_free(r);
	char path[] = "/tmp/fxt-test-map-XXXXXX";
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "junkjunk", 8) != 8 || write(fd, plain, len) != (ssize_t)len)
		bail_out("temp file");
	close(fd);

	/* From a descriptor at the archive's first byte, past 8 others. */
	if ((fd = open(path, O_RDONLY)) < 0 || lseek(fd, 8, SEEK_SET) != 8)
		bail_out("open");
	if (fxt_reader_open_fd(&r, fd, 0) != 0)
		bail_out("open_fd");
	long n = 0, same = 0, large_held = -1;
	while ((rc = fxt_reader_next(r, &rec)) == 1) {
		const void *b = fxt_reader_record_bytes(r);
		n++;
		if (rec.type == FXT_RECORD_LARGE)
			large_held = b != NULL;
		else
			same += b && rec.offset + rec.nwords * 8 <= len &&
				memcmp(b, plain + rec.offset, rec.nwords * 8) == 0;
	}
	ok(rc == 0 && n == want && want > 100000, "mapped: every record (%ld)", n);
	ok(same == n - 1, "mapped: each record's bytes where the file has them");
	ok(large_held == 0,
	   "mapped: a large record bigger than the window not held, as read() gives it");
	ASSERT_EQ_U64(fxt_reader_offset(r), len, "mapped: the offset at the end");
	fxt_reader_free(r);
	close(fd);

	/* Cut inside its last record. */
	if (truncate(path, (off_t)(8 + len - 8)) != 0 || (fd = open(path, O_RDONLY)) < 0 ||
	    lseek(fd, 8, SEEK_SET) != 8 || fxt_reader_open_fd(&r, fd, 0) != 0)
		bail_out("cut");
	n = 0;
	while ((rc = fxt_reader_next(r, &rec)) == 1)
		n++;
	uint64_t off;
	const char *why = fxt_reader_error(r, &off);
	ok(rc == -1 && n == want - 1 && fxt_reader_errno(r) == 0 && why &&
	       strstr(why, "past the end") && off == len - 24,
	   "mapped, cut: the whole records, then damage at the last (%s)", why ? why : "none");
	fxt_reader_free(r);
	close(fd);
	fxt_writer_free(w);

	/* 64 MB of events: memory stays bounded as the file is read. */
	w = new_mem_writer(0);
	fxt_writer_magic(w);
	th = fxt_writer_thread(w, 1, 2);
	name = fxt_writer_cstring(w, "h");
	put_events(w, th, name, 1u << 18);
	plain = writer_bytes(w, &len);
	if ((fd = open(path, O_WRONLY | O_TRUNC)) < 0)
		bail_out("rewrite");
	for (int i = 0; i < 11; i++)
		if (write(fd, plain, len) != (ssize_t)len)
			bail_out("rewrite");
	close(fd);
	long before = max_rss_kb();
	uint64_t sum;
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("open_path");
	ASSERT_EQ_I64(count_events(r, &sum), 11 << 18, "mapped, 66 MB: every event");
	long grew = max_rss_kb() - before;
	ok(grew < 40 * 1024, "mapped, 66 MB: held memory grew by %ld KB (< 40 MB)", grew);
	fxt_reader_free(r);
	unlink(path);
	fxt_writer_free(w);
}

/* --------------------------------------------------------- streaming */

static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A child writes `total` bytes of archive into a pipe (a magic record, a
 * large blob of 3 MB, then a block of events over and over); the reader
 * must stream through it without holding it. */
static void test_streaming(void)
{
	const uint64_t total = SANITIZED ? (64u << 20) : (200u << 20);
	enum { BLOCK_EVENTS = 4096 };
	static uint64_t block[BLOCK_EVENTS * 3];
	for (unsigned i = 0; i < BLOCK_EVENTS; i++) {
		struct fxt_event ev = { .type = FXT_EVENT_DURATION_COMPLETE,
					.ts = i,
					.thread = fxt_tref_index(1),
					.category = fxt_sref_empty(),
					.name = fxt_sref_empty(),
					.extra = i + 2 };
		if (fxt_enc_event(&block[i * 3], 3, &ev) != 3)
			bail_out("encode");
	}
	const uint64_t big = 3u << 20;
	int p[2];
	if (pipe(p) != 0)
		bail_out("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		uint64_t head[5];
		size_t n = fxt_enc_magic(head, 1);
		n += fxt_enc_thread(head + n, 3, 1, 1, 1);
		if (write(p[1], head, n * 8) != (ssize_t)(n * 8))
			_exit(1);
		void *payload = calloc(1, big);
		struct fxt_large_blob lb = { .format = FXT_BLOB_FORMAT_ATTACHMENT,
					     .category = fxt_sref_empty(),
					     .name = fxt_sref_empty(),
					     .payload = payload,
					     .size = big };
		uint64_t words = payload ? fxt_enc_large_blob(NULL, 0, &lb) : 0;
		uint64_t *lbw = words ? calloc(words, 8) : NULL;
		if (!lbw || fxt_enc_large_blob(lbw, words, &lb) != words ||
		    write(p[1], lbw, words * 8) != (ssize_t)(words * 8))
			_exit(1);
		uint64_t sent = (n + words) * 8;
		while (sent < total) {
			if (write(p[1], block, sizeof(block)) != (ssize_t)sizeof(block))
				_exit(1);
			sent += sizeof(block);
		}
		_exit(0);
	}
	close(p[1]);
	long rss0 = max_rss_kb();
	struct fxt_reader *r;
	if (fxt_reader_open_fd(&r, p[0], 0) != 0)
		bail_out("open_fd");
	struct fxt_record rec;
	uint64_t events = 0, large = 0, large_size = 0, bad = 0;
	int rc;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((rc = fxt_reader_next(r, &rec)) == 1) {
		if (rec.type == FXT_RECORD_EVENT) {
			if (rec.u.event.extra != rec.u.event.ts + 2 || rec.u.event.pid != 1)
				bad++;
			events++;
		} else if (rec.type == FXT_RECORD_LARGE) {
			large++;
			large_size = rec.u.large.size;
			ok(rec.u.large.payload == NULL, "a 3 MB payload is not held");
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int status;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writing child succeeded");
	ASSERT_EQ_I64(rc, 0, "streamed to a clean end");
	if (rc < 0)
		diag("error: %s", fxt_reader_error(r, NULL));
	ASSERT_EQ_U64(large, 1, "one large record");
	ASSERT_EQ_U64(large_size, big, "its size");
	uint64_t blocks = (total - 8 - 24 - (big + 24) + sizeof(block) - 1) / sizeof(block);
	ASSERT_EQ_U64(events, blocks * BLOCK_EVENTS, "every event through the pipe");
	ASSERT_EQ_U64(bad, 0, "every event intact");
	long grew = max_rss_kb() - rss0;
	ok(grew < 16 * 1024, "bounded memory: max RSS grew by %ld KB for %llu MB", grew,
	   (unsigned long long)(total >> 20));
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	diag("pipe: %llu MB in %.3f s", (unsigned long long)(total >> 20), s);
	fxt_reader_free(r);
	close(p[0]);
}

/* ------------------------------------------------------------- speed */

static void test_speed(void)
{
	enum { N = 2000000 };
	uint64_t *words = malloc((N * 3 + 8) * 8);
	if (!words)
		bail_out("malloc");
	size_t n = fxt_enc_magic(words, 1);
	n += fxt_enc_thread(words + n, 3, 1, 1, 1);
	n += fxt_enc_string(words + n, 2, 1, "cat", 3);
	n += fxt_enc_string(words + n, 2, 2, "function", 8);
	for (unsigned i = 0; i < N; i++) {
		struct fxt_event ev = { .type = FXT_EVENT_DURATION_COMPLETE,
					.ts = i,
					.thread = fxt_tref_index(1),
					.category = fxt_sref_index(1),
					.name = fxt_sref_index(2),
					.extra = i + 5 };
		n += fxt_enc_event(words + n, 3, &ev);
	}
	struct fxt_reader *r;
	struct fxt_record rec;
	uint64_t sum = 0, count = 0;
	struct timespec t0, t1;
	fxt_reader_open_mem(&r, words, n * 8, 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	while (fxt_reader_next(r, &rec) == 1) {
		sum += rec.u.event.extra;
		count++;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	fxt_reader_free(r);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_EQ_U64(count, N + 4, "speed run: all records");
	diag("decode speed: %.1f million events per CPU second (%s build)", N / s / 1e6,
	     SANITIZED ? "sanitized" : "plain");
	(void)sum;
	free(words);
}

/* fxtrace's drop marker, parsed in one place for every tool. */
static void test_drop_marker(void)
{
#define DROPPED(s) fxt_dropped_in_name((s), strlen(s))
	ASSERT_EQ_U64(DROPPED("fxt: 17 records dropped"), 17, "drop marker: N");
	ASSERT_EQ_U64(DROPPED("fxt: 18446744073709551615 records dropped"), UINT64_MAX,
		      "drop marker: the largest N");
	ASSERT_EQ_U64(DROPPED("fxt: 18446744073709551616 records dropped"), 0,
		      "drop marker: an N past 64 bits is no marker");
	ASSERT_EQ_U64(DROPPED("fxt:  records dropped"), 0, "drop marker: no digits");
	ASSERT_EQ_U64(DROPPED("fxt: 1x records dropped"), 0, "drop marker: not a number");
	ASSERT_EQ_U64(DROPPED("fxt: 17 records"), 0, "drop marker: no suffix");
	ASSERT_EQ_U64(DROPPED("main"), 0, "drop marker: another name");
#undef DROPPED
}

int main(void)
{
	test_events();
	test_args();
	test_other_records();
	test_providers();
	test_compressed(FXT_WRITER_GZIP, "gzip");
	test_compressed(FXT_WRITER_ZSTD, "zstd");
	test_raw();
	test_mapped();
	test_streaming();
	test_speed();
	test_drop_marker();
	done_testing();
	return exit_status();
}
