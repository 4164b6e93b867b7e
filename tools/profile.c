/* Profile: rebuilds per-thread call stacks from duration slices and sums
 * them per row (function, function x process, or function x thread).
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
 * else goes through push_frame() and finish_top().
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
 */
#include "config.h"

#include "tools/common.h"
#include "tools/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fxt/reader.h>

#include "fxt/hash.h"

/* --------------------------------------------------------------- types */

struct frame {
	uint64_t start, end; /* ns; end valid once has_end */
	uint64_t child_ns;   /* durations of the children folded in so far */
	uint64_t dur;	     /* once DONE: the duration a parent subtracts */
	uint32_t row;
	uint32_t ledger_lo; /* start of this frame's ledger range (end order) */
	uint8_t done;
	uint8_t has_end;
	uint8_t open;	 /* closed at the end of the trace */
	uint8_t summary; /* DONE frames merged by compact_run() */
	uint8_t mapped;	 /* counted in the thread's actmap, not in its rowkey */
	uint32_t act;	 /* slot of the row in the thread's actmap */
};

struct ledger_ent {
	uint32_t row;
	uint64_t incl; /* outermost-counted inclusive time inside the subtree */
};

/* Open addressing map row -> number of its open frames, per thread. */
struct actmap {
	uint32_t *keys; /* row + 1; 0 = empty */
	uint32_t *vals;
	uint32_t mask; /* capacity - 1 */
	uint32_t n;
};

struct thread {
	uint64_t pid, tid;
	struct frame *f;
	size_t nf, capf;
	uint32_t *openv;
	size_t nopen, capopen;
	/* The rows of the open frames, kept in step with openv, plus a spare
	 * slot: the path handed to on_slice without copying it per slice
	 * (a copy made a deep recursion quadratic). */
	uint32_t *openrow;
	size_t capopenrow;
	struct ledger_ent *led;
	size_t nled, capled;
	struct actmap act;
	uint32_t nmapped; /* open frames counted in act */
	uint32_t idx;	  /* index in profile.threads + 1 */
	uint64_t last_start;
	bool seen;
	bool post; /* end-ordered complete events */
};

/* Private per-row data, parallel to rows[]. */
struct rowkey {
	uint64_t hash;
	uint32_t cat_len, name_len;
	uint32_t mark; /* ledger dedup scratch, see ledger_merge() */
	/* Open frames of the row, when they all belong to one thread (the
	 * usual case): act_thr is that thread's idx, 0 if none is open.  Only
	 * when another thread already holds the row does a thread fall back
	 * to its own actmap (see act_push()). */
	uint32_t act_thr, act_n;
};

/* Most events name their function through the reader's string table, so
 * the same (pointer, length) comes back again and again: a small direct
 * mapped cache on the pointers skips the hashing.  The bytes are still
 * compared, as a table slot or the reader's window can hold new text at
 * the same address later. */
#define LOOKASIDE 256

struct lookaside {
	const char *name, *cat;
	uint32_t name_len, cat_len;
	uint64_t pid, tid;
	uint32_t row; /* + 1; 0 = empty */
};

/* Rows by the string refs of the event.  A table ref names the same text
 * until a string record replaces it, a provider record clears the table or
 * another provider's section begins; string and metadata records (all
 * provider records are metadata) bump profile.strgen, which retires every
 * entry at once.  So a hit costs one key compare: no hashing or comparing
 * of bytes, and no provider in the key. */
#define REFCACHE 1024

struct refcache {
	uint64_t key;	   /* strgen << 32 | category ref << 16 | name ref */
	uint64_t pid, tid; /* as grouped: 0 unless by process / thread */
	uint32_t row;
};

struct profile {
	struct profile_opts opts;
	struct lookaside look[LOOKASIDE];
	struct refcache refc[REFCACHE];
	uint32_t strgen;
	const struct fxt_reader *last_reader;

	/* Ticks per second of the provider of the last records: 1e9 makes the
	 * conversion to ns the identity.  Refreshed on every non-event record
	 * (provider switches and initialization records are such), with
	 * ns_per_tick for to_ns(). */
	uint64_t tps;
	double ns_per_tick;

	struct profile_row *rows;
	struct rowkey *keys;
	size_t nrows, caprows;
	uint32_t *rowtab; /* row index + 1; 0 = empty */
	size_t rowmask;

