/* What run-time patching's handlers share (rt.c: the shadow stack, the
 * enter and exit handlers; rtargs.c: the arguments and return values they
 * read).  Private to agent/patch/.  Both are compiled with
 * -mgeneral-regs-only (rt.c says why): whatever may touch a vector
 * register goes through fxt__patch_call_saving(). */
#ifndef FXT_AGENT_PATCH_RT_H
#define FXT_AGENT_PATCH_RT_H

#include <stdbool.h>
#include <stdint.h>

/* Calls fn(a, b, c, d) with xmm0-15 saved around it (tramp.S). */
uint64_t fxt__patch_call_saving(void *fn, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* The slow path of agent_record() (tbuf.h), with the vector registers
 * saved around it: defined before tbuf.h comes in (gates.h has it). */
#define AGENT_TBUF_SLOW(t, p, ts, addr)                                           \
	fxt__patch_call_saving((void *)agent_tbuf_slow, (uint64_t)(uintptr_t)(t), \
			       (uint64_t)(uintptr_t)(p), (ts), (addr))

/* The multi-slot records' slow path likewise (agent/events.h). */
struct tstate;
uint64_t *fxt__patch_slow_n(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts, bool count);
#define AGENT_EV_SLOW_N fxt__patch_slow_n

#include "agent/cfg.h"
#include "agent/events.h"
#include "agent/gates.h"
#include "agent/log.h"
#include "agent/patch/patch.h"
#include "agent/tbuf.h"
#include "run/argspec.h"

/* One record, as the -finstrument-functions hooks write it (hooks.c):
 * through the filters when they are on. */
static inline __attribute__((always_inline)) void record(uint64_t addr)
{
	if (__builtin_expect(agent_filter_on, 0)) {
		fxt__patch_call_saving((void *)agent_filter_patched, (uint64_t)(uintptr_t)&agent_tls,
				       addr, 0, 0);
		return;
	}
	addr &= ~AGENT_FILTER_HELD; /* the filter's alone */
	if (__builtin_expect(agent_clock_tsc, 1)) {
		agent_record_clk(&agent_tls, addr, true);
		return;
	}
	fxt__patch_call_saving((void *)agent_record_mono, (uint64_t)(uintptr_t)&agent_tls, addr, 0,
			       0);
}

/* fxt-run --args/--retval (run/argspec.h): a function whose stub's quad
 * has PATCH_FN_ARGS set has what to read in the quad PATCH_STUB_SPEC
 * bytes before it; the registers are read where the trampolines saved
 * them (tramp.S, SAVE_GPRS: rax rdi rsi rdx rcx r8 r9 r10 r11 pushed in
 * that order below the saved rbp, which is 2 words below the slot at the
 * entry and the stack pointer at the return), the vector ones where
 * they are: nothing here touches them before they are read. */
#define SAVED_RAX 3 /* words below slot (entry) or sp (return) */
#define SAVED_RDI 4
#define SAVED_RDX 6

/* The values read at a patched call, as their records go into the
 * buffer: a REG record each (spool/records.h), up to 6 + 8 registers, of
 * which up to 6 strings (integer registers only: bit i of strs for v[i]),
 * read straight into their records as they are written
 * (put_string()).  slots: the most their records take, a
 * string's at its longest. */
#define CAPTURED_MAX	   (FXT_ARG_GPRS + FXT_ARG_XMMS)
#define CAPTURED_STR_SLOTS (1 + EV_REG_STR_RAW_MAX)
struct captured {
	unsigned n, slots;
	uint32_t strs;
	struct {
		uint64_t w0, w1;
	} v[CAPTURED_MAX];
};
_Static_assert((FXT_ARG_STR_MAX - EV_REG_STR_HEAD + EV_RAW_BYTES - 1) / EV_RAW_BYTES <=
		   EV_REG_STR_RAW_MAX,
	       "a string's REG has room for FXT_ARG_STR_MAX bytes");
_Static_assert(1 + (FXT_ARG_STR_MAX + 1 + 7) / 8 <= 2 * CAPTURED_STR_SLOTS,
	       "a string's REG has room for fxt__patch_probe_reg()'s words");

/* The REG at p of a string of `len` bytes, from a read of
 * FXT_ARG_STR_MAX + 1 that found its NUL at `len`, or not (`cut`: none in
 * the bytes read, or the memory ended before one); the slots it takes. */
static inline __attribute__((always_inline)) unsigned put_string_read(uint64_t *p, size_t len,
								      bool cut)
{
	return ev_reg_str_seal(p, len > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX : len,
			       cut || len > FXT_ARG_STR_MAX, false);
}

/* The REG at p of a string that could not be read at all: w0 the
 * pointer. */
static inline __attribute__((always_inline)) unsigned put_string_unreadable(uint64_t *p,
									    uint64_t ptr)
{
	p[0] = ptr;
	return ev_reg_str_seal(p, 0, false, true);
}

/* put_string() when the fast path is off or the pointer is below 4096:
 * the kernel reads the string, or it is unreadable (rtargs.c). */
unsigned fxt__patch_put_string_slow(uint64_t *p);

/* A string the program passed, at most FXT_ARG_STR_MAX bytes of it, read
 * straight into its REG record at p (w0 the pointer, the head opened:
 * ev_reg_str_open_w1()), so that a bad pointer, or a page another thread
 * unmaps right then, is an error and never a fault: copied with plain
 * loads whose fault the agent's handler recovers when it may (probe.S,
 * probe.c), else read by the kernel.  Cut (EV_REG_STR_TRUNCATED) when
 * there is no NUL in its first FXT_ARG_STR_MAX bytes or the memory ends
 * before one; EV_REG_STR_UNREADABLE when none of it could be read (NULL
 * included).  The slots the record takes.
 *
 * The thread's copies under way are counted in its tbuf (probing,
 * written by the thread alone: a signal handler's copy nests in this one
 * and leaves the count as it found it), then the fast path's flag read
 * again: agent_patch_faults_give_back() stores it off and reads the
 * counts in the other order, with membarrier() between, or a full barrier
 * here (PATCH_PROBE_FENCED: no membarrier()). */
static inline __attribute__((always_inline)) unsigned put_string(uint64_t *p)
{
	uint64_t ptr = p[0];
	unsigned char on = __atomic_load_n(&agent_patch_probe_on, __ATOMIC_RELAXED), k;
	struct tbuf *tb = agent_tls.tb;
	long r;

	if (__builtin_expect(!on || !tb || ptr < 4096, 0))
		return fxt__patch_put_string_slow(p);
	k = tb->probing;
	__atomic_store_n(&tb->probing, (unsigned char)(k + 1), __ATOMIC_RELAXED);
	if (on & PATCH_PROBE_FENCED)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(!__atomic_load_n(&agent_patch_probe_on, __ATOMIC_RELAXED), 0)) {
		__atomic_store_n(&tb->probing, k, __ATOMIC_RELEASE);
		return fxt__patch_put_string_slow(p);
	}
	r = fxt__patch_probe_reg(p, (const char *)(uintptr_t)ptr, FXT_ARG_STR_MAX + 1);
	__atomic_store_n(&tb->probing, k, __ATOMIC_RELEASE);
	if (__builtin_expect(r >= 0, 1))
		return put_string_read(p, (size_t)r, false);
	r = ~r; /* the bytes before the fault, none a NUL */
	return r ? put_string_read(p, (size_t)r, true) : put_string_unreadable(p, ptr);
}

