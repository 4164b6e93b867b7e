/* Function locations of an archive (see srcloc.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
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

static const struct fxt_arg_value *arg_of(const struct fxt_record *rec, const char *key,
					  enum fxt_arg_type type)
{
	size_t n = strlen(key);

	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		if (a->type == type && a->name.len == n && !memcmp(a->name.data, key, n))
			return a;
	}
	return NULL;
}

char *tool_srcloc_text(const struct fxt_record *rec)
{
	const struct fxt_arg_value *loc = arg_of(rec, FXT_LOC_ARG, FXT_ARG_STRING), *file, *line,
				   *inl;
	char *s;
	size_t n;

	errno = 0;
	if (loc) /* the text itself */
		return loc->v.s.len ? strndup(loc->v.s.data, loc->v.s.len) : NULL;
	file = arg_of(rec, FXT_LOC_ARG_FILE, FXT_ARG_STRING);
	line = arg_of(rec, FXT_LOC_ARG_LINE, FXT_ARG_UINT32);
	if (!file || !line || !file->v.s.len)
		return NULL;
	inl = arg_of(rec, FXT_LOC_ARG_INLINED, FXT_ARG_BOOL);
	n = file->v.s.len + 1 + 10 + strlen(FXT_LOC_INLINED) + 1;
	s = malloc(n);
	if (!s)
		return NULL;
	memcpy(s, file->v.s.data, file->v.s.len);
	snprintf(s + file->v.s.len, n - file->v.s.len, ":%" PRIu64 "%s", line->v.u,
		 inl && inl->v.b ? FXT_LOC_INLINED : "");
	return s;
}

/* The entry for (cat, name), a free one when the key is not there (its
 * hash in *h), or NULL on ENOMEM. */
static struct tool_srcloc_ent *entry(struct tool_srcloc *l, const char *cat, size_t cat_len,
				     const char *name, size_t name_len, uint64_t *h)
{
	if ((l->n + 1) * 2 > l->cap && grow(l) < 0)
		return NULL;
	*h = key_hash(cat, cat_len, name, name_len);
	return slot_of(l, *h, cat, cat_len, name, name_len);
}

/* Fills the free entry e with the key and `loc` (malloc'd, taken): 0, or
 * -ENOMEM (loc freed). */
static int fill(struct tool_srcloc *l, struct tool_srcloc_ent *e, uint64_t h, const char *cat,
		size_t cat_len, const char *name, size_t name_len, char *loc)
{
	e->cat = strndup(cat, cat_len);
	e->name = strndup(name, name_len);
	e->loc = loc;
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
		    const struct fxt_string **name)
{
	const struct fxt_arg_value *cat_arg;

	if (rec->type != FXT_RECORD_KERNEL_OBJECT || rec->u.kobj.obj_type != FXT_OBJ_FUNCTION)
		return 0;
	cat_arg = arg_of(rec, FXT_LOC_ARG_MODULE, FXT_ARG_STRING);
	if (!cat_arg)
		return 1;
	*cat = &cat_arg->v.s;
	*name = &rec->u.kobj.name;
	return 2;
}

int tool_srcloc_see(struct tool_srcloc *l, const struct fxt_record *rec)
{
	const struct fxt_string *cat, *name;
	struct tool_srcloc_ent *e;
	char *loc;
	uint64_t h;
	int k = tool_srcloc_key(rec, &cat, &name);

	if (k < 2)
		return k; /* 1: one of ours, but saying nothing */
	e = entry(l, cat->data, cat->len, name->data, name->len, &h);
	if (!e)
		return -ENOMEM;
	if (e->hash)
		return 1; /* the first one read wins */
	loc = tool_srcloc_text(rec);
	if (!loc)
		return errno == ENOMEM ? -ENOMEM : 1; /* else one of ours saying nothing */
	k = fill(l, e, h, cat->data, cat->len, name->data, name->len, loc);
	return k < 0 ? k : 1;
}

int tool_srcloc_note(struct tool_srcloc *l, const char *cat, size_t cat_len, const char *name,
		     size_t name_len)
{
	uint64_t h;
	struct tool_srcloc_ent *e = entry(l, cat, cat_len, name, name_len, &h);

	if (!e)
		return -ENOMEM;
	return e->hash ? 0 : fill(l, e, h, cat, cat_len, name, name_len, strdup(""));
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
