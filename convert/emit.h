/* The conversion's event emission: a thread's reconstructed frames (the
 * sink of its recon, recon.h) as FXT events through the writer.  Private
 * to convert/.
 *
 *  - Frames without entries, nearly all: complete events of indexed refs,
 *    3 words each, encoded straight into the writer's buffer (the hot
 *    path: one name-table compare and an epoch check per event).
 *  - Frames with entries (libc calls, entries.h), complete: when every
 *    entry is a fixed-size argument (a caller, a pointer, a size, a
 *    result: nearly all), encoded straight into the writer's buffer
 *    (emitcall.c), the refs of their names cached per epoch.  Else
 *    through the writer's general encoder, the entries as arguments, then
 *    the frame's flow events strictly inside it.
 *  - Begun frames: a begin and an end event, the frame's arguments on the
 *    end.
 *  - A function's source location, once, before its first event
 *    (include/fxt/format.h, FXT_OBJ_FUNCTION), or after the thread's
 *    events when the lookup had it later; with loc_args, also on each of
 *    its slices (4 words on the hot path: the argument is one).
 *  - Marks: the thread's drop instant ("fxt: N records dropped") and its
 *    log lines (a log record and an instant event each, loglines.h).
 */
#ifndef FXT_CONVERT_EMIT_H
#define FXT_CONVERT_EMIT_H

#include <stdint.h>

#include <fxt/writer.h>

#include "convert/entries.h"
#include "convert/pipeline.h"
#include "convert/loglines.h"
#include "convert/symnames.h"
#include "convert/timebase.h"
#include "spool/libc_table.h"
#include "convert/recon.h"

/* What the emitters of one conversion share. */
#define EMIT_CALLERS 256u /* a power of two */

struct emit_common {
	struct fxt_writer *w;
	struct sym_table names;
	struct fxt_string_slot key_slots[KEY_COUNT]; /* argument names */
	uint8_t key_len[KEY_COUNT];		     /* and their lengths, 0: not known yet */
	/* Their refs, valid while names.epoch is still key_epoch[key]
	 * (conv_emit_call()). */
	uint16_t key_ref[KEY_COUNT];
	uint64_t key_epoch[KEY_COUNT];
	/* What a ONCE record's slice of each function needs but its
	 * caller's name and its values (conv_emit_once()), valid while
	 * names.epoch is still `epoch`: its name and category refs, its
	 * arguments' name refs ("caller" 0: not known). */
	struct emit_once {
		uint64_t epoch;
		uint64_t ref_bits;
		uint16_t caller_key, val_key, res_key;
		uint8_t res_type; /* the records' (recon_once): one per function */
		/* Its words but the thread, caller's name and values: the
		 * header's (with a caller, without one), "caller"'s, the
		 * argument's, the result's (0: none). */
		uint64_t hdr_caller, hdr, caller_hdr, val_hdr, res_hdr;
	} once[AGENT_FN_COUNT];
	/* Their callers' names (a return address - 1 and the ref of its
	 * function's name, valid for the epoch above it): a look-up that
	 * stays in the cache, where the name table's entry seldom is. */
	struct emit_caller {
		uint64_t pc;
		uint64_t epoch_ref; /* epoch << 16 | ref */
	} callers[EMIT_CALLERS];
	char *scratch;	   /* EMIT_SCRATCH bytes: strings of one event */
	struct conv_tb tb; /* every timestamp written is conv_tb_ns() of its ticks */
	struct conv_stats *st;
	conv_signature_fn *signature; /* conv_input's */
	void *signature_ctx;
	/* The last signature asked for, and the string slots of the names of
	 * arguments (interned once: a signature's strings keep their
	 * address), by their address. */
	uint64_t sig_addr;
	const struct fxt_signature *sig;
	struct {
		const char *name;
		struct fxt_string_slot slot;
	} arg_names[64];
	/* fxt-run --srcline: each slice of a function with a location gets
	 * the argument FXT_LOC_ARG (include/fxt/format.h), one word more on
	 * the hot path. */
	bool loc_args;
	struct fxt_string_slot loc_key_slot, loc_module_slot;
	/* The location's file, line and inlined keys, and the last file's
	 * ref (its functions come together): FILE of "FILE:LINE" once per
	 * file, not the text per function (conv_emit_loc()).  loc_words:
	 * the module's key, the file's key and ref, the line's key, as
	 * interned when the writer's registrations were loc_regs (valid for
	 * FXT_WRITER_REF_LIFE more: kept for half of them), for the file
	 * loc_file; loc_words_ok: all indexed. */
	struct fxt_string_slot loc_file_key_slot, loc_line_key_slot, loc_inl_key_slot;
	struct fxt_string_slot loc_file_slot;
	size_t loc_file_len; /* of the file loc_file_slot is for, 0: none */
	char loc_file[256];
	struct fxt_sref loc_mod_key, loc_file_key, loc_file_ref, loc_line_key;
	uint32_t loc_regs;
	bool loc_words_ok;
};
#define EMIT_SCRATCH (FXT_MAX_ARGS * (STR_MAX + 64) + MESSAGE_MAX)

