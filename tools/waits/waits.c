/* fxt-waits' engine: see waits.h.
 *
 * Per thread, a stack of the slices open at the current record (complete
 * slices stay on it until a later record of the thread starts at or after
 * their end).  Names are interned once (a cache keyed by the archive's
 * string refs spares the hashing); frames hold times in the archive's
 * ticks, converted to ns only for what is kept: the waits (a blocking
 * frame a flow ends in, or that waited without one), the releases (a
 * flow's begin, with the innermost frames of its thread's stack) and, at
 * the end, each thread's last frames (for joins and waits for a child).
 * The pairing is done once the whole archive is read, since a flow's
 * begin and end may come in either order.
 *
 * The records are read in runs of plain events (fxt_reader_next_plain())
 * where the reader can: their complete events, nearly all of what the
 * agent writes, take add_complete(), add_record()'s steps inlined with
 * nothing the others need (no record made of them, no call per event);
 * a frame that cannot be a wait leaves its stack with no call either.
 * With more than one CPU the reader decodes on a second thread
 * (read_piped(): the profile engine's pipe, tools/profile/recpipe.h, the
 * times left in ticks), this one takes what it hands over.
 *
 * One job, one file past 800 lines: the way from a record to its frame,
 * and both loops that take it (read_records(), read_piped()), stay
 * together so that it inlines into them; the pairing once read is
 * waits-pair.c's. */
#include "config.h"

#include "tools/waits/waits-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tools/profile/recpipe.h"

/* The libc calls that wait for another thread or process (their slices'
 * names, in a category "libc.*"). */
static const struct {
	const char *name;
	enum wkind kind;
} blocking[] = {
	{ "pthread_mutex_lock", WK_LOCK },
	{ "pthread_mutex_timedlock", WK_LOCK },
	{ "pthread_rwlock_rdlock", WK_LOCK },
	{ "pthread_rwlock_wrlock", WK_LOCK },
	{ "pthread_rwlock_timedrdlock", WK_LOCK },
	{ "pthread_rwlock_timedwrlock", WK_LOCK },
	{ "sem_wait", WK_LOCK },
	{ "sem_timedwait", WK_LOCK },
	{ "pthread_cond_wait", WK_COND },
	{ "pthread_cond_timedwait", WK_COND },
	{ "read", WK_READ },
	{ "__read_chk", WK_READ },
	{ "readv", WK_READ },
	{ "recv", WK_READ },
	{ "__recv_chk", WK_READ },
	{ "recvfrom", WK_READ },
	{ "__recvfrom_chk", WK_READ },
	{ "recvmsg", WK_READ },
	{ "pthread_join", WK_JOIN },
	{ "pthread_timedjoin_np", WK_JOIN },
	{ "waitpid", WK_CHILD },
	{ "wait", WK_CHILD },
	{ "wait4", WK_CHILD },
};

#define ETIMEDOUT_NAME "ETIMEDOUT"

/* ------------------------------------------------------------------ names */

static enum wkind kind_of(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++)
		if (strlen(blocking[i].name) == len && memcmp(blocking[i].name, s, len) == 0)
			return blocking[i].kind;
	return WK_NONE;
}

static int ntab_put(struct waits_engine *e, uint32_t id)
{
	size_t mask = e->ntab_cap - 1, i = e->names[id].hash & mask;

	while (e->ntab[i])
		i = (i + 1) & mask;
	e->ntab[i] = id + 1;
	return 0;
}

/* The id of the name [s, s + len), interned if new; NO_NAME on ENOMEM. */
static uint32_t intern(struct waits_engine *e, const char *s, size_t len)
{
	uint64_t h = fxt__hash_bytes(s, len);
	size_t i;
	struct name *n;

	if (e->ntab_cap) {
		size_t mask = e->ntab_cap - 1;
		for (i = h & mask; e->ntab[i]; i = (i + 1) & mask) {
			n = &e->names[e->ntab[i] - 1];
			if (n->hash == h && n->len == len && memcmp(n->s, s, len) == 0)
				return e->ntab[i] - 1;
		}
	}
	if (TOOL_GROW(e->names, e->names_cap, e->nnames + 1) < 0)
		return NO_NAME;
	if ((e->nnames + 1) * 2 > e->ntab_cap) {
		size_t cap = e->ntab_cap ? e->ntab_cap * 2 : 1024;
		uint32_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return NO_NAME;
		free(e->ntab);
		e->ntab = t;
		e->ntab_cap = cap;
		for (size_t k = 0; k < e->nnames; k++)
			ntab_put(e, (uint32_t)k);
	}
	n = &e->names[e->nnames];
	n->s = malloc(len + 1);
	if (!n->s)
		return NO_NAME;
	memcpy(n->s, s, len);
	n->s[len] = 0;
	n->len = (uint32_t)len;
	n->hash = h;
	n->kind = (uint8_t)kind_of(s, len);
	ntab_put(e, (uint32_t)e->nnames);
	return (uint32_t)e->nnames++;
}

