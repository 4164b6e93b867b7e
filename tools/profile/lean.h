/* The profile engine's lean stack (lean.c) and the general stack
 * machine's ways out that it calls (profile.c): private to
 * tools/profile/. */
#ifndef FXT_TOOLS_LEAN_H
#define FXT_TOOLS_LEAN_H

#include <stddef.h>
#include <stdint.h>

#include <fxt/reader.h>

#include "tools/profile/profile-int.h"

/* add_plain() of the complete events whose times are ns (RECPIPE_NS)
 * that come first in it[0 .. n), for a lean profile (profile.c's
 * profile_lean()): the same steps, p->last_reader set already, the counts
 * and the span kept in locals (sums, a least and a most: what the general
 * path does to them meanwhile adds up the same).  Returns how many it
 * took; *rc < 0 on an error. */
size_t profile__lean_run(struct profile *p, const struct fxt_plain *it, size_t n, int *rc);

/* Moves t's lean frames onto the general stack, as push_complete() would
 * have pushed them (their numbers are the same: no ledger entry is made
 * while the lean stack holds frames, and their rows' open counts were
 * taken when they were pushed).  0 or -ENOMEM. */
int profile__lean_spill(struct profile *p, struct thread *t);

/* profile.c's push_complete() of a slice the lean stack cannot take. */
int profile__lean_general(struct profile *p, struct thread *t, uint64_t s, uint64_t e,
			  uint32_t row);

/* profile.c's retire_started() on an empty lean stack, t->lean_ok set
 * when it returns 0 (the general stack's top is then an open frame
 * without an end). */
int profile__lean_retire(struct profile *p, struct thread *t, uint64_t s, uint64_t e);

/* profile.c's row_of() of a lean event whose refs missed the cache. */
int64_t profile__lean_row_miss(struct profile *p, const struct fxt_plain *e);

#endif /* FXT_TOOLS_LEAN_H */