	struct thread *threads;
	size_t nthreads, capthreads;
	uint32_t *thrtab; /* thread index + 1 */
	size_t thrmask;
	size_t last_thread;

	uint64_t rng;
	uint64_t start_ns, end_ns; /* UINT64_MAX and 0 until a timestamp is seen */
	uint64_t nrecords, nslices;
	struct profile_anomalies anom;
	bool finished;

	/* Drops: the sum of the "fxt: N records dropped" instants, and the
	 * distinct threads they came on. */
	uint64_t dropped;
	struct drop_thread {
		uint64_t pid, tid;
	} * drop_thr;
	size_t ndrop_thr, capdrop_thr;
	/* Stack-sample tracks: thread objects of koid tid | PROFILE_SAMPLE_BIT
	 * named "<thread> (samples)", with a copy of the name. */
	struct sample_track {
		uint64_t koid;
		char *name;
	} * tracks;
	size_t ntracks, captracks;
};

/* -------------------------------------------------------------- growth */

/* The common case, room already there, stays inline. */
#define GROW(v, cap, need) TOOL_GROW(v, cap, need)

/* ----------------------------------------------------- active row map */

static int act_init(struct actmap *m)
{
	m->keys = calloc(16, sizeof(*m->keys));
	m->vals = calloc(16, sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ENOMEM;
	m->mask = 15;
	m->n = 0;
	return 0;
}

static inline uint32_t act_slot(uint32_t row, uint32_t mask)
{
	return (uint32_t)fxt__hash_u64(row) & mask;
}

static int act_rehash(struct actmap *m)
{
	uint32_t ncap = (m->mask + 1) * 2, i, j;
	uint32_t *nk = calloc(ncap, sizeof(*nk)), *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i <= m->mask; i++) {
		if (!m->keys[i])
			continue;
		for (j = act_slot(m->keys[i] - 1, ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->mask = ncap - 1;
	return 0;
}

/* Finds or adds row's slot; returns it, or -ENOMEM.  Slots are never
 * deleted (a count drops to zero and stays): the map holds the distinct rows
 * of the thread, and a slot stays valid until the next rehash, so frames
 * can keep it (see act_slot_of()). */
static int64_t act_find(struct actmap *m, uint32_t row)
{
	uint32_t i;

	for (i = act_slot(row, m->mask); m->keys[i]; i = (i + 1) & m->mask)
		if (m->keys[i] == row + 1)
			return i;
	if ((m->n + 1) * 2 > m->mask + 1) {
		if (act_rehash(m) < 0)
			return -ENOMEM;
		for (i = act_slot(row, m->mask); m->keys[i]; i = (i + 1) & m->mask)
			;
	}
	m->keys[i] = row + 1;
	m->vals[i] = 0;
	m->n++;
	return i;
}

/* The slot a frame remembered, re-found if a rehash moved it. */
static inline uint32_t act_slot_of(struct actmap *m, uint32_t row, uint32_t hint)
{
	if (hint <= m->mask && m->keys[hint] == row + 1)
		return hint;
	return (uint32_t)act_find(m, row); /* present: cannot fail */
}

/* Whether thread t has an open frame of `row` in its actmap. */
static bool act_mapped(struct thread *t, uint32_t row)
{
	uint32_t i;

	if (!t->nmapped)
		return false;
	for (i = act_slot(row, t->act.mask); t->act.keys[i]; i = (i + 1) & t->act.mask)
		if (t->act.keys[i] == row + 1)
			return t->act.vals[i] != 0;
	return false;
}

/* Whether t has an open frame of `row`: then a frame of the row finishing
 * now is not its outermost one. */
static inline bool act_open(const struct profile *p, struct thread *t, uint32_t row)
{
	return p->keys[row].act_thr == t->idx || act_mapped(t, row);
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

	if (k->act_thr == t->idx || (k->act_thr == 0 && !act_mapped(t, fr->row))) {
		k->act_thr = t->idx;
		k->act_n++;
		fr->mapped = 0;
		return 0;
	}
	slot = act_find(&t->act, fr->row);
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

/* ---------------------------------------------------------------- rows */

static uint64_t row_hash(uint64_t pid, uint64_t tid, const struct fxt_string *cat,
			 const struct fxt_string *name)
{
	uint64_t h = fxt__hash_word(fxt__hash_word(FXT__HASH_SEED, pid), tid);

	h = fxt__hash_more(h, cat->data, cat->len);
	return fxt__hash_mix(fxt__hash_more(h, name->data, name->len));
}

static int rowtab_resize(struct profile *p)
{
	size_t ncap = p->rowmask ? (p->rowmask + 1) * 2 : 1024, i, j;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < p->nrows; i++) {
		for (j = p->keys[i].hash & (ncap - 1); nt[j]; j = (j + 1) & (ncap - 1))
			;
		nt[j] = (uint32_t)i + 1;
	}
	free(p->rowtab);
	p->rowtab = nt;
	p->rowmask = ncap - 1;
	return 0;
}

static int row_new(struct profile *p, uint64_t h, uint64_t pid, uint64_t tid,
		   const struct fxt_string *cat, const struct fxt_string *name, size_t slot)
{
	struct profile_row *r;
	char *s;

	if (p->nrows >= UINT32_MAX - 1)
		return -ENOMEM;
	if (GROW(p->rows, p->caprows, p->nrows + 1) < 0)
		return -ENOMEM;
	{
		size_t cap = p->caprows;
		void *nk = realloc(p->keys, cap * sizeof(*p->keys));
		if (!nk)
			return -ENOMEM;
		p->keys = nk;
	}
	s = malloc((size_t)cat->len + name->len + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, cat->data, cat->len);
	s[cat->len] = 0;
	memcpy(s + cat->len + 1, name->data, name->len);
	s[cat->len + 1 + name->len] = 0;

	r = &p->rows[p->nrows];
	memset(r, 0, sizeof(*r));
	r->category = s;
	r->name = s + cat->len + 1;
	r->pid = pid;
	r->tid = tid;
	r->min_ns = UINT64_MAX;
	p->keys[p->nrows] = (struct rowkey){ h, cat->len, name->len, UINT32_MAX, 0, 0 };
	p->rowtab[slot] = (uint32_t)++p->nrows;
	return 0;
}

/* Finds or creates the row for a slice; returns its index or -ENOMEM. */
static int64_t row_get(struct profile *p, uint64_t pid, uint64_t tid, const struct fxt_string *cat,
		       const struct fxt_string *name)
{
	uint64_t h;
	size_t i;

	switch (p->opts.by) {
	case PROFILE_BY_FUNCTION:
		pid = 0;
		/* fall through */
	case PROFILE_BY_PROCESS:
		tid = 0;
		break;
	case PROFILE_BY_THREAD:
		break;
	}
	h = row_hash(pid, tid, cat, name);
	for (i = h & p->rowmask; p->rowtab[i]; i = (i + 1) & p->rowmask) {
		uint32_t k = p->rowtab[i] - 1;
		const struct rowkey *rk = &p->keys[k];
		const struct profile_row *r = &p->rows[k];

		if (rk->hash == h && rk->cat_len == cat->len && rk->name_len == name->len &&
		    r->pid == pid && r->tid == tid && memcmp(r->name, name->data, name->len) == 0 &&
		    memcmp(r->category, cat->data, cat->len) == 0)
			return k;
	}
	if (row_new(p, h, pid, tid, cat, name, i) < 0)
		return -ENOMEM;
	if ((p->nrows * 2 > p->rowmask + 1) && rowtab_resize(p) < 0)
		return -ENOMEM;
	return (int64_t)p->nrows - 1;
}

static inline __attribute__((always_inline)) bool same_bytes(const char *a, const char *b,
							     size_t len)
{
	uint64_t x, y;

	for (; len >= 8; a += 8, b += 8, len -= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	while (len--)
		if (*a++ != *b++)
			return false;
	return true;
}

static inline __attribute__((always_inline)) int64_t row_lookup(struct profile *p, uint64_t pid,
								uint64_t tid,
								const struct fxt_string *cat,
								const struct fxt_string *name)
{
	uint64_t h = fxt__hash_word((uintptr_t)name->data ^ name->len, (uintptr_t)cat->data);
	struct lookaside *l;
	int64_t row;

	if (p->opts.by != PROFILE_BY_FUNCTION)
		h = fxt__hash_word(fxt__hash_word(h, pid), tid);
	l = &p->look[h & (LOOKASIDE - 1)];
	if (l->row && l->name == name->data && l->cat == cat->data && l->name_len == name->len &&
	    l->cat_len == cat->len && l->pid == pid && l->tid == tid) {
		const struct profile_row *r = &p->rows[l->row - 1];
		if (same_bytes(r->name, name->data, name->len) &&
		    same_bytes(r->category, cat->data, cat->len))
			return l->row - 1;
	}
	row = row_get(p, pid, tid, cat, name);
	if (row >= 0)
		*l = (struct lookaside){ name->data, cat->data, name->len,	  cat->len,
					 pid,	     tid,	(uint32_t)row + 1 };
	return row;
}

static inline uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: plenty for reservoir positions. */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(2685821657736338717);
}

static int row_sample(struct profile *p, struct profile_row *r, uint64_t d)
{
	uint32_t cap = p->opts.reservoir;

	if (!cap)
		return 0;
	if (r->nsamples < cap) {
		if (r->nsamples == r->samples_cap) {
			uint32_t n = r->samples_cap ? r->samples_cap * 2 : 8;
			uint64_t *ns;
			if (n > cap)
				n = cap;
			ns = realloc(r->samples, n * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			r->samples = ns;
			r->samples_cap = n;
		}
		r->samples[r->nsamples++] = d;
		return 0;
	}
	/* Algorithm R: the calls-th value replaces a random slot with
	 * probability cap / calls, which keeps the sample uniform. */
	{
		uint64_t j = rng_next(&p->rng) % r->calls;
		if (j < cap)
			r->samples[j] = d;
	}
	return 0;
}

/* ------------------------------------------------------------- threads */

static int thrtab_resize(struct profile *p)
{
	size_t ncap = p->thrmask ? (p->thrmask + 1) * 2 : 64, i, j;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < p->nthreads; i++) {
		uint64_t h = fxt__hash_pair(p->threads[i].pid, p->threads[i].tid);
		for (j = h & (ncap - 1); nt[j]; j = (j + 1) & (ncap - 1))
			;
		nt[j] = (uint32_t)i + 1;
	}
	free(p->thrtab);
	p->thrtab = nt;
	p->thrmask = ncap - 1;
	return 0;
}

static struct thread *thread_lookup(struct profile *p, uint64_t pid, uint64_t tid)
{
	struct thread *t;
	uint64_t h;
	size_t i;

	h = fxt__hash_pair(pid, tid);
	for (i = h & p->thrmask; p->thrtab[i]; i = (i + 1) & p->thrmask) {
		t = &p->threads[p->thrtab[i] - 1];
		if (t->pid == pid && t->tid == tid) {
			p->last_thread = p->thrtab[i] - 1;
			return t;
		}
	}
	if (GROW(p->threads, p->capthreads, p->nthreads + 1) < 0)
		return NULL;
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->idx = (uint32_t)p->nthreads + 1;
	if (act_init(&t->act) < 0) {
		free(t->act.keys);
		free(t->act.vals);
		return NULL;
	}
	p->thrtab[i] = (uint32_t)++p->nthreads;
	p->last_thread = p->nthreads - 1;
	if (p->nthreads * 2 > p->thrmask + 1 && thrtab_resize(p) < 0)
		return NULL;
	return &p->threads[p->last_thread];
}

/* Events of one thread usually come in runs: try the last one first. */
static inline __attribute__((always_inline)) struct thread *thread_get(struct profile *p,
								       uint64_t pid, uint64_t tid)
{
	if (p->nthreads) {
		struct thread *t = &p->threads[p->last_thread];
		if (t->pid == pid && t->tid == tid)
			return t;
	}
	return thread_lookup(p, pid, tid);
}

static void thread_release(struct thread *t)
{
	free(t->f);
	free(t->openv);
	free(t->openrow);
	free(t->led);
	free(t->act.keys);
	free(t->act.vals);
}

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

	for (j = base + 1; j < base + n; j++)
		s->dur += t->f[j].dur;
	s->end = t->f[base + n - 1].end;
	s->summary = 1;

	lo = s->ledger_lo;
	hi = t->f[base + n].ledger_lo;
	w = ledger_merge(p, t, lo, hi, UINT32_MAX, &unused);
	shift = hi - w;
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
	t->openrow[t->nopen] = fr->row;
	s.pid = t->pid;
	s.tid = t->tid;
	s.start_ns = fr->start;
	s.end_ns = fr->end;
	s.self_ns = self;
	s.open = fr->open;
	s.depth = (unsigned)t->nopen;
	s.path = t->openrow;
	p->opts.on_slice(p->opts.ctx, &s);
	return 0;
}

/* Counts a finished frame (its children folded in) in its row; returns
 * its self time. */
static inline uint64_t count_frame(struct profile *p, const struct frame *fr, uint64_t dur,
				   int *err)
{
	struct profile_row *r = &p->rows[fr->row];
	uint64_t self;

	if (fr->child_ns > dur) {
		p->anom.overlaps++;
		self = 0;
	} else {
		self = dur - fr->child_ns;
	}
	r->calls++;
	r->self_ns += self;
	r->sum_ns += dur;
	if (dur < r->min_ns)
		r->min_ns = dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
	r->open += fr->open;
	p->nslices++;
	if (row_sample(p, r, dur) < 0)
		*err = -ENOMEM;
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

	for (j = oi + 1; j < t->nf; j++)
		fr->child_ns += t->f[j].dur;
	t->nf = oi + 1;

	dur = fr->end - fr->start;
	outermost = act_pop(p, t, fr);
	self = count_frame(p, fr, dur, &err);
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
	uint64_t dur = fr->end - fr->start, self;
	int err = 0;

	self = count_frame(p, fr, dur, &err);
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
	uint64_t child = 0;
	size_t k, lo;

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
			for (size_t j = k; j < t->nf; j++)
				child += t->f[j].dur;
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
	t->openrow[t->nopen] = t->f[t->nf].row;
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
	dur = fr->end - fr->start;
	if (act_pop(p, t, fr))
		p->rows[fr->row].total_ns += dur;
	self = count_frame(p, fr, dur, &err);
	if (err < 0)
		return err;
	if (p->opts.on_slice && emit_slice(p, t, fr, self) < 0)
		return -ENOMEM;
	t->nled = fr->ledger_lo;
	fr[-1].child_ns += dur;
	t->nf = oi;
	return 1;
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

	if (t->post || s < t->last_start)
		goto general;
	t->last_start = s;
	t->seen = true;
	while (t->nopen) {
		const struct frame *o = &t->f[t->openv[t->nopen - 1]];

		if (!o->has_end)
			break;
		if (o->end > s) {
			if (o->start == s && e > o->end) /* its parent, after it */
				goto general;
			break;
		}
		rc = fold_top(p, t);
		if (rc == 0)
			rc = finish_top(p, t);
		if (rc < 0)
			return rc;
	}
	if (t->nf && t->f[t->nf - 1].done)
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
	t->openrow[t->nopen] = t->f[t->nf].row;
	t->openv[t->nopen++] = (uint32_t)t->nf++;
	return 0;
general:
	return push_frame(p, t, s, e, true, row);
}

static int end_frame(struct profile *p, struct thread *t, uint64_t ts)
{
	struct frame *o;

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

/* ------------------------------------------------------------ public API */

int profile_new(struct profile **pp, const struct profile_opts *opts)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (opts)
		p->opts = *opts;
	p->rng = p->opts.seed ? p->opts.seed : UINT64_C(0x853c49e6748fea9b);
	p->strgen = 1;
	p->start_ns = UINT64_MAX;
	if (rowtab_resize(p) < 0 || thrtab_resize(p) < 0) {
		profile_free(p);
		return -ENOMEM;
	}
	*pp = p;
	return 0;
}

void profile_free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nrows; i++) {
		free((char *)p->rows[i].category);
		free(p->rows[i].samples);
	}
	for (i = 0; i < p->nthreads; i++)
		thread_release(&p->threads[i]);
	free(p->drop_thr);
	for (i = 0; i < p->ntracks; i++)
		free(p->tracks[i].name);
	free(p->tracks);
	free(p->rows);
	free(p->keys);
	free(p->rowtab);
	free(p->threads);
	free(p->thrtab);
	free(p);
}

