/* Darwin ktrace (V3) -> FXT.  There is no library for it off Darwin, so
 * this reads the format itself, streaming (a 64 KiB window), from the
 * layout the ktrace(5) manual gives (../shared/seeds/002_...):
 *
 *   header      magic 0x55aa0300, version, header size (what follows the
 *               first 16 bytes, header chunks included), timebase
 *               numerator/denominator, a timestamp, wall time, time zone,
 *               flags: 56 bytes, then the header chunks
 *   chunks      tag (4), major (2), minor (2), data size (8), the data,
 *               padding to the next multiple of 8; unknown tags skipped
 *
 * and the chunk tags and records of xnu's kdebug (bsd/sys/kdebug.h):
 *
 *   0x1d00      thread map: { u64 thread; u32 pid; char command[20]; }
 *   0x1e00      events: 64-byte kd_buf { u64 timestamp; u64 arg1..arg4;
 *               u64 thread; u32 debugid; u32 cpu; u64 unused; }
 *
 * A debugid is class (bits 24-31), subclass (16-23), code (2-15) and a
 * function qualifier (0-1): DBG_FUNC_START and DBG_FUNC_END pairs on one
 * thread become a slice (begin and end, nested as they come; an end that
 * matches no open start is an instant), every other event an instant.
 * Names are "0xCCSSCCCC" (the debugid without its qualifier), categories
 * the class's name; the arguments are class, subclass, code, arg1..arg4
 * and cpu.  Timestamps are mach absolute time, scaled to nanoseconds by the
 * timebase.  The header's fields become the arguments of an instant
 * "ktrace header" at the first event.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/format.h>

#include "common/addrtab.h"
#include "import/import.h"

#define KT_MAGIC	  0x55aa0300u
#define KT_HEADER_SIZE	  56u
#define KT_CHUNK_HEADER	  16u
#define KT_TAG_THREAD_MAP 0x1d00u
#define KT_TAG_EVENTS	  0x1e00u
#define KT_EVENT_SIZE	  64u
#define KT_MAP_ENTRY	  32u
#define KT_STACK	  32 /* open START events kept per thread */

struct kt_header {
	uint16_t major, minor;
	uint64_t header_size;
	uint32_t numer, denom;
	uint64_t timestamp, wall_sec;
	uint32_t wall_usec, minutes_west, dst, flags;
};

struct kt_thread {
	uint64_t key; /* thread id + 1 */
	uint64_t pid;
	char name[21];
	bool named;
	unsigned depth;
	uint64_t last_ts; /* its latest event's time (the mark: import.h) */
	uint32_t stack[KT_STACK];
	struct fxt_thread_slot slot;
};

/* A read window over the file. */
struct kt_in {
	int fd;
	uint64_t size; /* the file's */
	unsigned char buf[65536];
	uint64_t at; /* file offset of buf[0] */
	size_t len;  /* bytes valid in buf */
};

struct kt {
	struct import_ctx *ic;
	struct kt_in in;
	struct kt_header h;
	struct addrtab threads; /* struct kt_thread */
	uint32_t provider;
	bool header_said;
	uint64_t last_ts;
	int err;
};

static uint64_t le64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v; /* fxtrace targets little-endian machines */
}

static uint32_t le32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint16_t le16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* `n` bytes at file offset `off` (n <= sizeof buf), or NULL with an error
 * set (a short file, an I/O error). */
static const unsigned char *kt_at(struct kt *k, uint64_t off, size_t n, const char *what)
{
	struct kt_in *in = &k->in;

	if (off + n > in->size || off + n < off) {
		k->err = import_fail(k->ic, -EINVAL, off,
				     "truncated: %s needs %zu bytes, the file ends at %" PRIu64,
				     what, n, in->size);
		return NULL;
	}
	if (off >= in->at && off + n <= in->at + in->len)
		return in->buf + (off - in->at);
	size_t want = sizeof(in->buf);
	if (in->size - off < want)
		want = (size_t)(in->size - off);
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(in->fd, in->buf + got, want - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			k->err =
			    import_fail(k->ic, r < 0 ? -errno : -EIO, off + got, "cannot read: %s",
					r < 0 ? strerror(errno) : "short file");
			return NULL;
		}
		got += (size_t)r;
	}
	in->at = off;
	in->len = got;
	return in->buf;
}

