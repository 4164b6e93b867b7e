/* Private to tools/profile*.c: the profile's data as the engine
 * (profile.c, its lean stack lean.c) and its tables (profile-table.c)
 * share it, and the table functions the engine calls when its inlined
 * fast paths miss. */
#ifndef FXT_TOOLS_PROFILE_INT_H
#define FXT_TOOLS_PROFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/front/common.h"
#include "tools/profile/pctl.h"
#include "tools/front/sched.h"
#include "tools/front/srcloc.h"
#include "tools/profile/profile.h"
#include "tools/profile/tickconv.h"

struct fxt_record;
struct fxt_string;

/* The common case, room already there, stays inline. */
#define GROW(v, cap, need) TOOL_GROW(v, cap, need)

struct frame {
	uint64_t start, end; /* ns; end valid once has_end */
	uint64_t child_ns;   /* durations of the children folded in so far */
	uint64_t dur;	     /* once DONE: the duration a parent subtracts */
	/* --subtract-overhead: the calls of hooked functions among the
	 * descendants folded in so far; once DONE, those and itself (what
	 * a parent adds to its own). */
	uint64_t desc, sub;
	uint32_t row;
	uint32_t ledger_lo; /* start of this frame's ledger range (end order) */
	uint8_t done;
	uint8_t has_end;
	uint8_t open;	 /* closed at the end of the trace */
	uint8_t summary; /* DONE frames merged by compact_run() */
	uint8_t mapped;	 /* counted in the thread's actmap, not in its rowkey */
	uint32_t act;	 /* slot of the row in the thread's actmap */
};

/* A frame of the lean stack (struct thread.lf): a complete event's
 * open frame in start order, what the general frame's fold keeps of it
 * when no option asks for more (lean.c, lean_run()). */
struct lframe {
	/* (start and end apart: stored side by side, the compiler made of
	 * the event's two times a vector, and moved it through the stack) */
	uint64_t start, child_ns, end; /* ns */
	uint32_t row;
	uint32_t act; /* slot of the row in the thread's actmap; UINT32_MAX: in its rowkey */
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

#define LROW 64

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
	/* The lowest index of openrow written since the thread's last slice
	 * (0 before its first; openrow_set()): struct profile_slice's same. */
	uint32_t pathlow;
	struct ledger_ent *led;
	size_t nled, capled;
	/* The lean stack: complete frames pushed in start order above the
	 * general one (f, openv), all open, each inside the one below it;
	 * moved onto the general stack (profile__lean_spill()) before
	 * anything else is done to the thread. */
	struct lframe *lf;
	size_t nlf, caplf;
	struct actmap act;
	uint32_t nmapped; /* open frames counted in act */
	uint32_t idx;	  /* index in profile.threads + 1 */
	uint64_t last_start;
	bool seen;
	bool post; /* end-ordered complete events */
	/* The general stack's last frame is open, without an end: the lean
	 * frames fold into it and push_complete() would fold none of it
	 * (lean.c's lean_complete(); false: not known). */
	bool lean_ok;
	/* The hooks' cost in ns, subtracted from its frames' times (its
	 * process's FXT_HOOK_COST_NAME instant, with subtract_overhead); 0
	 * for none. */
	double pair_ns, inside_ns;
	/* The lean path's rows by the refs of its events (lean.c's
	 * profile__lean_run()): the key as struct refcache's, its process
	 * and thread being this thread's; slot: the name ref's low bits. */
	struct lrow {
		uint64_t key; /* 0: empty */
		uint32_t row;
	} lrow[LROW];
};

/* A process's hook cost (include/fxt/format.h, FXT_HOOK_COST_NAME). */
struct hook_cost {
	uint64_t pid;
	double pair_ns, inside_ns;
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
	/* The row's frames are calls of hooked functions (not libc calls):
	 * the hooks' cost is in their times (--subtract-overhead). */
	uint8_t hook;
	/* What rounding the row's costs to whole ns has left over so far,
	 * given to its next frame, so that its totals over a million calls
	 * of 7.6 ns lose 7.6 ns each, not 8 (--subtract-overhead). */
	float carry_ns;
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

#define NS_PER_S UINT64_C(1000000000)

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
	/* The same clock for to_ns()'s first way (tickconv.h). */
	struct tickconv conv;

	struct profile_row *rows;
	struct rowkey *keys;
	size_t nrows, caprows;
	/* opts.percentiles: each row's durations (parallel to rows[], NULL
	 * otherwise), and how many of them the exact stores hold. */
	struct pctl *durs;
	size_t capdurs;
	uint64_t held, exact_max;
	size_t nsketched;
	uint32_t *rowtab; /* row index + 1; 0 = empty */
	size_t rowmask;

	struct thread *threads;
	size_t nthreads, capthreads;
	uint32_t *thrtab; /* thread index + 1 */
	size_t thrmask;
	size_t last_thread;

	uint64_t start_ns, end_ns; /* UINT64_MAX and 0 until a timestamp is seen */
	uint64_t nrecords, nslices;
	/* Of nslices, those of sample tracks, and the tracks with slices
	 * (counted by profile_finish()). */
	uint64_t nsampled, nsample_tracks;
	struct profile_anomalies anom;
	bool finished;
	bool read_here; /* profile_read_here() */

