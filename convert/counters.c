/* The heap counter (see counters.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "convert/counters.h"
#include "common/grow.h"

int conv_heap_add(struct heap_counter *h, uint64_t ts, int64_t delta)
{
	int err = fxt__grow((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v));

	if (err < 0)
		return err;
	h->v[h->n].ts = ts;
	h->v[h->n].delta = delta;
	h->v[h->n].seq = h->n;
	h->n++;
	return 0;
}

static int delta_cmp(const void *a, const void *b)
{
	const struct counter_delta *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int conv_heap_emit(struct heap_counter *h, struct fxt_writer *w, uint64_t pid, const struct conv_tb *tb,
		   uint64_t *events)
{
	struct fxt_arg arg;
	struct fxt_event ev;
	int64_t sum = 0;
	int err = 0;

	if (!h->n)
		return 0;
	qsort(h->v, h->n, sizeof(*h->v), delta_cmp);
	memset(&ev, 0, sizeof(ev));
	memset(&arg, 0, sizeof(arg));
	ev.type = FXT_EVENT_COUNTER;
	ev.args = &arg;
	ev.nargs = 1;
	ev.extra = 0; /* counter id */
	arg.type = FXT_ARG_INT64;
	for (size_t i = 0; i < h->n && !err; i++) {
		sum += h->v[i].delta;
		/* Refs per event: strings may be evicted in between. */
		ev.thread = fxt_writer_thread(w, pid, pid);
		ev.category = fxt_writer_cstring(w, "libc.mem");
		ev.name = fxt_writer_cstring(w, "heap");
		arg.name = fxt_writer_cstring(w, "bytes_in_use");
		arg.v.i64 = sum;
		ev.ts = conv_tb_ns(tb, h->v[i].ts);
		err = fxt_writer_event(w, &ev);
		(*events)++;
	}
	return err;
}

int conv_heap_take(struct heap_counter *h, struct heap_counter *from)
{
	int err = 0;

	/* In their order: conv_heap_add() numbers them after h's. */
	for (size_t i = 0; i < from->n && !err; i++)
		err = conv_heap_add(h, from->v[i].ts, from->v[i].delta);
	from->n = 0;
	return err;
}

void conv_heap_free(struct heap_counter *h)
{
	free(h->v);
}
