/* The symbol that says a module was built with -finstrument-functions:
 * it refers to (leaves undefined) the entry hook.  Read by the agent
 * (its filters, its patcher) and by fxt-run before the run (the
 * symbolizer's fxt_sym_elf_layout()). */
#ifndef FXT_COMMON_HOOKSYM_H
#define FXT_COMMON_HOOKSYM_H

#include <stdbool.h>
#include <string.h>

#define FXT_HOOK_SYMBOL "__cyg_profile_func_enter"

/* Whether `name`, a symbol's as a table has it, is the entry hook's: as
 * it is (.dynsym) or with its version (.symtab: "...@GLIBC_2.2.5"). */
static inline bool fxt__hook_symbol(const char *name)
{
	size_t len = sizeof(FXT_HOOK_SYMBOL) - 1;

	return name && name[0] == '_' && strncmp(name, FXT_HOOK_SYMBOL, len) == 0 &&
	       (name[len] == '\0' || name[len] == '@');
}

#endif /* FXT_COMMON_HOOKSYM_H */
