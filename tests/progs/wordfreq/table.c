/* The hash table of wordfreq (see wf.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf.h"

static uint64_t hash_word(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

void wf_table_init(struct wf_table *t)
{
	memset(t, 0, sizeof(*t));
}

void wf_table_free(struct wf_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].word);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static struct wf_entry *find_slot(struct wf_entry *slots, size_t cap, const char *word)
{
	size_t i = (size_t)hash_word(word) & (cap - 1);

	while (slots[i].word && strcmp(slots[i].word, word) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Doubles the table (or creates it), keeping it at most half full. */
static int grow(struct wf_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16;
	struct wf_entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].word)
			*find_slot(slots, cap, t->slots[i].word) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

WF_NOINLINE int wf_table_add(struct wf_table *t, const char *word, unsigned long n)
{
	struct wf_entry *e;

	if (2 * (t->len + 1) > t->cap) {
		int err = grow(t);
		if (err < 0)
			return err;
	}
	e = find_slot(t->slots, t->cap, word);
	if (!e->word) {
		e->word = strdup(word);
		if (!e->word)
			return -ENOMEM;
		t->len++;
	}
	e->count += n;
	return 0;
}

WF_NOINLINE int wf_table_merge(struct wf_table *dst, const struct wf_table *src)
{
	for (size_t i = 0; i < src->cap; i++) {
		if (src->slots[i].word) {
			int err = wf_table_add(dst, src->slots[i].word, src->slots[i].count);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int by_count_then_word(const void *a, const void *b)
{
	const struct wf_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->word, y->word);
}

struct wf_entry *wf_table_sorted(const struct wf_table *t)
{
	struct wf_entry *v = malloc((t->len ? t->len : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].word)
			v[n++] = t->slots[i];
	qsort(v, n, sizeof(*v), by_count_then_word);
	return v;
}
