/* The profile engine: takes records in, rebuilds per-thread call stacks
 * from duration slices and sums them per row (function, function x
 * process, or function x thread).  The tables it works on (rows, threads,
 * each thread's map of rows with open frames) are profile-table.c's, the
 * sorting and formatting of rows for output profile-sort.c's, the lean
 * stack's lean.c's.  The hot path, from a record to its frame, stays in
 * this file so that it inlines: it is nearly all that is left here (the
 * stack machine below, then profile_finish() and profile_load()), and
 * cutting it in two would put a call on the path of every record.
 *
 * Each thread keeps one stack of frames.  A frame is OPEN while children
 * may still be attached to it, DONE once its numbers are final.  `openv`
 * lists the OPEN frames (their stack indices, innermost last).
 *
 * Start-ordered input (begin/end pairs, complete events parent first) is
 * the fast path: a frame is finished when an end event closes it or when a
 * later slice starts at or after its end; it is then folded into its
 * parent at once and popped, so the stack never holds more than the
 * current call depth.  Complete events in start order, what the agent
 * writes, have their own inlined path (push_complete(), fold_top()); all
 * else goes through push_frame() and finish_top().  When no option asks
 * for more than each row's numbers (fxt-report's default), load_piped()
 * takes runs of such events on a leaner stack still (lean.c's
 * profile__lean_run(): 32-byte frames, rows by a per-thread cache of
 * refs), moved onto the general stack before anything else touches the
 * thread; it calls back into this file (profile__lean_general() and its
 * kin) for what it cannot take.
 *
 * End-ordered complete events (children before their parent) are detected
 * per thread: a slice that starts before the previous one, or that
 * contains the frame on top of the stack, switches the thread to "end
 * order".  From then on a complete slice is final as soon as it arrives
 * (its children came first): it adopts the DONE tail of the stack that lies
 * inside it, is counted, and stays DONE until its own parent arrives.  This
 * is what the agent's flusher writes (innermost first).  Finished
 * top-level slices also stay DONE (in start order too: the first end-order
 * parent may still come).  Runs of DONE frames are merged past a cap (see
 * compact_run()), so memory stays bounded by depth x RUN_CAP.
 *
 * Recursion: a row's inclusive time (total_ns) only counts a frame when no
 * other frame of the same row is open beneath it on the thread.  `act`
 * counts open frames per row.  In end order a frame is counted when it
 * finishes, before its recursive parent is known; every DONE frame
 * therefore carries a ledger of the outermost-counted durations per row in
 * its subtree, and a parent that turns out to be the outermost subtracts
 * its own row's ledger entries when it is counted.
 *
 * Per event, the work avoids what does not scale: rows are found by the
 * event's string refs (struct refcache) rather than by hashing and
 * comparing names, open-frame counts of a row sit in its key while one
 * thread holds it (act_push()), and ticks become ns without a 128-bit
 * division (to_ns()).
 *
 * Context switches, the events after the first of them (sched keeps the
 * wake-up instants), and with --by thread the thread objects that name the
 * threads go to the threads' states (tools/front/sched.c): the engine only
 * hands them over.
 *
 * Past 800 lines on purpose: everything from a record to a counted frame
 * on the general stack (including --subtract-overhead's adjusted()) is
 * this file's, static and inline, because splitting it costs the fold its
 * inlining; what can live elsewhere (tables, rows' statistics, sorting,
 * the lean stack, whose calls back here are out of line anyway) already
 * does.
 */
#include "config.h"

#include "tools/profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

#include "tools/front/common.h"
#include "tools/profile/lean.h"
#include "tools/profile/profile-int.h"
#include "tools/profile/recpipe.h"

/* ----------------------------------------------------- active row map */

/* Whether t has an open frame of `row`: then a frame of the row finishing
 * now is not its outermost one. */
static inline bool act_open(const struct profile *p, struct thread *t, uint32_t row)
{
	return p->keys[row].act_thr == t->idx || (t->nmapped && profile__act_mapped(t, row));
}

/* Counts a frame opening.  While one thread at a time holds frames of a
 * row (always so grouped by thread, and for most functions otherwise) the
 * count lives in the row's key, a direct access.  A thread that finds the
 * row held by another counts in its own actmap; it then never counts the
 * row in the key while such a frame is open, and a frame counted in the
 * key never has one counted in the map below it, so each side alone tells
 * whether a closing frame is the outermost. */
static inline int act_push(struct profile *p, struct thread *t, struct frame *fr)
{
	struct rowkey *k = &p->keys[fr->row];
	int64_t slot;

	if (k->act_thr == t->idx ||
	    (k->act_thr == 0 && !(t->nmapped && profile__act_mapped(t, fr->row)))) {
		k->act_thr = t->idx;
		k->act_n++;
		fr->mapped = 0;
		return 0;
	}
	slot = profile__act_find(&t->act, fr->row);
	if (slot < 0)
		return -ENOMEM;
	t->act.vals[slot]++;
	t->nmapped++;
	fr->act = (uint32_t)slot;
	fr->mapped = 1;
	return 0;
}

/* Counts a frame closing; true if it was the outermost of its row. */
static inline bool act_pop(struct profile *p, struct thread *t, const struct frame *fr)
{
	struct rowkey *k = &p->keys[fr->row];

	if (!fr->mapped) {
		if (--k->act_n)
			return false;
		k->act_thr = 0;
		return true;
	}
	t->nmapped--;
	return --t->act.vals[act_slot_of(&t->act, fr->row, fr->act)] == 0;
}

