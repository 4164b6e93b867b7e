/* The hooks' own cost, measured in the process for fxt-report
 * --subtract-overhead (include/fxt/format.h, FXT_HOOK_COST_NAME).  Private
 * to agent/.
 *
 * A call's measured interval runs from the timestamp its enter hook takes
 * to the one its exit hook takes; so it holds the rest of its enter hook
 * and the start of its exit hook ("inside"), and the whole hook pair of
 * every call it makes.  What tracing adds to a program is measured against
 * the same program untraced, whose hooks are the C library's empty ones:
 * agent_calibrate() runs a small recursion shaped as instrumented code,
 * with the hooks (recording into a scratch buffer: nothing reaches the
 * spool) and with empty hooks, CAL_ROUNDS times each, in turn; the
 * difference per call of the fastest rounds is the "extra".  "inside" is
 * read off the leaves' own timestamps, and the cost of a pair of empty
 * calls is timed apart (an untraced call pays it for its own hooks).  It
 * runs at the seal, on the sealing thread, in about 3 ms (12 M
 * instructions), when the trace holds more than a thread's first chunk (a
 * short process's exit does not wait for it, and its few calls are not
 * worth correcting) and a loaded module calls the hooks.  The time
 * threads spend taking chunks (struct tbuf.refill_ticks) is the rest of
 * what tracing costs; the converter spreads it over the records.
 */
#ifndef FXT_AGENT_CALIB_H
#define FXT_AGENT_CALIB_H

#include <stdint.h>

#define CAL_PAIRS  1000u
#define CAL_ROUNDS 5u

/* What tracing adds to a call, the part of a hook pair inside a call's
 * own interval, and a pair of calls of empty functions, in thousandths of
 * a tick (the fastest rounds; the mean of the middle leaves). */
void agent_calibrate(uint64_t *extra_ticks, uint64_t *inside_ticks, uint64_t *stub_ticks);

#endif /* FXT_AGENT_CALIB_H */
