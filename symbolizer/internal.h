/* Shared by the symbolizer's files.  Private to symbolizer/.
 *
 *   symbolizer.c  the module table, ELF reporting, add_self/add_module,
 *                 lookups, lifetime
 *   maps.c        add_maps: a saved /proc/PID/maps text -> modules
 *   symtab.c      the per-module symbol index
 *   lines.c       file:line, the unit of an address, where a function is
 *   linetab.c     a unit's line table decoded once (for lines.c)
 *   loccache.c    functions' locations kept across runs, by build ID
 *   signature.c   function signatures (signature.h)
 *   sigabi.c      where the x86-64 calling convention puts a value
 *   sigshow.c     how a captured value shows
 *   store.c       arena, interned strings, address cache
 *   demangle.c    C++ names
 *   debuginfo.c   where libdwfl finds debuginfo (local files only)
 */
#ifndef FXT_SYMBOLIZER_INTERNAL_H
#define FXT_SYMBOLIZER_INTERNAL_H

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolizer/demangle.h"
#include "symbolizer/store.h"
#include "symbolizer/symbolizer.h"

/* One function symbol, as absolute addresses [addr, end). */
struct sym_entry {
	uint64_t addr, end; /* a label (no size) "ends" with its section */
	const char *name;   /* owned by libdwfl, valid while the Dwfl lives */
	unsigned rank;	    /* lower is better, among symbols at one address */
	bool label;	    /* st_size 0: hand-written assembly, _init ... */
};

/* A compilation unit's address range (DWARF addresses), for lines.c. */
struct cu_range {
	uint64_t lo, hi;
	Dwarf_Die die;
	size_t unit; /* the unit's index in sym_module.units */
};

/* The bytes of one section of the file holding a module's DWARF. */
struct lt_bytes {
	const unsigned char *p; /* NULL: absent */
	size_t n;
};

/* What linetab.c reads: .debug_line and the strings it may refer to. */
struct lt_sections {
	struct lt_bytes line, line_str, str;
};

struct line_table;
struct loc_cache;

/* What lines.c reads of a unit at its first need: its line table
 * (linetab.c) and the functions it says are also inlined. */
struct sym_unit {
	bool tried;		  /* lines decoded, or declined (lines NULL) */
	struct line_table *lines; /* NULL: libdw answers */
	bool inl_built;		  /* inl built (possibly empty) */
	uint64_t *inl;		  /* sorted DWARF entry addresses of functions also inlined */
	size_t ninl;
};

struct sym_module {
	uint64_t start, end; /* addresses covered, [start, end) */
	uint64_t bias;	     /* load bias: runtime address - ELF virtual address */
	const char *path;    /* arena */
	const char *base;    /* basename, inside path */
	dev_t dev;	     /* identity of the file; 0/0 for modules without one */
	ino_t ino;
	struct stat st; /* the file opened (fstat), for loccache.c */
	Dwfl_Module *dwmod; /* NULL: no readable ELF (vDSO, deleted file) */
	bool indexed;	    /* syms built (possibly empty) */
	struct sym_entry *syms;
	uint64_t *maxend; /* maxend[i]: the largest end of a sized syms[0 .. i] */
	size_t nsyms;
	bool cus_built; /* cus built (possibly empty) */
	struct cu_range *cus;
	size_t ncus;
	size_t cu_hint; /* the last answer of cu_find() (lines.c) */
	bool dw_got;	/* dw: dwfl_module_getdwarf()'s answer, asked once */
	Dwarf *dw;
	Dwarf_Addr dw_bias;
	struct sym_unit *units; /* each unit once, as the cus refer to them */
	size_t nunits;
	bool lsec_built; /* lsec read (lsec_ok), or not readable: libdw answers */
	bool lsec_ok;
	struct lt_sections lsec;
	uint64_t *addrs;  /* fxt_sym_loccache_fill(): syms' addresses alone, */
	size_t naddrs;	  /* sorted (fxt_sym__module_addrs()), when not indexed */
	uint64_t *starts; /* with lsec: the DWARF addresses of syms, sorted */
	size_t nstarts;
	bool lc_tried;	      /* lc opened, or not to be (no build ID, "off") */
	struct loc_cache *lc; /* the locations kept across runs (loccache.c) */
};

/* A signature looked up (signature.c); sig NULL: none (-ENOENT). */
struct sym_sig {
	uint64_t addr;
	const struct fxt_signature *sig;
};