/* One track's emitter: the recon sink's context. */
struct emit_ctx {
	struct fxt_writer *w;
	struct sym_table *names;
	struct emit_common *com;
	/* A template: type and thread set once; per event only the times
	 * and refs change (zeroing a struct per event is measurable). */
	struct fxt_event ev;
	uint64_t dropped;     /* for the drop instant (the recon's mark) */
	uint32_t drop_cause;  /* its cause argument (SPOOL_CAUSE_*); 0: none */
	uint64_t overwritten; /* for the overwrite instant (likewise) */
	/* The header word of this thread's complete events but their refs
	 * (0 when the thread ref is inline: no fast path). */
	uint64_t hdr;
	uint64_t hdr_loc; /* the same with one argument of one word (loc_args) */
	/* The thread's log lines, whose marks bring them out; NULL: none. */
	struct log_lines *logs;
	/* Calls left out (FXT_MIN_DURATION), by function; NULL: none. */
	struct short_calls *shorts;
	/* Event records written on the track, for the conversion's counts
	 * (fxt/counts.h): a thread with one counts, and so does a log record,
	 * which always comes with its instant. */
	uint64_t events;
};

/* An emitter for thread `tid` of process `pid`, which dropped `dropped`
 * records, with its log lines in `logs` (may be NULL).  Registers the
 * thread with the writer. */
void conv_emit_init(struct emit_ctx *ctx, struct emit_common *com, uint64_t pid, uint64_t tid,
		    uint64_t dropped, struct log_lines *logs);

/* The source location of the function of `e`, once per thread's names,
 * before its first event (include/fxt/format.h, FXT_OBJ_FUNCTION):
 * nothing when written already or unknown.  One that comes later
 * (e->loc_later) is noted instead (conv_names_loc_due()), unless loc_args
 * (the slices need its string: asked for now, which may wait); called
 * again for it after the thread's events (conv_names_take_later()).  A
 * writer error stays the writer's, which the conversion returns. */
void conv_emit_loc(struct emit_ctx *ctx, struct sym_entry *e);

/* A string value: cleaned into *scratch (advanced), cut at `max` bytes,
 * as an inline ref (paths and log lines are mostly unique). */
struct fxt_sref conv_inline_value(char **scratch, const char *s, size_t len, size_t max);

/* The arguments and return value of a patched call's frame (its REG
 * entries, l) as FXT arguments into args (room for `cap`), strings into
 * *scratch: how many.  (emitargs.c) */
unsigned conv_fn_args(struct emit_ctx *ctx, uint64_t addr, const struct recon_args *l,
		      struct fxt_arg *args, unsigned cap, char **scratch);

/* The refs of a function's name and category, interned on first use and
 * after any possible eviction, in ctx->ev and as header bits in the entry. */
void conv_function_refs(struct emit_ctx *ctx, struct sym_entry *e);

/* An argument's name (an entry's key), interned once per key. */
struct fxt_sref conv_arg_name(struct emit_ctx *ctx, unsigned key);

/* The complete event of the closed frame `v` whose entries are `l`,
 * written straight into the writer's buffer, the same words as the
 * general encoder's (emitcall.c): 1 when written, 0 when the general
 * encoder must write it (an entry that is not a fixed-size argument, a
 * location to write), or the writer's error. */
int conv_emit_call(struct emit_ctx *ctx, const struct recon_slot *v, const struct recon_args *l);

/* The recon sink's `once` (recon.h): the slices s[0 .. n) of ONCE
 * records o[0 .. n), each written as conv_emit_call() would write it with
 * its entries, in one reservation of the writer's buffer, while every
 * string it refers to is registered for the table's epoch (its
 * function's, its arguments' names, its caller's name).  Returns how
 * many were written, from the first: the one after them (if any) takes
 * the general way, which registers what it needs, so that the next one
 * is written here; or the writer's error. */
int conv_emit_once(void *ctx, const struct recon_slot *s, const struct recon_once *o, size_t n);

/* The recon sink: its context is a struct emit_ctx. */
extern const struct recon_sink conv_sink;

/* The drop instant "fxt: N records dropped" (N = ctx->dropped) at `ts`
 * (ticks), with the argument "cause" that says ctx->drop_cause
 * (pipeline.h), counted in the conversion's counts.  0 or -errno. */
int conv_emit_drops(struct emit_ctx *ctx, uint64_t ts);

/* The instant "fxt: N records overwritten" at `ts`, N = ctx->overwritten. */
int conv_emit_overwritten(struct emit_ctx *ctx, uint64_t ts);

#endif /* FXT_CONVERT_EMIT_H */
