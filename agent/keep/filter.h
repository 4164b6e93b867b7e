/* Which calls the hooks record: the filters of FXT_INCLUDE, FXT_EXCLUDE,
 * FXT_MODULE and FXT_DEPTH (run/settings.def; fxt-run --include, --exclude,
 * --module, --depth).  Private to agent/.
 *
 * The names are matched once per function, not per call: when a module is
 * loaded (at start-up, and after each dlopen()), the symbol table of each
 * instrumented module (agent/elfsyms.h) is read, every function name
 * (demangled when the process has libstdc++'s __cxa_demangle) is matched
 * against the patterns (POSIX extended regular expressions), and the
 * addresses of the functions that match go into a hash table with their
 * flags; a module that FXT_MODULE's globs leave out becomes an address
 * range whose functions are skipped.  The table is replaced, never
 * changed, when a module adds entries: a hook reads whichever one it
 * loads.
 *
 * In the hooks, when any filter is set (agent_filter_on), each call goes
 * to agent_filter_hook(), which looks its function up and keeps three
 * counters per thread (struct tstate): the include and exclude functions
 * active on the thread and the depth of the calls that pass.  A call is
 * recorded when
 *   - no include pattern is given, or an include function is active (the
 *     function itself, or one of its callers: a function's subtree); a
 *     function named by a pattern with a test of an argument
 *     ("lookup@arg1==42") is one for the calls whose hooks carry
 *     AGENT_FILTER_HELD (gates.h): run-time patching tests the argument
 *     at the entry and marks the entry's hook and the exit's alike;
 *   - no exclude function is active (nor is it one);
 *   - its module is not left out by FXT_MODULE;
 *   - it is at most FXT_DEPTH deep among the calls that pass the above.
 * Its exit gets the same verdict, so the records stay nested.  A call that
 * is not recorded costs a table look-up (and the hook's timestamp).
 *
 * A function of an instrumented module that run-time patching patched
 * (agent/patch/patch.h: fxt-run --args/--retval on such a build, or
 * --patch) yields: its hooks record nothing and leave no trace in the
 * counters, its patched entry and return (agent_filter_patched()) are
 * what goes through the filters, so that a call has one slice.  Its entry
 * goes into the table when it is patched (agent_filter_yield()), which
 * turns the filtering on.
 * longjmp() past a function skips its exit hook, as it does for every
 * -finstrument-functions tool: its counters then stay as they were.
 */
#ifndef FXT_AGENT_FILTER_H
#define FXT_AGENT_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/gates.h"
#include "agent/tbuf.h"

/* Compiles the patterns of agent_cfg.  Returns 0, or -EINVAL when one is
 * not a regular expression (nothing is filtered then, and it is logged). */
int agent_filter_init(void);

/* A module was loaded at `bias`, its segments in [lo, hi): matches its
 * functions, if it is instrumented, and publishes a new table.  Under the
 * busy count of the caller (agent code). */
void agent_filter_module(const char *path, uint64_t bias, uint64_t lo, uint64_t hi);

#endif /* FXT_AGENT_FILTER_H */