/* ------------------------------------------------------------- threads */

static void set_end_ordered(struct profile *p, struct thread *t)
{
	if (!t->post) {
		t->post = true;
		p->anom.end_ordered++;
	}
}

/* --------------------------------------------------------------- stacks */

/* Merges the ledger entries in [lo, hi) so each row appears once, drops
 * those of `drop_row` (returning their sum in *dropped), and returns the
 * new end of the range.  rowkey.mark holds a row's slot in this pass; a
 * mark left by an earlier pass is recognised as stale because it lies
 * outside [lo, w) or its slot holds another row. */
static size_t ledger_merge(struct profile *p, struct thread *t, size_t lo, size_t hi,
			   uint32_t drop_row, uint64_t *dropped)
{
	size_t i, w = lo;

	*dropped = 0;
	for (i = lo; i < hi; i++) {
		struct ledger_ent e = t->led[i];
		uint32_t m;

		if (e.row == drop_row) {
			*dropped += e.incl;
			continue;
		}
		m = p->keys[e.row].mark;
		if (m >= lo && m < w && t->led[m].row == e.row) {
			t->led[m].incl += e.incl;
		} else {
			p->keys[e.row].mark = (uint32_t)w;
			t->led[w++] = e;
		}
	}
	return w;
}

/* DONE frames waiting for a parent (top-level slices in start order, and
 * in end order every finished slice whose parent has not come yet) are
 * the only part of a thread that grows with the events.  When more than
 * RUN_CAP of them are stacked above the innermost open frame, all but the
 * newest RUN_KEEP are merged into one DONE frame that spans them (durations
 * summed, ledgers merged).  A late parent that contains the whole span
 * adopts it exactly as it would have adopted the parts; one that starts
 * inside the span cannot (possible only in end order, for a slice with more
 * than RUN_KEEP finished descendants before its end) and is counted in
 * profile_anomalies.merged: its self time then includes those children. */
#define RUN_CAP	 16384
#define RUN_KEEP 2048

static void compact_run(struct profile *p, struct thread *t, size_t base)
{
	size_t n = t->nf - base - RUN_KEEP, j, lo, hi, w, shift;
	struct frame *s = &t->f[base];
	uint64_t unused;

	for (j = base + 1; j < base + n; j++) {
		s->dur += t->f[j].dur;
		s->sub += t->f[j].sub;
	}
	s->end = t->f[base + n - 1].end;
	s->summary = 1;

	lo = s->ledger_lo;
	hi = t->f[base + n].ledger_lo;
	w = ledger_merge(p, t, lo, hi, UINT32_MAX, &unused);
	shift = hi - w;
	if (t->nled > hi) /* (none: led may be NULL, which memmove() may not take) */
		memmove(&t->led[w], &t->led[hi], (t->nled - hi) * sizeof(*t->led));
	t->nled -= shift;

	memmove(&t->f[base + 1], &t->f[base + n], RUN_KEEP * sizeof(*t->f));
	t->nf = base + 1 + RUN_KEEP;
	for (j = base + 1; j < t->nf; j++)
		t->f[j].ledger_lo -= (uint32_t)shift;
}

static int emit_slice(struct profile *p, struct thread *t, const struct frame *fr, uint64_t self)
{
	struct profile_slice s;

	if (GROW(t->openrow, t->capopenrow, t->nopen + 1) < 0)
		return -ENOMEM;
	openrow_set(t, t->nopen, fr->row);
	s.pid = t->pid;
	s.tid = t->tid;
	s.start_ns = fr->start;
	s.end_ns = fr->end;
	s.self_ns = self;
	s.open = fr->open;
	s.end_order = t->post;
	s.depth = (unsigned)t->nopen;
	s.path = t->openrow;
	s.same = slice_same(t);
	p->opts.on_slice(p->opts.ctx, &s);
	return 0;
}

/* --subtract-overhead: a finished frame's measured duration less the
 * hooks' cost in it (its own "inside", a pair per hooked descendant).
 * Rounded to whole ns with the remainder carried to the row's next frame,
 * so that a row's sums over many calls stay exact.  Not clamped: for a
 * call much shorter than its hooks, the estimate may be below 0, and
 * 64-bit wrapping keeps every sum of such values exact (a parent's self
 * time is its time less its children's whatever their signs); rows are
 * clamped at 0 only at the end (profile_finish()). */
static inline uint64_t adjusted(const struct profile *p, const struct thread *t,
				const struct frame *fr, uint64_t dur)
{
	struct rowkey *k = &p->keys[fr->row];
	double cost;
	int64_t whole;

	if (__builtin_expect(t->pair_ns == 0, 1))
		return dur;
	cost = (double)fr->desc * t->pair_ns + (k->hook ? t->inside_ns : 0) + k->carry_ns;
	whole = (int64_t)llround(cost);
	k->carry_ns = (float)(cost - (double)whole);
	return dur - (uint64_t)whole;
}

/* A duration as a reader sees it: the adjusted ones below 0 (wrapped
 * past 2^63) count as 0. */
