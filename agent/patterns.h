/* Function-name patterns and demangling, shared by the filters
 * (agent/keep/filter.h: FXT_INCLUDE, FXT_EXCLUDE) and run-time patching
 * (agent/patch/patch.h: FXT_PATCH).  Private to agent/.  Off the hot path: names
 * are matched once per function, when its module is loaded.
 */
#ifndef FXT_AGENT_PATTERNS_H
#define FXT_AGENT_PATTERNS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* POSIX extended regular expressions, one a line of a setting: the
 * filters' FXT_INCLUDE and FXT_EXCLUDE, and FXT_PATCH (agent/patch/patch.h). */
struct agent_patterns {
	regex_t *re;
	size_t n;
};

/* Compiles each line of `list` into *p (appending).  0, -ENOMEM, or
 * -EINVAL when a line is not a regular expression (logged, with `what`). */
int agent_patterns_compile(const char *list, struct agent_patterns *p, const char *what);

/* Frees p's patterns: *p is empty again. */
void agent_patterns_free(struct agent_patterns *p);

/* Whether `name` matches one of p's patterns. */
bool agent_patterns_match(const struct agent_patterns *p, const char *name);

/* `name` demangled (malloc'd), when it is a C++ name and the process has
 * loaded libstdc++'s demangler; else NULL.  The first C++ name looks for
 * the demangler (once). */
char *agent_demangle(const char *name);

/* Looks for libstdc++'s demangler (again), and whether it was found: a
 * module loaded later may bring libstdc++.  Callers serialize the look
 * (the filters' table lock). */
void agent_demangler_find(void);
bool agent_demangler_found(void);

#endif /* FXT_AGENT_PATTERNS_H */
