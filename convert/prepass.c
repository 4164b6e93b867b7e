/* The conversion's pre-pass: samples and sync pairs (see prepass.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/entries.h"
#include "common/addrtab.h"
#include "common/grow.h"
#include "convert/prepass.h"
#include "spool/format.h"
#include "spool/libc_table.h"

/* Flow ids the conversion makes (sync pairs) count from here: above every
 * sequence agent_new_flow_id() hands out. */
#define CONV_FLOW_SEQ (1u << 31)

/* Candidates examined per acquisition, latest first: bounds the pairing's
 * time on pathological spools (thousands of unlocks in one wait). */
#define PAIR_SCAN 256u

/* What a SYNC record did, in the CALL frame around it. */
struct sync_rec {
	uint64_t obj;
	uint64_t pos;	     /* the slot's offset in the spool */
	uint64_t start, end; /* the frame (end UINT64_MAX: never closed) */
	uint32_t serial;
	uint32_t op;
	uint64_t frame; /* which frame of the thread (pre-pass numbering) */
};

struct open_call {
	uint64_t addr, start, id;
	size_t first; /* its thread's first sync_rec made inside it */
};

struct pass {
	unsigned char *sampled;
	struct sync_rec *recs;
	size_t nrecs, recs_cap;
	struct open_call *stack;
	size_t depth, stack_cap;
	uint64_t next_frame;
	bool want_sync;
	/* The ONCE head just read (its ONCE_ARG slot comes next). */
	bool once;
	unsigned once_fn;
	uint64_t once_ts;
};

/* Closes the open calls from index `to` up, at `ts`. */
static void prepass_close(struct pass *pp, size_t to, uint64_t ts)
{
	while (pp->depth > to) {
		const struct open_call *c = &pp->stack[--pp->depth];
		for (size_t i = c->first; i < pp->nrecs; i++)
			if (pp->recs[i].frame == c->id)
				pp->recs[i].end = ts;
	}
}

/* One slot of the pre-pass: only heads matter (payload slots have tags
 * of their own, but RAW slots, which the walk skips), so no other record
 * boundaries are needed. */
static int prepass_slot(struct pass *pp, uint32_t serial, const uint64_t *p, uint64_t pos)
{
	unsigned tag = ev_tag(p[1]);

	if (tag == EV_TAG_SAMPLE && ev_sample_depth(p[1]) && pp->sampled)
		pp->sampled[serial] = 1;
	if (!pp->want_sync)
		return 0;
	if (tag == EV_TAG_ONCE_ARG) {
		/* A whole call at its head's time: its SYNC, if it makes one,
		 * has this slot's place (replay.c). */
		struct agent_once o;
		struct sync_rec *s;
		bool head = pp->once && pp->once_fn == ev_call_fn(p[1]);

		pp->once = false;
		if (!head || !agent_fn_once(pp->once_fn, &o) || !o.op)
			return 0;
		if (fxt__grow((void **)&pp->recs, &pp->recs_cap, pp->nrecs + 1, sizeof(*pp->recs)) <
		    0)
			return -ENOMEM;
		s = &pp->recs[pp->nrecs++];
		*s = (struct sync_rec){ .obj = p[0],
					.pos = pos,
					.start = pp->once_ts,
					.end = pp->once_ts,
					.serial = serial,
					.op = o.op,
					.frame = 0 /* none: closed already */ };
		return 0;
	}
	pp->once = tag == EV_TAG_ONCE;
	if (pp->once) {
		pp->once_fn = ev_call_fn(p[1]);
		pp->once_ts = p[0];
		return 0;
	}
	if (tag == EV_TAG_CALL) {
		uint64_t addr = p[1] & EV_CALL_ADDR_MASK;
		if (!(p[1] & EV_EXIT_BIT)) {
			struct open_call *c;
			if (fxt__grow((void **)&pp->stack, &pp->stack_cap, pp->depth + 1,
				      sizeof(*pp->stack)) < 0)
				return -ENOMEM;
			c = &pp->stack[pp->depth++];
			c->addr = addr;
			c->start = p[0];
			c->id = ++pp->next_frame;
			c->first = pp->nrecs;
			return 0;
		}
		for (size_t i = pp->depth; i > 0; i--) {
			if (pp->stack[i - 1].addr == addr) {
				prepass_close(pp, i - 1, p[0]);
				break;
			}
		}
		return 0;
	}
	if (tag == EV_TAG_SYNC && pp->depth) {
		const struct open_call *c = &pp->stack[pp->depth - 1];
		struct sync_rec *s;
		if (fxt__grow((void **)&pp->recs, &pp->recs_cap, pp->nrecs + 1, sizeof(*pp->recs)) <
		    0)
			return -ENOMEM;
		s = &pp->recs[pp->nrecs++];
		s->obj = p[0];
		s->pos = pos;
		s->start = c->start;
		s->end = UINT64_MAX;
		s->serial = serial;
		s->op = ev_sync_op(p[1]);
		s->frame = c->id;
	}
	return 0;
}