static inline uint64_t shown(uint64_t v)
{
	return v > INT64_MAX ? 0 : v;
}

static inline uint64_t sub_of(const struct profile *p, const struct frame *fr)
{
	return fr->desc + p->keys[fr->row].hook;
}

/* Counts a finished frame (its children folded in) in its row; returns
 * its self time.  With the hooks' cost taken out (`adjusted`), times are
 * estimates that may wrap below 0 (see adjusted()): self is their exact
 * difference, the per-call figures count them as 0. */
static inline __attribute__((always_inline)) uint64_t
count_frame(struct profile *p, const struct frame *fr, uint64_t dur, bool adjusted_times, int *err)
{
	struct profile_row *r = &p->rows[fr->row];
	uint64_t self;

	if (adjusted_times) {
		self = dur - fr->child_ns;
		dur = shown(dur);
	} else if (fr->child_ns > dur) {
		p->anom.overlaps++;
		self = 0;
	} else {
		self = dur - fr->child_ns;
	}
	r->calls++;
	r->self_ns += self;
	r->sum_ns += dur;
	/* A division a frame, in a chain per row, that only a reader of
	 * profile_row_var() needs (opts.variance). */
	if (__builtin_expect(p->opts.variance, 0)) {
		double x = (double)dur, delta = x - r->dur_mean;
		r->dur_mean += delta / (double)r->calls;
		r->dur_m2 += delta * (x - r->dur_mean);
	}
	if (dur < r->min_ns)
		r->min_ns = dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
	r->open += fr->open;
	p->nslices++;
	if (__builtin_expect(p->durs != NULL, 0) && !r->sampled) {
		struct pctl *d = &p->durs[fr->row];

		/* Room in an exact store: the rest (growing, sketches, the
		 * bound) is out of line. */
		if (d->n < d->cap && p->held < p->exact_max && (d->wide || dur <= UINT32_MAX)) {
			pctl_put(d, dur);
			p->held++;
		} else {
			*err = profile__pctl_keep(p, fr->row, dur);
		}
	}
	return self;
}

/* Leaves the finished frame on top of the stack DONE, for a parent that
 * may still arrive: merges its ledger, counts its inclusive time if it is
 * the outermost frame of its row, and keeps the run of DONE frames short. */
static inline __attribute__((always_inline)) int
settle(struct profile *p, struct thread *t, struct frame *fr, uint64_t dur, bool outermost)
{
	struct profile_row *r = &p->rows[fr->row];
	uint64_t inner;
	size_t base;

	if (fr->ledger_lo < t->nled)
		t->nled = ledger_merge(p, t, fr->ledger_lo, t->nled,
				       outermost ? fr->row : UINT32_MAX, &inner);
	else
		inner = 0;
	if (outermost) {
		r->total_ns -= inner <= r->total_ns ? inner : r->total_ns;
		r->total_ns += dur;
		if (GROW(t->led, t->capled, t->nled + 1) < 0)
			return -ENOMEM;
		p->keys[fr->row].mark = (uint32_t)t->nled;
		t->led[t->nled++] = (struct ledger_ent){ fr->row, dur };
	}
	fr->dur = dur;
	fr->sub = sub_of(p, fr);
	fr->done = 1;
	base = t->nopen ? t->openv[t->nopen - 1] + 1 : 0;
	if (t->nf - base > RUN_CAP)
		compact_run(p, t, base);
	return 0;
}

/* Finishes the innermost open frame: folds the DONE frames above it (its
 * children), counts it in its row, and either folds it into its parent
 * (start order) or leaves it DONE for a parent still to come (end order). */
static int finish_top(struct profile *p, struct thread *t)
{
	size_t oi = t->openv[--t->nopen], j;
	struct frame *fr = &t->f[oi];
	uint64_t dur, self;
	bool outermost;
	int err = 0;

	for (j = oi + 1; j < t->nf; j++) {
		fr->child_ns += t->f[j].dur;
		fr->desc += t->f[j].sub;
	}
	t->nf = oi + 1;

	dur = adjusted(p, t, fr, fr->end - fr->start);
	outermost = act_pop(p, t, fr);
	self = count_frame(p, fr, dur, t->pair_ns != 0, &err);
	if (err < 0)
		return err;
	if (p->opts.on_slice && emit_slice(p, t, fr, self) < 0)
		return -ENOMEM;

	/* Start order with an open parent below: fold into it now, nothing
	 * that comes later can contain this frame. */
	if (!t->post && oi > 0 && !t->f[oi - 1].done) {
		if (outermost)
			p->rows[fr->row].total_ns += dur;
		t->nled = fr->ledger_lo;
		t->f[oi - 1].child_ns += dur;
		t->f[oi - 1].desc += sub_of(p, fr);
		t->nf = oi;
		return 0;
	}
	return settle(p, t, fr, dur, outermost);
}

/* End order: a complete slice arrives after its children, so it is final
 * at once.  It only counts as outermost if no open (begin) frame of its row
 * lies below; same-row frames among its descendants are in the ledger. */
static inline __attribute__((always_inline)) int finish_complete(struct profile *p,
								 struct thread *t, struct frame *fr)
{
	uint64_t dur = adjusted(p, t, fr, fr->end - fr->start), self;
	int err = 0;

