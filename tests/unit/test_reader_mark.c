/* fxtrace's mark of time order (FXT_TIME_ORDERED_MARK, include/fxt/format.h;
 * fxt/order.c): an archive that starts with it gets no pass at open with
 * FXT_READER_TIME_ORDER (so a late begin or end in it is not moved: that
 * is how the test tells), and one late after all is paired in file order,
 * counted as not sorted and said once (a warning; a note past a second
 * magic record, which ends the claim); the same events unmarked are still
 * sorted; a marked string that is not the first record after the magic
 * is no mark. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

/* Thread (9, 1)'s begins and ends, in file order; b0 is late. */
static const struct {
	uint64_t ts;
	const char *name;
} evs[] = { { 100, "b100" }, { 200, "e200" }, { 0, "b0" }, { 300, "e300" } };
#define NEVS (sizeof(evs) / sizeof(evs[0]))

enum mark { UNMARKED, MARKED, MARK_LATER };

/* An archive of the events from `from` on (NEVS: none), marked as told;
 * *len its size.  Free with fxt_writer_free(*w). */
static const void *archive(struct fxt_writer **w, enum mark mark, size_t from, size_t *len)
{
	if (fxt_writer_open_mem(w, 0) != 0)
		bail_out("fxt_writer_open_mem failed");
	fxt_writer_magic(*w);
	if (mark == MARKED && fxt_writer_time_ordered(*w) != 0)
		bail_out("fxt_writer_time_ordered failed");
	fxt_writer_provider(*w, 3, "p");
	if (mark == MARK_LATER)
		fxt_writer_cstring(*w, FXT_TIME_ORDERED_MARK);
	fxt_writer_initialization(*w, 1000000000);
	for (size_t i = from; i < NEVS; i++) {
		struct fxt_event ev = { .type = evs[i].name[0] == 'b' ? FXT_EVENT_DURATION_BEGIN
								      : FXT_EVENT_DURATION_END,
					.ts = evs[i].ts,
					.thread = fxt_writer_thread(*w, 9, 1),
					.category = fxt_writer_cstring(*w, "c"),
					.name = fxt_writer_cstring(*w, evs[i].name) };
		if (fxt_writer_event(*w, &ev) != 0)
			bail_out("fxt_writer_event failed");
	}
	if (fxt_writer_flush(*w) != 0)
		bail_out("flush failed");
	return fxt_writer_mem_data(*w, len);
}

/* What the reader said of time order: how often, as warnings and as
 * notes, and the last of it. */
struct diags {
	unsigned warnings, notes;
	char last[256];
};

static void on_diag(void *ctx, enum fxt_diag_level level, uint64_t offset, const char *msg)
{
	struct diags *d = ctx;
	(void)offset;
	if (!strstr(msg, "out of time order"))
		return;
	d->warnings += level == FXT_DIAG_WARNING;
	d->notes += level == FXT_DIAG_INFO;
	snprintf(d->last, sizeof(d->last), "%s", msg);
}

/* The names as r gives them (with FXT_READER_TIME_ORDER), each followed
 * by a space, its diagnostics in *d. */
static void read_all(const void *data, size_t len, char *out, size_t cap, struct diags *d,
		     bool *marked, uint64_t *late, bool *sorted)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	size_t n = 0;

	memset(d, 0, sizeof(*d));
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_TIME_ORDER) != 0)
		bail_out("open failed");
	fxt_reader_set_diag(r, on_diag, d);
	out[0] = '\0';
	while (fxt_reader_next(r, &rec) == 1)
		if (rec.type == FXT_RECORD_EVENT)
			n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)rec.u.event.name.len,
					      rec.u.event.name.data);
	*marked = fxt_reader_time_ordered(r);
	*late = fxt_reader_late(r, sorted);
	fxt_reader_free(r);
}

int main(void)
{
	struct fxt_writer *w, *w2;
	struct diags d;
	char got[256];
	bool marked, sorted;
	uint64_t late;
	size_t len, len2;
	const void *data;
	const void *tail;
	char *cat;

	plan(17);

	data = archive(&w, UNMARKED, 0, &len);
	read_all(data, len, got, sizeof(got), &d, &marked, &late, &sorted);
	ASSERT_STR_EQ(got, "b0 b100 e200 e300 ", "unmarked: the late begin moved");
	ok(!marked, "unmarked: no mark");
	ok(late == 1 && sorted, "unmarked: one late event, sorted");
	fxt_writer_free(w);

	data = archive(&w, MARKED, 0, &len);
	read_all(data, len, got, sizeof(got), &d, &marked, &late, &sorted);
	ASSERT_STR_EQ(got, "b100 e200 b0 e300 ",
		      "marked: no pass at open, so the late begin stays where it is");
	ok(marked, "marked: the mark is seen");
	ok(late == 1 && !sorted, "marked: the late event is counted, not sorted");
	ASSERT_EQ_U64(d.warnings, 1, "marked: one warning");
	ok(strstr(d.last, "although the archive says it is in order: paired in file order") != NULL,
	   "marked: it says why: %s", d.last);
	fxt_writer_free(w);

	data = archive(&w, MARKED, 3, &len);
	read_all(data, len, got, sizeof(got), &d, &marked, &late, &sorted);
	ok(marked && late == 0 && sorted, "marked, in order: nothing late");
	ASSERT_EQ_U64(d.warnings + d.notes, 0, "marked, in order: nothing said");
	fxt_writer_free(w);

	data = archive(&w, MARK_LATER, 0, &len);
	read_all(data, len, got, sizeof(got), &d, &marked, &late, &sorted);
	ok(!marked, "the mark's string elsewhere than right after the magic is no mark");
	ASSERT_STR_EQ(got, "b0 b100 e200 e300 ", "and the file is sorted");
	fxt_writer_free(w);

	/* cat marked.fxt unmarked.fxt: the claim ends at the second magic. */
	data = archive(&w, MARKED, 3, &len);
	tail = archive(&w2, UNMARKED, 0, &len2);
	cat = malloc(len + len2);
	if (!cat)
		bail_out("out of memory");
	memcpy(cat, data, len);
	memcpy(cat + len, tail, len2);
	read_all(cat, len + len2, got, sizeof(got), &d, &marked, &late, &sorted);
	ok(marked, "appended: the mark is seen");
	ASSERT_STR_EQ(got, "e300 b100 e200 b0 e300 ", "appended: paired in file order");
	ok(late == 3 && !sorted, "appended: three late events, not sorted");
	ok(d.notes == 1 && d.warnings == 0, "appended: one note, no warning");
	ok(strstr(d.last, "after a second magic record") != NULL, "appended: it says why: %s",
	   d.last);
	free(cat);
	fxt_writer_free(w);
	fxt_writer_free(w2);
	return exit_status();
}