/* c's records from p on (room for c->slots slots), in order, each string
 * read into its own; the slots they took. */
static inline __attribute__((always_inline)) unsigned put_captured(uint64_t *p,
								   const struct captured *c)
{
	unsigned used = 0;

	for (unsigned i = 0; i < c->n; i++) {
		uint64_t *q = p + 2 * used;

		q[0] = c->v[i].w0;
		if (__builtin_expect((c->strs >> i) & 1, 0)) {
			q[1] = ev_reg_str_open_w1(c->v[i].w1); /* the head first */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			used += put_string(q);
		} else {
			q[1] = c->v[i].w1;
			used++;
		}
	}
	return used;
}

/* The hook record of a patched call's entry (addr: its function) or exit
 * (with SPOOL_EXIT_BIT), and c's records after the entry's or before the
 * exit's: one reservation (of the most they may take, the rest given back
 * once the strings' lengths are known), one timestamp, so that what a
 * value costs is its stores; a signal handler's records come before or
 * after them all.  When the hook record goes elsewhere first (a filter)
 * or the clock is not the TSC, apart, in the same order. */
static inline __attribute__((always_inline)) void record_with(const struct captured *c, uint64_t addr)
{
	struct tstate *t = &agent_tls;
	uint64_t *p, ts;
	bool exit = (addr & SPOOL_EXIT_BIT) != 0;
	unsigned used;

	if (__builtin_expect(agent_filter_on || !agent_clock_tsc || !c->n, 0)) {
		if (!exit)
			record(addr);
		if (c->n && t->tb) {
			p = agent_ev_begin(t, c->slots, 0, false);
			if (p)
				agent_ev_trim(t, p, c->slots, put_captured(p, c));
			agent_ev_end(t);
		}
		if (exit)
			record(addr);
		return;
	}
	ts = __rdtsc(); /* before the reservation, as agent_record_clk() */
	p = agent_ev_begin(t, c->slots + 1, ts, true);
	if (p) {
		if (!exit) {
			p[0] = ts;
			p[1] = addr & ~AGENT_FILTER_HELD;
		}
		used = put_captured(exit ? p : p + 2, c);
		if (exit) {
			p[2 * used] = ts;
			p[2 * used + 1] = addr & ~AGENT_FILTER_HELD;
		}
		agent_ev_trim(t, p, c->slots + 1, used + 1);
	}
	agent_ev_end(t);
}

