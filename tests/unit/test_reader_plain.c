/* fxt_reader_next_plain() (fxt/decode.c's fxt__next_plain()): read with it
 * wherever it takes records, and with fxt_reader_next() where it does not,
 * an archive gives the same records (each as a line of its fields) and
 * the same diagnostics, at the same offsets, as fxt_reader_next() alone;
 * on archives of plain events mixed with everything it must leave to
 * fxt_reader_next(): arguments, inline strings and threads, a string and
 * a thread not registered, a complete event ending before it starts, a
 * string record changing a name, a second provider, counters and flows,
 * a record cut short, and with the mark of time order a late begin (said
 * once) and events of many threads.  It takes most plain events in runs
 * of several. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#define OUT_CAP (1u << 16)

/* Records as lines, and apart the diagnostics (said while a run of plain
 * events is read, before the run's lines are written). */
struct out {
	char *s;
	size_t n;
	struct out *diags;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (o->n < OUT_CAP)
		o->n += (size_t)vsnprintf(o->s + o->n, OUT_CAP - o->n, fmt, ap);
	va_end(ap);
}

static void on_diag(void *ctx, enum fxt_diag_level level, uint64_t offset, const char *msg)
{
	struct out *o = ctx;

	say(o->diags, "diag %d @%llu %s\n", (int)level, (unsigned long long)offset, msg);
}

static void event_line(struct out *o, unsigned type, uint16_t cref, uint16_t nref, const char *cat,
		       uint32_t clen, const char *name, uint32_t nlen, uint64_t ts, uint64_t extra,
		       uint64_t pid, uint64_t tid, unsigned nargs)
{
	say(o, "ev t%u %u/%u %.*s/%.*s %llu %llu %llu.%llu a%u\n", type, cref, nref, (int)clen, cat,
	    (int)nlen, name, (unsigned long long)ts, (unsigned long long)extra,
	    (unsigned long long)pid, (unsigned long long)tid, nargs);
}

static void record_line(struct out *o, struct fxt_reader *r, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;

	if (rec->type != FXT_RECORD_EVENT) {
		say(o, "rec @%llu type %u tps %llu\n", (unsigned long long)rec->offset,
		    (unsigned)rec->type, (unsigned long long)fxt_reader_ticks_per_second(r));
		return;
	}
	event_line(o, ev->type, ev->category_ref, ev->name_ref, ev->category.data,
		   (uint32_t)ev->category.len, ev->name.data, (uint32_t)ev->name.len, ev->ts,
		   ev->extra, ev->pid, ev->tid, rec->nargs);
}

/* Reads data; with `plain`, fxt_reader_next_plain() first (runs of at
 * most `run`), its events' count in *taken.  Returns what the last call
 * of fxt_reader_next() returned. */
static int read_all(const void *data, size_t len, unsigned flags, bool plain, size_t run,
		    struct out *o, size_t *taken)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	struct fxt_plain ev[8];
	int rc;

	o->n = 0;
	o->s[0] = '\0';
	o->diags->n = 0;
	o->diags->s[0] = '\0';
	*taken = 0;
	if (fxt_reader_open_mem(&r, data, len, flags) != 0)
		bail_out("open failed");
	fxt_reader_set_diag(r, on_diag, o);
	for (;;) {
		size_t k = plain ? fxt_reader_next_plain(r, ev, run) : 0;

		if (k) {
			for (size_t i = 0; i < k; i++) {
				if (ev[i].record_type != FXT_RECORD_EVENT || ev[i].aux)
					say(o, "bad item\n");
				event_line(o, ev[i].type, ev[i].category_ref, ev[i].name_ref,
					   ev[i].category, ev[i].category_len, ev[i].name,
					   ev[i].name_len, ev[i].ts, ev[i].extra, ev[i].pid,
					   ev[i].tid, 0);
			}
			*taken += k;
			continue;
		}
		rc = fxt_reader_next(r, &rec);
		if (rc <= 0)
			break;
		record_line(o, r, &rec);
	}
	{
		uint64_t off = 0;
		const char *err = fxt_reader_error(r, &off);
		bool sorted;
		uint64_t late = fxt_reader_late(r, &sorted);

		say(o, "end %d %s @%llu late %llu %d\n", rc, err ? err : "-",
		    (unsigned long long)off, (unsigned long long)late, sorted);
	}
	fxt_reader_free(r);
	return rc;
}

