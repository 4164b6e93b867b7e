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
		fxt__patch_call_saving((void *)agent_filter_hook, (uint64_t)(uintptr_t)&agent_tls,
				       addr, 0, 0);
		return;
	}
	if (__builtin_expect(agent_clock_tsc, 1)) {
		agent_record_clk(&agent_tls, addr, true);
		return;
	}
	fxt__patch_call_saving((void *)agent_record_mono, (uint64_t)(uintptr_t)&agent_tls, addr, 0,
			       0);
}

/* The shadow entry's fn above the function's address (PATCH_FN()): what
 * to read at its return, and the index of the test of its value there. */
#define SHADOW_RET_SHIFT    27 /* FXT_CAP_RETURN (bits 20..24) -> 47..51 */
#define SHADOW_RET_CAPS(fn) ((uint32_t)((fn) >> SHADOW_RET_SHIFT) & FXT_CAP_RETURN)
#define SHADOW_COND_SHIFT   52 /* a test at its return: agent_patch_conds' index */
#define SHADOW_COND(fn)	    ((unsigned)((fn) >> SHADOW_COND_SHIFT))

/* The entry of a function whose stub has PATCH_FN_ARGS (`quad`, its stub's
 * first quad), its return address's slot `slot`: pushes the call, reads
 * and records what it must (rtargs.c). */
void fxt__patch_enter_args(uint64_t quad, uint64_t *slot);

/* The return of a call whose shadow entry's fn is `tagged` (with bits above
 * the address), the stack pointer it returned with `sp`: records the
 * values read, the exit, and tests (rtargs.c). */
void fxt__patch_exit_args(uint64_t tagged, const uint64_t *sp);

/* rt.c's entry, for fxt__patch_enter_args(): records the call of fn and
 * pushes its shadow entry, whose fn is `tagged`; whether it did. */
bool fxt__patch_push(uint64_t fn, uint64_t *slot, uint64_t tagged);

#endif /* FXT_AGENT_PATCH_RT_H */
