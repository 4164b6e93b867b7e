/* fxt-dump --check: the rules that need more than one record.
 *
 * The reader checks each record alone (sizes, reserved bits, refs, UTF-8).
 * Here we follow threads across the archive:
 *  - duration begin/end pairing per thread: an end without a begin, or a
 *    begin never ended, is what real recorders do (a trace started or
 *    stopped mid-call): a warning;
 *  - flows ended and never begun, or ending before they begin (in time:
 *    file order does not matter): warnings.  Flows begun and never ended
 *    are counted in a note: a recorder cannot end a flow whose other end
 *    it did not trace (every write into a pipe or socket that an untraced
 *    program reads), and Perfetto shows the begin without an arrow;
 *  - complete events on one thread must nest exactly.  Perfetto drops a
 *    complete event that partly overlaps a sibling, so that is an error.
 *    Complete events may be written in any order (at their end, typically),
 *    so their intervals are kept per thread and checked, sorted, at the end,
 *    with those of the begin/end pairs (the slices Perfetto nests them
 *    with); past MAX_INTERVALS the check covers the first ones and says so;
 *  - what Perfetto needs: a thread object's "process" argument of koid type
 *    (a warning when missing, an error when of another type), numeric
 *    counter arguments (a warning);
 *  - what Perfetto does not show: slices nested deeper than its limit
 *    (a warning, fxt/depth.h; tools/dump/nesting.c is fed every slice of a
 *    thread, complete events and begin/end pairs, in the sorted order of
 *    the overlap check).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/dump/dump.h"
#include "tools/dump/nesting.h"

#define MAX_INTERVALS (8u << 20) /* 24 bytes each: 192 MB at most */

/* A slice: a complete event, or a begin/end pair (offset | IV_BEGUN, the
 * begin's; end UINT64_MAX when never ended). */
struct interval {
	uint64_t start, end, offset;
};

#define IV_BEGUN (1ull << 63)

/* An open duration begin: its offset, its time in ns. */
struct begin {
	uint64_t offset, ts;
};

struct thread_state {
	uint64_t pid, tid;
	struct begin *begins; /* the open duration begins, outermost first */
	size_t nbegins, capbegins;
	struct interval *iv;
	size_t niv, capiv;
};

enum { FLOW_BEGIN_AT, FLOW_BEGIN_TS, FLOW_END_AT, FLOW_END_TS };

struct checker {
	fxt_diag_fn report;
	void *ctx;
	struct pairmap thread_index; /* (pid, tid) -> index + 1 into threads */
	struct thread_state *threads;
	size_t nthreads, capthreads;
	/* (correlation id, FLOW_*) -> offset + 1 of the first begin / end
	 * or step, and their times in ns (providers have their own clocks). */
	struct pairmap flows;
	struct pairmap rates; /* (provider id, 0) -> ticks per second */
	size_t total_iv;
	bool iv_capped;
	/* Depths of the slices (sorted, at the end). */
	struct nesting *nest;
};

