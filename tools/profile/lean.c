/* The profile engine's lean stack (lean.h): when no option asks for more
 * than a frame's numbers (no durations kept, no variance, no hooks' cost
 * taken out), the complete events that come in start order, what the
 * agent writes, go on a stack of their own above the general one
 * (profile.c's): 32 bytes a frame, no list of open frames to go through,
 * each folded into its parent (the lean frame below it, or the general
 * stack's open top) as profile.c's fold_top() would.  Whatever else comes
 * for the thread first moves the lean frames onto the general stack
 * (profile__lean_spill()), where they are what push_complete() would have
 * made of them; what the lean path cannot take it hands to the general
 * machine through profile.c's profile__lean_general(),
 * profile__lean_retire() and profile__lean_row_miss().
 */
#include "config.h"

#include "tools/profile/lean.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tools/profile/profile-int.h"
#include "tools/profile/recpipe.h"

/* (lean.h) */
int profile__lean_spill(struct profile *p, struct thread *t)
{
	for (size_t i = 0; i < t->nlf; i++) {
		const struct lframe *l = &t->lf[i];
		struct frame *fr;

		if (GROW(t->f, t->capf, t->nf + 1) < 0 ||
		    GROW(t->openv, t->capopen, t->nopen + 1) < 0 ||
		    GROW(t->openrow, t->capopenrow, t->nopen + 2) < 0)
			return -ENOMEM;
		fr = &t->f[t->nf];
		*fr = (struct frame){ .start = l->start,
				      .end = l->end,
				      .child_ns = l->child_ns,
				      .row = l->row,
				      .ledger_lo = (uint32_t)t->nled,
				      .has_end = 1,
				      .mapped = l->act != UINT32_MAX,
				      .act = l->act != UINT32_MAX ? l->act : 0 };
		openrow_set(t, t->nopen, l->row);
		t->openv[t->nopen++] = (uint32_t)t->nf++;
	}
	t->nlf = 0;
	return 0;
}

/* act_push()'s count in t's actmap, for a lean frame. */
static __attribute__((noinline)) int64_t act_map_lean(struct thread *t, uint32_t row)
{
	int64_t slot = profile__act_find(&t->act, row);

	if (slot < 0)
		return -ENOMEM;
	t->act.vals[slot]++;
	t->nmapped++;
	return slot;
}

/* act_push() for a lean frame: the row's slot in t's actmap, UINT32_MAX
 * when counted in its key, or -ENOMEM. */
static inline __attribute__((always_inline)) int64_t act_push_lean(struct profile *p,
								   struct thread *t, uint32_t row)
{
	struct rowkey *k = &p->keys[row];
	uint32_t owner = k->act_thr;

	/* (the usual case first: no frame of the row open anywhere) */
	if ((owner == 0 && !(t->nmapped && profile__act_mapped(t, row))) || owner == t->idx) {
		k->act_thr = t->idx;
		k->act_n++;
		return UINT32_MAX;
	}
	return act_map_lean(t, row);
}

/* act_pop() for a lean frame counted in t's actmap. */
static __attribute__((noinline)) bool act_unmap_lean(struct thread *t, const struct lframe *l)
{
	t->nmapped--;
	return --t->act.vals[act_slot_of(&t->act, l->row, l->act)] == 0;
}

/* emit_slice() of a lean frame at depth (the open frames below it). */
static __attribute__((noinline)) void lean_emit(struct profile *p, struct thread *t,
						const struct lframe *l, uint64_t self, size_t depth)
{
	struct profile_slice sl = { .pid = t->pid,
				    .tid = t->tid,
				    .start_ns = l->start,
				    .end_ns = l->end,
				    .self_ns = self,
				    .depth = (unsigned)depth,
				    .path = t->openrow,
				    .same = slice_same(t) };

	p->opts.on_slice(p->opts.ctx, &sl);
}

/* The refs of an event as one word: its category's in the low half, its
 * name's in the high one (the row cache's key with the strings'
 * generation above them). */
_Static_assert(offsetof(struct fxt_plain, name_ref) == offsetof(struct fxt_plain, category_ref) + 2,
	       "the refs side by side");

/* profile__lean_run() with the slices handed over or not (a constant in
 * each of its two copies).  Each complete slice [s, end) of row on t:
 * fold_top() and count_frame() of the lean frames it shows to be over,
 * then its own lean frame; anything else to push_complete().  The lean
 * stack lies on a general one whose top frame is open (or on none).
 *
 * One loop whose turns either pop a frame the event shows to be over or
 * push the event and take the next one, written with gotos: as a loop of
 * pops inside a loop of events, the compiler kept the event's values in
 * other registers during the pops and moved them at every event. */