	/* Hook costs by process (subtract_overhead). */
	struct hook_cost *costs;
	size_t ncosts, capcosts;
	/* Drops: the sum of the "fxt: N records dropped" instants, and the
	 * distinct threads they came on. */
	uint64_t dropped;
	/* The sum of the "fxt: N records overwritten" instants, of the "fxt:
	 * N kernel events lost" ones. */
	uint64_t overwritten, kernel_lost;
	/* Provider event records "a buffer filled up" (another writer's
	 * sign that records were likely dropped). */
	uint64_t buffer_full;
	struct drop_thread {
		uint64_t pid, tid;
	} * drop_thr;
	size_t ndrop_thr, capdrop_thr;
	/* The "fxt: not sampled: REASON" instants, in archive order. */
	struct profile_unsampled *unsampled;
	size_t nunsampled, capunsampled;
	/* Stack-sample tracks: thread objects of koid tid | FXT_SAMPLE_KOID_BIT
	 * named "<thread>" FXT_SAMPLE_TRACK_SUFFIX, with a copy of the name. */
	struct sample_track {
		uint64_t koid;
		char *name;
	} * tracks;
	size_t ntracks, captracks;
	/* The functions' source locations (FXT_OBJ_FUNCTION records). */
	struct tool_srcloc locs;
	/* The threads' states from the kernel's context switches. */
	struct sched sched;
};

/* ----------------------------------------------------- active row map */

/* An empty map.  Returns 0 or -ENOMEM. */
int profile__act_init(struct actmap *m);

/* Finds or adds row's slot; returns it, or -ENOMEM.  Slots are never
 * deleted (a count drops to zero and stays): the map holds the distinct rows
 * of the thread, and a slot stays valid until the next rehash, so frames
 * can keep it (see act_slot_of()). */
int64_t profile__act_find(struct actmap *m, uint32_t row);

/* Whether thread t has an open frame of `row` in its actmap (call it only
 * when t->nmapped). */
bool profile__act_mapped(struct thread *t, uint32_t row);

/* The slot a frame remembered, re-found if a rehash moved it. */
static inline uint32_t act_slot_of(struct actmap *m, uint32_t row, uint32_t hint)
{
	if (hint <= m->mask && m->keys[hint] == row + 1)
		return hint;
	return (uint32_t)profile__act_find(m, row); /* present: cannot fail */
}

/* ---------------------------------------------------------------- rows */

/* Finds or creates the row for a slice; returns its index or -ENOMEM. */
int64_t profile__row_get(struct profile *p, uint64_t pid, uint64_t tid,
			 const struct fxt_string *cat, const struct fxt_string *name);

/* profile__row_get() behind a small cache on the addresses of the bytes. */
int64_t profile__row_lookup(struct profile *p, uint64_t pid, uint64_t tid,
			    const struct fxt_string *cat, const struct fxt_string *name);

/* Keeps a duration of `row` when count_frame()'s inline store cannot:
 * grows the row's store, or counts it in its sketch, or first makes the
 * rows holding the most durations sketches until half of exact_max is
 * held.  0 or -ENOMEM. */
int profile__pctl_keep(struct profile *p, uint32_t row, uint64_t dur);

/* ------------------------------------------------------------- threads */

/* The thread (pid, tid), created if needed; NULL when out of memory. */
struct thread *profile__thread_lookup(struct profile *p, uint64_t pid, uint64_t tid);

/* Events of one thread usually come in runs: try the last one first. */
static inline __attribute__((always_inline)) struct thread *thread_get(struct profile *p,
								       uint64_t pid, uint64_t tid)
{
	if (p->nthreads) {
		struct thread *t = &p->threads[p->last_thread];
		if (t->pid == pid && t->tid == tid)
			return t;
	}
	return profile__thread_lookup(p, pid, tid);
}

/* openrow[k] = row, noted for the thread's next slice's same. */
static inline __attribute__((always_inline)) void openrow_set(struct thread *t, size_t k,
							      uint32_t row)
{
	t->openrow[k] = row;
	if (k < t->pathlow)
		t->pathlow = (uint32_t)k;
}

/* A slice's same on thread t (struct profile_slice): what of openrow was
 * not written since the thread's last slice (by openrow_set(), the only
 * writer); the next slice's compared with this one. */
static inline __attribute__((always_inline)) unsigned slice_same(struct thread *t)
{
	unsigned same = t->pathlow;

	t->pathlow = UINT32_MAX;
	return same;
}

/* Frees a thread's stacks and map (not the thread itself). */
void profile__thread_release(struct thread *t);

/* ------------------------------------------------------- other records */

/* Notes the thread objects that are stack-sample tracks (the last name
 * given to a koid wins) and the functions' locations.  Returns 0 or
 * -ENOMEM. */
int profile__see_kobj(struct profile *p, const struct fxt_record *rec);
/* Sets the clock of the records that follow (tps, ns_per_tick, conv)
 * for profile.c's to_ns(). */
void profile__set_tps(struct profile *p, uint64_t tps);

/* Notes a process's hook cost (FXT_HOOK_COST_NAME) for its threads.
 * 0 or -ENOMEM. */
int profile__see_hook_cost(struct profile *p, const struct fxt_record *rec);

/* Adds a summary of calls written as no slice (FXT_SHORT_CATEGORY,
 * include/fxt/format.h) to its function's row.  0 or -ENOMEM. */
int profile__see_short(struct profile *p, const struct fxt_record *rec);

/* Counts the records an instant event (at `ts_ns`) says were dropped (or
 * overwritten) on its thread, or notes that its thread was not sampled
 * from then on.  Returns 0 or -ENOMEM. */
int profile__see_drops(struct profile *p, uint64_t pid, uint64_t tid, uint64_t ts_ns,
		       const struct fxt_string *name);

#endif /* FXT_TOOLS_PROFILE_INT_H */