static inline void see_time(struct profile *p, uint64_t ns)
{
	if (ns < p->start_ns)
		p->start_ns = ns;
	if (ns > p->end_ns)
		p->end_ns = ns;
}

#define NS_PER_S UINT64_C(1000000000)

/* floor(ticks * 1e9 / tps), as fxt_reader_ticks_to_ns() computes it, but
 * without its 128-bit division per event (tens of cycles; the agent writes
 * TSC ticks).  While ticks < 2^53 and the result < 2^55, a double estimate
 * is within 9 of the quotient; the remainder of that estimate is then
 * below 10 tps < 2^63 in magnitude (ns_per_tick is only set for tps <
 * 2^59), so it is exact in wrapping 64-bit arithmetic and corrects it. */
static inline uint64_t to_ns(const struct profile *p, struct fxt_reader *r, uint64_t ticks)
{
	if (p->tps == NS_PER_S)
		return ticks;
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
		p->strgen = 1;
	}
}

/* The row of a begin or complete event: the ref cache first. */
static inline __attribute__((always_inline)) int64_t event_row(struct profile *p,
							       const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	uint64_t pid = 0, tid = 0, key;
	struct refcache *c;
	uint64_t h;
	int64_t row;

	if (!ref_cacheable(ev->category_ref, &ev->category) ||
	    !ref_cacheable(ev->name_ref, &ev->name))
		return row_lookup(p, ev->pid, ev->tid, &ev->category, &ev->name);
	if (p->opts.by != PROFILE_BY_FUNCTION) {
		pid = ev->pid;
		if (p->opts.by == PROFILE_BY_THREAD)
			tid = ev->tid;
	}
	key = (uint64_t)p->strgen << 32 | (uint32_t)ev->category_ref << 16 | ev->name_ref;
	h = fxt__hash_word(fxt__hash_word((uint32_t)key, pid), tid);
	c = &p->refc[h & (REFCACHE - 1)];
	if (c->key == key && c->pid == pid && c->tid == tid)
		return c->row;
	row = row_lookup(p, ev->pid, ev->tid, &ev->category, &ev->name);
	if (row >= 0)
		*c = (struct refcache){ key, pid, tid, (uint32_t)row };
	return row;
}