	self = count_frame(p, fr, dur, t->pair_ns != 0, &err);
	if (err < 0)
		return err;
	if (p->opts.on_slice && emit_slice(p, t, fr, self) < 0)
		return -ENOMEM;
	return settle(p, t, fr, dur, !act_open(p, t, fr->row));
}

/* Finishes the open frames with a known end that the slice [s, e) arriving
 * now shows to be over: those ending at or before s, and (end order) those
 * that the new slice contains. */
static inline __attribute__((always_inline)) int retire(struct profile *p, struct thread *t,
							uint64_t s, uint64_t e, bool has_end)
{
	while (t->nopen) {
		struct frame *o = &t->f[t->openv[t->nopen - 1]];

		if (!o->has_end)
			break;
		if (o->end <= s) {
			/* over */
		} else if (has_end && s <= o->start && e >= o->end &&
			   (s < o->start || e > o->end || t->post)) {
			set_end_ordered(p, t); /* the new slice is its parent */
		} else {
			break;
		}
		if (finish_top(p, t) < 0)
			return -ENOMEM;
	}
	return 0;
}

static inline __attribute__((always_inline)) int
push_frame(struct profile *p, struct thread *t, uint64_t s, uint64_t e, bool has_end, uint32_t row)
{
	struct frame *fr;
	uint64_t child = 0, desc = 0;
	size_t k, lo;

	t->lean_ok = false;
	if (__builtin_expect(t->nlf != 0, 0) && profile__lean_spill(p, t) < 0)
		return -ENOMEM;

	if (t->seen && s < t->last_start && has_end)
		set_end_ordered(p, t);
	if (!t->seen || s > t->last_start)
		t->last_start = s;
	t->seen = true;

	if (retire(p, t, s, e, has_end) < 0)
		return -ENOMEM;
	k = t->nf; /* retire() may have moved both */
	lo = t->nled;

	/* End order: the DONE frames on top that lie inside [s, e] are this
	 * slice's children, seen before it. */
	if (has_end) {
		while (k > 0 && t->f[k - 1].done && t->f[k - 1].start >= s && t->f[k - 1].end <= e)
			k--;
		if (k > 0 && t->f[k - 1].summary && t->f[k - 1].start < s && t->f[k - 1].end > s)
			p->anom.merged++;
		if (k < t->nf) {
			set_end_ordered(p, t);
			lo = t->f[k].ledger_lo;
			for (size_t j = k; j < t->nf; j++) {
				child += t->f[j].dur;
				desc += t->f[j].sub;
			}
			t->nf = k;
		}
	}
	if (GROW(t->f, t->capf, t->nf + 1) < 0 || GROW(t->openv, t->capopen, t->nopen + 1) < 0 ||
	    GROW(t->openrow, t->capopenrow, t->nopen + 2) < 0)
		return -ENOMEM;
	fr = &t->f[t->nf];
	fr->start = s;
	fr->end = e;
	fr->child_ns = child;
	fr->desc = desc;
	fr->sub = 0;
	fr->dur = 0;
	fr->row = row;
	fr->ledger_lo = (uint32_t)lo;
	fr->done = 0;
	fr->has_end = has_end;
	fr->open = 0;
	fr->summary = 0;
	if (t->post && has_end) {
		t->nf++;
		return finish_complete(p, t, fr);
	}
	if (act_push(p, t, fr) < 0)
		return -ENOMEM;
	openrow_set(t, t->nopen, t->f[t->nf].row);
	t->openv[t->nopen++] = (uint32_t)t->nf++;
	return 0;
}

/* finish_top() for the usual case in start order: the innermost open frame
 * has no DONE frames above it and an open parent below, so it folds into
 * the parent at once.  Returns 1 if it did, 0 to leave it to finish_top(),
 * or -ENOMEM. */
static inline __attribute__((always_inline)) int fold_top(struct profile *p, struct thread *t)
{
	size_t oi = t->openv[t->nopen - 1];
	struct frame *fr = &t->f[oi];
	uint64_t dur, self;
	int err = 0;

	if (oi + 1 != t->nf || oi == 0 || fr[-1].done)
		return 0;
	t->nopen--;
	dur = adjusted(p, t, fr, fr->end - fr->start);
	if (act_pop(p, t, fr))
		p->rows[fr->row].total_ns += dur;
	self = count_frame(p, fr, dur, t->pair_ns != 0, &err);
	if (err < 0)
		return err;
	if (p->opts.on_slice && emit_slice(p, t, fr, self) < 0)
		return -ENOMEM;
	t->nled = fr->ledger_lo;
	fr[-1].child_ns += dur;
	fr[-1].desc += sub_of(p, fr);
	t->nf = oi;
	return 1;
}

/* push_complete()'s first steps for a slice [s, e) in start order: the
 * open frames it shows to be over folded into their parents.  0 when it
 * goes on top of the stack then, 1 when push_frame() must take it (its
 * parent came after it, or DONE frames a parent may adopt are on top),
 * or -ENOMEM. */
static inline __attribute__((always_inline)) int retire_started(struct profile *p, struct thread *t,
								uint64_t s, uint64_t e)
{
	int rc;

	while (t->nopen) {
		const struct frame *o = &t->f[t->openv[t->nopen - 1]];

		if (!o->has_end)
			break;
		if (o->end > s) {
			if (o->start == s && e > o->end) /* its parent, after it */
				return 1;
			break;
		}
		rc = fold_top(p, t);
		if (rc == 0)
			rc = finish_top(p, t);
		if (rc < 0)
			return rc;
	}
	return t->nf && t->f[t->nf - 1].done;
}