/* An event's name id: the ref cache first (a table ref means the same
 * string until the next string or metadata record). */
static inline uint32_t name_id(struct waits_engine *e, uint16_t ref, const char *s, size_t len)
{
	uint32_t id;

	if ((ref & 0x8000) || (!ref && len))
		return intern(e, s, len);
	if (e->refc[ref].gen == e->strgen)
		return e->refc[ref].id;
	id = intern(e, s, len);
	if (id != NO_NAME) {
		e->refc[ref].gen = e->strgen;
		e->refc[ref].id = id;
	}
	return id;
}

static void bump_strgen(struct waits_engine *e)
{
	if (++e->strgen == 0) {
		memset(e->refc, 0, sizeof(e->refc));
		e->strgen = 1;
	}
}

/* ---------------------------------------------------------------- threads */

static struct thread *thread_get(struct waits_engine *e, uint64_t pid, uint64_t tid)
{
	struct thread *t;
	int64_t idx;
	bool fresh;

	/* Room for a new one first, so that the map never holds an index
	 * past the threads made. */
	if (e->nthreads == e->threads_cap &&
	    TOOL_GROW(e->threads, e->threads_cap, e->nthreads + 1) < 0)
		return NULL;
	idx = thrmap_get(&e->tmap, pid, tid, (uint32_t)e->nthreads, &fresh);
	if (idx < 0)
		return NULL;
	t = &e->threads[idx];
	if (fresh) {
		e->nthreads++;
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* ------------------------------------------------------------------ waits */

/* The wait of frame f of thread t (created if it has none); parent: the
 * name of the slice around it.  Returns its index or NO_WAIT (ENOMEM). */
static uint32_t wait_of(struct waits_engine *e, struct thread *t, struct frame *f, uint32_t parent)
{
	struct wait *w;

	if (f->wait != NO_WAIT)
		return f->wait;
	if (TOOL_GROW(e->waits, e->waits_cap, e->nwaits + 1) < 0)
		return NO_WAIT;
	w = &e->waits[e->nwaits];
	w->pid = t->pid;
	w->tid = t->tid;
	w->tps = t->tps;
	w->start = waits__ns_of(f->start, t->tps);
	w->end = f->flags & FF_HAS_END ? waits__ns_of(f->end, t->tps) : UINT64_MAX;
	w->call = f->name;
	w->func = f->caller != NO_NAME ? f->caller : parent;
	w->kind = f->kind;
	w->flags = f->flags;
	w->result = f->result;
	w->release = NO_WAIT;
	f->wait = (uint32_t)e->nwaits;
	return (uint32_t)e->nwaits++;
}

/* retire() of a frame that may be a wait: a blocking call's, or one a
 * flow ended in. */
static __attribute__((noinline)) int retire_wait(struct waits_engine *e, struct thread *t,
						 struct frame *f)
{
	bool counts = false;

	switch (f->kind) {
	case WK_LOCK:
		counts = f->flags & FF_WAITED;
		break;
	case WK_READ:
		counts = f->flags & FF_STREAM;
		break;
	case WK_COND:
	case WK_JOIN:
	case WK_CHILD:
		counts = true;
		break;
	default:
		break;
	}
	if (counts || f->wait != NO_WAIT) {
		uint32_t parent = t->n > 1 ? t->f[t->n - 2].name : NO_NAME;

		if (wait_of(e, t, f, parent) == NO_WAIT)
			return -ENOMEM;
		e->waits[f->wait].end = waits__ns_of(f->end, t->tps);
	}
	return 0;
}

/* A frame leaves the stack (its end passed, or its END came). */
static inline int retire(struct waits_engine *e, struct thread *t, struct frame *f)
{
	if ((f->kind != WK_NONE || f->wait != NO_WAIT) && retire_wait(e, t, f) < 0)
		return -ENOMEM;
	t->last = *f;
	t->has_last = true;
	return 0;
}

/* Retires the frames that ended at or before ts: retire() of each, the
 * last one's copy made once. */
static inline int pop_until(struct waits_engine *e, struct thread *t, uint64_t ts)
{
	struct frame *v = t->f;
	size_t n = t->n;

	while (n && (v[n - 1].flags & FF_HAS_END) && v[n - 1].end <= ts) {
		if (v[n - 1].kind != WK_NONE || v[n - 1].wait != NO_WAIT) {
			t->n = n; /* (retire_wait() looks below it) */
			if (retire_wait(e, t, &v[n - 1]) < 0)
				return -ENOMEM;
		}
		n--;
	}
	if (n != t->n) {
		t->last = v[n];
		t->has_last = true;
		t->n = n;
	}
	return 0;
}

/* A blocking call's arguments that matter here. */
static void read_args(struct frame *f, const struct fxt_record *rec)
{
	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];
		const struct fxt_string *n = &a->name;

#define IS(lit) (n->len == sizeof(lit) - 1 && memcmp(n->data, lit, n->len) == 0)
		if (IS("waited") && a->type == FXT_ARG_BOOL && a->v.b)
			f->flags |= FF_WAITED;
		else if (IS("stream_offset"))
			f->flags |= FF_STREAM;
		else if (IS("result") && (a->type == FXT_ARG_INT64 || a->type == FXT_ARG_INT32)) {
			f->result = a->v.i;
			if (a->v.i == ETIMEDOUT)
				f->flags |= FF_TIMEDOUT;
		} else if (IS("error") && a->type == FXT_ARG_STRING &&
			   a->v.s.len == sizeof(ETIMEDOUT_NAME) - 1 &&
			   memcmp(a->v.s.data, ETIMEDOUT_NAME, a->v.s.len) == 0)
			f->flags |= FF_TIMEDOUT;
#undef IS
	}
}

