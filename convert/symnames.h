/* The conversion's name table: per unique function address, its names
 * (symbolized once), the writer's string slots for them and their refs as
 * event header bits.  Private to convert/.
 *
 * An event of a recently seen function costs one compare (a direct-mapped
 * cache in front of an open-addressing hash table) and one epoch check:
 * its refs stay valid while the table's epoch has not moved, that is
 * while no string was registered (and so none evicted) since.  Whoever
 * may have registered a string bumps the epoch.
 *
 * Names: a libc call (a CALL record's frame identity) is named after the
 * wrapped function (spool/libc_table.h), CONV_AGENT_PC "fxtrace", any
 * other address by the symbol lookup: function and module, "?" and "" when
 * unknown, and the function's source location when the lookup gives one
 * (fxt_sym_info.loc; the emitter writes it once, include/fxt/format.h,
 * FXT_OBJ_FUNCTION; FXT_SYM_LOC_LATER: asked again when its record is
 * due).
 */
#ifndef FXT_CONVERT_SYMNAMES_H
#define FXT_CONVERT_SYMNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "convert/pipeline.h"

/* Entries of the direct-mapped cache in front of the hash table. */
#define RECENT 256u

struct sym_entry {
	uint64_t addr;
	const char *name, *cat;
	char *owned; /* the name when made here ("libc#N"), freed with the table */
	size_t name_len, cat_len;
	struct fxt_string_slot name_slot, cat_slot;
	/* The refs last returned by the writer, valid while table->epoch is
	 * still `epoch`: no string was registered since, so none evicted. */
	struct fxt_sref name_ref, cat_ref;
	uint64_t ref_bits; /* the refs in an event header word, for the same epoch */
	uint64_t epoch;
	/* The name's ref as an argument's value (a libc call's caller),
	 * valid while the table's epoch is still val_epoch (conv_emit_call()). */
	uint16_t val_ref;
	uint64_t val_epoch;
	/* Where the function is in the source (fxt_sym_info.loc), or NULL;
	 * loc_done once its record is written (or there is none to write). */
	const char *loc;
	size_t loc_len;
	uint32_t loc_file, loc_line; /* its parts (fxt_sym_info's; 0: not said) */
	struct fxt_string_slot loc_slot;
	bool loc_done;
	/* The lookup said FXT_SYM_LOC_LATER: loc is asked of the table's
	 * loc_later when its record is due; `later` links the entries whose
	 * records wait for the end of the thread (conv_names_take_later()). */
	bool loc_later;
	struct sym_entry *later;
	/* With loc_args (emit.h), for the same epoch: the argument "loc" as
	 * one word (both refs indexed), 0 when it cannot be (no location, or
	 * an inline ref: the general encoder then). */
	uint64_t loc_word;
};

/* Entries are made in blocks that never move: a pointer to one stays
 * good while the table grows (callers hold several at once). */
#define SYM_BLOCK 256u
struct sym_block {
	struct sym_block *next;
	size_t used;
	struct sym_entry e[SYM_BLOCK];
};

struct sym_table {
	struct sym_entry **v;	  /* open addressing on addr; NULL = free */
	size_t cap, used;	  /* cap is a power of two */
	struct sym_block *blocks; /* the newest first */
	conv_lookup_fn *lookup;	  /* symbols, or NULL: every function is "?" */
	void *lookup_ctx;
	conv_loc_fn *loc_later; /* conv_input's, with lookup_ctx */
	/* The entries whose location records wait, the last first. */
	struct sym_entry *later;
	uint64_t epoch; /* bumped whenever a string may have been registered */
	/* A direct-mapped cache of recent entries: most events hit it. */
	struct sym_entry *recent[RECENT];
};

/* An empty table naming addresses with `lookup` (may be NULL), and the
 * locations it says FXT_SYM_LOC_LATER with `loc_later`. */
void conv_names_init(struct sym_table *t, conv_lookup_fn *lookup, conv_loc_fn *loc_later,
		     void *lookup_ctx);
void conv_names_free(struct sym_table *t);

/* The entry of `addr` when it is not in the cache: found or made (and
 * symbolized).  NULL when out of memory. */
struct sym_entry *conv_names_get_slow(struct sym_table *t, uint64_t addr);

/* The entry of `addr`, symbolized on first sight: one compare for the
 * recent ones.  NULL when out of memory. */
static inline struct sym_entry *conv_names_get(struct sym_table *t, uint64_t addr)
{
	struct sym_entry *e = t->recent[(addr >> 4) & (RECENT - 1)];

	if (__builtin_expect(e && e->addr == addr, 1))
		return e;
	return conv_names_get_slow(t, addr);
}

/* A location that comes later (e->loc_later) now due: with `now`, asked
 * of the table's loc_later (which may wait), in e->loc: true; else e noted
 * for conv_names_take_later(): false. */
bool conv_names_loc_due(struct sym_table *t, struct sym_entry *e, bool now);

/* The entries noted by conv_names_loc_due(), each with its location asked
 * now, linked by `later` in the order they were noted; the table's list
 * then empty. */
struct sym_entry *conv_names_take_later(struct sym_table *t);

/* The identity of the function holding `pc`, for a stack chart
 * (stackchart.h; `table` is a struct sym_table): its entry address, or
 * `pc` when unknown. */
uint64_t conv_names_fn_of(void *table, uint64_t pc);

#endif /* FXT_CONVERT_SYMNAMES_H */
