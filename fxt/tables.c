/* The FXT writer's per-provider string and thread tables (see writer.h):
 * interning with FIFO re-registration of evicted indices, and generation
 * numbers for O(1) caller-side caches. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/utf8.h>
#include <fxt/writer.h>

#include "common/hash.h"
#include "fxt/writer_int.h"

void fxt__strtab_reset(struct strtab *t)
{
	if (t->ent)
		for (uint32_t i = 1; i < t->cap; i++)
			free(t->ent[i].data);
	free(t->ent);
	free(t->hash);
	free(t->bucket);
	memset(t, 0, sizeof(*t));
	t->next = 1;
}

void fxt__thrtab_reset(struct thrtab *t)
{
	memset(t, 0, sizeof(*t));
	t->next = 1;
}

/* -------------------------------------------------------------- tables */

/* FIFO eviction alone would let the refs of one record clobber each other:
 * a string found in the table may be the oldest registration, replaced by
 * the very next string the caller interns for the same record.  So a ref
 * is only handed out if at least GUARD registrations must happen before
 * its index comes round again; one closer to the cursor is registered
 * anew at the cursor.  A record holds at most 2 + 2 * 15 string refs (a
 * large blob too) and 2 thread refs (a context switch). */
#define STRING_GUARD FXT_WRITER_REF_LIFE /* the contract: include/fxt/writer.h */
#define THREAD_GUARD 4

/* Registrations before index `ix` is taken again, with `next` the cursor
 * of a ring of indices 1 .. n. */
static inline unsigned fifo_distance(unsigned ix, unsigned next, unsigned n)
{
	return ix >= next ? ix - next : ix + n - next;
}

static uint32_t next_gen(struct fxt_writer *w)
{
	if (++w->gen == 0) /* 0 means "never valid" in slots */
		w->gen = 1;
	return w->gen;
}

static void bucket_insert(uint16_t *bucket, uint32_t mask, uint32_t hash, uint16_t ix)
{
	uint32_t i = hash & mask;

	while (bucket[i])
		i = (i + 1) & mask;
	bucket[i] = ix;
}

/* Removes index `ix` by backward shifting: later members of its probe run
 * move up into the hole unless that would put them before their home
 * bucket, so no tombstones are needed. */
