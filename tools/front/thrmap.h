/* A map (pid, tid) -> index of a thread's state, for the tools' engines
 * (the call tree and stream, the view's timeline, the waits): events of a
 * thread come in runs, so the last hit is tried first; otherwise an open
 * addressing table with the one hash (common/hash.h).  Header-only: the
 * hit stays inline on the engines' paths. */
#ifndef FXT_TOOLS_FRONT_THRMAP_H
#define FXT_TOOLS_FRONT_THRMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/hash.h"

struct thrmap {
	struct thrmap_ent {
		uint64_t pid, tid;
		uint32_t idx; /* + 1; 0 = empty */
	} *e;
	uint32_t mask, n;
	uint64_t last_pid, last_tid;
	uint32_t last; /* + 1; 0 = none */
};

static inline void thrmap_free(struct thrmap *m)
{
	free(m->e);
	*m = (struct thrmap){ 0 };
}

static inline uint32_t thrmap__slot(const struct thrmap *m, uint64_t pid, uint64_t tid)
{
	uint32_t i = (uint32_t)fxt__hash_pair(pid, tid) & m->mask;

	while (m->e[i].idx && (m->e[i].pid != pid || m->e[i].tid != tid))
		i = (i + 1) & m->mask;
	return i;
}

/* The index of (pid, tid): its own, or `next` (the caller's count of
 * threads, which it then grows) for a thread seen for the first time, in
 * *fresh.  Returns the index, or -ENOMEM. */
static int64_t thrmap__get(struct thrmap *m, uint64_t pid, uint64_t tid, uint32_t next,
			   bool *fresh);

static inline __attribute__((always_inline)) int64_t thrmap_get(struct thrmap *m, uint64_t pid,
								uint64_t tid, uint32_t next,
								bool *fresh)
{
	*fresh = false;
	if (m->last && m->last_pid == pid && m->last_tid == tid)
		return m->last - 1;
	return thrmap__get(m, pid, tid, next, fresh);
}

/* thrmap_get() past the last hit. */
static __attribute__((unused)) int64_t thrmap__get(struct thrmap *m, uint64_t pid, uint64_t tid,
						   uint32_t next, bool *fresh)
{
	uint32_t i;

	if ((m->n + 1) * 2 > m->mask + (m->e ? 1u : 0u)) {
		struct thrmap old = *m;
		uint32_t cap = m->e ? (m->mask + 1) * 2 : 64;

		m->e = calloc(cap, sizeof(*m->e));
		if (!m->e) {
			*m = old;
			return -ENOMEM;
		}
		m->mask = cap - 1;
		for (uint32_t k = 0; old.e && k <= old.mask; k++)
			if (old.e[k].idx)
				m->e[thrmap__slot(m, old.e[k].pid, old.e[k].tid)] = old.e[k];
		free(old.e);
	}
	i = thrmap__slot(m, pid, tid);
	if (!m->e[i].idx) {
		m->e[i] = (struct thrmap_ent){ pid, tid, next + 1 };
		m->n++;
		*fresh = true;
	}
	m->last_pid = pid;
	m->last_tid = tid;
	m->last = m->e[i].idx;
	return m->last - 1;
}

#endif /* FXT_TOOLS_FRONT_THRMAP_H */
