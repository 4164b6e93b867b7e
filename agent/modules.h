/* Loaded-module tracking for symbolization.  Private to agent/.
 *
 * Records (path, load bias) of every loaded shared object in the spool's
 * module list: at start, after each dlopen() and before each dlclose(), so
 * that a library unloaded before exit can still be symbolized at conversion.
 * dl_iterate_phdr() runs off the hot path only.
 */
#ifndef FXT_AGENT_MODULES_H
#define FXT_AGENT_MODULES_H

#include <stdbool.h>

/* Adds every currently loaded module with a path (the main program too,
 * by /proc/self/exe; not the vDSO) to agent.spool's list. */
void agent_modules_snapshot(void);

/* The main program's path (/proc/self/exe, read once; "" if unreadable).
 * After a fork the child's is the parent's; an exec starts afresh. */
const char *agent_exe_path(void);

/* Whether FXT_PATCH patches the module at `path`: the main program, and
 * the libraries FXT_PATCH_MODULE's globs name but for those the agent
 * relies on (the C library, the loader, libunwind ...).  False without
 * FXT_PATCH. */
bool agent_module_patched(const char *path);

#endif /* FXT_AGENT_MODULES_H */