static void report(struct checker *c, enum fxt_diag_level level, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(struct checker *c, enum fxt_diag_level level, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->report(c->ctx, level, off, msg);
}

int checker_new(struct checker **out, fxt_diag_fn fn, void *ctx)
{
	struct checker *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->report = fn;
	c->ctx = ctx;
	pairmap_init(&c->thread_index);
	pairmap_init(&c->flows);
	pairmap_init(&c->rates);
	if (nesting_new(&c->nest, FXT__SHOWN_DEPTH) < 0) {
		checker_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void checker_free(struct checker *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nthreads; i++) {
		free(c->threads[i].begins);
		free(c->threads[i].iv);
	}
	free(c->threads);
	pairmap_free(&c->thread_index);
	pairmap_free(&c->flows);
	pairmap_free(&c->rates);
	nesting_free(c->nest);
	free(c);
}

static struct thread_state *thread_of(struct checker *c, uint64_t pid, uint64_t tid)
{
	bool created;
	uint64_t *v = pairmap_get(&c->thread_index, pid, tid, &created);
	if (!v)
		return NULL;
	if (!created)
		return &c->threads[*v - 1];
	if (TOOL_GROW(c->threads, c->capthreads, c->nthreads + 1) < 0) {
		pairmap_del(&c->thread_index, pid, tid);
		return NULL;
	}
	struct thread_state *t = &c->threads[c->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	*v = c->nthreads;
	return t;
}

/* The argument called `name`, or NULL. */
static const struct fxt_arg_value *find_arg(const struct fxt_record *rec, const char *name)
{
	size_t len = strlen(name);
	for (unsigned i = 0; i < rec->nargs; i++)
		if (rec->args[i].name.len == len && memcmp(rec->args[i].name.data, name, len) == 0)
			return &rec->args[i];
	return NULL;
}

/* What Perfetto's importer needs beyond the spec (see docs in DESIGN.md). */
static void check_perfetto(struct checker *c, const struct fxt_record *rec)
{
	if (rec->type == FXT_RECORD_KERNEL_OBJECT && rec->u.kobj.obj_type == FXT_OBJ_THREAD) {
		const struct fxt_arg_value *a = find_arg(rec, "process");
		if (!a)
			report(c, FXT_DIAG_WARNING, rec->offset,
			       "thread object %" PRIu64 " without a \"process\" argument: Perfetto "
			       "puts it under pid 0",
			       rec->u.kobj.koid);
		else if (a->type != FXT_ARG_KOID)
			report(c, FXT_DIAG_ERROR, rec->offset,
			       "thread object %" PRIu64
			       ": its \"process\" argument is %s, not koid "
			       "(Perfetto rejects the record)",
			       rec->u.kobj.koid, fxt_arg_type_name(a->type));
	}
	if (rec->type == FXT_RECORD_EVENT && rec->u.event.type == FXT_EVENT_COUNTER) {
		for (unsigned i = 0; i < rec->nargs; i++) {
			enum fxt_arg_type t = rec->args[i].type;
			if (t != FXT_ARG_INT32 && t != FXT_ARG_UINT32 && t != FXT_ARG_INT64 &&
			    t != FXT_ARG_UINT64 && t != FXT_ARG_DOUBLE)
				report(c, FXT_DIAG_WARNING, rec->offset,
				       "counter argument \"%.*s\" is %s, not a number (Perfetto "
				       "refuses it)",
				       (int)rec->args[i].name.len, rec->args[i].name.data,
				       fxt_arg_type_name(t));
		}
	}
}

/* Ticks of provider `provider` in ns (a provider without an
 * initialization record counts in ns). */
static uint64_t to_ns(const struct checker *c, uint32_t provider, uint64_t ticks)
{
	const uint64_t *rate = pairmap_find(&c->rates, provider, 0);

	if (!rate || !*rate || *rate == 1000000000u)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / *rate);
}

/* A slice of t, [start, end] in ns (as Perfetto compares them: two
 * sections of one provider id, a process's images, may count ticks at
 * slightly different rates). */
static int add_interval(struct checker *c, struct thread_state *t, uint64_t start, uint64_t end,
			uint64_t offset)
{
	if (c->total_iv >= MAX_INTERVALS) {
		c->iv_capped = true;
		return 0;
	}
	if (TOOL_GROW(t->iv, t->capiv, t->niv + 1) < 0)
		return -ENOMEM;
	t->iv[t->niv++] = (struct interval){ start, end, offset };
	c->total_iv++;
	return 0;
}

int checker_record(struct checker *c, const struct fxt_record *rec)
{
	check_perfetto(c, rec);
	if (rec->type == FXT_RECORD_INITIALIZATION) {
		bool created;
		uint64_t *rate = pairmap_get(&c->rates, rec->provider_id, 0, &created);
		if (!rate)
			return -ENOMEM;
		*rate = rec->u.init.ticks_per_second;
		return 0;
	}
	if (rec->type != FXT_RECORD_EVENT)
		return 0;
	const __typeof__(rec->u.event) *ev = &rec->u.event;
	struct thread_state *t;
	bool created;

	switch (ev->type) {
	case FXT_EVENT_DURATION_BEGIN:
		if (!(t = thread_of(c, ev->pid, ev->tid)) ||
		    TOOL_GROW(t->begins, t->capbegins, t->nbegins + 1) < 0)
			return -ENOMEM;
		t->begins[t->nbegins++] =
		    (struct begin){ rec->offset, to_ns(c, rec->provider_id, ev->ts) };
		break;
	case FXT_EVENT_DURATION_END:
		if (!(t = thread_of(c, ev->pid, ev->tid)))
			return -ENOMEM;
		if (t->nbegins == 0) {
			report(c, FXT_DIAG_WARNING, rec->offset,
			       "duration end with no begin on pid %" PRIu64 " tid %" PRIu64,
			       ev->pid, ev->tid);
			break;
		}
		t->nbegins--;
		return add_interval(c, t, t->begins[t->nbegins].ts,
				    to_ns(c, rec->provider_id, ev->ts),
				    t->begins[t->nbegins].offset | IV_BEGUN);
	case FXT_EVENT_DURATION_COMPLETE:
		if (!(t = thread_of(c, ev->pid, ev->tid)))
			return -ENOMEM;
		return add_interval(c, t, to_ns(c, rec->provider_id, ev->ts),
				    to_ns(c, rec->provider_id, ev->extra), rec->offset);
	case FXT_EVENT_FLOW_BEGIN:
	case FXT_EVENT_FLOW_STEP:
	case FXT_EVENT_FLOW_END: {
		/* Kept by id, paired at the end: a flow's ends may come before
		 * its begin in the file (writers emit thread by thread;
		 * Perfetto sorts by time).  Keys (id, FLOW_*). */
		const bool begin = ev->type == FXT_EVENT_FLOW_BEGIN;
		uint64_t *v = pairmap_get(&c->flows, ev->extra, begin ? FLOW_BEGIN_AT : FLOW_END_AT,
					  &created);
		if (!v)
			return -ENOMEM;
		if (!created && begin) {
			report(c, FXT_DIAG_WARNING, rec->offset,
			       "flow %" PRIu64 " begun again (first at offset %" PRIu64 ")",
			       ev->extra, *v - 1);
			break;
		}
		if (!created)
			break; /* steps and the end: the first one is enough */
		*v = rec->offset + 1;
		v = pairmap_get(&c->flows, ev->extra, begin ? FLOW_BEGIN_TS : FLOW_END_TS,
				&created);
		if (!v)
			return -ENOMEM;
		*v = to_ns(c, rec->provider_id, ev->ts);
		break;
	}
	default:
		break;
	}
	return 0;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;
	/* By start, the longer first, so that a parent precedes its children. */
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Flows, by id: begun and never ended (a note), ended (or stepped) and
 * never begun, and ended before they begin (Perfetto binds flow events in
 * time order: such an end is dropped). */
static void check_flows(struct checker *c)
{
	uint64_t unended = 0, unbegun = 0, backwards = 0;
	uint64_t first_unended = UINT64_MAX, first_unbegun = UINT64_MAX, first_back = UINT64_MAX;
	uint64_t id_unended = 0, id_unbegun = 0, id_back = 0;

	for (size_t i = 0; i < c->flows.nslots; i++) {
		const struct pairmap_slot *s = &c->flows.slots[i];
		const uint64_t *other, *bts, *ets;

		if (!s->used)
			continue;
		if (s->b == FLOW_BEGIN_AT) {
			other = pairmap_find(&c->flows, s->a, FLOW_END_AT);
			if (!other) {
				unended++;
				if (s->value - 1 < first_unended) {
					first_unended = s->value - 1;
					id_unended = s->a;
				}
				continue;
			}
			bts = pairmap_find(&c->flows, s->a, FLOW_BEGIN_TS);
			ets = pairmap_find(&c->flows, s->a, FLOW_END_TS);
			if (bts && ets && *ets < *bts) {
				backwards++;
				if (*other - 1 < first_back) {
					first_back = *other - 1;
					id_back = s->a;
				}
			}
		} else if (s->b == FLOW_END_AT && !pairmap_find(&c->flows, s->a, FLOW_BEGIN_AT)) {
			unbegun++;
			if (s->value - 1 < first_unbegun) {
				first_unbegun = s->value - 1;
				id_unbegun = s->a;
			}
		}
	}
	if (unended)
		report(c, FXT_DIAG_INFO, first_unended,
		       "%" PRIu64 " flow(s) begun and never ended (first: id %" PRIu64
		       "): their other end was not traced (a pipe's or socket's reader)",
		       unended, id_unended);
	if (unbegun)
		report(c, FXT_DIAG_WARNING, first_unbegun,
		       "%" PRIu64 " flow(s) stepped or ended and never begun (first: id %" PRIu64
		       ")",
		       unbegun, id_unbegun);
	if (backwards)
		report(c, FXT_DIAG_WARNING, first_back,
		       "%" PRIu64 " flow(s) end before they begin (first: id %" PRIu64 ")",
		       backwards, id_back);
}

/* Reports complete events that partly overlap an enclosing one, and feeds
 * the depth tracker.  The stack holds the chain of open intervals;
 * anything that ends at or before the new start is closed first.  A
 * begin/end pair is only nested: Perfetto matches an end with its begin,
 * whatever closed in between. */
static void check_nesting(struct checker *c, struct thread_state *t)
{
	if (t->niv == 1 &&
	    nesting_complete(c->nest, t->pid, t->tid, t->iv[0].start, t->iv[0].end) < 0)
		report(c, FXT_DIAG_WARNING, 0, "out of memory: depth not checked");
	if (t->niv < 2)
		return;
	qsort(t->iv, t->niv, sizeof(*t->iv), cmp_interval);
	size_t *stack = malloc(t->niv * sizeof(*stack)), depth = 0;
	if (!stack) {
		report(c, FXT_DIAG_WARNING, 0, "out of memory: nesting not checked");
		return;
	}
	for (size_t i = 0; i < t->niv; i++) {
		const struct interval *cur = &t->iv[i];
		while (depth > 0 && t->iv[stack[depth - 1]].end <= cur->start)
			depth--;
		if (depth > 0 && cur->end > t->iv[stack[depth - 1]].end &&
		    !((cur->offset | t->iv[stack[depth - 1]].offset) & IV_BEGUN)) {
			const struct interval *top = &t->iv[stack[depth - 1]];
			report(c, FXT_DIAG_ERROR, cur->offset,
			       "complete event [%" PRIu64 ", %" PRIu64
			       "] ns partly overlaps the one at "
			       "offset %" PRIu64 " [%" PRIu64 ", %" PRIu64 "] ns on pid %" PRIu64
			       " tid %" PRIu64 " (Perfetto drops it)",
			       cur->start, cur->end, top->offset, top->start, top->end, t->pid,
			       t->tid);
			continue; /* keep the stack as Perfetto would: without it */
		}
		stack[depth++] = i;
		if (nesting_complete(c->nest, t->pid, t->tid, cur->start, cur->end) < 0) {
			report(c, FXT_DIAG_WARNING, 0, "out of memory: depth not checked");
			break;
		}
	}
	free(stack);
}

/* Slices Perfetto will not show (fxt/depth.h). */
static void check_depth(struct checker *c)
{
	struct nesting_result res;
	char msg[512];

	nesting_result(c->nest, &res);
	if (!res.deeper)
		return;
	fxt__depth_warning(msg, sizeof(msg), res.deeper, res.max_depth, res.max_pid, res.max_tid);
	report(c, FXT_DIAG_WARNING, 0, "%s", msg);
}

void checker_finish(struct checker *c)
{
	for (size_t i = 0; i < c->nthreads; i++) {
		struct thread_state *t = &c->threads[i];
		if (t->nbegins)
			report(c, FXT_DIAG_WARNING, t->begins[0].offset,
			       "%zu duration begin(s) never ended on pid %" PRIu64 " tid %" PRIu64,
			       t->nbegins, t->pid, t->tid);
		/* Open to the end: they enclose whatever follows them. */
		for (size_t k = 0; k < t->nbegins; k++)
			if (add_interval(c, t, t->begins[k].ts, UINT64_MAX,
					 t->begins[k].offset | IV_BEGUN) < 0) {
				report(c, FXT_DIAG_WARNING, 0, "out of memory: depth not checked");
				break;
			}
		check_nesting(c, t);
	}
	check_flows(c);
	check_depth(c);
	if (c->iv_capped)
		report(c, FXT_DIAG_WARNING, 0,
		       "nesting checked for the first %u complete events only", MAX_INTERVALS);
}
