/* Symbolizer: code addresses -> function names, with elfutils libdwfl.
 *
 * This file is private to fxtrace.  The agent's exit-time flusher uses it
 * inside the traced process (fxt_sym_add_self, then fxt_sym_add_module for
 * libraries that were dlopen'ed and possibly dlclose'd since), and fxt-run
 * may use it for a process that is gone (fxt_sym_add_maps with a saved
 * /proc/PID/maps).  The add_* calls may come in any order, before or between
 * lookups; an address looked up before a module covering it was added is
 * symbolized again on its next lookup.
 *
 * Names: the function symbol covering the address (.symtab, else .dynsym;
 * found in separate debuginfo through .gnu_debuglink / build-id too), without
 * a symbol version ("glob", not "glob@@GLIBC_2.27"); among aliases, global
 * before weak before local, then the public-looking name ("malloc", not
 * "__libc_malloc").  C++ names ("_Z...") are demangled with __cxa_demangle,
 * taken from the process if it has one, else from libstdc++.so.6 loaded at
 * first need, so that C programs do not get libstdc++ mapped for nothing;
 * without it the mangled name is kept.  Without a symbol the name is
 * "module+0xOFFSET", OFFSET being the address minus the module's load bias
 * (that is, the ELF file's virtual address, what `nm` and `addr2line -e`
 * use); outside every module it is "0xADDRESS".
 *
 * Separate debuginfo comes from local files only (/usr/lib/debug/.build-id,
 * .gnu_debuglink): the symbolizer never contacts debuginfod, whatever
 * DEBUGINFOD_URLS says, and never loads libdebuginfod (whose libcurl would
 * start up inside the traced process at exit).
 *
 * Each address is symbolized once: results are cached, and their strings are
 * owned by the symbolizer until fxt_sym_free.  Nothing is printed.  There is
 * no global state: any number of symbolizers may exist at once.  One
 * symbolizer must not be used by two threads at the same time.
 */
#ifndef FXT_SYMBOLIZER_H
#define FXT_SYMBOLIZER_H

#include <stdint.h>

#include <fxt/format.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fxt_sym;

struct fxt_sym_info {
	const char *name;   /* demangled function name, or "module+0xOFFSET"; never NULL or "" */
	const char *module; /* module basename, e.g. "libplugin.so" or the program's name; "" when
			       the address is in no module */
	const char *file;   /* source file (DWARF) or NULL */
	unsigned line;	    /* 0 when unknown */
	uint64_t start;	    /* start address of the function symbol containing the address
			       (for stack samples: one identity per function); the address
			       itself when no symbol covers it; 0 in the "?" fallback */
	const char *loc;    /* with FXT_SYM_FUNC_LOC: where that function is in the
			       source, "FILE:LINE" (the line-table entry at `start`, as
			       `addr2line -e MODULE` gives it; FILE relative to the unit's
			       DW_AT_comp_dir when under it, else as DWARF has it), with
			       " (inlined)" when DWARF says the function is also inlined
			       into its callers (DW_AT_inline), FXT_SYM_NO_DEBUG_INFO when
			       its module has no line for it, FXT_SYM_LOC_LATER when not
			       looked up yet (runcache.h); else NULL */
	uint32_t loc_file;  /* loc's parts when it is "FILE:LINE" (or with " (inlined)")
			       and FILE is not empty: FILE's bytes, with FXT_SYM_LOC_INL
			       when inlined; 0: not said (the text says) */
	uint32_t loc_line;  /* LINE, with loc_file: what a writer takes without
			       reading the text back (convert/emitloc.c) */
};
#define FXT_SYM_LOC_INL (UINT32_C(1) << 31)

/* The location of a function that no DWARF line covers (stripped, no
 * debug info, hand-written assembly). */
#define FXT_SYM_NO_DEBUG_INFO "(no debug info)"
/* The location of a function not looked up yet, compared as a pointer:
 * what a run cache's view with a thread decoding its modules' locations
 * (fxt_symcache_set_ahead()) says while that thread runs, rather than
 * wait for it; fxt_symview_loc() gives the location then. */
extern const char fxt_sym_loc_later[];
#define FXT_SYM_LOC_LATER fxt_sym_loc_later
#define FXT_SYM_INLINED	  FXT_LOC_INLINED /* include/fxt/format.h: the archive's form */

enum fxt_sym_flags {
	FXT_SYM_LINES = 1u << 0,   /* also look up file:line (slower) */
	FXT_SYM_FUNC_LOC = 1u << 1 /* also the function's location (`loc`) */
};

/* Whether symbolizers of this process write the source locations they
 * decode to the files kept across runs (FXT_SRCLINE_CACHE, loccache.c);
 * they read them either way.  Default true; a conversion inside the
 * traced program (convert/self.c) writes nothing of its own to the
 * user's cache. */
void fxt_sym_loccache_keep(bool keep);