/* A frame of the slice named (ref, s, len) pushed on t, from ts to end
 * (has_end: a complete slice, else a begin); NULL on ENOMEM. */
static inline __attribute__((always_inline)) struct frame *
push_frame(struct waits_engine *e, struct thread *t, uint16_t ref, const char *s, size_t len,
	   uint64_t ts, uint64_t end, bool has_end)
{
	uint32_t name = name_id(e, ref, s, len);

	if (name == NO_NAME || TOOL_GROW(t->f, t->cap, t->n + 1) < 0)
		return NULL;
	t->f[t->n] = (struct frame){ .start = ts,
				     .end = end,
				     .name = name,
				     .caller = NO_NAME,
				     .wait = NO_WAIT,
				     .snap = NO_SNAP,
				     .kind = WK_NONE,
				     .flags = has_end ? FF_HAS_END : 0 };
	return &t->f[t->n++];
}

static int push(struct waits_engine *e, struct thread *t, const struct fxt_record *rec, uint64_t ts,
		uint64_t end, bool has_end)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct frame *f =
	    push_frame(e, t, ev->name_ref, ev->name.data, ev->name.len, ts, end, has_end);
	uint32_t name;

	if (!f)
		return -ENOMEM;
	if (!rec->nargs)
		return 0;
	name = f->name;
	/* libc slices: "caller" first (convert/emit.c) */
	if (rec->args[0].type == FXT_ARG_STRING && rec->args[0].name.len == 6 &&
	    memcmp(rec->args[0].name.data, "caller", 6) == 0) {
		f->caller = intern(e, rec->args[0].v.s.data, rec->args[0].v.s.len);
		if (f->caller == NO_NAME)
			return -ENOMEM;
	}
	if (e->names[name].kind != WK_NONE && ev->category.len > 5 &&
	    memcmp(ev->category.data, "libc.", 5) == 0) {
		f->kind = e->names[name].kind;
		read_args(f, rec);
	}
	return 0;
}

/* The frame a flow event at ts binds to: the innermost open one, or the
 * frame retired last if it holds ts and lies inside (a begun frame's flows
 * come after its END).  NULL if none; *parent: the name around it. */
static struct frame *flow_frame(struct thread *t, uint64_t ts, uint32_t *parent)
{
	struct frame *top = t->n ? &t->f[t->n - 1] : NULL;

	if (t->has_last && t->last.start <= ts && ts < t->last.end &&
	    (!top || t->last.start >= top->start)) {
		*parent = top ? top->name : NO_NAME;
		return &t->last;
	}
	*parent = t->n > 1 ? t->f[t->n - 2].name : NO_NAME;
	return top;
}