static struct kt_thread *kt_thread(struct kt *k, uint64_t tid)
{
	struct kt_thread *t = addrtab_get(&k->threads, tid + 1, NULL);

	if (t == NULL && !k->err)
		k->err = import_fail(k->ic, -ENOMEM, 0, "out of memory");
	return t;
}

static const char *class_name(unsigned c)
{
	switch (c) {
	case 1:
		return "mach";
	case 2:
		return "network";
	case 3:
		return "fsystem";
	case 4:
		return "bsd";
	case 5:
		return "iokit";
	case 6:
		return "drivers";
	case 7:
		return "trace";
	case 8:
		return "dlil";
	case 9:
		return "pthread";
	case 10:
		return "corestorage";
	case 11:
		return "cg";
	case 12:
		return "monotonic";
	case 20:
		return "misc";
	case 30:
		return "security";
	case 31:
		return "dyld";
	case 32:
		return "qt";
	case 33:
		return "apps";
	case 34:
		return "launchd";
	case 35:
		return "silicon";
	case 37:
		return "perf";
	case 38:
		return "importance";
	case 40:
		return "bank";
	case 41:
		return "xpc";
	case 42:
		return "atm";
	case 43:
		return "ariadne";
	case 44:
		return "daemon";
	case 45:
		return "energytrace";
	case 46:
		return "dispatch";
	case 49:
		return "img";
	case 51:
		return "umalloc";
	case 53:
		return "turnstile";
	case 255:
		return "mig";
	default:
		return "kdebug";
	}
}

static uint64_t kt_ns(const struct kt *k, uint64_t ts)
{
	return (uint64_t)((unsigned __int128)ts * k->h.numer / k->h.denom);
}

static void kt_put(struct kt *k, const struct fxt_event *e)
{
	int err = fxt_writer_event(k->ic->w, e);

	if (err < 0 && !k->err)
		k->err = import_fail(k->ic, err, 0, "cannot write: %s", strerror(-err));
	k->ic->st.records++;
}

static void kt_name_thread(struct kt *k, struct kt_thread *t, uint64_t tid)
{
	char name[40];
	int err;

	if (t->named)
		return;
	t->named = true;
	if (!t->pid)
		t->pid = tid; /* not in the thread map: a process of its own */
	if (t->name[0])
		snprintf(name, sizeof(name), "%s", t->name);
	else
		snprintf(name, sizeof(name), "thread 0x%" PRIx64, tid);
	err = fxt_writer_process_name(k->ic->w, t->pid, name);
	if (err == 0)
		err = fxt_writer_thread_name(k->ic->w, t->pid, tid, name);
	if (err < 0 && !k->err)
		k->err = import_fail(k->ic, err, 0, "cannot write: %s", strerror(-err));
	k->ic->st.threads++;
}

static void kt_header_event(struct kt *k, struct fxt_tref th, uint64_t ts)
{
	struct fxt_writer *w = k->ic->w;
	struct fxt_arg a[7];
	static const char *const names[7] = { "timebase_numer", "timebase_denom", "timestamp",
					      "walltime_sec",	"walltime_usec",  "minutes_west",
					      "flags" };
	const uint64_t v[7] = { k->h.numer,	k->h.denom,	   k->h.timestamp, k->h.wall_sec,
				k->h.wall_usec, k->h.minutes_west, k->h.flags };
	struct fxt_event e = { .type = FXT_EVENT_INSTANT, .ts = ts, .thread = th };

	for (unsigned i = 0; i < 7; i++) {
		a[i].type = FXT_ARG_UINT64;
		a[i].name = fxt_writer_cstring(w, names[i]);
		a[i].v.u64 = v[i];
	}
	e.category = fxt_writer_cstring(w, "ktrace");
	e.name = fxt_writer_cstring(w, "ktrace header");
	e.args = a;
	e.nargs = 7;
	kt_put(k, &e);
}