static void event(struct fxt_writer *w, unsigned type, uint64_t ts, uint64_t extra,
		  struct fxt_tref th, struct fxt_sref cat, struct fxt_sref name,
		  const struct fxt_arg *args, unsigned nargs)
{
	struct fxt_event ev = { .type = (enum fxt_event_type)type,
				.ts = ts,
				.thread = th,
				.category = cat,
				.name = name,
				.args = args,
				.nargs = nargs,
				.extra = extra };

	if (fxt_writer_event(w, &ev) != 0)
		bail_out("fxt_writer_event failed");
}

static void raw(struct fxt_writer *w, const uint64_t *words, size_t n)
{
	if (fxt_writer_words(w, words, n) != 0)
		bail_out("fxt_writer_words failed");
}

/* An event header: type, size, event type, thread ref, string refs. */
static uint64_t hdr(unsigned nwords, unsigned etype, unsigned nargs, unsigned tref, uint16_t cref,
		    uint16_t nref)
{
	return FXT_RECORD_EVENT | (uint64_t)nwords << 4 | (uint64_t)etype << 16 |
	       (uint64_t)nargs << 20 | (uint64_t)tref << 24 | (uint64_t)cref << 32 |
	       (uint64_t)nref << 48;
}

/* The archive: `marked` with fxtrace's mark; `cut` ends it inside a
 * record. */
