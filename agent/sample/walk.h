/* Stack sampling's walk of the interrupted stack, with libunwind.
 * Private to agent/sample/.
 *
 * libunwind is loaded with dlopen() when sampling is set up (walk.c says
 * why it is not linked).  The walk runs in the SIGPROF handler: it
 * allocates nothing, takes no lock of ours and writes nothing to the
 * stack it walks.
 */
#ifndef FXT_AGENT_SAMPLE_WALK_H
#define FXT_AGENT_SAMPLE_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

/* Loads libunwind and sets it up outside any signal handler (a cache per
 * thread; its first use initialises global state under a lock).  false
 * (logged under FXT_DEBUG): no sampling.  Once per process image, as agent
 * code (busy). */
bool agent_sample_unwind_setup(void);

/* Forgets the unwind information libunwind cached (after a dlclose()). */
void agent_sample_unwind_forget(void);

/* Walks the interrupted stack from the signal's context `uc` into
 * pcs[0..max); returns how many.  Frame 0 is the interrupted pc; the
 * others are return addresses, which the converter looks up at pc - 1,
 * except the frame interrupted by a signal further up (a handler of the
 * program's own on the stack): its pc is exact, so it is stored plus
 * one.  Through run-time patching's trampolines and stubs, the real
 * return addresses (walk.c, "patched calls"). */
unsigned agent_sample_walk(ucontext_t *uc, uint64_t *pcs, unsigned max);

#endif /* FXT_AGENT_SAMPLE_WALK_H */
