/* Function locations of an archive (see srcloc.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/reader.h>

#include "common/hash.h"
#include "tools/front/srcloc.h"

static uint64_t key_hash(const char *cat, size_t cat_len, const char *name, size_t name_len)
{
	uint64_t h = fxt__hash_more(FXT__HASH_SEED, cat, cat_len);

	h = fxt__hash_word(h, cat_len);
	return fxt__hash_mix(fxt__hash_more(h, name, name_len)) | 1; /* 0: a free slot */
}

static struct tool_srcloc_ent *slot_of(const struct tool_srcloc *l, uint64_t h, const char *cat,
				       size_t cat_len, const char *name, size_t name_len)
{
	size_t j;

	for (j = h & (l->cap - 1); l->v[j].hash; j = (j + 1) & (l->cap - 1)) {
		const struct tool_srcloc_ent *e = &l->v[j];

		if (e->hash == h && e->cat_len == cat_len && e->name_len == name_len &&
		    memcmp(e->cat, cat, cat_len) == 0 && memcmp(e->name, name, name_len) == 0)
			break;
	}
	return &l->v[j];
}

static int grow(struct tool_srcloc *l)
{
	size_t ncap = l->cap ? l->cap * 2 : 256;
	struct tool_srcloc_ent *nv = calloc(ncap, sizeof(*nv)), *old = l->v;
	size_t ocap = l->cap;

	if (!nv)
		return -ENOMEM;
	l->v = nv;
	l->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].hash)
			*slot_of(l, old[i].hash, old[i].cat, old[i].cat_len, old[i].name,
				 old[i].name_len) = old[i];
	free(old);
	return 0;
}

static const struct fxt_string *string_arg(const struct fxt_record *rec, const char *key)
{
	size_t n = strlen(key);

	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		if (a->type == FXT_ARG_STRING && a->name.len == n && !memcmp(a->name.data, key, n))
			return &a->v.s;
	}
	return NULL;
}

/* (cat, name) noted with location loc, unless the key is there (the
 * first one wins): 0, or -ENOMEM. */
static int add(struct tool_srcloc *l, const char *cat, size_t cat_len, const char *name,
	       size_t name_len, const char *loc, size_t loc_len)
{
	struct tool_srcloc_ent *e;
	uint64_t h;

	if ((l->n + 1) * 2 > l->cap && grow(l) < 0)
		return -ENOMEM;
	h = key_hash(cat, cat_len, name, name_len);
	e = slot_of(l, h, cat, cat_len, name, name_len);
	if (e->hash)
		return 0;
	e->cat = strndup(cat, cat_len);
	e->name = strndup(name, name_len);
	e->loc = strndup(loc, loc_len);
	if (!e->cat || !e->name || !e->loc) {
		free(e->cat);
		free(e->name);
		free(e->loc);
		memset(e, 0, sizeof(*e));
		return -ENOMEM;
	}
	e->hash = h;
	e->cat_len = cat_len;
	e->name_len = name_len;
	l->n++;
	return 0;
}

int tool_srcloc_key(const struct fxt_record *rec, const struct fxt_string **cat,
		    const struct fxt_string **name, const struct fxt_string **loc)
{
	if (rec->type != FXT_RECORD_KERNEL_OBJECT || rec->u.kobj.obj_type != FXT_OBJ_FUNCTION)
		return 0;
	*cat = string_arg(rec, FXT_LOC_ARG_MODULE);
	*loc = string_arg(rec, FXT_LOC_ARG);
	*name = &rec->u.kobj.name;
	return *cat && *loc && (*loc)->len ? 2 : 1;
}

int tool_srcloc_see(struct tool_srcloc *l, const struct fxt_record *rec)
{
	const struct fxt_string *cat, *loc, *name;
	int k = tool_srcloc_key(rec, &cat, &name, &loc);

	if (k < 2)
		return k; /* 1: one of ours, but saying nothing */
	k = add(l, cat->data, cat->len, name->data, name->len, loc->data, loc->len);
	return k < 0 ? k : 1;
}

int tool_srcloc_note(struct tool_srcloc *l, const char *cat, size_t cat_len, const char *name,
		     size_t name_len)
{
	return add(l, cat, cat_len, name, name_len, "", 0);
}

const char *tool_srcloc_find(const struct tool_srcloc *l, const char *cat, size_t cat_len,
			     const char *name, size_t name_len)
{
	const struct tool_srcloc_ent *e;

	if (!l->n)
		return NULL;
	e = slot_of(l, key_hash(cat, cat_len, name, name_len), cat, cat_len, name, name_len);
	return e->hash ? e->loc : NULL;
}

void tool_srcloc_free(struct tool_srcloc *l)
{
	for (size_t i = 0; i < l->cap; i++) {
		free(l->v[i].cat);
		free(l->v[i].name);
		free(l->v[i].loc);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
