/* A table keyed by address (see addrtab.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/addrtab.h"
#include "common/hash.h"

static uint64_t *key_at(void *v, size_t elem, size_t i)
{
	return (uint64_t *)(void *)((char *)v + i * elem);
}

/* The slot of `addr` in v (cap slots): its own, or the empty one where
 * it goes. */
static size_t probe(void *v, size_t elem, size_t cap, uint64_t addr)
{
	size_t h = (size_t)fxt__hash_mix(addr) & (cap - 1);
	uint64_t k;

	while ((k = *key_at(v, elem, h)) != 0 && k != addr)
		h = (h + 1) & (cap - 1);
	return h;
}

void *addrtab_find(const struct addrtab *t, uint64_t addr)
{
	uint64_t *e;

	if (!t->cap)
		return NULL;
	e = key_at(t->v, t->elem, probe(t->v, t->elem, t->cap, addr));
	return *e == addr ? e : NULL;
}

void *addrtab_get(struct addrtab *t, uint64_t addr, bool *added)
{
	uint64_t *e;

	/* A key already there is found without growing the table: only an
	 * insertion moves the elements. */
	if (t->cap) {
		e = key_at(t->v, t->elem, probe(t->v, t->elem, t->cap, addr));
		if (*e == addr) {
			if (added)
				*added = false;
			return e;
		}
	}
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		void *v = calloc(cap, t->elem);

		if (!v)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			uint64_t *old = addrtab_slot(t, i);

			if (old)
				memcpy(key_at(v, t->elem, probe(v, t->elem, cap, *old)), old,
				       t->elem);
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	e = key_at(t->v, t->elem, probe(t->v, t->elem, t->cap, addr));
	if (added)
		*added = *e == 0;
	if (*e == 0) {
		*e = addr;
		t->n++;
	}
	return e;
}

void addrtab_free(struct addrtab *t)
{
	free(t->v);
	t->v = NULL;
	t->cap = t->n = 0;
}