static void kt_event(struct kt *k, const unsigned char *r)
{
	struct fxt_writer *w = k->ic->w;
	uint64_t ts = kt_ns(k, le64(r)), tid = le64(r + 40);
	uint32_t debugid = le32(r + 48), cpu = le32(r + 52);
	unsigned func = debugid & 3, cls = debugid >> 24;
	uint32_t id = debugid & ~3u;
	struct kt_thread *t = kt_thread(k, tid);
	struct fxt_event e = { .ts = ts };
	struct fxt_arg a[8];
	char name[16];

	if (t == NULL)
		return;
	kt_name_thread(k, t, tid);
	k->ic->st.events++;
	if (ts > k->last_ts)
		k->last_ts = ts;
	if (ts < t->last_ts)
		k->ic->st.unordered++;
	else
		t->last_ts = ts;
	e.thread = fxt_writer_thread_cached(w, &t->slot, t->pid, tid);
	if (!k->header_said) {
		k->header_said = true;
		kt_header_event(k, e.thread, ts);
		e.thread = fxt_writer_thread_cached(w, &t->slot, t->pid, tid);
	}
	snprintf(name, sizeof(name), "0x%08" PRIx32, id);
	e.category = fxt_writer_cstring(w, class_name(cls));
	e.name = fxt_writer_string(w, name, strlen(name));

	if (func == 1 /* DBG_FUNC_START */ && t->depth < KT_STACK) {
		t->stack[t->depth++] = id;
		e.type = FXT_EVENT_DURATION_BEGIN;
	} else if (func == 2 /* DBG_FUNC_END */ && t->depth && t->stack[t->depth - 1] == id) {
		t->depth--;
		e.type = FXT_EVENT_DURATION_END;
	} else {
		e.type = FXT_EVENT_INSTANT;
	}
	static const char *const an[8] = { "class", "subclass", "code", "arg1",
					   "arg2",  "arg3",	"arg4", "cpu" };
	const uint64_t av[8] = { cls,
				 (debugid >> 16) & 0xff,
				 (debugid >> 2) & 0x3fff,
				 le64(r + 8),
				 le64(r + 16),
				 le64(r + 24),
				 le64(r + 32),
				 cpu };
	for (unsigned i = 0; i < 8; i++) {
		a[i].type = FXT_ARG_UINT64;
		a[i].name = fxt_writer_cstring(w, an[i]);
		a[i].v.u64 = av[i];
	}
	e.args = a;
	e.nargs = 8;
	kt_put(k, &e);
}

/* A thread map chunk: names and pids of the threads. */
static void kt_thread_map(struct kt *k, uint64_t off, uint64_t size)
{
	for (uint64_t i = 0; i + KT_MAP_ENTRY <= size && !k->err; i += KT_MAP_ENTRY) {
		const unsigned char *p = kt_at(k, off + i, KT_MAP_ENTRY, "a thread map entry");
		if (p == NULL)
			return;
		struct kt_thread *t = kt_thread(k, le64(p));
		if (t == NULL || t->named)
			continue;
		t->pid = le32(p + 8);
		memcpy(t->name, p + 12, 20);
		t->name[20] = '\0';
	}
}

static void kt_events(struct kt *k, uint64_t off, uint64_t size)
{
	if (size % KT_EVENT_SIZE) {
		k->err = import_fail(k->ic, -EINVAL, off,
				     "an events chunk of %" PRIu64 " bytes: not a whole number of "
				     "%u-byte records",
				     size, KT_EVENT_SIZE);
		return;
	}
	for (uint64_t i = 0; i < size && !k->err; i += KT_EVENT_SIZE) {
		const unsigned char *r = kt_at(k, off + i, KT_EVENT_SIZE, "an event");
		if (r != NULL)
			kt_event(k, r);
	}
}

