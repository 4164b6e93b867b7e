/* What an archive holds, counted (see counts.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/counts.h"
#include "common/hash.h"

static size_t pair_slot(uint64_t a, uint64_t b, size_t cap)
{
	return (size_t)fxt__hash_mix(fxt__hash_word(fxt__hash_word(FXT__HASH_SEED, a), b)) &
	       (cap - 1);
}

/* Puts (a, b) into `slots` of `cap` (a power of 2, not full); true when
 * it was not there. */
static bool pair_put(struct fxt__pair *slots, size_t cap, uint64_t a, uint64_t b)
{
	size_t j = pair_slot(a, b, cap);

	while (slots[j].used) {
		if (slots[j].a == a && slots[j].b == b)
			return false;
		j = (j + 1) & (cap - 1);
	}
	slots[j].a = a;
	slots[j].b = b;
	slots[j].used = 1;
	return true;
}

static int pairs_add(struct fxt__pairs *s, uint64_t a, uint64_t b)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 16;
		struct fxt__pair *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slots[i].used)
				pair_put(ns, ncap, s->slots[i].a, s->slots[i].b);
		free(s->slots);
		s->slots = ns;
		s->cap = ncap;
	}
	s->n += pair_put(s->slots, s->cap, a, b);
	return 0;
}

void fxt__counts_free(struct fxt__counts *c)
{
	free(c->threads.slots);
	free(c->processes.slots);
	c->threads.slots = c->processes.slots = NULL;
	c->threads.cap = c->threads.n = c->processes.cap = c->processes.n = 0;
}

int fxt__counts_thread(struct fxt__counts *c, uint64_t pid, uint64_t tid)
{
	int err = pairs_add(&c->threads, pid, tid);

	return err ? err : pairs_add(&c->processes, pid, 0);
}

int fxt__counts_process(struct fxt__counts *c, uint64_t pid)
{
	return pairs_add(&c->processes, pid, 0);
}

static void keep_cause(struct fxt__counts *c, const char *cause, size_t len)
{
	if (c->cause[0] || !len)
		return;
	if (len >= sizeof(c->cause))
		len = sizeof(c->cause) - 1;
	memcpy(c->cause, cause, len);
	c->cause[len] = '\0';
}

void fxt__counts_drops(struct fxt__counts *c, const char *name, size_t len, const char *cause,
		       size_t cause_len)
{
	uint64_t n = fxt_dropped_in_name(name, len);

	c->dropped += n;
	if (n && cause_len) {
		c->dropped_cause += n;
		keep_cause(c, cause, cause_len);
	}
	c->overwritten += fxt_overwritten_in_name(name, len);
	c->kernel_lost += fxt_kernel_lost_in_name(name, len);
	if (len >= sizeof(FXT_UNSAMPLED_PREFIX) - 1 &&
	    memcmp(name, FXT_UNSAMPLED_PREFIX, sizeof(FXT_UNSAMPLED_PREFIX) - 1) == 0) {
		size_t rest = len - (sizeof(FXT_UNSAMPLED_PREFIX) - 1);

		c->unsampled++;
		for (unsigned i = 1; i < FXT_UNSAMPLED_REASONS; i++) {
			const char *why = fxt_unsampled_reason(i);

			if (strlen(why) == rest && memcmp(name + len - rest, why, rest) == 0)
				c->unsampled_why |= 1u << i;
		}
	}
}

/* The drop cause argument of an instant, or NULL. */
static const struct fxt_string *cause_arg(const struct fxt_record *rec)
{
	static const char key[] = FXT_DROP_CAUSE_ARG;

	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		if (a->type == FXT_ARG_STRING && a->name.len == sizeof(key) - 1 &&
		    memcmp(a->name.data, key, sizeof(key) - 1) == 0)
			return &a->v.s;
	}
	return NULL;
}

int fxt__counts_record(struct fxt__counts *c, const struct fxt_record *rec)
{
	switch (rec->type) {
	case FXT_RECORD_EVENT:
		c->events++;
		if (rec->u.event.type == FXT_EVENT_INSTANT) {
			const struct fxt_string *why = cause_arg(rec);

			fxt__counts_drops(c, rec->u.event.name.data, rec->u.event.name.len,
					  why ? why->data : NULL, why ? why->len : 0);
		}
		return fxt__counts_thread(c, rec->u.event.pid, rec->u.event.tid);
	case FXT_RECORD_LOG:
		return fxt__counts_thread(c, rec->u.log.pid, rec->u.log.tid);
	case FXT_RECORD_KERNEL_OBJECT:
		if (rec->u.kobj.obj_type == FXT_OBJ_PROCESS)
			return fxt__counts_process(c, rec->u.kobj.koid);
		return 0;
	default:
		return 0;
	}
}

int fxt__counts_add(struct fxt__counts *dst, const struct fxt__counts *src)
{
	int err = 0;

	dst->events += src->events;
	dst->dropped += src->dropped;
	dst->dropped_cause += src->dropped_cause;
	keep_cause(dst, src->cause, strlen(src->cause));
	dst->overwritten += src->overwritten;
	dst->kernel_lost += src->kernel_lost;
	dst->unsampled += src->unsampled;
	dst->unsampled_why |= src->unsampled_why;
	for (size_t i = 0; i < src->threads.cap && !err; i++)
		if (src->threads.slots[i].used)
			err = pairs_add(&dst->threads, src->threads.slots[i].a,
					src->threads.slots[i].b);
	for (size_t i = 0; i < src->processes.cap && !err; i++)
		if (src->processes.slots[i].used)
			err = pairs_add(&dst->processes, src->processes.slots[i].a, 0);
	return err;
}