/* A complete slice [s, e).  The fast path is the agent's start order: the
 * slice starts at or after every slice before it on its thread, and the
 * open frames it shows to be over fold straight into their parents.
 * Anything else (end order, DONE frames a parent may adopt) takes
 * push_frame(), which handles every case. */
static inline __attribute__((always_inline)) int push_complete(struct profile *p, struct thread *t,
							       uint64_t s, uint64_t e, uint32_t row)
{
	struct frame *fr;
	int rc;

	t->lean_ok = false;
	if (__builtin_expect(t->nlf != 0, 0) && (rc = profile__lean_spill(p, t)) < 0)
		return rc;
	if (t->post || s < t->last_start)
		goto general;
	t->last_start = s;
	t->seen = true;
	rc = retire_started(p, t, s, e);
	if (rc < 0)
		return rc;
	if (rc)
		goto general;
	if (GROW(t->f, t->capf, t->nf + 1) < 0 || GROW(t->openv, t->capopen, t->nopen + 1) < 0 ||
	    GROW(t->openrow, t->capopenrow, t->nopen + 2) < 0)
		return -ENOMEM;
	fr = &t->f[t->nf];
	*fr = (struct frame){
		.start = s, .end = e, .row = row, .ledger_lo = (uint32_t)t->nled, .has_end = 1
	};
	if (act_push(p, t, fr) < 0)
		return -ENOMEM;
	openrow_set(t, t->nopen, t->f[t->nf].row);
	t->openv[t->nopen++] = (uint32_t)t->nf++;
	return 0;
general:
	return push_frame(p, t, s, e, true, row);
}

static int end_frame(struct profile *p, struct thread *t, uint64_t ts)
{
	struct frame *o;

	t->lean_ok = false;
	if (t->nlf && profile__lean_spill(p, t) < 0)
		return -ENOMEM;
	if (retire(p, t, ts, 0, false) < 0)
		return -ENOMEM;
	/* A complete slice still open here outlives the begin/end pair
	 * around it: improper nesting; close it with its own end. */
	while (t->nopen && t->f[t->openv[t->nopen - 1]].has_end) {
		p->anom.overlaps++;
		if (finish_top(p, t) < 0)
			return -ENOMEM;
	}
	if (!t->nopen) {
		p->anom.unmatched_ends++;
		return 0;
	}
	o = &t->f[t->openv[t->nopen - 1]];
	o->end = ts > o->start ? ts : o->start;
	o->has_end = 1;
	return finish_top(p, t);
}

static inline void see_time(struct profile *p, uint64_t ns)
{
	if (ns < p->start_ns)
		p->start_ns = ns;
	if (ns > p->end_ns)
		p->end_ns = ns;
}

/* floor(ticks * 1e9 / tps), as fxt_reader_ticks_to_ns() computes it, but
 * without its 128-bit division per event (tens of cycles; the agent writes
 * TSC ticks).  While ticks < 2^53 and the result < 2^55, a double estimate
 * is within 9 of the quotient; the remainder of that estimate is then
 * below 10 tps < 2^63 in magnitude (ns_per_tick is only set for tps <
 * 2^59), so it is exact in wrapping 64-bit arithmetic and corrects it. */
static inline uint64_t to_ns(const struct profile *p, struct fxt_reader *r, uint64_t ticks)
{
	uint64_t fast;

	/* ticks * a / b with a, b coprime (tickconv.h).  The estimate
	 * below, its two conversions and its corrections, took a quarter of
	 * the engine's samples on an archive in TSC ticks. */
	if (tickconv_ns(&p->conv, ticks, &fast))
		return fast;
	if (ticks < (UINT64_C(1) << 53) && p->ns_per_tick > 0) {
		double d = (double)ticks * p->ns_per_tick;

		if (d < 0x1p55) {
			uint64_t q = (uint64_t)d;
			int64_t rem = (int64_t)(ticks * NS_PER_S - q * p->tps);

			while (rem < 0) {
				q--;
				rem += (int64_t)p->tps;
			}
			while (rem >= (int64_t)p->tps) {
				q++;
				rem -= (int64_t)p->tps;
			}
			return q;
		}
	}
	/* What fxt_reader_ticks_to_ns() says: p->tps is the reader's rate,
	 * set at every record that is no event (and r may be another
	 * thread's, recpipe.c). */
	if (p->tps) {
		unsigned __int128 ns = (unsigned __int128)ticks * NS_PER_S / p->tps;

		return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
	}
	return fxt_reader_ticks_to_ns(r, ticks);
}

/* True if a string ref of an event can key the ref cache: a table index,
 * or the empty ref with no text (a record made by hand carries zero refs
 * whatever its strings). */
static inline bool ref_cacheable(uint16_t ref, const struct fxt_string *s)
{
	return !(ref & 0x8000) && (ref || !s->len);
}

static void bump_strgen(struct profile *p)
{
	if (++p->strgen == 0) { /* wrapped: old entries could match again */
		memset(p->refc, 0, sizeof(p->refc));
		for (size_t i = 0; i < p->nthreads; i++)
			memset(p->threads[i].lrow, 0, sizeof(p->threads[i].lrow));
		p->strgen = 1;
	}
}

