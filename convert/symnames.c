/* The conversion's name table (see symnames.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "convert/symnames.h"
#include "spool/libc_table.h"
#include "spool/records.h"

void conv_names_init(struct sym_table *t, conv_lookup_fn *lookup, conv_loc_fn *loc_later,
		     void *lookup_ctx)
{
	memset(t, 0, sizeof(*t));
	t->lookup = lookup;
	t->loc_later = loc_later;
	t->lookup_ctx = lookup_ctx;
	t->epoch = 1;
}

static size_t slot_of(uint64_t addr, size_t cap)
{
	return (size_t)fxt__hash_u64(addr) & (cap - 1);
}

static int table_grow(struct sym_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct sym_entry **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;
		if (!t->v[i])
			continue;
		for (j = slot_of(t->v[i]->addr, cap); v[j]; j = (j + 1) & (cap - 1))
			;
		v[j] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

/* A new entry, zeroed, from the newest block (or a new one). */
static struct sym_entry *entry_new(struct sym_table *t)
{
	struct sym_block *b = t->blocks;

	if (!b || b->used == SYM_BLOCK) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->next = t->blocks;
		t->blocks = b;
	}
	return &b->e[b->used++];
}

struct sym_entry *conv_names_get_slow(struct sym_table *t, uint64_t addr)
{
	struct sym_entry **r = &t->recent[(addr >> 4) & (RECENT - 1)];
	const struct fxt_sym_info *info;
	struct sym_entry *e;
	size_t j;

	if (t->used * 2 >= t->cap && table_grow(t) < 0)
		return NULL;
	for (j = slot_of(addr, t->cap); t->v[j]; j = (j + 1) & (t->cap - 1)) {
		if (t->v[j]->addr == addr)
			return *r = t->v[j];
	}
	e = entry_new(t);
	if (!e)
		return NULL;
	t->v[j] = e;
	e->addr = addr;
	if (ev_tag(addr) == EV_TAG_CALL) {
		/* A libc call: named after the wrapped function. */
		const struct agent_fn_info *fi = agent_fn_lookup(ev_call_fn(addr));
		if (fi) {
			e->name = fi->name;
			e->cat = fi->category;
		} else {
			char buf[32];
			snprintf(buf, sizeof(buf), "libc#%u", ev_call_fn(addr));
			e->owned = strdup(buf);
			e->name = e->owned ? e->owned : "libc#?";
			e->cat = "libc";
		}
	} else if (addr == CONV_AGENT_PC) {
		e->name = CONV_AGENT_FRAME;
		e->cat = CONV_AGENT_FRAME;
	} else {
		info = t->lookup ? t->lookup(t->lookup_ctx, addr) : NULL;
		e->name = info && info->name ? info->name : "?";
		e->cat = info && info->module ? info->module : "";
		e->loc = info ? info->loc : NULL;
		if (e->loc == FXT_SYM_LOC_LATER) {
			e->loc = NULL;
			e->loc_later = t->loc_later != NULL;
		} else if (e->loc) {
			e->loc_file = info->loc_file;
			e->loc_line = info->loc_line;
		}
		e->loc_len = e->loc ? strlen(e->loc) : 0;
	}
	e->name_len = strlen(e->name);
	e->cat_len = strlen(e->cat);
	e->epoch = 0; /* epochs start at 1 */
	t->used++;
	return *r = e;
}

bool conv_names_loc_due(struct sym_table *t, struct sym_entry *e, bool now)
{
	if (!now) {
		e->later = t->later;
		t->later = e;
		return false;
	}
	e->loc_later = false;
	e->loc = t->loc_later(t->lookup_ctx, e->addr, &e->loc_file, &e->loc_line);
	e->loc_len = e->loc ? strlen(e->loc) : 0;
	if (!e->loc)
		e->loc_file = 0;
	return true;
}

struct sym_entry *conv_names_take_later(struct sym_table *t)
{
	struct sym_entry *first = NULL, *e = t->later;

	t->later = NULL;
	while (e) { /* the list reversed: the first noted first */
		struct sym_entry *next = e->later;

		e->later = first;
		first = e;
		e = next;
	}
	for (e = first; e; e = e->later)
		conv_names_loc_due(t, e, true);
	return first;
}

void conv_names_free(struct sym_table *t)
{
	while (t->blocks) {
		struct sym_block *b = t->blocks;

		for (size_t i = 0; i < b->used; i++)
			free(b->e[i].owned);
		t->blocks = b->next;
		free(b);
	}
	free(t->v);
}

uint64_t conv_names_fn_of(void *vtable, uint64_t pc)
{
	const struct sym_table *t = vtable;
	const struct fxt_sym_info *info;

	if (pc == CONV_AGENT_PC)
		return pc;
	info = t->lookup ? t->lookup(t->lookup_ctx, pc) : NULL;

	/* An identity below 2^56, as hook addresses are: the recon's and the
	 * name table's other bits mean exits and tags. */
	return (info && info->start ? info->start : pc) & EV_ADDR_MASK;
}
