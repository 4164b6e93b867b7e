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

/* The values read at a patched call as their records go into the
 * buffer: a REG record each (spool/records.h), a string's RAW slots
 * after its own.  Up to 6 + 8 registers, of which up to 6 strings
 * (integer registers only). */
#define CAPTURED_MAX                    \
	(FXT_ARG_GPRS + FXT_ARG_XMMS +  \
	 FXT_ARG_GPRS * ((FXT_ARG_STR_MAX - EV_REG_STR_HEAD + EV_RAW_BYTES - 1) / EV_RAW_BYTES))
struct captured {
	unsigned slots;
	uint64_t w[2 * CAPTURED_MAX];
};

/* n slots of c's from `from` on to p (a loop the compiler must not make a
 * call of memcpy(), which may use the vector registers). */
static inline __attribute__((always_inline)) void put_slots(uint64_t *p, const uint64_t *from,
							    unsigned n)
{
	for (unsigned i = 0; i < 2 * n; i++) {
		__asm__("" : "+r"(p)); /* not a pattern */
		p[i] = from[i];
	}
}

/* The hook record of a patched call's entry (addr: its function) or exit
 * (with SPOOL_EXIT_BIT), and c's records after the entry's or before the
 * exit's: one reservation, one timestamp, so that what a value costs is
 * its stores; a signal handler's records come before or after them all.
 * When the hook record goes elsewhere first (a filter) or the clock is
 * not the TSC, apart, in the same order. */
static inline __attribute__((always_inline)) void record_with(const struct captured *c, uint64_t addr)
{
	struct tstate *t = &agent_tls;
	uint64_t *p, ts;
	bool exit = (addr & SPOOL_EXIT_BIT) != 0;

	if (__builtin_expect(agent_filter_on || !agent_clock_tsc || !c->slots, 0)) {
		if (!exit)
			record(addr);
		if (c->slots && t->tb) {
			p = agent_ev_begin(t, c->slots, 0, false);
			if (p)
				put_slots(p, c->w, c->slots);
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
			p += 2;
		}
		put_slots(p, c->w, c->slots);
		if (exit) {
			p[2 * c->slots] = ts;
			p[2 * c->slots + 1] = addr & ~AGENT_FILTER_HELD;
		}
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
 * must, tests (rtargs.c). */
void fxt__patch_enter_args(uint64_t quad, uint64_t *slot);

/* fxt__patch_enter_args() for an entry that reads integer registers
 * only, strings among them (caps: FXT_CAP_GPR(i), FXT_CAP_STR(i)), and
 * tests nothing: records the call of fn with them and pushes its shadow
 * entry, whose fn is `tagged`. */
void fxt__patch_enter_strs(uint64_t fn, uint64_t *slot, uint64_t tagged, uint32_t caps);

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