static void bucket_remove(uint16_t *bucket, uint32_t mask, const uint32_t *hash, uint16_t ix)
{
	uint32_t i = hash[ix] & mask, j, home;

	while (bucket[i] != ix)
		i = (i + 1) & mask;
	for (j = (i + 1) & mask; bucket[j]; j = (j + 1) & mask) {
		home = hash[bucket[j]] & mask;
		/* Can bucket[j] move to i?  Only if its home is not in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			bucket[i] = bucket[j];
			i = j;
		}
	}
	bucket[i] = 0;
}

static uint16_t strtab_find(const struct strtab *t, const char *s, size_t len, uint32_t h)
{
	uint32_t mask = 2 * t->cap - 1, i;
	uint16_t ix;

	if (!t->cap)
		return 0;
	for (i = h & mask; (ix = t->bucket[i]) != 0; i = (i + 1) & mask)
		if (t->hash[ix] == h && t->ent[ix].len == len &&
		    memcmp(t->ent[ix].data, s, len) == 0)
			return ix;
	return 0;
}

/* Doubles the table (only while `next` has not wrapped: indices are handed
 * out in order, so 1 .. cap-1 are all in use). */
static int strtab_grow(struct strtab *t)
{
	uint32_t cap = t->cap ? 2 * t->cap : 64, mask = 2 * cap - 1;
	struct strent *ent;
	uint32_t *hash;
	uint16_t *bucket;

	ent = realloc(t->ent, cap * sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	memset(ent + t->cap, 0, (cap - t->cap) * sizeof(*ent));
	t->ent = ent;
	hash = realloc(t->hash, cap * sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	t->hash = hash;
	bucket = calloc(2 * (size_t)cap, sizeof(*bucket));
	if (!bucket)
		return -ENOMEM;
	for (uint32_t ix = 1; ix < t->cap; ix++)
		if (ent[ix].data)
			bucket_insert(bucket, mask, hash[ix], (uint16_t)ix);
	free(t->bucket);
	t->bucket = bucket;
	t->cap = cap;
	return 0;
}

/* Forgets the registration at `ix` (it is about to be made again). */
static void strtab_drop(struct strtab *t, uint16_t ix)
{
	bucket_remove(t->bucket, 2 * t->cap - 1, t->hash, ix);
	free(t->ent[ix].data);
	t->ent[ix].data = NULL;
	t->ent[ix].gen = 0;
}

/* Registers s at the next index (replacing its oldest registration once all
 * are in use) and writes the string record.  Returns the index, 0 on error. */
static uint16_t strtab_add(struct fxt_writer *w, struct strtab *t, const char *s, size_t len,
			   uint32_t h)
{
	uint16_t ix;
	uint64_t *rec;
	size_t n;
	char *copy;

	if (t->next >= t->cap && (t->cap > FXT_MAX_STRING_INDEX || strtab_grow(t) < 0))
		return 0;
	ix = t->next;
	copy = malloc(len);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	n = fxt_enc_string(NULL, 0, ix, s, len);
	rec = fxt_writer_reserve(w, n);
	if (!rec) {
		free(copy);
		return 0;
	}
	fxt_enc_string(rec, n, ix, s, len);
	fxt_writer_commit(w, n);

	if (t->ent[ix].data)
		strtab_drop(t, ix);
	t->ent[ix].data = copy;
	t->ent[ix].len = (uint32_t)len;
	t->ent[ix].gen = next_gen(w);
	t->hash[ix] = h;
	bucket_insert(t->bucket, 2 * t->cap - 1, h, ix);
	t->next = ix == FXT_MAX_STRING_INDEX ? 1 : ix + 1;
	return ix;
}

struct fxt_sref fxt_writer_string(struct fxt_writer *w, const char *s, size_t len)
{
	struct strtab *t = &w->cur->st;
	uint32_t h;
	uint16_t ix;

	len = fxt_utf8_cut(s, len, FXT_MAX_STRING_LEN);
	if (len == 0)
		return fxt_sref_empty();
	h = (uint32_t)fxt__hash_bytes(s, len);
	ix = strtab_find(t, s, len, h);
	if (ix && fifo_distance(ix, t->next, FXT_MAX_STRING_INDEX) < STRING_GUARD) {
		strtab_drop(t, ix);
		ix = 0;
	}
	if (!ix)
		ix = strtab_add(w, t, s, len, h);
	return ix ? fxt_sref_index(ix) : fxt_sref_inline(s, len);
}

uint32_t fxt_writer_registrations(const struct fxt_writer *w)
{
	return w->gen;
}

struct fxt_sref fxt_writer_cstring(struct fxt_writer *w, const char *s)
{
	return fxt_writer_string(w, s, strlen(s));
}

struct fxt_sref fxt_writer_string_cached(struct fxt_writer *w, struct fxt_string_slot *slot,
					 const char *s, size_t len)
{
	const struct strtab *t = &w->cur->st;
	struct fxt_sref r;

	/* Generations are unique per writer, across providers: a match means
	 * this very registration is still in force. */
	if (slot->index < t->cap && slot->generation != 0 &&
	    t->ent[slot->index].gen == slot->generation &&
	    fifo_distance(slot->index, t->next, FXT_MAX_STRING_INDEX) >= STRING_GUARD)
		return fxt_sref_index(slot->index);
	r = fxt_writer_string(w, s, len);
	if (r.ref != FXT_STRREF_EMPTY && !fxt_strref_is_inline(r.ref)) {
		slot->index = r.ref;
		slot->generation = w->cur->st.ent[r.ref].gen;
	}
	return r;
}

static uint8_t thrtab_find(const struct thrtab *t, uint64_t pid, uint64_t tid, uint32_t h)
{
	const uint32_t mask = THREAD_BUCKETS - 1;
	uint32_t i;
	uint16_t ix;

	for (i = h & mask; (ix = t->bucket[i]) != 0; i = (i + 1) & mask)
		if (t->ent[ix].pid == pid && t->ent[ix].tid == tid)
			return (uint8_t)ix;
	return 0;
}

static void thrtab_drop(struct thrtab *t, uint8_t ix)
{
	bucket_remove(t->bucket, THREAD_BUCKETS - 1, t->hash, ix);
	t->ent[ix].gen = 0;
}

static uint8_t thrtab_add(struct fxt_writer *w, struct thrtab *t, uint64_t pid, uint64_t tid,
			  uint32_t h)
{
	uint8_t ix = (uint8_t)t->next;
	uint64_t *rec = fxt_writer_reserve(w, 3);

	if (!rec)
		return 0;
	fxt_enc_thread(rec, 3, ix, pid, tid);
	fxt_writer_commit(w, 3);
	if (t->ent[ix].gen)
		thrtab_drop(t, ix);
	t->ent[ix].pid = pid;
	t->ent[ix].tid = tid;
	t->ent[ix].gen = next_gen(w);
	t->hash[ix] = h;
	bucket_insert(t->bucket, THREAD_BUCKETS - 1, h, ix);
	t->next = ix == FXT_MAX_THREAD_INDEX ? 1 : ix + 1;
	return ix;
}

struct fxt_tref fxt_writer_thread(struct fxt_writer *w, uint64_t pid, uint64_t tid)
{
	struct thrtab *t = &w->cur->tt;
	uint32_t h = (uint32_t)fxt__hash_pair(pid, tid);
	uint8_t ix = thrtab_find(t, pid, tid, h);

	if (ix && fifo_distance(ix, t->next, FXT_MAX_THREAD_INDEX) < THREAD_GUARD) {
		thrtab_drop(t, ix);
		ix = 0;
	}
	if (!ix)
		ix = thrtab_add(w, t, pid, tid, h);
	return ix ? fxt_tref_index(ix) : fxt_tref_inline(pid, tid);
}

struct fxt_tref fxt_writer_thread_cached(struct fxt_writer *w, struct fxt_thread_slot *slot,
					 uint64_t pid, uint64_t tid)
{
	const struct thrtab *t = &w->cur->tt;
	struct fxt_tref r;

	if (slot->generation != 0 && t->ent[slot->index].gen == slot->generation &&
	    fifo_distance(slot->index, t->next, FXT_MAX_THREAD_INDEX) >= THREAD_GUARD)
		return fxt_tref_index(slot->index);
	r = fxt_writer_thread(w, pid, tid);
	if (r.index != FXT_THREADREF_INLINE) {
		slot->index = r.index;
		slot->generation = t->ent[r.index].gen;
	}
	return r;
}
