/* Checks of the agent's output order, private to the agent tests:
 *
 *  - ivl_check_nesting(): a set of intervals nests exactly (no partial
 *    overlap), the property Perfetto needs of complete events;
 *  - nest_check_stream(): one thread's events, in stream order, are in
 *    START order with exact nesting: starts never decrease, each event
 *    lies inside every slice open at its start (the parent's event came
 *    first), begin/end pairs are balanced and match, and complete events
 *    never partly overlap. */
#ifndef FXT_TESTS_AGENT_TEST_NEST_H
#define FXT_TESTS_AGENT_TEST_NEST_H

#include <stdint.h>
#include <stdio.h>
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

enum nest_kind {
	NEST_COMPLETE, /* [start, end] */
	NEST_BEGIN,    /* start */
	NEST_END,      /* end, addr = the begun frame's */
	NEST_INSTANT,  /* start */
};

struct nest_ev {
	enum nest_kind kind;
	uint64_t addr, start, end;
};

#define NEST_OPEN UINT64_MAX /* end of a begun slice not ended yet */

/* Returns -1 when the stream is valid, else the index of the first bad
 * event (n: a begin never ended), with the reason in `why`. */
static inline long nest_check_stream(const struct nest_ev *v, size_t n, const char **why)
{
	struct nest_ev *stack = malloc((n ? n : 1) * sizeof(*stack));
	size_t depth = 0;
	uint64_t last_start = 0;
	long bad = -1;

	*why = "";
	for (size_t i = 0; i < n && bad < 0; i++) {
		const struct nest_ev *e = &v[i];
		uint64_t t = e->kind == NEST_END ? e->end : e->start;

		/* Slices that ended by now are no ancestors of this event. */
		while (depth && stack[depth - 1].end != NEST_OPEN && stack[depth - 1].end <= t &&
		       (e->kind != NEST_INSTANT || stack[depth - 1].end < t))
			depth--;
		if (e->kind == NEST_END) {
			if (!depth || stack[depth - 1].end != NEST_OPEN ||
			    stack[depth - 1].addr != e->addr || e->end < stack[depth - 1].start) {
				bad = (long)i;
				*why = "end without its begin on top";
				break;
			}
			depth--;
			continue;
		}
		if (e->start < last_start) {
			bad = (long)i;
			*why = "start before the previous event's (not start order)";
			break;
		}
		last_start = e->start;
		if (e->kind == NEST_COMPLETE && e->end < e->start) {
			bad = (long)i;
			*why = "ends before it starts";
			break;
		}
		if (depth && stack[depth - 1].end != NEST_OPEN &&
		    (e->kind == NEST_COMPLETE ? e->end : e->start) > stack[depth - 1].end) {
			bad = (long)i;
			*why = "partly overlaps the slice it starts in";
			break;
		}
		if (e->kind == NEST_INSTANT)
			continue;
		stack[depth] = *e;
		if (e->kind == NEST_BEGIN)
			stack[depth].end = NEST_OPEN;
		depth++;
	}
	if (bad < 0) {
		for (size_t i = 0; i < depth; i++)
			if (stack[i].end == NEST_OPEN) {
				bad = (long)n;
				*why = "a begin never ended";
			}
	}
	free(stack);
	return bad;
}

#endif /* FXT_TESTS_AGENT_TEST_NEST_H */
