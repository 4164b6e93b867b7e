/* Private to tools/fxt-dump: a small hash map and the --check analysis. */
#ifndef FXT_TOOLS_DUMP_H
#define FXT_TOOLS_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/reader.h>

/* ------------------------------------------------------------- pairmap
 * Open-addressing map from a pair of 64-bit keys (pid and tid, or an id
 * and 0) to a 64-bit value.  Grows as needed; never shrinks. */
struct pairmap_slot {
	uint64_t a, b, value;
	bool used;
};

struct pairmap {
	struct pairmap_slot *slots;
	size_t nslots, count;
};

void pairmap_init(struct pairmap *m);
void pairmap_free(struct pairmap *m);
/* The value slot of (a, b), inserted with *created = true and value 0 when
 * new.  NULL when out of memory.  Valid until the next insertion. */
uint64_t *pairmap_get(struct pairmap *m, uint64_t a, uint64_t b, bool *created);
/* The value of (a, b), or NULL if absent. */
uint64_t *pairmap_find(const struct pairmap *m, uint64_t a, uint64_t b);
/* Removes (a, b) if present. */
void pairmap_del(struct pairmap *m, uint64_t a, uint64_t b);

/* -------------------------------------------------------------- checker
 * What `fxt-dump --check` adds to the reader's own checks: duration begin
 * and end pairing, flows that never close, and complete events that partly
 * overlap a sibling on their thread.  Findings go to `report`. */
struct checker;

int checker_new(struct checker **c, fxt_diag_fn report, void *ctx);
/* Feeds one decoded record.  Returns 0 or -ENOMEM. */
int checker_record(struct checker *c, const struct fxt_record *rec);
/* Reports what only the end of the archive shows. */
void checker_finish(struct checker *c);
void checker_free(struct checker *c);

#endif /* FXT_TOOLS_DUMP_H */