static const void *archive(struct fxt_writer **w, bool marked, bool cut, size_t *len)
{
	struct fxt_arg arg = { .type = FXT_ARG_UINT64, .v.u64 = 7 };
	struct fxt_tref t1, t2, t3;
	struct fxt_sref c, f, g, h;

	if (fxt_writer_open_mem(w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(*w);
	if (marked && fxt_writer_time_ordered(*w) != 0)
		bail_out("fxt_writer_time_ordered failed");
	fxt_writer_provider(*w, 1, "one");
	fxt_writer_initialization(*w, 3000000000u);
	t1 = fxt_writer_thread(*w, 10, 11);
	t2 = fxt_writer_thread(*w, 10, 12);
	t3 = fxt_writer_thread(*w, 20, 21);
	c = fxt_writer_cstring(*w, "cat");
	f = fxt_writer_cstring(*w, "f");
	g = fxt_writer_cstring(*w, "g");
	h = fxt_writer_cstring(*w, "h");
	arg.name = g;
	for (unsigned i = 0; i < 40; i++) {
		uint64_t t = 1000 + 100 * i;

		event(*w, FXT_EVENT_DURATION_COMPLETE, t, t + 90, i % 7 ? t1 : t2, c, f, NULL, 0);
		event(*w, FXT_EVENT_DURATION_BEGIN, t + 10, 0, i % 5 ? t1 : t3, c, g, NULL, 0);
		event(*w, FXT_EVENT_INSTANT, t + 20, 0, t1, fxt_sref_empty(), h, NULL, 0);
		event(*w, FXT_EVENT_DURATION_END, t + 30, 0, i % 5 ? t1 : t3, c, g, NULL, 0);
		switch (i % 10) {
		case 1: /* arguments */
			event(*w, FXT_EVENT_DURATION_COMPLETE, t + 40, t + 50, t1, c, g, &arg, 1);
			break;
		case 2: /* inline strings, an inline thread */
			event(*w, FXT_EVENT_DURATION_COMPLETE, t + 40, t + 50, t1, c,
			      fxt_sref_inline("in", 2), NULL, 0);
			event(*w, FXT_EVENT_DURATION_BEGIN, t + 41, 0, fxt_tref_inline(10, 11), c,
			      f, NULL, 0);
			event(*w, FXT_EVENT_DURATION_END, t + 42, 0, fxt_tref_inline(10, 11), c, f,
			      NULL, 0);
			break;
		case 3: { /* a string and a thread not registered; ends before it starts */
			uint64_t ws[] = { hdr(2, FXT_EVENT_INSTANT, 0, t1.index, 300, 301),
					  t + 40,
					  hdr(2, FXT_EVENT_INSTANT, 0, 200, 0, 0),
					  t + 41,
					  hdr(3, FXT_EVENT_DURATION_COMPLETE, 0, t1.index, 0, 0),
					  t + 45,
					  t + 44 };
			raw(*w, ws, sizeof(ws) / sizeof(ws[0]));
			break;
		}
		case 4: /* a name changes; counters, flows */
			fxt_writer_words(*w,
					 (uint64_t[]){ FXT_RECORD_STRING | 2u << 4 |
							   (uint64_t)f.ref << 16 | 1ull << 32,
						       'F' },
					 2);
			event(*w, FXT_EVENT_COUNTER, t + 40, 3, t1, c, g, &arg, 1);
			event(*w, FXT_EVENT_FLOW_BEGIN, t + 41, 5, t1, c, g, NULL, 0);
			break;
		case 5: { /* a second provider, its own tables, then back */
			struct fxt_tref u;
			struct fxt_sref x;

			fxt_writer_provider(*w, 2, "two");
			u = fxt_writer_thread(*w, 30, 31);
			x = fxt_writer_cstring(*w, "x");
			event(*w, FXT_EVENT_DURATION_COMPLETE, t + 40, t + 45, u, x, x, NULL, 0);
			event(*w, FXT_EVENT_DURATION_COMPLETE, t + 46, t + 49, u, x, x, NULL, 0);
			fxt_writer_provider_section(*w, 1);
			break;
		}
		case 6: /* late on its thread: said with the mark */
			event(*w, FXT_EVENT_DURATION_BEGIN, t - 500, 0, t1, c, h, NULL, 0);
			event(*w, FXT_EVENT_DURATION_END, t + 95, 0, t1, c, h, NULL, 0);
			break;
		case 7: { /* padding words past a plain event's own */
			uint64_t ws[] = { hdr(4, FXT_EVENT_DURATION_BEGIN, 0, t2.index, c.ref,
					      h.ref),
					  t + 40, 99, 98 };
			raw(*w, ws, 4);
			event(*w, FXT_EVENT_DURATION_END, t + 41, 0, t2, c, h, NULL, 0);
			break;
		}
		default:
			break;
		}
	}
	if (cut) {
		uint64_t ws[] = { hdr(3, FXT_EVENT_DURATION_COMPLETE, 0, t1.index, c.ref, f.ref),
				  9000 };
		raw(*w, ws, 2);
	}
	if (fxt_writer_flush(*w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(*w, len);
}

int main(void)
{
	struct out da = { malloc(OUT_CAP), 0, NULL }, db = { malloc(OUT_CAP), 0, NULL };
	struct out a = { malloc(OUT_CAP), 0, &da }, b = { malloc(OUT_CAP), 0, &db };

	if (!a.s || !b.s || !da.s || !db.s)
		bail_out("out of memory");
	plan(15);
	for (int marked = 0; marked < 2; marked++) {
		for (int cut = 0; cut < 2; cut++) {
			struct fxt_writer *w;
			size_t len, taken, none;
			const void *data = archive(&w, marked, cut, &len);
			/* (unmarked, it has late events to give) */
			unsigned flags = marked ? FXT_READER_TIME_ORDER : 0;
			int rc;

			rc = read_all(data, len, flags, false, 0, &a, &none);
			read_all(data, len, flags, true, 8, &b, &taken);
			ok(a.n > 1000 && strcmp(a.s, b.s) == 0 && strcmp(da.s, db.s) == 0,
			   "marked %d, cut %d: the same records and diagnostics (%zu, %zu bytes)",
			   marked, cut, a.n, da.n);
			if (strcmp(a.s, b.s) != 0 || strcmp(da.s, db.s) != 0)
				diag("alone:\n%s%s\nwith plain:\n%s%s", a.s, da.s, b.s, db.s);
			read_all(data, len, flags, true, 1, &b, &taken);
			ok(strcmp(a.s, b.s) == 0 && strcmp(da.s, db.s) == 0,
			   "marked %d, cut %d: the same in runs of 1", marked, cut);
			read_all(data, len, flags, true, 8, &b, &taken);
			ok(taken > 150 && rc == (cut ? -1 : 0),
			   "marked %d, cut %d: %zu plain events taken, end %d", marked, cut, taken,
			   rc);
			fxt_writer_free(w);
		}
	}
	{
		/* Unmarked with late events: the first pass moves them, and the
		 * plain way is not taken (it would give them where they are). */
		struct fxt_writer *w;
		size_t len, taken;
		const void *data = archive(&w, false, false, &len);

		read_all(data, len, FXT_READER_TIME_ORDER, true, 8, &b, &taken);
		ok(taken == 0, "late events to give: no plain way (%zu)", taken);
		read_all(data, len, 0, true, 8, &b, &taken);
		ok(taken > 150, "in file order: %zu plain events taken", taken);
		read_all(data, len, FXT_READER_RAW, true, 8, &b, &taken);
		ok(taken == 0, "FXT_READER_RAW: none taken");
		fxt_writer_free(w);
	}
	free(a.s);
	free(b.s);
	free(da.s);
	free(db.s);
	return exit_status();
}
