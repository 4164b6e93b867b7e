/* A pair-keyed open-addressing hash map for fxt-dump (see dump.h). */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tools/dump/dump.h"

static size_t slot_of(const struct pairmap_slot *slots, size_t nslots, uint64_t a, uint64_t b)
{
	uint64_t h = fxt__hash_pair(a, b);
	size_t mask = nslots - 1, i = (size_t)h & mask;
	while (slots[i].used && (slots[i].a != a || slots[i].b != b))
		i = (i + 1) & mask;
	return i;
}

void pairmap_init(struct pairmap *m)
{
	memset(m, 0, sizeof(*m));
}

void pairmap_free(struct pairmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static int grow(struct pairmap *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64;
	struct pairmap_slot *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < m->nslots; i++) {
		const struct pairmap_slot *s = &m->slots[i];
		if (s->used)
			slots[slot_of(slots, n, s->a, s->b)] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->nslots = n;
	return 0;
}

uint64_t *pairmap_get(struct pairmap *m, uint64_t a, uint64_t b, bool *created)
{
	*created = false;
	if (m->nslots) {
		size_t i = slot_of(m->slots, m->nslots, a, b);
		if (m->slots[i].used)
			return &m->slots[i].value;
	}
	if ((m->count + 1) * 4 > m->nslots * 3 && grow(m) < 0)
		return NULL;
	size_t i = slot_of(m->slots, m->nslots, a, b);
	struct pairmap_slot *s = &m->slots[i];
	s->a = a;
	s->b = b;
	s->value = 0;
	s->used = true;
	m->count++;
	*created = true;
	return &s->value;
}

uint64_t *pairmap_find(const struct pairmap *m, uint64_t a, uint64_t b)
{
	if (!m->nslots)
		return NULL;
	size_t i = slot_of(m->slots, m->nslots, a, b);
	return m->slots[i].used ? &m->slots[i].value : NULL;
}

void pairmap_del(struct pairmap *m, uint64_t a, uint64_t b)
{
	if (!m->nslots)
		return;
	size_t mask = m->nslots - 1;
	size_t i = slot_of(m->slots, m->nslots, a, b);
	if (!m->slots[i].used)
		return;
	m->slots[i].used = false;
	m->count--;
	/* Re-place the rest of the probe run so lookups do not stop early. */
	for (size_t j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		struct pairmap_slot s = m->slots[j];
		m->slots[j].used = false;
		m->slots[slot_of(m->slots, m->nslots, s.a, s.b)] = s;
	}
}