/* Notes the thread objects that are stack-sample tracks (the last name
 * given to a koid wins). */
static int see_kobj(struct profile *p, const struct fxt_record *rec)
{
	static const char suffix[] = " (samples)";
	const struct fxt_string *name = &rec->u.kobj.name;
	const size_t slen = sizeof(suffix) - 1;
	uint64_t koid = rec->u.kobj.koid;
	char *copy;
	size_t i;

	if (rec->u.kobj.obj_type != FXT_OBJ_THREAD || !(koid & PROFILE_SAMPLE_BIT) ||
	    name->len <= slen || memcmp(name->data + name->len - slen, suffix, slen) != 0)
		return 0;
	copy = strndup(name->data, name->len);
	if (!copy)
		return -ENOMEM;
	for (i = 0; i < p->ntracks && p->tracks[i].koid != koid; i++)
		;
	if (i == p->ntracks) {
		if (GROW(p->tracks, p->captracks, p->ntracks + 1) < 0) {
			free(copy);
			return -ENOMEM;
		}
		p->tracks[p->ntracks++].koid = koid;
	} else {
		free(p->tracks[i].name);
	}
	p->tracks[i].name = copy;
	return 0;
}

/* Counts the records an instant event says were dropped on its thread. */
static int see_drops(struct profile *p, uint64_t pid, uint64_t tid, const struct fxt_string *name)
{
	uint64_t n = fxt_dropped_in_name(name->data, name->len);
	size_t i;

	if (!n)
		return 0;
	p->dropped = n > UINT64_MAX - p->dropped ? UINT64_MAX : p->dropped + n;
	for (i = 0; i < p->ndrop_thr; i++)
		if (p->drop_thr[i].pid == pid && p->drop_thr[i].tid == tid)
			return 0;
	if (GROW(p->drop_thr, p->capdrop_thr, p->ndrop_thr + 1) < 0)
		return -ENOMEM;
	p->drop_thr[p->ndrop_thr++] = (struct drop_thread){ pid, tid };
	return 0;
}

