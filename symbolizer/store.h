/* Storage of the symbolizer: an arena, interned strings and the address
 * cache.  Private to symbolizer/.
 *
 * Nothing here is freed piecemeal: results and their strings live until
 * fxt_sym_free, which drops the arena whole.
 */
#ifndef FXT_SYMBOLIZER_STORE_H
#define FXT_SYMBOLIZER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_sym_info;

/* Bump allocation in chunks; everything is freed at once. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct arena_map;

struct arena {
	struct arena_chunk *head;
	struct arena_map *maps; /* fxt_sym__arena_keep_map()'s */
};

/* `size` bytes aligned to `align` (a power of two, at most
 * alignof(max_align_t)); NULL on ENOMEM. */
void *fxt_sym__arena_alloc(struct arena *a, size_t size, size_t align);
char *fxt_sym__arena_strdup(struct arena *a, const char *s);
void fxt_sym__arena_free(struct arena *a);
/* The mapping of `size` bytes at `map` unmapped when `a` is freed, not
 * before: strings in it live as long as a's own.  0 or -ENOMEM. */
int fxt_sym__arena_keep_map(struct arena *a, void *map, size_t size);

/* Where s's results put the functions' locations (fxt_sym_info.loc) from
 * now on: arena `a`, which must outlive them (the run cache's, which then
 * keeps them without a copy), instead of s's own. */
struct fxt_sym;
void fxt_sym__set_loc_arena(struct fxt_sym *s, struct arena *a);
/* busy(arg) asked before each of s's locations until it says false (then
 * no more; NULL: never): while it says true (runcache.c's view: its
 * thread is still decoding the kept locations), a location of a module
 * with DWARF is not looked up but said FXT_SYM_LOC_LATER, and noted for
 * fxt_sym__resolve_later(). */
void fxt_sym__set_loc_busy(struct fxt_sym *s, bool (*busy)(void *), void *arg);
/* Whether s has locations said FXT_SYM_LOC_LATER not resolved yet. */
bool fxt_sym__later_pending(const struct fxt_sym *s);
/* Looks up the locations s said FXT_SYM_LOC_LATER, in the order asked
 * (whoever made busy() say true should have ended first), into the
 * results that said so, and calls done(arg, addr, info) for each (addr as
 * looked up, info its result, the location in info->loc and its parts).
 * 0 or -ENOMEM (then the ones left say FXT_SYM_NO_DEBUG_INFO). */
int fxt_sym__resolve_later(struct fxt_sym *s,
			   void (*done)(void *, uint64_t, const struct fxt_sym_info *), void *arg);

/* fxt_sym_free(), adding to *loc_hits the locations its modules' files
 * kept across runs gave (loccache.c), to *loc_made those it decoded and
 * kept there (NULL accepted). */
void fxt_sym__free_counted(struct fxt_sym *s, uint64_t *loc_hits, uint64_t *loc_made);

/* An open-addressing set of arena strings, by content. */
struct strset {
	const char **slots;
	size_t cap, len; /* cap is 0 or a power of two */
};

/* The arena copy of s[0 .. len) as a string, made on first sight; NULL on
 * ENOMEM.  Equal strings give one pointer. */
const char *fxt_sym__intern(struct strset *set, struct arena *a, const char *s, size_t len);

/* Address -> result, open addressing.  A zeroed struct is an empty cache;
 * free(slots) releases it. */
struct cache_slot {
	uint64_t addr;
	struct fxt_sym_info *info; /* NULL: empty slot */
};

struct addr_cache {
	struct cache_slot *slots;
	size_t cap, len; /* cap is 0 or a power of two */
};

struct fxt_sym_info *fxt_sym__cache_get(const struct addr_cache *c, uint64_t addr);
/* 0 or -ENOMEM. */
int fxt_sym__cache_put(struct addr_cache *c, uint64_t addr, struct fxt_sym_info *info);
/* Forgets the results for addresses in [start, end). */
void fxt_sym__cache_drop_range(struct addr_cache *c, uint64_t start, uint64_t end);

#endif /* FXT_SYMBOLIZER_STORE_H */
