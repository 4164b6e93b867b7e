/* What fxt-waits' engine shares between its pass over the records
 * (waits.c) and the pairing of waits with their releasers once the pass
 * is over (waits-pair.c).  Private to tools/waits/. */
#ifndef FXT_TOOLS_WAITS_INT_H
#define FXT_TOOLS_WAITS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <fxt/reader.h>

#include "tools/front/common.h"
#include "tools/front/sched.h"
#include "tools/front/thrmap.h"
#include "tools/waits/waits.h"

/* What a blocking call waits for: how it is known to have waited, and how
 * its releaser is found. */
enum wkind {
	WK_NONE,
	WK_LOCK,  /* counted when its argument "waited" is true; a flow */
	WK_COND,  /* always waits; a flow (a signal or broadcast) */
	WK_READ,  /* a pipe or socket ("stream_offset"); a flow (a write) */
	WK_JOIN,  /* the thread that ended within it */
	WK_CHILD, /* the child (its result) that ended within it */
};

#define NO_WAIT UINT32_MAX
#define NO_NAME UINT32_MAX
#define NO_SNAP UINT32_MAX

/* Frame flags, from a blocking call's arguments. */
enum {
	FF_WAITED = 1,	 /* "waited": true */
	FF_STREAM = 2,	 /* "stream_offset": a pipe or socket */
	FF_TIMEDOUT = 4, /* "result" ETIMEDOUT, or "error" "ETIMEDOUT" */
	FF_HAS_END = 8,	 /* a complete slice (else a begin, until its end) */
};

struct frame {
	uint64_t start, end; /* ticks */
	uint32_t name, caller;
	uint32_t wait; /* its struct wait, or NO_WAIT */
	uint32_t snap; /* its struct snapframe once a release kept it, or NO_SNAP */
	uint8_t kind, flags;
	int64_t result;
};

struct thread {
	uint64_t pid, tid;
	uint64_t tps;	  /* of its last event */
	uint64_t max_end; /* ticks */
	struct frame *f;
	size_t n, cap;
	struct frame last; /* the frame retired last (flows after an END) */
	bool has_last, used;
	bool calls; /* it has events other than the kernel's ("sched") */
};

struct wait {
	uint64_t pid, tid, start, end; /* ns */
	uint64_t tps;
	uint32_t call, func;
	uint8_t kind, flags;
	int64_t result;
	uint32_t release; /* chosen release, or NO_WAIT */
};

struct release {
	uint64_t id, pid, tid, ts; /* ns */
	uint32_t call, func;
	uint32_t snap; /* its innermost frame in snaps[] (the release call's) */
};

/* A frame of a thread's stack as a release saw it, kept once and shared by
 * every release made under it: a chain through `parent`, innermost first. */
struct snapframe {
	uint64_t start, end; /* ns; end UINT64_MAX: open at the release */
	uint32_t name;
	uint32_t parent; /* the frame around it in snaps[], or NO_SNAP */
};

struct link {
	uint32_t wait;
	uint64_t id;
};

struct name {
	char *s;
	uint32_t len;
	uint8_t kind;
	uint64_t hash;
};

struct switch_in {
	uint64_t tid, ts; /* ns */
};

struct waits_engine {
	/* names */
	struct name *names;
	size_t nnames, names_cap;
	uint32_t *ntab; /* open addressing, ids + 1 */
	size_t ntab_cap;
	struct {
		uint32_t gen, id;
	} refc[0x8000];
	uint32_t strgen;
	const struct fxt_reader *last_reader;
	/* threads */
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct thrmap tmap; /* (pid, tid) -> index in threads */
	/* kernel objects' names: koid -> name */
	/* Kernel objects' names, sorted at the end by koid, then kind, then
	 * the order read (seq: 2 n + 1 for a thread, 2 n for a process). */
	struct koid_name {
		uint64_t koid;
		uint32_t name, seq;
	} * knames;
	size_t nknames, knames_cap;
	/* what is kept */
	struct wait *waits;
	size_t nwaits, waits_cap;
	struct release *rels;
	size_t nrels, rels_cap;
	struct snapframe *snaps;
	size_t nsnaps, snaps_cap;
	struct link *links;
	size_t nlinks, links_cap;
	struct switch_in *sw;
	size_t nsw, sw_cap;
	struct sched sched; /* the threads' states */
	uint64_t kernel_lost;
	struct tool_losses losses;
	uint64_t tps, first_ns;
	uint64_t lo_ticks, lo_tps; /* see_time(): first_ns <= lo_ticks' ns */
	bool any_time;
	uint32_t n_thread_end, n_exit;
};

/* ------------------------------------------------------------------ times */

static inline uint64_t waits__ns_of(uint64_t ticks, uint64_t tps)
{
	if (tps == 1000000000 || !tps)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / tps);
}

static inline const char *waits__name_str(const struct waits_engine *e, uint32_t id)
{
	return id == NO_NAME ? NULL : e->names[id].s;
}

/* Pairs the waits read with their releasers (and the waiters' switch-ins)
 * into out->items.  0 or -ENOMEM. */
int waits__resolve(struct waits_engine *e, struct waits *out);

#endif /* FXT_TOOLS_WAITS_INT_H */