/* The shadow entry's fn above the function's address (PATCH_FN()): what
 * to read at its return, and the index of the test of its value there. */
#define SHADOW_RET_SHIFT    27 /* FXT_CAP_RETURN (bits 20..24) -> 47..51 */
#define SHADOW_RET_CAPS(fn) ((uint32_t)((fn) >> SHADOW_RET_SHIFT) & FXT_CAP_RETURN)
#define SHADOW_COND_SHIFT   52 /* a test at its return: agent_patch_conds' index */
#define SHADOW_COND(fn)	    ((unsigned)((fn) >> SHADOW_COND_SHIFT) & (PATCH_CONDS_MAX - 1))
#define SHADOW_HELD	    (1ull << 63) /* its --include pattern's test held */
/* Nothing to read or test at its return, but it goes the full way there
 * (fxt__patch_exit()): pushed while the records went through the filters
 * or the clock was not the TSC.  The exit trampoline's fast path takes
 * only an entry whose fn is the function's address alone (tramp.S). */
#define SHADOW_APART ((uint64_t)PATCH_COND_APART << SHADOW_COND_SHIFT)

/* The hook address of the exit of the call whose shadow entry's fn is fn:
 * AGENT_FILTER_HELD with it when its entry's had it. */
static inline __attribute__((always_inline)) uint64_t shadow_exit(uint64_t fn)
{
	return PATCH_FN(fn) | SPOOL_EXIT_BIT | (fn & SHADOW_HELD ? AGENT_FILTER_HELD : 0);
}

/* What to do at the entry of a function whose stub has PATCH_FN_ARGS
 * (`quad`, its stub's first quad; `slot`, its return address's): the
 * registers to read (caps, run/argspec.h), the test of a value (idx into
 * agent_patch_conds, 0 for none, at the entry or at the return), that of
 * its --include pattern (incl, likewise, at the entry), and its shadow
 * entry's fn (`tagged`: what to read and test at its return). */
struct patch_spec {
	uint64_t fn, tagged;
	uint32_t caps;
	unsigned idx, incl;
	bool at_entry;
};

static inline __attribute__((always_inline)) struct patch_spec patch_spec_of(uint64_t quad,
									     const uint64_t *slot)
{
	const uint8_t *stub_ret = (const uint8_t *)(uintptr_t)slot[-1];
	uint64_t spec = *(const uint64_t *)(stub_ret - PATCH_STUB_HEAD - PATCH_STUB_SPEC);
	struct patch_spec s;

	s.fn = PATCH_FN(quad);
	s.caps = (uint32_t)spec & FXT_CAP_ALL;
	s.idx = PATCH_COND_IDX(spec);
	s.incl = PATCH_INCL_IDX(spec);
	s.at_entry = s.idx && agent_patch_conds[s.idx].reg < FXT_REG_RAX;
	s.tagged = s.fn | ((uint64_t)(s.caps & FXT_CAP_RETURN) << SHADOW_RET_SHIFT) |
		   (s.idx && !s.at_entry ? (uint64_t)s.idx << SHADOW_COND_SHIFT : 0);
	return s;
}

/* Such an entry that reads more than integer registers or tests a value
 * (rt.c records the others): pushes the call, reads and records what it
 * must, tests (rtargs.c); whether it pushed the call. */
bool fxt__patch_enter_args(uint64_t quad, uint64_t *slot);

/* The return of a call whose shadow entry's fn is `tagged` (with bits above
 * the address), the stack pointer it returned with `sp`, when it reads
 * more than an integer result (rt.c records that) or tests a value:
 * records the values read, the exit, and tests (rtargs.c). */
void fxt__patch_exit_args(uint64_t tagged, const uint64_t *sp);

/* rt.c's entry, for fxt__patch_enter_args(): records the call of fn, with
 * the values c holds after it when c is not NULL, and pushes its shadow
 * entry, whose fn is `tagged`; whether it did. */
bool fxt__patch_push(uint64_t fn, uint64_t *slot, uint64_t tagged, const struct captured *c);

#endif /* FXT_AGENT_PATCH_RT_H */