/* Decodes the location of every function of the ELF file at `path`, when
 * it is built with -finstrument-functions (fxt_sym_layout.instrumented),
 * and keeps them (FXT_SRCLINE_CACHE), unless a kept file serves it already:
 * what fxt-run does for a traced module while the program runs, so that
 * its conversion reads them rather than decodes them.  Stops between two
 * functions once *stop (when given) is non-zero, keeping those decoded.
 * 1 when it decoded them all, 0 when it stopped or there was nothing to
 * do (not instrumented, kept already, not kept at all, no build ID, no
 * DWARF), -errno (the file's, -ENOMEM). */
int fxt_sym_loccache_fill(const char *path, const int *stop);

/* A new, empty symbolizer; NULL on ENOMEM. */
struct fxt_sym *fxt_sym_new(unsigned flags);

/* Reports every module mapped in this process now (dl_iterate_phdr), the
 * main program and the vDSO included.  Modules already known are skipped; a
 * module whose addresses overlap one reported before (a library dlclose'd
 * and another loaded at its place) is left out: the first report wins.
 * 0 or a negative errno (-ENOMEM). */
int fxt_sym_add_self(struct fxt_sym *s);

/* Reports one ELF file loaded at load bias `bias` (dlpi_addr, link_map
 * l_addr; ignored for non-PIE executables).  Used for dlopen'ed libraries,
 * also ones already dlclose'd.  Reporting the same file at the same bias
 * again does nothing and returns 0; a module that overlaps another module's
 * addresses is refused with -EEXIST.  Otherwise 0, or a negative errno:
 * open(2)'s (-ENOENT ...), -ENOEXEC when the file is not an ELF executable
 * or shared object, -EINVAL for an empty path, -ENOMEM. */
int fxt_sym_add_module(struct fxt_sym *s, const char *path, uint64_t bias);

/* Reports the modules of a saved /proc/PID/maps text (NUL-terminated): the
 * files with an executable mapping, load biases computed from the mappings
 * and the ELF program headers.  Files that are gone or were replaced since
 * (another inode, and another layout: overlayfs shows inode numbers that
 * stat(2) does not) still name their addresses "file+0xOFFSET", OFFSET then
 * being the file offset; "[vdso]" names them "[vdso]+0xOFFSET" from its
 * start.  Overlaps as for fxt_sym_add_self.  0 or a negative errno: -EINVAL
 * when a line cannot be parsed (then nothing is reported), -ENOMEM. */
int fxt_sym_add_maps(struct fxt_sym *s, const char *maps_text);

/* An ELF file's layout as the loader maps it: the addresses its PT_LOAD
 * segments cover, [lo, hi) as ELF virtual addresses (lo page-aligned, as
 * the module ranges above), and whether they are fixed (an ET_EXEC file,
 * whose load bias is meaningless).  Lets a caller tell which module of a
 * process covers an address without a symbolizer.  Also what the file is
 * for: its machine (e_machine, EM_X86_64 ...), 32 or 64 bits, and whether
 * a dynamic loader runs it (PT_INTERP: not a static program), and
 * whether it was built with -finstrument-functions (it refers to
 * __cyg_profile_func_enter, undefined in its symbols).  0, -errno of
 * open(2), or -ENOEXEC. */
struct fxt_sym_layout {
	uint64_t lo, hi;
	int fixed;
	unsigned machine;
	unsigned bits;
	int interp;
	int instrumented;
};
int fxt_sym_elf_layout(const char *path, struct fxt_sym_layout *out);

/* The symbol for a code address.  Pass function entry addresses as they are,
 * and pc - 1 for return addresses.  Never NULL; cached per address; the
 * result and its strings stay valid until fxt_sym_free.  On ENOMEM, a static
 * fallback whose name is "?" is returned (and not cached). */
const struct fxt_sym_info *fxt_sym_lookup(struct fxt_sym *s, uint64_t addr);

/* The address of the function `name` (compared without a symbol version)
 * defined in the reported module whose file's basename is `module` (for
 * "libc.so.6": what a process has mapped), from its .symtab or .dynsym as
 * for lookups; for a caller that must call a function inside another
 * process.  An IFUNC symbol does not count (its address is its resolver's).
 * 0, or -ENOENT when no such module or function is known. */
int fxt_sym_find(struct fxt_sym *s, const char *module, const char *name, uint64_t *addr);

/* Calls fn for each function symbol (STT_FUNC, defined) of every module
 * reported, with the module's path, the symbol's name as its table has it
 * (mangled for C++; no symbol version), the name demangled (the same for
 * C), and its runtime address; each alias too.  fn returns 0 to go on,
 * non-zero to stop (a negative errno is returned).  0, -ENOMEM. */
typedef int fxt_sym_function_fn(void *ctx, const char *module_path, const char *symbol,
				const char *demangled, uint64_t addr);
int fxt_sym_functions(struct fxt_sym *s, fxt_sym_function_fn *fn, void *ctx);

/* Frees the symbolizer and every result it returned.  NULL is accepted. */
void fxt_sym_free(struct fxt_sym *s);

#ifdef __cplusplus
}
#endif

#endif /* FXT_SYMBOLIZER_H */