/* The ref cache's slot of a row's refs, process and thread (as grouped):
 * the refs alone when they are all (grouped by function), else mixed with
 * the others by a multiplication.  A slot is only a place to look: the
 * entry's whole key is compared. */
static inline __attribute__((always_inline)) size_t refc_slot(uint16_t cref, uint16_t nref,
							      uint64_t pid, uint64_t tid)
{
	uint64_t x = pid ^ tid;

	x = (x ^ x >> 32) * UINT64_C(0x9e3779b97f4a7c15);
	return ((size_t)nref + (size_t)cref * 7 + (size_t)(x >> 40)) & (REFCACHE - 1);
}

/* The row of a begin or complete event (its string refs and strings, its
 * process and thread): the ref cache first. */
static inline __attribute__((always_inline)) int64_t
row_of(struct profile *p, uint16_t cref, uint16_t nref, const struct fxt_string *cat,
       const struct fxt_string *name, uint64_t epid, uint64_t etid, bool plain)
{
	uint64_t pid = 0, tid, key;
	struct refcache *c;
	int64_t row;

	/* (a plain event's refs are table entries or empty: cacheable) */
	if (!plain && (!ref_cacheable(cref, cat) || !ref_cacheable(nref, name)))
		return profile__row_lookup(p, epid, etid, cat, name);
	if (p->opts.by != PROFILE_BY_FUNCTION)
		pid = epid;
	tid = p->opts.by == PROFILE_BY_THREAD ? etid : etid & FXT_SAMPLE_KOID_BIT;
	key = (uint64_t)p->strgen << 32 | (uint32_t)cref << 16 | nref;
	c = &p->refc[refc_slot(cref, nref, pid, tid)];
	if (c->key == key && c->pid == pid && c->tid == tid)
		return c->row;
	row = profile__row_lookup(p, epid, etid, cat, name);
	if (row >= 0)
		*c = (struct refcache){ key, pid, tid, (uint32_t)row };
	return row;
}

static inline __attribute__((always_inline)) int64_t event_row(struct profile *p,
							       const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;

	return row_of(p, ev->category_ref, ev->name_ref, &ev->category, &ev->name, ev->pid, ev->tid,
		      false);
}

/* The body of profile_add_record(), inlined into profile_load()'s loops.
 * tps: the reader's ticks per second after rec when another thread reads
 * (recpipe.c), else 0: then r is asked. */
static inline __attribute__((always_inline)) int
add_record(struct profile *p, struct fxt_reader *r, const struct fxt_record *rec, uint64_t tps)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct thread *t;
	uint64_t ts, end;
	int64_t row;

	p->nrecords++;
	if (rec->type != FXT_RECORD_EVENT) {
		profile__set_tps(p, tps ? tps : fxt_reader_ticks_per_second(r));
		if (rec->type == FXT_RECORD_KERNEL_OBJECT) {
			/* Names for the threads' states (fxt-report --by
			 * thread). */
			if (p->opts.by == PROFILE_BY_THREAD &&
			    sched_add_record(&p->sched, rec, 0) < 0)
				return -ENOMEM;
			return profile__see_kobj(p, rec);
		}
		if (rec->type == FXT_RECORD_CONTEXT_SWITCH) {
			return sched_add_record(&p->sched, rec, to_ns(p, r, rec->u.cswitch.ts));
		}
		/* Strings change meaning on string and provider records. */
		if (rec->type == FXT_RECORD_STRING || rec->type == FXT_RECORD_METADATA)
			bump_strgen(p);
		if (rec->type == FXT_RECORD_METADATA &&
		    rec->u.meta.type == FXT_METADATA_PROVIDER_EVENT &&
		    rec->u.meta.event == FXT_PROVIDER_EVENT_BUFFER_FULL)
			p->buffer_full++;
		return 0;
	}
	if (__builtin_expect(r != p->last_reader, 0)) {
		p->last_reader = r;
		bump_strgen(p);
	}
	ts = to_ns(p, r, ev->ts);
	see_time(p, ts);

	switch (ev->type) {
	case FXT_EVENT_DURATION_BEGIN:
	case FXT_EVENT_DURATION_COMPLETE:
		break;
	case FXT_EVENT_DURATION_END:
		t = thread_get(p, ev->pid, ev->tid);
		if (!t)
			return -ENOMEM;
		return end_frame(p, t, ts);
	case FXT_EVENT_INSTANT:
		if (__builtin_expect(ev->category.len == sizeof(FXT_SHORT_CATEGORY) - 1, 0) &&
		    memcmp(ev->category.data, FXT_SHORT_CATEGORY, ev->category.len) == 0)
			return profile__see_short(p, rec);
		if (ev->name.len == sizeof(FXT_HOOK_COST_NAME) - 1 &&
		    memcmp(ev->name.data, FXT_HOOK_COST_NAME, ev->name.len) == 0)
			return profile__see_hook_cost(p, rec);
		if (p->sched.nswitch && sched_add_record(&p->sched, rec, ts) < 0)
			return -ENOMEM;
		return profile__see_drops(p, ev->pid, ev->tid, ts, &ev->name);
	default:
		return 0;
	}

	t = thread_get(p, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	row = event_row(p, rec);
	if (row < 0)
		return (int)row;
	if (ev->type == FXT_EVENT_DURATION_BEGIN)
		return push_frame(p, t, ts, 0, false, (uint32_t)row);

	end = to_ns(p, r, ev->extra);
	if (__builtin_expect(end < ts, 0)) {
		p->anom.reversed++;
		end = ts;
	}
	if (end > p->end_ns)
		p->end_ns = end;
	return push_complete(p, t, ts, end, (uint32_t)row);
}