/* Walks the chunks from `off` to `end`.  Returns the offset after them. */
static uint64_t kt_chunks(struct kt *k, uint64_t off, uint64_t end, bool header)
{
	while (off < end && !k->err) {
		const unsigned char *c = kt_at(k, off, KT_CHUNK_HEADER, "a chunk header");
		if (c == NULL)
			break;
		uint32_t tag = le32(c);
		uint64_t size = le64(c + 8), data = off + KT_CHUNK_HEADER;
		if (size > end - data) {
			k->err = import_fail(k->ic, -EINVAL, off,
					     "truncated: a chunk (tag 0x%" PRIx32 ") of %" PRIu64
					     " bytes runs past the %s's end at %" PRIu64,
					     tag, size, header ? "header" : "file", end);
			break;
		}
		if (tag == KT_TAG_THREAD_MAP)
			kt_thread_map(k, data, size);
		else if (tag == KT_TAG_EVENTS)
			kt_events(k, data, size);
		else
			k->ic->st.skipped++;
		off = data + size;
		off += (8 - off % 8) % 8;
	}
	return off;
}

static void kt_close_open(struct kt *k)
{
	for (size_t i = 0; i < k->threads.cap; i++) {
		struct kt_thread *t = addrtab_slot(&k->threads, i);
		if (t == NULL || !t->depth)
			continue;
		uint64_t tid = t->key - 1;
		while (t->depth) {
			char name[16];
			struct fxt_event e = { .type = FXT_EVENT_DURATION_END, .ts = k->last_ts };
			uint32_t id = t->stack[--t->depth];
			snprintf(name, sizeof(name), "0x%08" PRIx32, id);
			e.thread = fxt_writer_thread_cached(k->ic->w, &t->slot, t->pid, tid);
			e.category = fxt_writer_cstring(k->ic->w, class_name(id >> 24));
			e.name = fxt_writer_string(k->ic->w, name, strlen(name));
			kt_put(k, &e);
		}
	}
}

int import_ktrace(struct import_ctx *ic)
{
	struct kt *k = calloc(1, sizeof(*k));
	const unsigned char *p;
	struct stat st;
	int err;

	if (k == NULL)
		return import_fail(ic, -ENOMEM, 0, "out of memory");
	k->ic = ic;
	k->in.fd = ic->fd;
	k->threads = ADDRTAB_INIT(struct kt_thread);
	if (fstat(ic->fd, &st) != 0) {
		err = import_fail(ic, -errno, 0, "cannot stat: %s", strerror(errno));
		goto out;
	}
	k->in.size = (uint64_t)st.st_size;
	p = kt_at(k, 0, KT_HEADER_SIZE, "the ktrace header");
	if (p == NULL)
		goto done;
	if (le32(p) != KT_MAGIC) {
		k->err = import_fail(ic, -EINVAL, 0, "not a ktrace V3 file (magic 0x%08" PRIx32 ")",
				     le32(p));
		goto done;
	}
	k->h.major = le16(p + 4);
	k->h.minor = le16(p + 6);
	k->h.header_size = le64(p + 8);
	k->h.numer = le32(p + 16);
	k->h.denom = le32(p + 20);
	k->h.timestamp = le64(p + 24);
	k->h.wall_sec = le64(p + 32);
	k->h.wall_usec = le32(p + 40);
	k->h.minutes_west = le32(p + 44);
	k->h.dst = le32(p + 48);
	k->h.flags = le32(p + 52);
	if (k->h.numer == 0 || k->h.denom == 0) {
		k->err = import_fail(ic, -EINVAL, 16, "a timebase of %" PRIu32 "/%" PRIu32,
				     k->h.numer, k->h.denom);
		goto done;
	}
	if (k->h.header_size < KT_HEADER_SIZE - 16 || k->h.header_size > k->in.size - 16) {
		k->err = import_fail(ic, -EINVAL, 8,
				     "a header size of %" PRIu64 " in a file of %" PRIu64 " bytes",
				     k->h.header_size, k->in.size);
		goto done;
	}
	err = import_provider(ic, "ktrace", "mach_absolute_time", &k->provider);
	if (err < 0) {
		k->err = import_fail(ic, err, 0, "cannot write: %s", strerror(-err));
		goto done;
	}
	/* Header chunks (their own walk: they end where the header says). */
	uint64_t body = 16 + k->h.header_size;
	kt_chunks(k, KT_HEADER_SIZE, body, true);
	body += (8 - body % 8) % 8;
	if (!k->err)
		kt_chunks(k, body, k->in.size, false);
	if (!k->err)
		kt_close_open(k);
done:
	err = k->err;
out:
	addrtab_free(&k->threads);
	free(k);
	return err;
}