/* Frame g (around the frame kept at `parent`) kept in e->snaps, once.
 * Returns its index, or NO_SNAP (ENOMEM). */
static uint32_t keep_frame(struct waits_engine *e, const struct thread *t, struct frame *g,
			   uint32_t parent)
{
	if (g->snap != NO_SNAP)
		return g->snap;
	if (TOOL_GROW(e->snaps, e->snaps_cap, e->nsnaps + 1) < 0)
		return NO_SNAP;
	e->snaps[e->nsnaps] =
	    (struct snapframe){ waits__ns_of(g->start, t->tps),
				g->flags & FF_HAS_END ? waits__ns_of(g->end, t->tps) : UINT64_MAX,
				g->name, parent };
	g->snap = (uint32_t)e->nsnaps;
	return (uint32_t)e->nsnaps++;
}

static int on_flow_begin(struct waits_engine *e, struct thread *t, struct frame *f, uint64_t id,
			 uint64_t ts)
{
	struct release *r;
	uint32_t snap = NO_SNAP;

	/* The stack as it is, each frame kept once for all the releases
	 * made under it (a frame kept had its ancestors kept before it). */
	for (size_t k = 0; k < t->n; k++) {
		snap = keep_frame(e, t, &t->f[k], snap);
		if (snap == NO_SNAP)
			return -ENOMEM;
	}
	if (f == &t->last && (snap = keep_frame(e, t, f, snap)) == NO_SNAP)
		return -ENOMEM;
	if (TOOL_GROW(e->rels, e->rels_cap, e->nrels + 1) < 0)
		return -ENOMEM;
	r = &e->rels[e->nrels++];
	r->id = id;
	r->pid = t->pid;
	r->tid = t->tid;
	r->ts = waits__ns_of(ts, t->tps);
	r->call = f->name;
	r->func = f->caller;
	if (r->func == NO_NAME)
		r->func = f == &t->last ? (t->n ? t->f[t->n - 1].name : NO_NAME)
					: (t->n > 1 ? t->f[t->n - 2].name : NO_NAME);
	r->snap = snap;
	return 0;
}

static int on_flow(struct waits_engine *e, struct thread *t,
		   const typeof(((struct fxt_record *)0)->u.event) *ev, uint64_t ts)
{
	uint32_t parent;
	struct frame *f = flow_frame(t, ts, &parent);
	uint32_t w;
	int rc;

	if (!f)
		return 0;
	if (ev->type != FXT_EVENT_FLOW_END) { /* begin, or a step: both */
		rc = on_flow_begin(e, t, f, ev->extra, ts);
		if (rc < 0 || ev->type == FXT_EVENT_FLOW_BEGIN)
			return rc;
	}
	if (f->kind == WK_NONE)
		return 0; /* a thread's start, a fork's child: no wait */
	w = wait_of(e, t, f, parent);
	if (w == NO_WAIT || TOOL_GROW(e->links, e->links_cap, e->nlinks + 1) < 0)
		return -ENOMEM;
	if (f == &t->last) /* retired already: its end is known */
		e->waits[w].end = waits__ns_of(f->end, t->tps);
	e->links[e->nlinks++] = (struct link){ w, ev->extra };
	return 0;
}

static int see_kobj(struct waits_engine *e, const struct fxt_record *rec)
{
	uint32_t name;

	if ((rec->u.kobj.obj_type != FXT_OBJ_THREAD && rec->u.kobj.obj_type != FXT_OBJ_PROCESS) ||
	    !rec->u.kobj.name.len)
		return 0;
	name = intern(e, rec->u.kobj.name.data, rec->u.kobj.name.len);
	if (name == NO_NAME || TOOL_GROW(e->knames, e->knames_cap, e->nknames + 1) < 0)
		return -ENOMEM;
	e->knames[e->nknames] = (struct koid_name){ rec->u.kobj.koid, name,
						    (uint32_t)e->nknames * 2 +
							(rec->u.kobj.obj_type == FXT_OBJ_THREAD) };
	e->nknames++;
	return 0;
}

/* The thread of an event of category (cat, len), its clock and what it
 * has seen updated; NULL on ENOMEM. */
