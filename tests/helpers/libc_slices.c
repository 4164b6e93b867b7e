/* libc_slices: prints what the libc-mem/sync/thread tests assert on, from
 * an archive read with the reader library.
 *
 *	libc_slices --slices CATEGORY ARCHIVE
 *	    one line per slice of that category, in time order per thread
 *	    (threads numbered 1, 2, ... by first slice):
 *	        T NAME key=value ...
 *	    integers in decimal, pointers in hex (0x...), booleans true/false.
 *	libc_slices --counter NAME ARCHIVE
 *	    the first argument of each counter event NAME, in time order.
 *	libc_slices --flows ARCHIVE
 *	    one line per flow id that has a begin and an end:
 *	        BEGIN_SLICE -> END_SLICE[ waited=V] same|other
 *	    each slice being the innermost one open on the event's thread at
 *	    the event's time (as Perfetto binds flow events), "-" if none;
 *	    "same" when both ends are on one thread.  Sorted.
 *
 * Slices are complete events and begin/end pairs.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

#define MAX_DEPTH 256

struct slice {
	uint64_t tid, start, end;
	uint64_t first;		 /* --slices: the first start of the thread in the category */
	char *name, *cat, *args; /* args: " key=value" ... */
	char *waited;		 /* the value of "waited", or NULL */
};

struct flow {
	uint64_t id, tid, ts;
	bool begin;
};

struct counter {
	uint64_t ts;
	int64_t value;
};

struct vec {
	void *v;
	size_t n, cap, size;
};

static void *vec_push(struct vec *a)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 256;
		a->v = realloc(a->v, a->cap * a->size);
		if (!a->v) {
			perror("libc_slices");
			exit(2);
		}
	}
	return (char *)a->v + a->n++ * a->size;
}

static char *dup_str(struct fxt_string s)
{
	char *p = malloc(s.len + 1);

	if (!p) {
		perror("libc_slices");
		exit(2);
	}
	memcpy(p, s.data, s.len);
	p[s.len] = '\0';
	return p;
}

/* " key=value" for each argument; *waited gets the value of "waited". */
static char *format_args(const struct fxt_record *rec, char **waited)
{
	char buf[4096], val[512];
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		switch (a->type) {
		case FXT_ARG_INT32:
		case FXT_ARG_INT64:
			snprintf(val, sizeof(val), "%" PRId64, a->v.i);
			break;
		case FXT_ARG_UINT32:
		case FXT_ARG_UINT64:
		case FXT_ARG_KOID:
			snprintf(val, sizeof(val), "%" PRIu64, a->v.u);
			break;
		case FXT_ARG_POINTER:
			snprintf(val, sizeof(val), "0x%" PRIx64, a->v.u);
			break;
		case FXT_ARG_BOOL:
			snprintf(val, sizeof(val), "%s", a->v.b ? "true" : "false");
			break;
		case FXT_ARG_STRING:
			snprintf(val, sizeof(val), "%.*s", (int)a->v.s.len, a->v.s.data);
			break;
		default:
			snprintf(val, sizeof(val), "?");
			break;
		}
		if (a->name.len == 6 && !memcmp(a->name.data, "waited", 6)) {
			free(*waited);
			*waited = strdup(val);
		}
		len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0,
					" %.*s=%s", (int)a->name.len, a->name.data, val);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	return strdup(buf);
}

struct open_slices {
	uint64_t tid;
	size_t depth;
	size_t idx[MAX_DEPTH];
};

static struct open_slices *open_of(struct vec *opens, uint64_t tid)
{
	struct open_slices *o = opens->v;

	for (size_t i = 0; i < opens->n; i++)
		if (o[i].tid == tid)
			return &o[i];
	o = vec_push(opens);
	o->tid = tid;
	o->depth = 0;
	return o;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Outer (longer) first. */
	return x->end > y->end ? -1 : x->end < y->end;
}