/* The body of profile_add_record(), inlined into profile_load()'s loop. */
static inline __attribute__((always_inline)) int add_record(struct profile *p, struct fxt_reader *r,
							    const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct thread *t;
	uint64_t ts, end;
	int64_t row;

	p->nrecords++;
	if (rec->type != FXT_RECORD_EVENT) {
		p->tps = fxt_reader_ticks_per_second(r);
		p->ns_per_tick = p->tps && p->tps < (UINT64_C(1) << 59)
				     ? (double)NS_PER_S / (double)p->tps
				     : 0; /* to_ns() falls back to the reader */
		if (rec->type == FXT_RECORD_KERNEL_OBJECT)
			return see_kobj(p, rec);
		/* Strings change meaning on string and provider records. */
		if (rec->type == FXT_RECORD_STRING || rec->type == FXT_RECORD_METADATA)
			bump_strgen(p);
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
		return see_drops(p, ev->pid, ev->tid, &ev->name);
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

int profile_add_record(struct profile *p, struct fxt_reader *r, const struct fxt_record *rec)
{
	return add_record(p, r, rec);
}

int profile_finish(struct profile *p)
{
	size_t i;

	if (p->finished)
		return 0;
	p->finished = true;
	for (i = 0; i < p->nthreads; i++) {
		struct thread *t = &p->threads[i];

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
		/* Only roots are left; their numbers are final. */
		thread_release(t);
		memset(&t->f, 0, sizeof(*t) - offsetof(struct thread, f));
	}
	for (i = 0; i < p->nrows; i++)
		if (!p->rows[i].calls)
			p->rows[i].min_ns = 0;
	/* Rows of a sample track belong to the thread it samples. */
	for (i = 0; p->ntracks && p->opts.by == PROFILE_BY_THREAD && i < p->nrows; i++) {
		struct profile_row *r = &p->rows[i];

		for (size_t k = 0; k < p->ntracks; k++) {
			if (p->tracks[k].koid == r->tid) {
				r->tid &= ~PROFILE_SAMPLE_BIT;
				r->track = p->tracks[k].name;
				break;
			}
		}
	}
	return 0;
}

int profile_load(struct profile *p, const char *path, char *err, size_t errlen)
{
	struct fxt_reader *r = NULL;
	struct fxt_record rec;
	uint64_t off = 0, n = 0;
	const char *why;
	int rc;

	rc = tool_open_archive(&r, path, 0, err, errlen);
	if (rc < 0)
		return rc;
	/* The loop of tool_read_records(), with add_record() inlined: a call
	 * through a pointer per event is measurable at 25 M events/s. */
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		if (n++ == 0 && !fxt_reader_saw_magic(r)) {
			snprintf(err, errlen, "not an FXT archive (no magic record at offset 0)");
			rc = -EINVAL;
			goto out;
		}
		rc = add_record(p, r, &rec);
		if (rc < 0) {
			snprintf(err, errlen, "%s", strerror(-rc));
			goto out;
		}
	}
	if (rc < 0) {
		why = fxt_reader_error(r, &off);
		if (n == 0 && !fxt_reader_saw_magic(r))
			snprintf(err, errlen, "not an FXT archive (%s)", why ? why : "unreadable");
		else
			snprintf(err, errlen, "%s at byte %" PRIu64, why ? why : "read error", off);
		rc = -EINVAL;
		goto out;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty file, not an FXT archive");
		rc = -ENODATA;
		goto out;
	}
	rc = profile_finish(p);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
out:
	fxt_reader_free(r);
	return rc;
}

size_t profile_nrows(const struct profile *p)
{
	return p->nrows;
}

const struct profile_row *profile_row(const struct profile *p, size_t i)
{
	return i < p->nrows ? &p->rows[i] : NULL;
}

const struct profile_row *profile_find(const struct profile *p, const char *category,
				       const char *name, uint64_t pid, uint64_t tid)
{
	size_t i;

	for (i = 0; i < p->nrows; i++) {
		const struct profile_row *r = &p->rows[i];
		if (strcmp(r->name, name) == 0 &&
		    (!category || strcmp(r->category, category) == 0) && r->pid == pid &&
		    r->tid == tid)
			return r;
	}
	return NULL;
}

uint64_t profile_start_ns(const struct profile *p)
{
	return p->start_ns <= p->end_ns ? p->start_ns : 0;
}

uint64_t profile_end_ns(const struct profile *p)
{
	return p->end_ns;
}

uint64_t profile_nrecords(const struct profile *p)
{
	return p->nrecords;
}

uint64_t profile_nslices(const struct profile *p)
{
	return p->nslices;
}

const struct profile_anomalies *profile_anomalies(const struct profile *p)
{
	return &p->anom;
}

uint64_t profile_dropped(const struct profile *p, uint64_t *nthreads)
{
	if (nthreads)
		*nthreads = p->ndrop_thr;
	return p->dropped;
}

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

/* ---------------------------------------------------------------- output */

void profile_fmt_ns(char *buf, size_t len, double ns)
{
	double a = ns < 0 ? -ns : ns;

	if (a < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (a < 1e6)
		snprintf(buf, len, "%.3f us", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
}