struct fxt_sym {
	unsigned flags;
	Dwfl *dwfl;
	struct sym_module *mods; /* sorted by start, never overlapping */
	size_t nmods, capmods;
	struct arena arena;
	struct arena *loc_arena;  /* the locations' (fxt_sym__set_loc_arena()); NULL: arena */
	bool (*loc_busy)(void *); /* fxt_sym__set_loc_busy(); NULL: none */
	void *loc_busy_arg;
	/* The locations said FXT_SYM_LOC_LATER while loc_busy said so, in
	 * the order asked (fxt_sym__resolve_later()). */
	struct sym_later {
		uint64_t addr;
		struct fxt_sym_info *info;
		struct sym_module *m;
		bool is_start;
	} * later;
	size_t nlater, caplater;
	struct strset names;
	struct addr_cache cache;
	struct fxt_sym__demangler demangler;
	char *scratch; /* a symbol name without its version */
	size_t scratch_size;
	struct sym_sig *sigs; /* sorted by addr */
	size_t nsigs, capsigs;
};

/* An ELF file opened for a look at its program headers. */
struct elf_file {
	int fd;
	Elf *elf;
	GElf_Half type;
	struct stat st;
};

/* Opens an ELF executable or shared object: 0, -errno of open(2), or
 * -ENOEXEC for anything else. */
int fxt_sym__elf_open(struct elf_file *ef, const char *path);
void fxt_sym__elf_close(struct elf_file *ef);

/* The addresses the PT_LOAD segments cover once loaded at `bias`. */
int fxt_sym__elf_load_range(Elf *elf, uint64_t bias, uint64_t *start, uint64_t *end);

/* Reports an opened ELF file loaded at `bias` (consumes ef), or addresses
 * [start, end) without a readable file.  0 also when the very module is
 * known already; -EEXIST when it overlaps another; -ENOMEM. */
int fxt_sym__report_elf(struct fxt_sym *s, const char *path, struct elf_file *ef, uint64_t bias);
int fxt_sym__report_bare(struct fxt_sym *s, const char *path, uint64_t start, uint64_t end,
			 uint64_t bias);

/* Builds m->syms on the module's first lookup: 0 or -ENOMEM. */
int fxt_sym__module_index(struct sym_module *m);
/* The function symbol covering addr, or NULL. */
const struct sym_entry *fxt_sym__module_symbol(const struct sym_module *m, uint64_t addr);

/* The module covering runtime address addr, or NULL. */
struct sym_module *fxt_sym__module_find(struct fxt_sym *s, uint64_t addr);

/* The compilation unit holding runtime address addr (.debug_aranges, else
 * an index of the units' ranges built once) and the module's DWARF bias:
 * 0, -ENOENT (no DWARF, or no unit there), -ENOMEM. */
int fxt_sym__module_cu(struct sym_module *m, uint64_t addr, Dwarf_Die *cu, Dwarf_Addr *bias);

/* The source file and line of addr: 0, -ENOENT when unknown, -ENOMEM. */
int fxt_sym__module_line(struct sym_module *m, uint64_t addr, const char **file, int *line);

/* ---------------------------------------- signatures (signature.c, sigabi.c) */

struct fxt_value_desc;

/* Deeper type nesting than this is not followed (cycles, pathological
 * types). */
#define SIG_DEPTH_MAX 12

/* The next free parameter registers: rdi.. (0..6), xmm0.. (0..8). */
struct sig_regs {
	unsigned gpr, xmm;
};

/* Fills d's kind, size, is_signed and location for a value of DWARF type
 * `type` (NULL: void): a parameter taking registers from r, or (r NULL)
 * the return value, then *ret_in_memory says whether it goes through
 * memory the caller passes.  *by_ref: a C++ class passed by an invisible
 * reference (then a parameter is FXT_VK_PTR). */
void fxt_sym__sig_place(Dwarf_Die *type, bool cxx, struct sig_regs *r, struct fxt_value_desc *d,
			bool *by_ref, bool *ret_in_memory);

/* Attributes of a DIE, its abstract origin's or declaration's included. */
static inline bool fxt_sym__die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

static inline bool fxt_sym__die_flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	bool f = false;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formflag(&a, &f) == 0 && f;
}

static inline Dwarf_Word fxt_sym__die_udata(Dwarf_Die *die, unsigned name, Dwarf_Word dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, &w) == 0)
		return w;
	return dflt;
}
/* `file` relative to `dir`, a unit's compilation folder (NULL: none),
 * when it lies under it ("src/parse.c" rather than
 * "/home/me/app/src/parse.c"); as it is otherwise (/usr/include/..., or
 * a file named relative already).  A pointer into file. */
const char *fxt_sym__relative(const char *dir, const char *file);