static inline __attribute__((always_inline)) size_t
lean_run(struct profile *p, const struct fxt_plain *it, size_t n, int *rc, bool slices)
{
	const struct fxt_plain *e = it, *stop = it + n;
	const uint64_t gen = (uint64_t)p->strgen << 32;
	struct thread *t = NULL;
	uint64_t s, end;
	uint32_t row;
	size_t nlf;
	int err = 0;

	if (e == stop)
		goto out;
take:
	/* The event at e: its checks, thread and row. */
	{
		uint64_t key;
		uint32_t refs;
		struct lrow *c;

		/* Written by the other CPU: asked for ahead (past the end
		 * too: a prefetch does not fault). */
		__builtin_prefetch(e + 8);
		s = e->ts;
		end = e->extra;
		/* (end >= s: the reader stops at a complete event that ends
		 * before it starts) */
		if ((e->record_type | e->type << 8) !=
			(RECPIPE_NS | FXT_EVENT_DURATION_COMPLETE << 8) ||
		    end < s)
			goto out;
		/* (the first time: below) */
		if (end > p->end_ns)
			p->end_ns = end;
		if (__builtin_expect(!t || e->tid != t->tid || e->pid != t->pid, 0)) {
			t = thread_get(p, e->pid, e->tid);
			if (!t) {
				err = -ENOMEM;
				goto out;
			}
		}
		/* row_of() through the thread's own cache first (its
		 * process and thread are the event's), the miss out of
		 * line (it changes no strgen) */
		memcpy(&refs, &e->category_ref, sizeof(refs));
		key = gen | refs;
		c = &t->lrow[(refs >> 16) & (LROW - 1)];
		if (__builtin_expect(c->key == key, 1)) {
			row = c->row;
		} else {
			int64_t r = profile__lean_row_miss(p, e);

			if (r < 0) {
				err = (int)r;
				goto out;
			}
			row = (uint32_t)r;
			*c = (struct lrow){ key, row };
		}
		nlf = t->nlf;
		if (t->post || s < t->last_start)
			goto general;
	}
turn:
	if (nlf) {
		struct lframe *l = &t->lf[nlf - 1];
		struct profile_row *r;
		uint64_t dur, self, *up;
		bool outermost;

		if (l->end <= s) {
			/* Over: folded into its parent.  The bottom one folds
			 * into the general stack's top, an open frame;
			 * without one (a top-level slice) finish_top()
			 * settles it. */
			if (nlf > 1)
				up = &l[-1].child_ns;
			else if (!t->lean_ok && (!t->nf || t->f[t->nf - 1].done))
				goto general;
			else
				up = &t->f[t->nf - 1].child_ns;
			dur = l->end - l->start;
			r = &p->rows[l->row];
			if (__builtin_expect(l->act == UINT32_MAX, 1)) {
				struct rowkey *k = &p->keys[l->row];

				outermost = --k->act_n == 0;
				if (outermost)
					k->act_thr = 0;
			} else {
				outermost = act_unmap_lean(t, l);
			}
			if (outermost)
				r->total_ns += dur;
			if (__builtin_expect(l->child_ns > dur, 0)) {
				p->anom.overlaps++;
				self = 0;
			} else {
				self = dur - l->child_ns;
			}
			r->calls++;
			r->self_ns += self;
			r->sum_ns += dur;
			if (dur < r->min_ns)
				r->min_ns = dur;
			if (dur > r->max_ns)
				r->max_ns = dur;
			p->nslices++;
			/* (its path: the general stack's open rows, then the
			 * lean frames', kept in openrow) */
			if (slices)
				lean_emit(p, t, l, self, t->nopen + nlf - 1);
			*up += dur;
			nlf--;
			goto turn;
		}
		if (l->start == s && end > l->end) /* its parent, after it */
			goto general;
	}
	/* The event's own frame. */
	{
		int64_t act;

		t->nlf = nlf;
		/* On an empty lean stack, the general one's frames that are
		 * over too, as push_complete() folds them. */
		if (!nlf && !t->lean_ok) {
			err = profile__lean_retire(p, t, s, end);
			if (err < 0)
				goto out;
			if (err)
				goto general;
		}
		if (__builtin_expect(nlf == t->caplf, 0) && GROW(t->lf, t->caplf, nlf + 1) < 0) {
			err = -ENOMEM;
			goto out;
		}
		if (slices) {
			if (GROW(t->openrow, t->capopenrow, t->nopen + nlf + 2) < 0) {
				err = -ENOMEM;
				goto out;
			}
			openrow_set(t, t->nopen + nlf, row);
		}
		act = act_push_lean(p, t, row);
		if (act < 0) {
			err = (int)act;
			goto out;
		}
		/* The profile's first time (p->start_ns): a thread's later
		 * starts come after its first, which was seen (here, or by
		 * add_plain() and below). */
		if (__builtin_expect(!t->seen, 0)) {
			if (s < p->start_ns)
				p->start_ns = s;
			t->seen = true;
		}
		t->last_start = s;
		t->lf[nlf] = (struct lframe){
			.start = s, .end = end, .child_ns = 0, .row = row, .act = (uint32_t)act
		};
		t->nlf = nlf + 1;
	}
	if (++e != stop)
		goto take;
	goto out;
general:
	t->nlf = nlf;
	if (s < p->start_ns)
		p->start_ns = s;
	err = profile__lean_general(p, t, s, end, row);
	if (err >= 0 && ++e != stop)
		goto take;
out:
	p->nrecords += (size_t)(e - it);
	*rc = err < 0 ? err : 0;
	return (size_t)(e - it);
}

static __attribute__((noinline)) size_t
lean_run_slices(struct profile *p, const struct fxt_plain *it, size_t n, int *rc)
{
	return lean_run(p, it, n, rc, true);
}

/* (lean.h) */
size_t profile__lean_run(struct profile *p, const struct fxt_plain *it, size_t n, int *rc)
{
	if (p->opts.on_slice)
		return lean_run_slices(p, it, n, rc);
	return lean_run(p, it, n, rc, false);
}
