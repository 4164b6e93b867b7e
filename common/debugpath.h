/* Where a module's separate debug file may be (what a -dbgsym package
 * installs): the one list of the places, in the order they are tried, for
 * the agent's patch planner (agent/elfsyms.c, which reads ELF by hand and
 * links only libc) and the symbolizer (symbolizer/debuginfo.c, libdwfl).
 * Local files only: never debuginfod.
 *
 *   0. ROOT/.build-id/xx/yyyy.debug: the module's build ID (its
 *      NT_GNU_BUILD_ID note) in hex, its first byte the folder;
 *   1. DIR/NAME, 2. DIR/.debug/NAME, 3. ROOT/DIR/NAME (DIR absolute): NAME
 *      the module's .gnu_debuglink, DIR the folder of the module's path;
 *   4-6. the same for the module's real path, when it differs (a
 *      symlink: libz.so.1 -> libz.so.1.2.13, /lib -> /usr/lib).
 *
 * ROOT is FXT_DEBUG_ROOT (fxt-run --debug-root, run/settings.def), by
 * default FXT_DEBUG_ROOT_DEFAULT.  A build-ID candidate is the module's
 * debug file when its own build ID is the module's; a debuglink candidate
 * when its CRC-32 (common/crc32.h) is the one the link stores, unless that
 * is 0.  Neither may be the module's own file.  Those checks are the
 * callers': each opens files its own way. */
#ifndef FXT_COMMON_DEBUGPATH_H
#define FXT_COMMON_DEBUGPATH_H

#include <stddef.h>

#define FXT_DEBUG_ROOT_DEFAULT "/usr/lib/debug"

/* What a module's debug file is looked up by. */
struct fxt_debug_key {
	const char *root;	       /* NULL or "": FXT_DEBUG_ROOT_DEFAULT */
	const unsigned char *build_id; /* NULL: none */
	size_t build_id_len;
	const char *file; /* the module's path; NULL: none */
	const char *real; /* its real path; NULL: the same as file */
	const char *link; /* its .gnu_debuglink name; NULL: none */
};

/* How a candidate is checked (see above). */
enum fxt_debug_via {
	FXT_DEBUG_SKIP,	    /* no candidate at this index */
	FXT_DEBUG_BUILD_ID, /* its build ID must be the module's */
	FXT_DEBUG_LINK,	    /* its CRC-32 must be the link's (when not 0) */
};

/* The number of candidate indices. */
#define FXT_DEBUG_CANDIDATES 7

/* Candidate k (0 to FXT_DEBUG_CANDIDATES - 1) into buf: how to check it,
 * or FXT_DEBUG_SKIP when the key has none there (no build ID, no link, a
 * relative folder for ROOT/DIR, no real path apart) or it does not fit in
 * `size` bytes. */
enum fxt_debug_via fxt_debug_candidate(const struct fxt_debug_key *key, unsigned k, char *buf,
				       size_t size);

#endif /* FXT_COMMON_DEBUGPATH_H */
