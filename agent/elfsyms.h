/* The function symbols of an ELF file, read in the traced process for the
 * filters (agent/keep/filter.c) and the patch planner (agent/patch/)
 * without libdw: its symbol table (.symtab, or .dynsym when the file is
 * stripped), and whether the file was built with -finstrument-functions
 * (it refers to __cyg_profile_func_enter).  For the planner, a stripped
 * file's separate debug file (what a -dbgsym package installs, found where
 * common/debugpath.h says, checked by build ID or CRC) gives the functions
 * its exports do not.  Private to agent/.
 *
 * Files are mapped read-only and every offset is checked against their
 * size: a damaged or foreign file gives fewer symbols, never a fault.
 * Nothing is allocated with malloc.
 */
#ifndef FXT_AGENT_ELFSYMS_H
#define FXT_AGENT_ELFSYMS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* Called for each defined function symbol: its name (NUL-terminated) and
 * its value (an address relative to the load bias). */
typedef void agent_elf_fn(void *ctx, const char *name, uint64_t value);

/* Reads the ELF64 file at `path`.  With `fn`, calls it for each function
 * symbol, but only when the file refers to __cyg_profile_func_enter
 * (*instrumented says whether it does).  Returns the number of symbols
 * passed to fn, or -errno (not a file we can read, not ELF64). */
long agent_elf_functions(const char *path, agent_elf_fn *fn, void *ctx, bool *instrumented);

/* Called for each defined function symbol with its size (0: unknown), and
 * for a local one, the source file the symbol table puts it under (its
 * STT_FILE entry), else NULL. */
typedef void agent_elf_sized_fn(void *ctx, const char *name, uint64_t value, uint64_t size,
				const char *file);

/* Called for each named symbol of the table that is not a defined
 * function: what the module refers to (undefined), its data, the bounds
 * the linker defines (etext ...). */
typedef void agent_elf_other_fn(void *ctx, const char *name);

/* Which table named a module's functions. */
struct agent_elf_from {
	enum {
		AGENT_ELF_SYMTAB,     /* its own .symtab */
		AGENT_ELF_DEBUG_FILE, /* .dynsym, then its debug file's .symtab */
		AGENT_ELF_EXPORTS,    /* .dynsym only: no debug file found */
	} table;
	char debug[PATH_MAX]; /* AGENT_ELF_DEBUG_FILE: the debug file's path */
};

/* Reads the ELF64 file at `path`: calls fn for every function symbol of
 * its symbol table, instrumented or not, and `other` (unless NULL) for its
 * other symbols, for run-time patching (agent/patch/patch.h).  The table
 * is its .symtab; without one (stripped), its .dynsym, then the functions
 * of its debug file's .symtab at addresses .dynsym does not name (an
 * exported function keeps the name the loader knows).  *from (unless
 * NULL) says which.  Returns the number of functions, or -errno. */
long agent_elf_all_functions(const char *path, agent_elf_sized_fn *fn, agent_elf_other_fn *other,
			     void *ctx, struct agent_elf_from *from);

/* Whether a module loaded now, other than the agent, refers to
 * __cyg_profile_func_enter: read off the modules' relocations in memory
 * (dl_iterate_phdr), no file opened.  For the seal, which measures the
 * hooks' cost only when something calls them (agent/calib.h). */
bool agent_elf_loaded_instrumented(void);

#endif /* FXT_AGENT_ELFSYMS_H */
