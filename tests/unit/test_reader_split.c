/* FXT_READER_TIME_ORDER's skim split in two halves (fxt/order.c: plain
 * memory of 32 MiB or more, two CPUs): the second half, skimmed on a
 * thread of its own from a place past the middle, does not know the
 * thread table or the provider there; joined to the first half, the late
 * events found must be those a whole pass finds.  Each archive here is
 * ~38 MiB: a few begins and ends of thread (9, 1) in the first half,
 * filler (thread (9, 2)'s complete events, never moved) across the
 * middle, the case's events past the split place, more filler.  The
 * oracle is the same bytes gzip-compressed, which are never split: the
 * same records in the same order, and the late count the case says. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#define MIB (1u << 20)

static void words(struct fxt_writer *w, const uint64_t *v, size_t n)
{
	if (fxt_writer_words(w, v, n) != 0)
		bail_out("fxt_writer_words failed");
}

/* Thread record: index `idx` is (9, tid). */
static void put_thread(struct fxt_writer *w, unsigned idx, uint64_t tid)
{
	uint64_t v[3] = { FXT_RECORD_THREAD | 3u << 4 | (uint64_t)idx << 16, 9, tid };
	words(w, v, 3);
}

/* A begin or end at `ts`, through thread ref `ref` (0: inline (9, tid)). */
static void put_event(struct fxt_writer *w, unsigned type, unsigned ref, uint64_t tid, uint64_t ts)
{
	uint64_t v[4] = { FXT_RECORD_EVENT | (ref ? 2u : 4u) << 4 | (uint64_t)type << 16 |
			      (uint64_t)ref << 24,
			  ts, 9, tid };
	words(w, v, ref ? 2 : 4);
}

/* `bytes` of thread ref 2's complete events from time *ts on. */
static void filler(struct fxt_writer *w, size_t bytes, uint64_t *ts)
{
	for (size_t k = 0; k < bytes / 24; k++, *ts += 10) {
		uint64_t v[3] = { FXT_RECORD_EVENT | 3u << 4 |
				      (uint64_t)FXT_EVENT_DURATION_COMPLETE << 16 | 2u << 24,
				  *ts, *ts + 5 };
		words(w, v, 3);
	}
}

enum second {
	CROSS_REF,    /* an end of ref 1, late only against the first half */
	CROSS_INLINE, /* the same, thread inline */
	NOT_LATE,     /* an end of ref 1 after the first half's times */
	LOCAL,	      /* a begin then an earlier end, both in the second half */
	ALIAS,	      /* (9, 1) inline, then through ref 1 earlier: late */
	RETHREAD,     /* ref 1 becomes (9, 3): its end is not late */
	PROVIDER,     /* a provider section, then ref 1's late end */
	NCASES
};

static const char *const names[NCASES] = {
	"late only against the first half, through the table as it stood there",
	"late only against the first half, thread inline",
	"after the first half's times: not late",
	"late within the second half",
	"one thread under a ref and inline in the second half",
	"a ref given another thread in the second half",
	"a provider section in the second half",
};
static const uint64_t nlate[NCASES] = { 1, 1, 0, 1, 1, 0, 1 };

static const void *archive(enum second c, size_t *len, struct fxt_writer **w)
{
	uint64_t ts = 100000;

	if (fxt_writer_open_mem(w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(*w);
	fxt_writer_provider(*w, 3, "p");
	fxt_writer_initialization(*w, 1000000000);
	put_thread(*w, 1, 1);
	put_thread(*w, 2, 2);
	put_event(*w, FXT_EVENT_DURATION_BEGIN, 1, 1, 1000);
	put_event(*w, FXT_EVENT_DURATION_BEGIN, 1, 1, 2000);
	filler(*w, 18 * MIB, &ts);
	filler(*w, 4 * MIB, &ts); /* the middle: the split's place in it */
	switch (c) {
	case CROSS_REF:
		put_event(*w, FXT_EVENT_DURATION_END, 1, 0, 1500);
		break;
	case CROSS_INLINE:
		put_event(*w, FXT_EVENT_DURATION_END, 0, 1, 1500);
		break;
	case NOT_LATE:
		put_event(*w, FXT_EVENT_DURATION_END, 1, 0, 2500);
		break;
	case LOCAL:
		put_event(*w, FXT_EVENT_DURATION_BEGIN, 0, 4, 700);
		put_event(*w, FXT_EVENT_DURATION_END, 0, 4, 600);
		break;
	case ALIAS:
		put_event(*w, FXT_EVENT_DURATION_END, 0, 1, 3000);
		put_event(*w, FXT_EVENT_DURATION_END, 1, 0, 2500);
		break;
	case RETHREAD:
		put_thread(*w, 1, 3);
		put_event(*w, FXT_EVENT_DURATION_END, 1, 0, 1500);
		break;
	case PROVIDER:
		fxt_writer_provider_section(*w, 3);
		put_event(*w, FXT_EVENT_DURATION_END, 1, 0, 1500);
		break;
	default:
		break;
	}
	filler(*w, 16 * MIB, &ts);
	if (fxt_writer_flush(*w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(*w, len);
}

/* data[0, len) as one gzip member (malloc()ed). */
static void *gzip_of(const void *data, size_t len, size_t *zlen)
{
	z_stream zs = { 0 };
	size_t cap = compressBound((uLong)len) + 64;
	unsigned char *out = malloc(cap);

	if (!out || deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		bail_out("deflateInit2");
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		bail_out("deflate");
	*zlen = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* A digest of the records as r gives them (offset, type, thread, time),
 * and how many; *late the late count. */
static uint64_t digest(struct fxt_reader *r, uint64_t *n, uint64_t *late)
{
	struct fxt_record rec;
	uint64_t h = 1469598103934665603u;

	*n = 0;
	while (fxt_reader_next(r, &rec) == 1) {
		uint64_t v[4] = { rec.offset, rec.type, 0, 0 };

		if (rec.type == FXT_RECORD_EVENT) {
			v[1] |= (uint64_t)rec.u.event.type << 8 | (uint64_t)rec.provider_id << 16;
			v[2] = rec.u.event.tid;
			v[3] = rec.u.event.ts;
		}
		for (size_t i = 0; i < 4; i++)
			h = (h ^ v[i]) * 1099511628211u;
		++*n;
	}
	*late = fxt_reader_late(r, NULL);
	return h;
}

int main(void)
{
	plan(2 * NCASES);
	for (int c = 0; c < NCASES; c++) {
		struct fxt_writer *w;
		struct fxt_reader *r;
		size_t len, zlen;
		const void *data = archive((enum second)c, &len, &w);
		void *z = gzip_of(data, len, &zlen);
		uint64_t n, zn, late, zlate, h, zh;

		if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
			bail_out("open failed");
		h = digest(r, &n, &late);
		fxt_reader_free(r);
		if (fxt_reader_open_mem(&r, z, zlen, FXT_READER_TIME_ORDER) != 0)
			bail_out("open failed");
		zh = digest(r, &zn, &zlate);
		fxt_reader_free(r);
		ASSERT_EQ_U64(late, nlate[c], "%s: %llu late", names[c],
			      (unsigned long long)nlate[c]);
		ok(h == zh && n == zn && late == zlate,
		   "%s: the records in the order a whole pass gives them (%llu and %llu records)",
		   names[c], (unsigned long long)n, (unsigned long long)zn);
		free(z);
		fxt_writer_free(w);
	}
	return exit_status();
}
