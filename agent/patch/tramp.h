/* What the trampolines' fast path (tramp.S, in assembly) and the handlers
 * (rt.c, which checks each against its C definition) agree on: where it
 * finds the thread's shadow stack and buffer, and what an entry holds.
 * Plain macros, for the assembler too.  Private to agent/patch/. */
#ifndef FXT_AGENT_PATCH_TRAMP_H
#define FXT_AGENT_PATCH_TRAMP_H

/* rt.c's struct pstack (the thread's shadow stack, in its struct tstate,
 * agent_tls: offsets from it): the entries, the end of the live ones,
 * where the fast path stops pushing (NULL: no stack, or no TSC).  The
 * entry before the first is there, its slot above every other. */
#define PSTACK_V   312
#define PSTACK_TOP 320
#define PSTACK_LIM 328

/* rt.c's struct shadow, 32 bytes: the slot of the call's return address,
 * the real return address, the function (with, above bit 47, what to read
 * at its return: the full handler's), the hook (its stub's exit, which is
 * STUB_EXIT_PAST_CALL bytes past the return address of the stub's call of
 * the enter trampoline: agent/gates.h, PATCH_STUB_EXIT). */
#define SHADOW_SLOT	    0
#define SHADOW_RETA	    8
#define SHADOW_FN	    16
#define SHADOW_HOOK	    24
#define SHADOW_SIZE_LOG2    5
#define SHADOW_SIZE	    (1 << SHADOW_SIZE_LOG2)
#define STUB_EXIT_PAST_CALL 5
/* The function's code in its stub, past that return address: where the
 * enter trampoline returns to when it did not push the call. */
#define STUB_BODY_PAST_CALL 11

/* spool/records.h's PAIR (EV_PAIR_*), which the exit trampoline writes
 * as agent_record_exit() does. */
#define PAIR_BIT       62
#define PAIR_DUR_SHIFT 47
#define PAIR_DUR_MAX   0x7fff
#define PAIR_FN_MIN    16

/* agent/tbuf.h's struct tstate (agent_tls): the next free slot, the end of
 * the chunk, the count of agent code running. */
#define TSTATE_POS  0
#define TSTATE_END  8
#define TSTATE_BUSY 24

#endif /* FXT_AGENT_PATCH_TRAMP_H */
