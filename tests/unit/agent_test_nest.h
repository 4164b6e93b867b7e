/* Checks that a set of intervals nests exactly (no partial overlap), the
 * property Perfetto needs of complete events.  Private to the agent tests. */
#ifndef FXT_TESTS_AGENT_TEST_NEST_H
#define FXT_TESTS_AGENT_TEST_NEST_H

#include <stdint.h>
#include <stdlib.h>

struct ivl {
	uint64_t start, end;
};

static int ivl_cmp(const void *a, const void *b)
{
	const struct ivl *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the longer (parent) first */
	return 0;
}

/* Returns the index (after sorting) of the first interval that partly
 * overlaps an enclosing one or has end < start, or -1 when all nest. */
static inline long ivl_check_nesting(struct ivl *v, size_t n)
{
	uint64_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	size_t depth = 0;
	long bad = -1;

	qsort(v, n, sizeof(*v), ivl_cmp);
	for (size_t i = 0; i < n && bad < 0; i++) {
		if (v[i].end < v[i].start)
			bad = (long)i;
		while (depth && stack[depth - 1] <= v[i].start)
			depth--;
		if (depth && v[i].end > stack[depth - 1])
			bad = (long)i;
		stack[depth++] = v[i].end;
	}
	free(stack);
	return bad;
}

#endif /* FXT_TESTS_AGENT_TEST_NEST_H */