/* add_record() of a duration begin, end or complete event read as a plain
 * event (no struct fxt_record made of it): the same steps, in the same
 * order; `ns`: its times are ns already (recpipe.c's RECPIPE_NS). */
static inline __attribute__((always_inline)) int add_plain(struct profile *p, struct fxt_reader *r,
							   const struct fxt_plain *e, bool ns)
{
	struct fxt_string cat, name;
	struct thread *t;
	uint64_t ts, end;
	int64_t row;

	p->nrecords++;
	if (__builtin_expect(r != p->last_reader, 0)) {
		p->last_reader = r;
		bump_strgen(p);
	}
	ts = ns ? e->ts : to_ns(p, r, e->ts);
	see_time(p, ts);
	t = thread_get(p, e->pid, e->tid);
	if (!t)
		return -ENOMEM;
	if (e->type == FXT_EVENT_DURATION_END)
		return end_frame(p, t, ts);
	cat.data = e->category;
	cat.len = e->category_len;
	name.data = e->name;
	name.len = e->name_len;
	row = row_of(p, e->category_ref, e->name_ref, &cat, &name, e->pid, e->tid, true);
	if (row < 0)
		return (int)row;
	if (e->type == FXT_EVENT_DURATION_BEGIN)
		return push_frame(p, t, ts, 0, false, (uint32_t)row);
	end = ns ? e->extra : to_ns(p, r, e->extra);
	if (__builtin_expect(end < ts, 0)) {
		p->anom.reversed++;
		end = ts;
	}
	if (end > p->end_ns)
		p->end_ns = end;
	return push_complete(p, t, ts, end, (uint32_t)row);
}

/* ------------------------------------------- the lean stack's ways out */

/* The lean stack (lean.c) falls back on the general machine here: these
 * stay in this file, where push_complete(), retire_started() and row_of()
 * inline. */
/* (Out of line: the general stack machine inlined into the lean loop
 * would crowd its registers.) */
int profile__lean_general(struct profile *p, struct thread *t, uint64_t s, uint64_t e, uint32_t row)
{
	return push_complete(p, t, s, e, row);
}

int profile__lean_retire(struct profile *p, struct thread *t, uint64_t s, uint64_t e)
{
	int rc = retire_started(p, t, s, e);

	if (rc == 0)
		t->lean_ok = t->nf && !t->f[t->nf - 1].has_end; /* (not DONE: rc) */
	return rc;
}

/* row_of() of a lean event whose refs missed the cache. */
int64_t profile__lean_row_miss(struct profile *p, const struct fxt_plain *e)
{
	struct fxt_string cat = { e->category, e->category_len }, name = { e->name, e->name_len };

	return row_of(p, e->category_ref, e->name_ref, &cat, &name, e->pid, e->tid, true);
}

int profile_add_record(struct profile *p, struct fxt_reader *r, const struct fxt_record *rec)
{
	return add_record(p, r, rec, 0);
}

int profile_finish(struct profile *p)
{
	size_t i;

	if (p->finished)
		return 0;
	p->finished = true;
	sched_finish(&p->sched, p->end_ns);
	for (i = 0; i < p->nthreads; i++) {
		struct thread *t = &p->threads[i];

		if (t->nlf && profile__lean_spill(p, t) < 0)
			return -ENOMEM;
		while (t->nopen) {
			struct frame *o = &t->f[t->openv[t->nopen - 1]];

			if (!o->has_end) {
				o->end = p->end_ns > o->start ? p->end_ns : o->start;
				o->has_end = 1;
				o->open = 1;
			}
			if (finish_top(p, t) < 0)
				return -ENOMEM;
		}
		if (t->tid & FXT_SAMPLE_KOID_BIT)
			p->nsample_tracks++;
		/* Only roots are left; their numbers are final. */
		profile__thread_release(t);
		memset(&t->f, 0, sizeof(*t) - offsetof(struct thread, f));
	}
	for (i = 0; i < p->nrows; i++) {
		struct profile_row *r = &p->rows[i];

		if (!r->calls)
			r->min_ns = 0;
		r->loc = tool_srcloc_find(&p->locs, r->category, p->keys[i].cat_len, r->name,
					  p->keys[i].name_len);
		/* Calls written as no slice under this function's: their time
		 * was not taken from its frames' as their children's was. */
		r->self_ns -= r->left_out_child_ns < r->self_ns ? r->left_out_child_ns : r->self_ns;
		/* With the hooks' cost taken out, an estimate below 0 is 0. */
		r->self_ns = shown(r->self_ns);
		r->total_ns = shown(r->total_ns);
	}
	/* Sampled rows: their frames are counted apart, and grouped by
	 * thread they belong to the thread the track samples. */
	for (i = 0; i < p->nrows; i++) {
		struct profile_row *r = &p->rows[i];

		if (!r->sampled)
			continue;
		p->nsampled += r->calls;
		for (size_t k = 0; k < p->ntracks; k++) {
			if (p->tracks[k].koid == r->tid) {
				r->track = p->tracks[k].name;
				break;
			}
		}
		r->tid &= ~FXT_SAMPLE_KOID_BIT;
	}
	return 0;
}

