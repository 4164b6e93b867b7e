/* fxt-view's timeline (tools/view/timeline.h), fed slices directly: exact
 * bars by depth and the column lookup, slices too deep counted, the bound
 * on bars (a busy thread merged at a coarser resolution, every slice
 * still counted in some bar, a quiet thread left exact), and the search
 * forward and backward. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/lib/tap.h"
#include "tools/view/timeline.h"

static void feed(struct timeline *tl, uint64_t tid, uint64_t start, uint64_t end, unsigned depth,
		 uint32_t row)
{
	uint32_t path[TIMELINE_MAX_DEPTH + 2] = { 0 };
	struct profile_slice s = { .pid = 1, .tid = tid, .start_ns = start, .end_ns = end,
				   .depth = depth, .path = path };

	path[depth] = row;
	timeline_on_slice(tl, &s);
}

static bool is_row(void *ctx, uint32_t row)
{
	return row == *(const uint32_t *)ctx;
}

static void exact(void)
{
	struct timeline *tl;
	const struct timeline_thread *th;
	const struct timeline_bar *b;
	uint32_t want = 7;
	unsigned d = 99;

	if (timeline_new(&tl) < 0)
		bail_out("timeline_new");
	/* main [0, 100) with a [10, 20) and b [50, 90) below, in end order */
	feed(tl, 5, 10, 20, 1, 2);
	feed(tl, 5, 50, 90, 1, 7);
	feed(tl, 5, 0, 100, 0, 1);
	feed(tl, 5, 60, 61, TIMELINE_MAX_DEPTH, 3);
	ASSERT_EQ_U64(timeline_nthreads(tl), 1, "one thread");
	th = timeline_thread(tl, 0);
	ASSERT_EQ_U64(th->slices, 4, "every slice counted");
	ASSERT_EQ_U64(th->ndepth, 2, "two depths drawn");
	ASSERT_EQ_U64(th->too_deep, 1, "the slice past the deepest level counted, not drawn");
	ASSERT_EQ_U64(th->busy_ns, 100, "busy: the top-level slice");
	ASSERT_EQ_U64(th->res_ns, 0, "exact");
	b = timeline_find(th, 1, 20, 50);
	ok(b == NULL, "nothing at depth 2 in [20, 50)");
	b = timeline_find(th, 1, 15, 16);
	ok(b && b->row == 2 && b->n == 1, "[15, 16): a");
	b = timeline_find(th, 1, 30, 55);
	ok(b && b->row == 7, "[30, 55): b, the first that overlaps");
	b = timeline_find(th, 0, 99, 200);
	ok(b && b->row == 1, "[99, 200): main");
	b = timeline_search(th, 21, false, is_row, &want, &d);
	ok(b && b->start == 50 && d == 1, "search forward from 21: b at depth 2");
	b = timeline_search(th, 50, true, is_row, &want, &d);
	ok(b == NULL, "search backward from 50: none before");
	b = timeline_search(th, 51, true, is_row, &want, &d);
	ok(b && b->start == 50, "search backward from 51: b");
	timeline_free(tl);
}

static void bounded(void)
{
	struct timeline *tl;
	const struct timeline_thread *busy, *quiet;
	uint64_t n = 0, last_end = 0;
	bool sorted = true;

	if (timeline_new(&tl) < 0)
		bail_out("timeline_new");
	timeline_set_max_bars(tl, 1000);
	for (uint64_t i = 0; i < 10; i++)
		feed(tl, 2, i * 100, i * 100 + 50, 0, 4);
	for (uint64_t i = 0; i < 100000; i++)
		feed(tl, 1, i * 10, i * 10 + 8, 0, (uint32_t)(i % 3));
	ok(timeline_error(tl) == 0, "no error");
	ok(timeline_nbars(tl) <= 1000, "bars held within the bound: %llu",
	   (unsigned long long)timeline_nbars(tl));
	quiet = timeline_thread(tl, 0);
	busy = timeline_thread(tl, 1);
	ASSERT_EQ_U64(quiet->res_ns, 0, "the quiet thread stays exact");
	ASSERT_EQ_U64(quiet->nbars, 10, "its ten bars");
	ok(busy->res_ns > 0, "the busy thread merged, under %llu ns",
	   (unsigned long long)busy->res_ns);
	ASSERT_EQ_U64(busy->slices, 100000, "every slice counted");
	for (size_t i = 0; i < busy->lv[0].n; i++) {
		const struct timeline_bar *b = &busy->lv[0].b[i];

		n += b->n;
		sorted &= b->start >= last_end && b->end > b->start;
		last_end = b->end;
	}
	ASSERT_EQ_U64(n, 100000, "the merged bars stand for every slice");
	ok(sorted, "merged bars sorted, not overlapping");
	ASSERT_EQ_U64(busy->lv[0].b[0].start, 0, "the first bar starts with the first slice");
	ASSERT_EQ_U64(last_end, 999998, "the last ends with the last");
	timeline_free(tl);
}

int main(void)
{
	plan(23);
	exact();
	bounded();
	return exit_status();
}