static int prepass_thread(int fd, struct pass *pp, const struct chunk_ref *chunks, size_t nchunks,
			  uint64_t *buf)
{
	pp->depth = 0;
	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk_ref *c = &chunks[i];
		uint64_t off = c->off + SPOOL_CHUNK_HEADER_SIZE, end = c->off + c->size;
		size_t skip = 0; /* RAW slots at the start of the next block */

		pp->once = false; /* a record never spans chunks */
		while (off < end) {
			const uint64_t *p, *start, *stop;
			int err = conv_chunk_read(fd, NULL, 0, c, off, buf, &start, &stop);
			if (err < 0)
				return err;
			for (p = start + 2 * skip; p < stop; p += 2) {
				if (!(p[1] & EV_TAG_BITS))
					continue;
				err = prepass_slot(
				    pp, c->serial, p,
				    off + (uint64_t)((const char *)p - (const char *)start));
				if (err < 0)
					return err;
				p += 2 * ev_raw_slots(p[1]); /* payload of its own */
			}
			skip = ev_raw_skip(p, stop);
			off += (uint64_t)((const char *)stop - (const char *)start);
		}
	}
	return 0;
}

static int sync_cmp(const void *a, const void *b)
{
	const struct sync_rec *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int action_cmp(const void *a, const void *b)
{
	const struct sync_action *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The release an acquisition `a` waited for, in the group v[0 .. n) of
 * its object (sorted by start), or NULL (the rules: prepass.h). */
static const struct sync_rec *pair_of(const struct sync_rec *a, const struct sync_rec *v, size_t n)
{
	size_t lo = 0, hi = n;
	unsigned scanned = 0;

	/* The first record that started after the acquisition ended. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= a->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && scanned++ < PAIR_SCAN) {
		const struct sync_rec *r = &v[lo];
		if (r->serial == a->serial)
			continue;
		switch (a->op) {
		case EV_SYNC_LOCK_WAITED:
			if (r->op == EV_SYNC_UNLOCK && r->start < a->end && r->end > a->start)
				return r;
			break;
		case EV_SYNC_WOKEN:
			if (r->start < a->start)
				return NULL;
			if (r->op == EV_SYNC_SIGNAL || r->op == EV_SYNC_BROADCAST)
				return r;
			break;
		case EV_SYNC_SEM_WAITED:
			if (r->start < a->start)
				return NULL;
			if (r->op == EV_SYNC_POST)
				return r;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

static bool sync_waited(uint32_t op)
{
	return op == EV_SYNC_LOCK_WAITED || op == EV_SYNC_WOKEN || op == EV_SYNC_SEM_WAITED;
}

/* An object's key in an addrtab (whose key 0 means an empty slot).  Two
 * objects may share one (0 and ~0): keeping one too many only costs. */
static uint64_t obj_key(uint64_t obj)
{
	return obj ? obj : ~0ull;
}

/* Keeps only the records of objects that some acquisition waited on:
 * the others' (uncontended locks, their unlocks: nearly all of them)
 * pair with nothing, and need no sort. */
static int keep_waited(struct pass *pp)
{
	struct addrtab waited = ADDRTAB_INIT(uint64_t);
	size_t k = 0;

	for (size_t i = 0; i < pp->nrecs; i++)
		if (sync_waited(pp->recs[i].op) &&
		    !addrtab_get(&waited, obj_key(pp->recs[i].obj), NULL)) {
			addrtab_free(&waited);
			return -ENOMEM;
		}
	for (size_t i = 0; waited.n && i < pp->nrecs; i++)
		if (addrtab_find(&waited, obj_key(pp->recs[i].obj)))
			pp->recs[k++] = pp->recs[i];
	pp->nrecs = k;
	addrtab_free(&waited);
	return 0;
}

/* Pairs releases with the acquisitions that waited for them: a flow from
 * each release's frame (begin) to the acquiring frame's end. */
static int pair_syncs(struct pass *pp, uint64_t pid, struct prepass *out)
{
	uint32_t seq = CONV_FLOW_SEQ;
	size_t cap = 0;
	int err = keep_waited(pp);

	if (err < 0 || !pp->nrecs)
		return err;
	qsort(pp->recs, pp->nrecs, sizeof(*pp->recs), sync_cmp);
	for (size_t g = 0, h; g < pp->nrecs; g = h) {
		for (h = g; h < pp->nrecs && pp->recs[h].obj == pp->recs[g].obj; h++)
			;
		for (size_t i = g; i < h; i++) {
			const struct sync_rec *a = &pp->recs[i], *r;
			uint64_t id;
			if (!sync_waited(a->op))
				continue;
			r = pair_of(a, &pp->recs[g], h - g);
			if (!r)
				continue;
			if (fxt__grow((void **)&out->actions, &cap, out->nactions + 2,
				      sizeof(*out->actions)) < 0)
				return -ENOMEM;
			id = ev_flow_id(EV_FLOWID_LOCAL, pid, ++seq);
			out->actions[out->nactions++] =
			    (struct sync_action){ .pos = r->pos, .id = id, .phase = EV_FLOW_BEGIN };
			out->actions[out->nactions++] = (struct sync_action){
				.pos = a->pos, .id = id, .phase = EV_FLOW_END | FLOW_AT_END
			};
		}
	}
	if (out->nactions)
		qsort(out->actions, out->nactions, sizeof(*out->actions), action_cmp);
	return 0;
}

int conv_prepass(int fd, const struct chunk_ref *chunks, size_t nchunks, uint32_t max_serial,
		 bool samples, bool sync, uint64_t pid, struct prepass *out)
{
	struct pass pp;
	uint64_t *buf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	memset(&pp, 0, sizeof(pp));
	pp.want_sync = sync;
	if (samples) {
		out->sampled = calloc((size_t)max_serial + 1, 1);
		if (!out->sampled)
			return -ENOMEM;
	}
	pp.sampled = out->sampled;
	if ((!pp.want_sync && !pp.sampled) || !nchunks)
		return 0;
	buf = malloc(READ_BLOCK);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0, j; i < nchunks && !err; i = j) {
		for (j = i; j < nchunks && chunks[j].serial == chunks[i].serial; j++)
			;
		err = prepass_thread(fd, &pp, chunks + i, j - i, buf);
	}
	if (!err && pp.nrecs)
		err = pair_syncs(&pp, pid, out);
	free(buf);
	free(pp.recs);
	free(pp.stack);
	return err;
}

size_t conv_prepass_actions_at(const struct prepass *pp, uint64_t pos)
{
	const struct sync_action *v = pp->actions;
	size_t lo = 0, hi = pp->nactions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void conv_prepass_free(struct prepass *pp)
{
	free(pp->sampled);
	free(pp->actions);
	memset(pp, 0, sizeof(*pp));
}