/* Whether the lean stack can take the profile's complete events: no
 * option asks for more than each row's numbers and the slices. */
static bool profile_lean(const struct profile *p)
{
	return !p->durs && !p->opts.variance && !p->opts.subtract_overhead;
}

/* profile_load()'s loop with the reader on a second thread: the records
 * come through pipe, in the same order.  What the reader says (its first
 * record's magic, its error at the end) is asked once the pipe stopped. */
static int load_piped(struct profile *p, struct fxt_reader *r, struct recpipe *pipe, uint64_t *n,
		      char *err, size_t errlen)
{
	const struct recpipe_item *it;
	struct fxt_record rec;
	size_t nit;
	uint64_t tps = 0;
	bool lean = profile_lean(p);
	int rc;

	/* (add_record() and add_plain() see r once: the same for all) */
	if (r != p->last_reader) {
		p->last_reader = r;
		bump_strgen(p);
	}
	while ((rc = recpipe_take(pipe, &it, &nit)) > 0) {
		if (*n == 0 && nit && !recpipe_saw_magic(pipe)) {
			recpipe_stop(pipe);
			return tool_read_first(r, err, errlen);
		}
		*n += nit;
		for (size_t i = 0; i < nit; i++) {
			if (lean) {
				i += profile__lean_run(p, &it[i].e, nit - i, &rc);
				if (rc < 0)
					goto stop;
				if (i == nit)
					break;
			}
			/* Written by the other CPU: ask for them ahead. */
			if (i + 8 < nit)
				__builtin_prefetch(&it[i + 8]);
			const struct fxt_plain *e = &it[i].e;

			/* A begin, end or complete event as it came over, its
			 * times in ns (RECPIPE_NS) or ticks. */
			if (e->record_type == RECPIPE_NS)
				rc = add_plain(p, r, e, true);
			else if (e->record_type == FXT_RECORD_EVENT && !e->aux &&
				 (unsigned)e->type - FXT_EVENT_DURATION_BEGIN <= 2u)
				rc = add_plain(p, r, e, false);
			else {
				/* recpipe_record() sets tps: called before
				 * add_record() reads it (the order of a call's
				 * arguments is unspecified). */
				const struct fxt_record *x = recpipe_record(&rec, &it[i], &tps);

				rc = add_record(p, r, x, tps);
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
	return tool_read_end(r, rc, *n, err, errlen);
}

/* Plain events read at a time on the caller's thread (18 KB). */
#define PLAIN_RUN 256

int profile_load(struct profile *p, const char *path, char *err, size_t errlen)
{
	struct fxt_plain plain[PLAIN_RUN];
	struct fxt_reader *r = NULL;
	struct recpipe *pipe;
	struct fxt_record rec;
	uint64_t n = 0;
	bool lean;
	int rc;

	rc = tool_open_archive(&r, path, FXT_READER_TIME_ORDER, err, errlen);
	if (rc < 0)
		return rc;
	if (!p->read_here && recpipe_worth() && recpipe_start(&pipe, r) == 0) {
		rc = load_piped(p, r, pipe, &n, err, errlen);
		if (rc < 0)
			goto out;
		goto finish;
	}
	/* The loop of tool_read_records(), with add_record() inlined: a call
	 * through a pointer per event is measurable at 25 M events/s.  Runs
	 * of plain events are read as such after the first record, their
	 * times made ns with the engine's clock (what to_ns() makes of them),
	 * and the lean stack takes their complete events when it can. */
	lean = profile_lean(p);
	if (r != p->last_reader) {
		p->last_reader = r;
		bump_strgen(p);
	}
	for (;;) {
		size_t k = n ? fxt_reader_next_plain(r, plain, PLAIN_RUN) : 0;

		if (k) {
			n += k;
			recpipe_convert(&p->conv, plain, k);
			for (size_t i = 0; i < k; i++) {
				const struct fxt_plain *e = &plain[i];

				if (lean) {
					i += profile__lean_run(p, e, k - i, &rc);
					if (rc < 0)
						goto fail;
					if (i == k)
						break;
					e = &plain[i];
				}
				if (e->record_type == RECPIPE_NS)
					rc = add_plain(p, r, e, true);
				else if ((unsigned)e->type - FXT_EVENT_DURATION_BEGIN <= 2u)
					rc = add_plain(p, r, e, false);
				else
					rc = add_record(p, r, fxt_plain_record(&rec, e), 0);
				if (rc < 0)
					goto fail;
			}
			continue;
		}
		if ((rc = fxt_reader_next(r, &rec)) <= 0)
			break;
		if (n++ == 0 && (rc = tool_read_first(r, err, errlen)) < 0)
			goto out;
		rc = add_record(p, r, &rec, 0);
		if (rc < 0)
			goto fail;
	}
	rc = tool_read_end(r, rc, n, err, errlen);
	if (rc < 0)
		goto out;
finish:
	rc = profile_finish(p);
fail:
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
out:
	fxt_reader_free(r);
	return rc;
}
