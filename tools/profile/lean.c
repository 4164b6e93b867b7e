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
#include <stdint.h>

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

	if (k->act_thr == t->idx ||
	    (k->act_thr == 0 && !(t->nmapped && profile__act_mapped(t, row)))) {
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

/* A complete slice [s, e) of row on t: fold_top() and count_frame() of the
 * lean frames it shows to be over, then its own lean frame; anything else
 * to push_complete().  The lean stack lies on a general one whose top
 * frame is open (or on none). */
static inline __attribute__((always_inline)) int lean_complete(struct profile *p, struct thread *t,
							       uint64_t s, uint64_t e, uint32_t row,
							       bool slices)
{
	struct profile_row *rows = p->rows;
	struct rowkey *keys = p->keys;
	struct lframe *lf = t->lf;
	size_t nlf = t->nlf;
	int64_t act;

	if (t->post || s < t->last_start)
		goto general;
	while (nlf) {
		struct lframe *l = &lf[nlf - 1];
		struct profile_row *r;
		uint64_t dur, self;
		bool outermost;

		if (l->end > s) {
			if (l->start == s && e > l->end) /* its parent, after it */
				goto general;
			break;
		}
		/* The bottom one folds into the general stack's top, an
		 * open frame; without one (a top-level slice) finish_top()
		 * settles it. */
		if (nlf == 1 && !t->lean_ok && (!t->nf || t->f[t->nf - 1].done))
			goto general;
		dur = l->end - l->start;
		r = &rows[l->row];
		if (__builtin_expect(l->act == UINT32_MAX, 1)) {
			struct rowkey *k = &keys[l->row];

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
		/* (its path: the general stack's open rows, then the lean
		 * frames', kept in openrow) */
		if (slices)
			lean_emit(p, t, l, self, t->nopen + nlf - 1);
		if (--nlf)
			l[-1].child_ns += dur;
		else
			t->f[t->nf - 1].child_ns += dur;
	}
	t->nlf = nlf;
	/* On an empty lean stack, the general one's frames that are over
	 * too, as push_complete() folds them. */
	if (!nlf && !t->lean_ok) {
		int rc = profile__lean_retire(p, t, s, e);

		if (rc < 0)
			return rc;
		if (rc)
			goto general;
	}
	if (__builtin_expect(nlf == t->caplf, 0)) {
		if (GROW(t->lf, t->caplf, nlf + 1) < 0)
			return -ENOMEM;
		lf = t->lf;
	}
	if (slices) {
		if (GROW(t->openrow, t->capopenrow, t->nopen + nlf + 2) < 0)
			return -ENOMEM;
		openrow_set(t, t->nopen + nlf, row);
	}
	act = act_push_lean(p, t, row);
	if (act < 0)
		return (int)act;
	t->last_start = s;
	t->seen = true;
	lf[nlf] = (struct lframe){ s, e, 0, row, (uint32_t)act };
	t->nlf = nlf + 1;
	return 0;
general:
	t->nlf = nlf;
	return profile__lean_general(p, t, s, e, row);
}

/* (lean.h) */
size_t profile__lean_run(struct profile *p, const struct fxt_plain *it, size_t n, int *rc)
{
	bool slices = p->opts.on_slice != NULL;
	uint64_t lo = p->start_ns, hi = p->end_ns, gen = (uint64_t)p->strgen << 32;
	uint64_t cpid = 0, ctid = 0;
	struct thread *t = NULL;
	size_t i;

	*rc = 0;
	for (i = 0; i < n; i++) {
		const struct fxt_plain *e = &it[i];
		uint64_t s = e->ts, end = e->extra, key;
		struct lrow *c;
		int64_t row;

		/* Written by the other CPU: asked for ahead (past the end
		 * too: a prefetch does not fault). */
		__builtin_prefetch(&it[i + 8]);
		/* (end >= s: the reader stops at a complete event that ends
		 * before it starts) */
		if ((e->record_type | e->type << 8) !=
			(RECPIPE_NS | FXT_EVENT_DURATION_COMPLETE << 8) ||
		    end < s)
			break;
		if (s < lo)
			lo = s;
		if (end > hi)
			hi = end;
		if (!t || e->tid != ctid || e->pid != cpid) {
			t = thread_get(p, e->pid, e->tid);
			if (!t) {
				*rc = -ENOMEM;
				break;
			}
			cpid = e->pid;
			ctid = e->tid;
		}
		/* row_of() through the thread's own cache first (its
		 * process and thread are the event's), the miss out of
		 * line (it changes no strgen) */
		key = gen | (uint32_t)e->category_ref << 16 | e->name_ref;
		c = &t->lrow[e->name_ref & (LROW - 1)];
		if (__builtin_expect(c->key == key, 1)) {
			row = c->row;
		} else {
			row = profile__lean_row_miss(p, e);
			if (row < 0) {
				*rc = (int)row;
				break;
			}
			*c = (struct lrow){ key, (uint32_t)row };
		}
		*rc = lean_complete(p, t, s, end, (uint32_t)row, slices);
		if (*rc < 0)
			break;
	}
	p->nrecords += i;
	if (lo < p->start_ns)
		p->start_ns = lo;
	if (hi > p->end_ns)
		p->end_ns = hi;
	return i;
}