static inline __attribute__((always_inline)) struct thread *
event_thread(struct waits_engine *e, uint64_t pid, uint64_t tid, const char *cat, size_t len)
{
	struct thread *t;

	if (e->tmap.last && e->tmap.last_pid == pid && e->tmap.last_tid == tid)
		t = &e->threads[e->tmap.last - 1];
	else if (!(t = thread_get(e, pid, tid)))
		return NULL;
	t->tps = e->tps;
	t->used = true;
	if (!t->calls && (len != 5 || memcmp(cat, "sched", 5) != 0))
		t->calls = true;
	return t;
}

/* An event's time ts (ticks of e->tps), for the first one in ns: the
 * division only when ts may be less than what it gave last (ticks of one
 * rate are in the order of their ns). */
static inline void see_time(struct waits_engine *e, uint64_t ts)
{
	uint64_t ns;

	if (e->any_time && e->tps == e->lo_tps && ts >= e->lo_ticks)
		return;
	ns = waits__ns_of(ts, e->tps);
	if (!e->any_time || ns < e->first_ns) {
		e->first_ns = ns;
		e->any_time = true;
	}
	e->lo_ticks = ts;
	e->lo_tps = e->tps;
}

/* A record that is no event, after which the reader's clock was tps. */
static int add_other(struct waits_engine *e, const struct fxt_record *rec, uint64_t tps)
{
	e->tps = tps;
	tool_losses_record(&e->losses, rec);
	if (rec->type == FXT_RECORD_STRING || rec->type == FXT_RECORD_METADATA)
		bump_strgen(e);
	else if (rec->type == FXT_RECORD_KERNEL_OBJECT)
		return see_kobj(e, rec);
	else if (rec->type == FXT_RECORD_CONTEXT_SWITCH) {
		if (TOOL_GROW(e->sw, e->sw_cap, e->nsw + 1) < 0)
			return -ENOMEM;
		e->sw[e->nsw++] = (struct switch_in){ rec->u.cswitch.in_tid,
						      waits__ns_of(rec->u.cswitch.ts, e->tps) };
		return sched_add_record(&e->sched, rec, e->sw[e->nsw - 1].ts);
	}
	return 0;
}

static int add_record(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	struct waits_engine *e = ctx;
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct thread *t;
	uint64_t ts, end;

	if (rec->type != FXT_RECORD_EVENT)
		return add_other(e, rec, fxt_reader_ticks_per_second(r));
	if (__builtin_expect(r != e->last_reader, 0)) {
		e->last_reader = r;
		e->tps = fxt_reader_ticks_per_second(r);
		bump_strgen(e);
	}
	t = event_thread(e, ev->pid, ev->tid, ev->category.data, ev->category.len);
	if (!t)
		return -ENOMEM;
	if (ev->type == FXT_EVENT_INSTANT) {
		e->kernel_lost += fxt_kernel_lost_in_name(ev->name.data, ev->name.len);
		tool_losses_record(&e->losses, rec);
		if (e->sched.nswitch &&
		    sched_add_record(&e->sched, rec, waits__ns_of(ev->ts, e->tps)) < 0)
			return -ENOMEM;
	}
	ts = ev->ts;
	end = ev->type == FXT_EVENT_DURATION_COMPLETE && ev->extra > ts ? ev->extra : ts;
	if (end > t->max_end)
		t->max_end = end;
	see_time(e, ts);
	if (pop_until(e, t, ts) < 0)
		return -ENOMEM;
	switch (ev->type) {
	case FXT_EVENT_DURATION_BEGIN:
		return push(e, t, rec, ts, 0, false);
	case FXT_EVENT_DURATION_COMPLETE:
		return push(e, t, rec, ts, end, true);
	case FXT_EVENT_DURATION_END:
		for (size_t k = t->n; k-- > 0;) {
			struct frame *f = &t->f[k];

			if (f->flags & FF_HAS_END)
				continue;
			/* Complete frames above it end with it. */
			while (t->n > k + 1) {
				if (retire(e, t, &t->f[t->n - 1]) < 0)
					return -ENOMEM;
				t->n--;
			}
			f->end = ts;
			f->flags |= FF_HAS_END;
			if (retire(e, t, f) < 0)
				return -ENOMEM;
			t->n--;
			break;
		}
		return 0;
	case FXT_EVENT_FLOW_BEGIN:
	case FXT_EVENT_FLOW_STEP:
	case FXT_EVENT_FLOW_END:
		return on_flow(e, t, ev, ts);
	default:
		return 0;
	}
}

