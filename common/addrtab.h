/* A table of fixed-size elements keyed by a function's address: open
 * addressing, grown at half full, hashed with fxt__hash_mix (common/hash.h).
 * Each element starts with its key, a uint64_t address (0: an empty
 * slot).  For the converter's per-function tallies: the frames of each
 * function open on a thread (recon.c) and the calls left out of it
 * (shortcalls.c); and the importers' threads, keyed by tid + 1
 * (import/). */
#ifndef FXT_COMMON_ADDRTAB_H
#define FXT_COMMON_ADDRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrtab {
	void *v;     /* cap elements of `elem` bytes */
	size_t elem; /* sizeof the element type */
	size_t cap, n;
};

/* An empty table of elements of `type`. */
#define ADDRTAB_INIT(type) ((struct addrtab){ NULL, sizeof(type), 0, 0 })

/* The element of `addr` (not 0), added zero-filled but for its key when
 * new (*added then true, if added is not NULL).  NULL: out of memory.
 * Adding an element may move every element (pointers from earlier calls
 * then dangle); finding one moves nothing. */
void *addrtab_get(struct addrtab *t, uint64_t addr, bool *added);

/* The element of `addr` (not 0), or NULL when it has none; adds
 * nothing. */
void *addrtab_find(const struct addrtab *t, uint64_t addr);

/* Slot i (i < t->cap): its element, or NULL when empty. */
static inline void *addrtab_slot(const struct addrtab *t, size_t i)
{
	uint64_t *e = (uint64_t *)(void *)((char *)t->v + i * t->elem);

	return *e ? e : NULL;
}

/* Frees the elements; the table is empty again. */
void addrtab_free(struct addrtab *t);

#endif /* FXT_COMMON_ADDRTAB_H */