/* linetab.c: the sections of the file holding `dw` (0, or -EOPNOTSUPP
 * when it cannot read them: compressed, big-endian); a unit's line table,
 * which must answer for the DWARF addresses of `want` (sorted; NULL: for
 * any), the rows no such address needs left out (0, -ENOENT when the
 * unit has none, -EOPNOTSUPP when libdw must read it, -ENOMEM); the row
 * at such an address as dwarf_getsrc_die() finds it, its file as
 * dwarf_linesrc() names it, relative to the unit's DW_AT_comp_dir when
 * under it, and the file's length (0, -ENOENT, -ENOMEM). */
int fxt_sym__linetab_sections(Dwarf *dw, struct lt_sections *s);
int fxt_sym__linetab_build(const struct lt_sections *s, Dwarf_Die *cu, const uint64_t *want,
			   size_t nwant, struct line_table **out);
int fxt_sym__linetab_find(struct line_table *t, uint64_t addr, const char **file, size_t *file_len,
			  unsigned *line);
void fxt_sym__linetab_free(struct line_table *t);

/* qsort()'s and bsearch()'s order of uint64_t values (lines.c). */
int fxt_sym__u64_cmp(const void *a, const void *b);

/* The addresses of the symbols fxt_sym__module_index() keeps, sorted, each
 * once, into *out (malloc'd; NULL when none), without their names (what
 * fxt_sym_loccache_fill() asks about): 0 or -ENOMEM. */
int fxt_sym__module_addrs(struct sym_module *m, uint64_t **out, size_t *n);

/* The location of the function that starts at `start` (fxt_sym_info.loc;
 * is_start: the address of one of the module's symbols), made in arena
 * `a` into out->loc, its parts in out->loc_file and out->loc_line (0: not
 * said): 0, -ENOENT when no line covers it, -ENOMEM. */
int fxt_sym__module_func_loc(struct sym_module *m, uint64_t start, bool is_start, struct arena *a,
			     struct fxt_sym_info *out);

/* Whether the file's symbol tables have __cyg_profile_func_enter
 * undefined: it calls the -finstrument-functions hooks (symbolizer.c). */
int fxt_sym__refers_to_hooks(Elf *elf);

/* loccache.c: the locations kept for module `mod` (its file as `st`
 * says, fstat() of the file opened), NULL when none are to be (no build ID, FXT_SRCLINE_CACHE=off,
 * ENOMEM); one at `vaddr` (an ELF virtual address): 1 with *loc, *len
 * (len 0: none, -ENOENT; else *loc a string, its parts in *file and
 * *line as fxt_sym_info.loc_file and loc_line say them, living as long as arena `a`:
 * the file's mapping goes to the first arena asked, fxt_sym__arena_keep_map()),
 * 0 when not kept, -ENOMEM; where the module's lines come
 * from, once known (debug_file: a separate one, NULL: the module), before
 * which nothing is kept; a location made (len 0: none), kept in memory
 * until close (loc must live as long), which writes the file (adding
 * what it served and kept to *hits, *made; NULL accepted). */
struct loc_cache *fxt_sym__loccache_open(Dwfl_Module *mod, const struct stat *st);
int fxt_sym__loccache_get(struct loc_cache *lc, uint64_t vaddr, struct arena *a, const char **loc,
			  size_t *len, uint32_t *file, uint32_t *line);
void fxt_sym__loccache_dwarf(struct loc_cache *lc, const char *debug_file);
void fxt_sym__loccache_put(struct loc_cache *lc, uint64_t vaddr, const char *loc, size_t len,
			   uint32_t file, uint32_t line);
void fxt_sym__loccache_close(struct loc_cache *lc, uint64_t *hits, uint64_t *made);
/* Whether lc's file was read and serves the module (a later run); and
 * whether this process keeps locations at all (a folder, not "off", and
 * fxt_sym_loccache_keep()). */
bool fxt_sym__loccache_served(const struct loc_cache *lc);
bool fxt_sym__loccache_kept(void);

/* libdwfl's find_elf and find_debuginfo callbacks (debuginfo.c): local
 * files only, never debuginfod. */
int fxt_sym__find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      char **file_name, Elf **elfp);
/* The folder of separate debug files: FXT_DEBUG_ROOT, else
 * /usr/lib/debug (common/debugpath.h). */
const char *fxt_sym__debug_root(void);
int fxt_sym__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			    const char *file_name, const char *debuglink, GElf_Word debuglink_crc,
			    char **debuginfo_file_name);

/* The length of a symbol name without its version: .symtab names symbols
 * defined with .symver "glob@GLIBC_2.2.5" or "glob@@GLIBC_2.27". */
static inline size_t fxt_sym__name_len(const char *name)
{
	return strcspn(name, "@");
}

#endif /* FXT_SYMBOLIZER_INTERNAL_H */