/* add_record() of a complete event without arguments (a plain one,
 * fxt_reader_next_plain()'s: most of an archive's), its steps inlined. */
static inline __attribute__((always_inline)) int add_complete(struct waits_engine *e,
							      const struct fxt_plain *p)
{
	uint64_t ts = p->ts, end = p->extra > ts ? p->extra : ts;
	struct thread *t = event_thread(e, p->pid, p->tid, p->category, p->category_len);

	if (!t)
		return -ENOMEM;
	if (end > t->max_end)
		t->max_end = end;
	see_time(e, ts);
	if (pop_until(e, t, ts) < 0 ||
	    !push_frame(e, t, p->name_ref, p->name, p->name_len, ts, end, true))
		return -ENOMEM;
	return 0;
}

/* Plain events read at a time (4.5 KB). */
#define PLAIN_RUN 64

/* Reads r's records into e: tool_read_records()'s loop, its checks and
 * messages, with the plain complete events taken by add_complete() and
 * the rest given to add_record() as records. */
static int read_records(struct waits_engine *e, struct fxt_reader *r, char *err, size_t errlen)
{
	struct fxt_plain plain[PLAIN_RUN];
	struct fxt_record rec = { 0 };
	uint64_t n = 0;
	int rc;

	for (;;) {
		size_t k = n ? fxt_reader_next_plain(r, plain, PLAIN_RUN) : 0;

		if (k) {
			n += k;
			if (__builtin_expect(r != e->last_reader, 0)) { /* add_record()'s */
				e->last_reader = r;
				e->tps = fxt_reader_ticks_per_second(r);
				bump_strgen(e);
			}
			for (size_t i = 0; i < k; i++) {
				const struct fxt_plain *p = &plain[i];

				rc = p->type == FXT_EVENT_DURATION_COMPLETE
					 ? add_complete(e, p)
					 : add_record(e, r, fxt_plain_record(&rec, p));
				if (rc < 0)
					goto fail;
			}
			continue;
		}
		if ((rc = fxt_reader_next(r, &rec)) <= 0)
			break;
		if (n++ == 0 && (rc = tool_read_first(r, err, errlen)) < 0)
			return rc;
		if ((rc = add_record(e, r, &rec)) < 0)
			goto fail;
	}
	return tool_read_end(r, rc, n, err, errlen);
fail:
	snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

/* read_records() with the reader on a second thread (recpipe.h, its
 * times left in ticks): the same records in the same order, each that is
 * no event with the reader's clock after it, so that this thread never
 * asks the reader.  Its returns and messages are read_records()'. */
static int read_piped(struct waits_engine *e, struct fxt_reader *r, struct recpipe *pipe, char *err,
		      size_t errlen)
{
	const struct recpipe_item *it;
	struct fxt_record rec = { 0 };
	uint64_t n = 0, tps;
	size_t nit;
	int rc;

	e->last_reader = r; /* (add_record() asks it nothing then) */
	bump_strgen(e);
	while ((rc = recpipe_take(pipe, &it, &nit)) > 0) {
		if (n == 0 && nit && !recpipe_saw_magic(pipe)) {
			recpipe_stop(pipe);
			return tool_read_first(r, err, errlen);
		}
		n += nit;
		for (size_t i = 0; i < nit; i++) {
			const struct fxt_plain *p = &it[i].e;

			if (i + 8 < nit) /* written by the other CPU */
				__builtin_prefetch(&it[i + 8]);
			if (p->record_type == FXT_RECORD_EVENT && !p->aux &&
			    p->type == FXT_EVENT_DURATION_COMPLETE) {
				rc = add_complete(e, p);
			} else {
				const struct fxt_record *c = recpipe_record(&rec, &it[i], &tps);

				rc = c->type == FXT_RECORD_EVENT ? add_record(e, r, c)
								 : add_other(e, c, tps);
			}
			if (rc < 0)
				goto stop;
		}
	}
stop:
	recpipe_stop(pipe);
	if (rc < -1) { /* the engine's or the pipe's, not the reader's */
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	return tool_read_end(r, rc, n, err, errlen);
}

/* ------------------------------------------------------------------ API */

static int cmp_kname(const void *a, const void *b)
{
	const struct koid_name *x = a, *y = b;

	if (x->koid != y->koid)
		return x->koid < y->koid ? -1 : 1;
	if ((x->seq & 1) != (y->seq & 1))
		return (int)(x->seq & 1) - (int)(y->seq & 1);
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The states of the threads with calls (all threads with events when
 * none has any) into w->states. */
static int keep_states(struct waits_engine *e, struct waits *w)
{
	bool any_calls = false;
	uint64_t end = 0;

	for (size_t i = 0; i < e->nthreads; i++) {
		any_calls |= e->threads[i].calls;
		uint64_t te = waits__ns_of(e->threads[i].max_end, e->threads[i].tps);
		if (te > end)
			end = te;
	}
	sched_finish(&e->sched, end);
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct thread *t = &e->threads[i];
		const struct sched_thread *st = sched_find(&e->sched, t->pid, t->tid);

		if (!st || !t->used || (any_calls && !t->calls))
			continue;
		if (TOOL_GROW(w->states, w->nstates_cap, w->nstates + 1) < 0)
			return -ENOMEM;
		w->states[w->nstates++] = *st;
	}
	return 0;
}

int waits_load(struct waits *w, const struct tool_input *in, char *err, size_t errlen)
{
	struct waits_engine *e;
	struct fxt_reader *r;
	struct recpipe *pipe;
	int rc;

	memset(w, 0, sizeof(*w));
	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	w->e = e;
	e->strgen = 1;
	rc = tool_open_input(in, &r, err, errlen);
	if (rc < 0)
		return rc;
	/* With more than one CPU the reader decodes on a second thread
	 * (the profile engine's pipe, tools/profile/recpipe.h). */
	if (recpipe_worth() && recpipe_start_ticks(&pipe, r) == 0)
		rc = read_piped(e, r, pipe, err, errlen);
	else
		rc = read_records(e, r, err, errlen);
	fxt_reader_free(r);
	if (rc < 0)
		return rc;
	/* The frames still on a stack at the end: retired at their ends (a
	 * begun one has none: cut by the archive's end, not a wait), the
	 * stack kept for final_snap(). */
	for (size_t i = 0; i < e->nthreads; i++) {
		struct thread *t = &e->threads[i];
		size_t n = t->n;

		for (size_t k = n; k-- > 0;) {
			struct frame f = t->f[k];

			if (!(f.flags & FF_HAS_END))
				continue;
			t->n = k + 1;
			if (retire(e, t, &f) < 0)
				goto nomem;
			t->f[k].wait = f.wait;
		}
		t->n = n;
	}
	rc = waits__resolve(e, w);
	if (rc < 0)
		goto nomem;
	if (e->nknames) /* none: knames is NULL, which qsort() must not get */
		qsort(e->knames, e->nknames, sizeof(*e->knames), cmp_kname);
	w->start_ns = e->first_ns;
	w->sched = e->nsw > 0;
	w->kernel_lost = e->kernel_lost;
	w->losses = e->losses;
	if (w->sched && keep_states(e, w) < 0)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	return -ENOMEM;
}

/* The name the archive gave last to koid as a thread (thread) or a
 * process, or NULL. */
static const char *kname(const struct waits_engine *e, uint64_t koid, bool thread)
{
	size_t lo = 0, hi = e->nknames;

	/* The first entry past (koid, kind); the one before it is the last
	 * of that key, if any. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct koid_name *k = &e->knames[mid];

		if (k->koid < koid || (k->koid == koid && (k->seq & 1) <= (uint32_t)thread))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || e->knames[lo - 1].koid != koid ||
	    (e->knames[lo - 1].seq & 1) != (uint32_t)thread)
		return NULL;
	return waits__name_str(e, e->knames[lo - 1].name);
}

const char *waits_thread_name(const struct waits *w, uint64_t pid, uint64_t tid)
{
	const char *name = kname(w->e, tid, true);

	return name ? name : kname(w->e, pid, false);
}

void waits_free(struct waits *w)
{
	struct waits_engine *e = w->e;

	if (e) {
		for (size_t i = 0; i < e->nnames; i++)
			free(e->names[i].s);
		for (size_t i = 0; i < e->nthreads; i++)
			free(e->threads[i].f);
		free(e->names);
		free(e->ntab);
		free(e->threads);
		thrmap_free(&e->tmap);
		free(e->knames);
		free(e->waits);
		free(e->rels);
		free(e->snaps);
		free(e->links);
		free(e->sw);
		sched_free(&e->sched);
		free(e);
	}
	free(w->items);
	free(w->states);
	memset(w, 0, sizeof(*w));
}
