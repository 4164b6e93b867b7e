/* Storage of the symbolizer (see store.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/hash.h"
#include "symbolizer/store.h"

/* ------------------------------------------------------------------ arena */

#define ARENA_CHUNK_SIZE (64u * 1024u)

void *fxt_sym__arena_alloc(struct arena *a, size_t size, size_t align)
{
	struct arena_chunk *c = a->head;
	size_t pos = c ? (c->used + align - 1) & ~(align - 1) : 0;

	if (!c || pos > c->size || c->size - pos < size) {
		/* Large blocks get a chunk of their own, behind the current
		 * one, which stays in use. */
		bool own = size > ARENA_CHUNK_SIZE / 4;
		size_t csize = own ? size : ARENA_CHUNK_SIZE;

		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->size = csize;
		if (own && a->head) {
			c->used = size;
			c->next = a->head->next;
			a->head->next = c;
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		pos = 0;
	}
	c->used = pos + size;
	return (char *)c->data + pos;
}

char *fxt_sym__arena_strdup(struct arena *a, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = fxt_sym__arena_alloc(a, len, 1);

	if (p)
		memcpy(p, s, len);
	return p;
}

/* A mapping the arena unmaps when freed (in one of its chunks). */
struct arena_map {
	struct arena_map *next;
	void *map;
	size_t size;
};

int fxt_sym__arena_keep_map(struct arena *a, void *map, size_t size)
{
	struct arena_map *m = fxt_sym__arena_alloc(a, sizeof(*m), _Alignof(struct arena_map));

	if (!m)
		return -ENOMEM;
	m->map = map;
	m->size = size;
	m->next = a->maps;
	a->maps = m;
	return 0;
}

void fxt_sym__arena_free(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (struct arena_map *m = a->maps; m; m = m->next)
		munmap(m->map, m->size);
	a->maps = NULL;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* ------------------------------------------------------- interned strings */

static uint64_t str_hash(const char *s, size_t len)
{
	return fxt__hash_bytes(s, len);
}

static int strset_grow(struct strset *set)
{
	size_t ncap = set->cap ? set->cap * 2 : 256, i, j;
	const char **nslots = calloc(ncap, sizeof(*nslots));

	if (!nslots)
		return -ENOMEM;
	for (i = 0; i < set->cap; i++) {
		if (!set->slots[i])
			continue;
		const char *str = set->slots[i];

		for (j = str_hash(str, strlen(str)) & (ncap - 1); nslots[j];
		     j = (j + 1) & (ncap - 1))
			;
		nslots[j] = set->slots[i];
	}
	free(set->slots);
	set->slots = nslots;
	set->cap = ncap;
	return 0;
}

/* The arena copy of s[0 .. len) as a string, made on first sight; NULL on
 * ENOMEM. */
const char *fxt_sym__intern(struct strset *set, struct arena *a, const char *s, size_t len)
{
	size_t i;
	char *copy;

	if (set->len * 2 >= set->cap && strset_grow(set) < 0)
		return NULL;
	for (i = str_hash(s, len) & (set->cap - 1); set->slots[i]; i = (i + 1) & (set->cap - 1))
		if (strncmp(set->slots[i], s, len) == 0 && set->slots[i][len] == '\0')
			return set->slots[i];
	copy = fxt_sym__arena_alloc(a, len + 1, 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	set->slots[i] = copy;
	set->len++;
	return copy;
}

/* ------------------------------------------------------- the address cache */

static size_t addr_hash(uint64_t addr, size_t cap)
{
	return (size_t)fxt__hash_u64(addr) & (cap - 1);
}

struct fxt_sym_info *fxt_sym__cache_get(const struct addr_cache *c, uint64_t addr)
{
	size_t i;

	if (!c->cap)
		return NULL;
	for (i = addr_hash(addr, c->cap); c->slots[i].info; i = (i + 1) & (c->cap - 1))
		if (c->slots[i].addr == addr)
			return c->slots[i].info;
	return NULL;
}

int fxt_sym__cache_put(struct addr_cache *c, uint64_t addr, struct fxt_sym_info *info)
{
	size_t i;

	if (c->len * 2 >= c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 1024, j;
		struct cache_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (j = 0; j < c->cap; j++) {
			if (!c->slots[j].info)
				continue;
			for (i = addr_hash(c->slots[j].addr, ncap); ns[i].info;
			     i = (i + 1) & (ncap - 1))
				;
			ns[i] = c->slots[j];
		}
		free(c->slots);
		c->slots = ns;
		c->cap = ncap;
	}
	for (i = addr_hash(addr, c->cap); c->slots[i].info; i = (i + 1) & (c->cap - 1))
		;
	c->slots[i].addr = addr;
	c->slots[i].info = info;
	c->len++;
	return 0;
}

/* Forgets the results for addresses in [start, end): a module added there
 * names them now.  (Results handed out stay valid: they live in the arena.)
 * Linear-probing deletion that shifts the rest of the cluster back, so no
 * tombstones and no allocation. */
void fxt_sym__cache_drop_range(struct addr_cache *c, uint64_t start, uint64_t end)
{
	size_t mask = c->cap - 1, i = 0;

	while (i < c->cap) {
		size_t hole, j;

		if (!c->slots[i].info || c->slots[i].addr < start || c->slots[i].addr >= end) {
			i++;
			continue;
		}
		hole = i;
		c->slots[hole].info = NULL;
		c->len--;
		for (j = (hole + 1) & mask; c->slots[j].info; j = (j + 1) & mask) {
			size_t home = addr_hash(c->slots[j].addr, c->cap);

			/* Move j into the hole unless its home lies cyclically
			 * in (hole, j]: then it is reachable where it is. */
			if (hole <= j ? (home > hole && home <= j) : (home > hole || home <= j))
				continue;
			c->slots[hole] = c->slots[j];
			c->slots[j].info = NULL;
			hole = j;
		}
		/* Slot i now holds an entry moved back, or nothing: look again. */
	}
}
