/* The nesting-depth tracker (tools/dump/nesting.c): depths as Perfetto counts
 * them, slices past a limit, complete events and begin/end pairs, threads
 * apart, end order flagged, a 100,001-deep chain in bounded steps. */
#include "config.h"

#include <stdint.h>

#include "tests/lib/tap.h"
#include "tools/dump/nesting.h"

static struct nesting *fresh(unsigned limit)
{
	struct nesting *n;

	if (nesting_new(&n, limit) < 0)
		bail_out("nesting_new");
	return n;
}

int main(void)
{
	struct nesting_result res;
	struct nesting *n;
	int rc = 0;

	plan(11);

	/* The deep_recursion test's shape: 100,001 nested slices. */
	n = fresh(FXT__SHOWN_DEPTH);
	for (uint64_t k = 0; k <= 100000 && rc == 0; k++)
		rc = nesting_complete(n, 1, 2, k, 300000 - k);
	nesting_result(n, &res);
	ok(rc == 0 && res.slices == 100001, "100,001 slices fed");
	ASSERT_EQ_U64(res.max_depth, 100000, "max depth 100,000 (the outermost is 0)");
	ASSERT_EQ_U64(res.deeper, 100001 - 513, "Perfetto shows 513 of them");
	ok(res.deeper_threads == 1 && res.max_pid == 1 && res.max_tid == 2, "on one thread");
	nesting_free(n);

	/* Siblings do not nest; another thread has its own stack; begin/end
	 * pairs nest with complete events. */
	n = fresh(1);
	nesting_complete(n, 1, 1, 0, 100);
	nesting_complete(n, 1, 1, 10, 20);
	nesting_complete(n, 1, 1, 20, 30); /* after its sibling: depth 1 */
	nesting_complete(n, 1, 9, 25, 26); /* another thread: depth 0 */
	nesting_begin(n, 1, 1, 40);	   /* depth 1 */
	nesting_complete(n, 1, 1, 41, 42); /* depth 2 */
	nesting_begin(n, 1, 1, 43);	   /* depth 2 */
	nesting_end(n, 1, 1, 44);
	nesting_end(n, 1, 1, 50);
	nesting_complete(n, 1, 1, 60, 70); /* depth 1 again */
	nesting_end(n, 1, 1, 80);	   /* no begin open: ignored */
	nesting_result(n, &res);
	ASSERT_EQ_U64(res.slices, 8, "every slice counted");
	ASSERT_EQ_U64(res.max_depth, 2, "begin/end and complete events nest together");
	ASSERT_EQ_U64(res.deeper, 2, "two slices past a limit of 1");
	ASSERT_EQ_U64(res.unordered, 0, "start order is not flagged");
	nesting_free(n);

	/* Children first: flagged, depth a lower bound. */
	n = fresh(FXT__SHOWN_DEPTH);
	nesting_complete(n, 1, 1, 10, 20);
	nesting_complete(n, 1, 1, 0, 100);
	nesting_result(n, &res);
	ASSERT_EQ_U64(res.unordered, 1, "end order flagged");
	ASSERT_EQ_U64(res.max_depth, 0, "end order: depths are lower bounds");
	nesting_free(n);

	n = fresh(0);
	nesting_result(n, &res);
	ok(res.slices == 0 && res.max_depth == 0 && res.deeper == 0, "empty");
	nesting_free(n);
	return exit_status();
}
