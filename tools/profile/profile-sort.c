/* Ordering the rows of a profile: the --by and --sort keys, a
 * deterministic sort, the order of end-ordered slices (durations for
 * people are tool_fmt_ns()'s, tools/front/common.c). */
#include "config.h"

#include "tools/profile/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- sorting */

static const struct {
	const char *name;
	enum profile_sort key;
} sort_names[] = {
	{ "self", PROFILE_SORT_SELF },	 { "total", PROFILE_SORT_TOTAL },
	{ "calls", PROFILE_SORT_CALLS }, { "avg", PROFILE_SORT_AVG },
	{ "max", PROFILE_SORT_MAX },	 { "name", PROFILE_SORT_NAME },
};

int profile_sort_parse(const char *s, enum profile_sort *out)
{
	size_t i;

	for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++) {
		if (strcmp(s, sort_names[i].name) == 0) {
			*out = sort_names[i].key;
			return 0;
		}
	}
	return -EINVAL;
}

int profile_by_parse(const char *s, enum profile_by *out)
{
	static const char *const names[] = { [PROFILE_BY_FUNCTION] = "function",
					     [PROFILE_BY_PROCESS] = "process",
					     [PROFILE_BY_THREAD] = "thread" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum profile_by)i;
			return 0;
		}
	}
	return -EINVAL;
}

int profile_span_cmp(const void *a, const void *b)
{
	const struct profile_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static enum profile_sort sort_key; /* qsort has no context argument */

static uint64_t sort_value(const struct profile_row *r)
{
	switch (sort_key) {
	case PROFILE_SORT_SELF:
		return r->self_ns;
	case PROFILE_SORT_TOTAL:
		return r->total_ns;
	case PROFILE_SORT_CALLS:
		return r->calls;
	case PROFILE_SORT_AVG:
		return r->calls ? r->sum_ns / r->calls : 0;
	case PROFILE_SORT_MAX:
		return r->max_ns;
	case PROFILE_SORT_NAME:
		break;
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct profile_row *x = *(const struct profile_row *const *)a;
	const struct profile_row *y = *(const struct profile_row *const *)b;
	uint64_t vx = sort_value(x), vy = sort_value(y);
	int c;

	if (vx != vy)
		return vx < vy ? 1 : -1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	c = strcmp(x->category, y->category);
	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (!x->track != !y->track)
		return x->track ? 1 : -1;
	return 0;
}

void profile_sort_rows(const struct profile_row **rows, size_t n, enum profile_sort key)
{
	sort_key = key;
	qsort(rows, n, sizeof(*rows), cmp_rows);
}
