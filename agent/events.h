/* Writing tagged spool records (their layout: spool/records.h): the
 * reservation every record of more than a hook's slot goes through.
 * Private to agent/.
 *
 * A record is reserved whole with one xadd, so a signal handler that
 * interrupts its writing writes after it, and its slots are consecutive in
 * the thread's chunk.
 */
#ifndef FXT_AGENT_EVENTS_H
#define FXT_AGENT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/tbuf.h"
#include "spool/records.h"

/* The records' slow path (tbuf.c): `p` (n slots) crosses the chunk's end.
 * Returns n writable slots, or NULL when the record is dropped (counted
 * as a dropped call if `count`).  t->busy stays counted. */
uint64_t *agent_tbuf_slow_n(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts, bool count)
    __attribute__((noinline, cold));

/* An acquisition had to wait: the spool's mark that there are sync
 * records to pair (spool_note_waited()), before its SYNC record. */
void agent_note_waited(void) __attribute__((noinline, cold));

/* How agent_ev_begin() reaches the slow path; run-time patching's
 * handlers (agent/patch/rt.c) route it through a shim that saves the
 * vector registers, as AGENT_TBUF_SLOW (tbuf.h). */
#ifndef AGENT_EV_SLOW_N
#define AGENT_EV_SLOW_N agent_tbuf_slow_n
#endif

/* Reserves `n` consecutive slots (n <= EV_MAX_SLOTS) on the calling
 * thread's buffer, or returns NULL (dropped; counted as a dropped call if
 * `count`).  Every slot returned must be written, then agent_ev_end()
 * called, whether or not slots were returned.  `ts` is only used for the
 * drop accounting. */
static inline __attribute__((always_inline)) uint64_t *agent_ev_begin(struct tstate *t, unsigned n,
								      uint64_t ts, bool count)
{
	uint64_t *p;

	t->busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
	{
		uintptr_t v = (uintptr_t)n * SPOOL_RECORD_SIZE;
		__asm__("xaddq %0, %1" : "+r"(v), "+m"(t->pos));
		p = (uint64_t *)v;
	}
#else
	p = __atomic_fetch_add(&t->pos, 2 * n, __ATOMIC_RELAXED);
#endif
	if (__builtin_expect(p + 2 * n <= t->end, 1))
		return p;
	return AGENT_EV_SLOW_N(t, p, n, ts, count);
}

/* After agent_ev_begin() returned p (n slots), of which the record took
 * the first `used`: the rest given back, when nothing was reserved after
 * them meanwhile (a signal handler's records); else they stay unwritten
 * (w1 0: readers skip them).  Slots past `used` must not have been
 * written but for w0s. */
static inline __attribute__((always_inline)) void agent_ev_trim(struct tstate *t, uint64_t *p,
								unsigned n, unsigned used)
{
	uint64_t *end = p + 2 * n;

	if (used == n)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
	/* One instruction, which a signal cannot split (not locked: only this
	 * thread and its signal handlers move pos). */
	__asm__ volatile("cmpxchgq %2, %1" : "+a"(end), "+m"(t->pos) : "r"(p + 2 * used) : "cc");
#else
	__atomic_compare_exchange_n(&t->pos, &end, p + 2 * used, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
#endif
}

static inline __attribute__((always_inline)) void agent_ev_end(struct tstate *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	agent_busy_leave(t);
}

#endif /* FXT_AGENT_EVENTS_H */