static int cmp_counter(const void *a, const void *b)
{
	const struct counter *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The innermost slice open on `tid` at `ts`. */
static const struct slice *slice_at(const struct vec *slices, uint64_t tid, uint64_t ts)
{
	const struct slice *s = slices->v, *best = NULL;

	for (size_t i = 0; i < slices->n; i++) {
		if (s[i].tid != tid || s[i].start > ts || s[i].end < ts)
			continue;
		if (!best || s[i].start > best->start ||
		    (s[i].start == best->start && s[i].end < best->end))
			best = &s[i];
	}
	return best;
}

int main(int argc, char **argv)
{
	struct vec slices = { .size = sizeof(struct slice) };
	struct vec flows = { .size = sizeof(struct flow) };
	struct vec counters = { .size = sizeof(struct counter) };
	struct vec opens = { .size = sizeof(struct open_slices) };
	const char *mode, *what = NULL, *path;
	struct fxt_reader *r;
	struct fxt_record rec;
	int err;

	if (argc == 3 && !strcmp(argv[1], "--flows")) {
		mode = argv[1];
		path = argv[2];
	} else if (argc == 4 && (!strcmp(argv[1], "--slices") || !strcmp(argv[1], "--counter"))) {
		mode = argv[1];
		what = argv[2];
		path = argv[3];
	} else {
		fprintf(stderr, "usage: libc_slices --slices CATEGORY | --counter NAME | "
				"--flows ARCHIVE\n");
		return 2;
	}
	err = fxt_reader_open_path(&r, path, 0);
	if (err < 0) {
		fprintf(stderr, "libc_slices: %s: %s\n", path, strerror(-err));
		return 1;
	}
	while ((err = fxt_reader_next(r, &rec)) > 0) {
		/* In ns: an archive's processes each have their own tick rate
		 * (their provider's initialization record), and two images of
		 * one pid share its thread. */
		uint64_t tid = rec.u.event.tid, ts = fxt_reader_ticks_to_ns(r, rec.u.event.ts);
		struct open_slices *o;
		struct slice *s;

		if (rec.type != FXT_RECORD_EVENT)
			continue;
		switch (rec.u.event.type) {
		case FXT_EVENT_DURATION_COMPLETE:
		case FXT_EVENT_DURATION_BEGIN:
			s = vec_push(&slices);
			s->tid = tid;
			s->start = ts;
			s->end = rec.u.event.type == FXT_EVENT_DURATION_COMPLETE
				     ? fxt_reader_ticks_to_ns(r, rec.u.event.extra)
				     : UINT64_MAX;
			s->name = dup_str(rec.u.event.name);
			s->cat = dup_str(rec.u.event.category);
			s->waited = NULL;
			s->args = format_args(&rec, &s->waited);
			if (rec.u.event.type == FXT_EVENT_DURATION_BEGIN) {
				o = open_of(&opens, tid);
				if (o->depth < MAX_DEPTH)
					o->idx[o->depth++] = slices.n - 1;
			}
			break;
		case FXT_EVENT_DURATION_END:
			o = open_of(&opens, tid);
			if (o->depth) {
				s = (struct slice *)slices.v + o->idx[--o->depth];
				s->end = ts;
				if (rec.nargs) {
					char *more = format_args(&rec, &s->waited);
					char *all = malloc(strlen(s->args) + strlen(more) + 1);

					if (!all)
						return 2;
					strcpy(all, s->args);
					strcat(all, more);
					free(s->args);
					free(more);
					s->args = all;
				}
			}
			break;
		case FXT_EVENT_FLOW_BEGIN:
		case FXT_EVENT_FLOW_END: {
			struct flow *f = vec_push(&flows);

			f->id = rec.u.event.extra;
			f->tid = tid;
			f->ts = ts;
			f->begin = rec.u.event.type == FXT_EVENT_FLOW_BEGIN;
			break;
		}
		case FXT_EVENT_COUNTER:
			if (what && !strcmp(mode, "--counter") && rec.nargs &&
			    rec.u.event.name.len == strlen(what) &&
			    !memcmp(rec.u.event.name.data, what, rec.u.event.name.len)) {
				struct counter *c = vec_push(&counters);

				c->ts = ts;
				c->value = rec.args[0].type == FXT_ARG_DOUBLE
					       ? (int64_t)rec.args[0].v.d
					       : rec.args[0].v.i;
			}
			break;
		default:
			break;
		}
	}
	if (err < 0) {
		fprintf(stderr, "libc_slices: %s: %s\n", path, fxt_reader_error(r, NULL));
		return 1;
	}
	fxt_reader_free(r);

	if (!strcmp(mode, "--counter")) {
		struct counter *c = counters.v;

		qsort(c, counters.n, sizeof(*c), cmp_counter);
		for (size_t i = 0; i < counters.n; i++)
			printf("%" PRId64 "\n", c[i].value);
	} else if (!strcmp(mode, "--slices")) {
		struct slice *s = slices.v;
		uint64_t tid = 0;
		unsigned thread = 0;

		/* Threads numbered by their first slice of the category. */
		for (size_t i = 0; i < slices.n; i++)
			s[i].first = 0;
		qsort(s, slices.n, sizeof(*s), cmp_slice); /* by thread, then start */
		for (size_t i = 0, j; i < slices.n; i = j) {
			uint64_t first = UINT64_MAX;

			for (j = i; j < slices.n && s[j].tid == s[i].tid; j++)
				if (first == UINT64_MAX && !strcmp(s[j].cat, what))
					first = s[j].start;
			for (size_t k = i; k < j; k++)
				s[k].first = first;
		}
		qsort(s, slices.n, sizeof(*s), cmp_slice);
		for (size_t i = 0; i < slices.n; i++) {
			if (strcmp(s[i].cat, what))
				continue;
			if (!thread || s[i].tid != tid) {
				tid = s[i].tid;
				thread++;
			}
			printf("%u %s%s\n", thread, s[i].name, s[i].args);
		}
	} else {
		struct flow *f = flows.v;
		struct vec lines = { .size = sizeof(char *) };

		for (size_t i = 0; i < flows.n; i++) {
			const struct slice *b, *e;
			char line[512];

			if (!f[i].begin)
				continue;
			for (size_t j = 0; j < flows.n; j++) {
				if (f[j].begin || f[j].id != f[i].id)
					continue;
				b = slice_at(&slices, f[i].tid, f[i].ts);
				e = slice_at(&slices, f[j].tid, f[j].ts);
				snprintf(line, sizeof(line), "%s -> %s%s%s %s", b ? b->name : "-",
					 e ? e->name : "-", e && e->waited ? " waited=" : "",
					 e && e->waited ? e->waited : "",
					 f[i].tid == f[j].tid ? "same" : "other");
				*(char **)vec_push(&lines) = strdup(line);
			}
		}
		qsort(lines.v, lines.n, sizeof(char *), cmp_str);
		for (size_t i = 0; i < lines.n; i++) {
			printf("%s\n", ((char **)lines.v)[i]);
			free(((char **)lines.v)[i]);
		}
		free(lines.v);
	}
	for (size_t i = 0; i < slices.n; i++) {
		struct slice *s = (struct slice *)slices.v + i;

		free(s->name);
		free(s->cat);
		free(s->args);
		free(s->waited);
	}
	free(slices.v);
	free(flows.v);
	free(counters.v);
	free(opens.v);
	return 0;
}
