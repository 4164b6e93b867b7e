/* Stack reconstruction: a thread's raw enter/exit records -> properly
 * nested duration events in START order.  Private to convert/.
 *
 * Perfetto drops a complete event that partly overlaps a sibling, so the
 * intervals handed to the sink must nest exactly, whatever the records say:
 *
 *  - timestamps are made strictly increasing per thread (a record older
 *    than the previous one, e.g. across a TSC hiccup, or equal to it, is
 *    moved to previous + 1 step), so no two starts coincide.  A step is
 *    the ticks of one nanosecond (recon_set_step(); 1 tick by default):
 *    readers, Perfetto first, place events in nanoseconds, where two
 *    times a tick apart may be one (a TSC ticks 2-4 times a nanosecond),
 *    and a flow at the end of one call then lands in the next;
 *  - an exit whose function is not on top of the stack but deeper (frames
 *    left by longjmp or by records that were skipped) closes every frame
 *    above it at the same time, then itself;
 *  - an exit whose function is not on the stack at all (its enter happened
 *    before tracing, e.g. in a fork child) is counted and ignored;
 *  - frames still open at the end are closed by recon_finish().
 *
 * Start order: a frame's event is emitted before the events of its
 * descendants (parents first, siblings by start time), which lets streaming
 * readers attach each slice to its ancestors in bounded memory.  A frame's
 * complete event can only be written once it has closed, so events wait in
 * a per-thread FIFO of output slots, in start order: an enter appends a
 * slot, an exit fills its frame's slot with the end time, and the filled
 * slots at the FIFO's front are emitted as complete events.  The FIFO is
 * bounded: when it is full, its front frame (necessarily still open, since
 * filled fronts are always emitted at once) is emitted as a duration BEGIN
 * event now and leaves the FIFO ("begun"); when a begun frame closes,
 * everything still in the FIFO (its descendants, all closed by then) is
 * emitted, then a duration END event.  So memory is bounded by the FIFO and
 * the stack depth, and all but a few calls (the frames that stay open
 * across FIFO-fulls: outer loops, deep recursions) cost one complete event.
 *
 * The stack is an explicit, growing array: a 1,000,000-deep recursion costs
 * 32 MB of heap (a frame is 32 bytes) and no C stack.
 *
 * Arguments: recon_arg() attaches an opaque entry (the conversion's: a libc
 * call's arguments, its flow events) to the innermost open frame; the
 * list goes to the sink with the frame's complete event, or with its END
 * when the frame was begun, and is kept for another frame once emitted
 * (recon.spare).  Each entry moves the thread's time on by a step, so a
 * frame with k entries lasts at least k + 1 steps and instants can be
 * placed strictly inside it.
 *
 * Speed: recon_feed() is inline and its common cases (an enter with room,
 * the exit of the top frame) touch a few words; closed slots leave the FIFO
 * in runs, handed to the sink's `slices` callback as an array, so the
 * conversion encodes them in a tight loop.
 *
 * Short calls (recon_set_min()): a frame that closes shorter than the
 * bound, with no arguments, is not emitted; the sink's `short_call` gets
 * its function, duration and self time instead (and whether no other
 * frame of the function is open, so that a recursion's time is counted
 * once, as an inclusive total is), and a frame that is emitted gets
 * `short_children` with the time of its children that were not, so that
 * the sink can keep every function's calls and times exact.  Off (the
 * default), the hot path pays one branch.
 */
#ifndef FXT_CONVERT_RECON_H
#define FXT_CONVERT_RECON_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrtab.h"
#include "fxt/depth.h"

#include "spool/format.h"

/* A frame's arguments (recon_arg()): a list of entries owned by the
 * recon, handed to the sink with the frame and reused once emitted (no
 * allocation for the common short lists).
 * The entries are opaque to the recon: the conversion chooses their keys and
 * types.  Entry i is at `v[i]`; its bytes (a string, `len` long) at
 * `bytes + v[i].off`. */
struct recon_arg {
	uint32_t key;
	uint32_t type;
	uint64_t value;
	uint32_t off, len; /* its bytes, if any */
};

#define RECON_ARGS_SMALL  4u  /* entries ... */
#define RECON_BYTES_SMALL 64u /* ... and bytes kept in the list itself */

struct recon_args {
	uint32_t n, cap;     /* entries */
	uint32_t used, room; /* bytes */
	struct recon_arg *v; /* `small` until the list outgrows it */
	char *bytes;	     /* `small_bytes` likewise */
	struct recon_arg small[RECON_ARGS_SMALL];
	char small_bytes[RECON_BYTES_SMALL];
	struct recon_args *next; /* on the recon's spares (recon.spare) */
};

/* A FIFO slot: a frame in start order, open while end is 0 (a closed
 * frame ends after its start, so at 1 or later); or a mark (addr has
 * RECON_MARK_BIT; start is its time).  A frame's arguments are kept
 * beside the FIFO (recon.fifo_args), so that the slots of the many frames
 * without any stay 24 bytes. */
struct recon_slot {
	uint64_t addr;
	uint64_t start;
	uint64_t end;
};
#define RECON_MARK_BIT SPOOL_EXIT_BIT

enum recon_kind {
	RECON_BEGIN, /* addr, start (end is 0) */
	RECON_END,   /* addr, end (start = the frame's start) */
	RECON_MARK,  /* a recon_mark(): addr = its cookie, start = end = ts */
};

/* A libc call's ONCE record (spool/records.h) as the sink's `once`
 * takes it: the entries recon_leaf() would be given, by what they are.
 * The frame's entries are, in this order, "caller" (ARGT_RETURN, when
 * caller is not 0), argument `key` of `type` = `value`, and "result"
 * (EV_ARG_I64 or EV_ARG_PTR by `res_type`, none when it is 0) =
 * `result`; `fn` names the function (spool/libc_table.h: below
 * AGENT_FN_COUNT; the sink's caches are by it).  `steps`: the entries
 * and the idle steps recon_leaf() would be given, plus 1 (the frame's
 * length in the recon's steps). */
struct recon_once {
	uint64_t caller, value, result;
	uint16_t fn;
	uint8_t key, type, res_type; /* res_type: 0 none, else EV_ARG_I64 + 1 or EV_ARG_PTR + 1 */
	uint8_t steps;
};

struct recon_sink {
	/* `n` closed frames, in start order: complete events.  `args`, when
	 * not NULL, holds their arguments (args[i] for v[i], NULL if none);
	 * NULL when none of them has any. */
	int (*slices)(void *ctx, const struct recon_slot *v, struct recon_args *const *args,
		      size_t n);
	/* The rare rest: begin and end events of begun frames, marks.  A
	 * begun frame's arguments come with its END (NULL otherwise). */
	int (*event)(void *ctx, enum recon_kind kind, uint64_t addr, uint64_t start, uint64_t end,
		     const struct recon_args *args);
	/* Short calls (recon_set_min()): a frame of `addr` left out, `dur`
	 * and `self` ticks long, `outer` when no other frame of addr was open;
	 * a frame emitted whose left-out children took `ticks`.  May be NULL
	 * when the recon has no bound. */
	int (*short_call)(void *ctx, uint64_t addr, uint64_t dur, uint64_t self, int outer);
	int (*short_children)(void *ctx, uint64_t addr, uint64_t ticks);
	/* May be NULL: the closed frames s[0 .. n) of ONCE records o[0 ..
	 * n) (recon_leaf_once()), in start order, written as they are,
	 * without entry lists: how many were written, from the first (the
	 * next one, which the sink cannot write, comes again through
	 * `slices` with its entries), or -errno. */
	int (*once)(void *ctx, const struct recon_slot *s, const struct recon_once *o, size_t n);
};

/* Default bound of the FIFO, in slots (24 bytes each). */
#define RECON_FIFO_MAX (64u << 10)

struct recon_frame {
	uint64_t addr;
	uint64_t start;
	uint64_t slot;		 /* its FIFO slot's sequence number (unless begun) */
	struct recon_args *args; /* a begun frame's arguments (its slot's before) */
	/* Short calls only: its closed children's time, and that of those
	 * left out. */
	uint64_t child, left_out;
};

/* A slot left out (short calls): skipped when the FIFO drains. */
#define RECON_OMIT_BIT (1ull << 62)
_Static_assert(((uint64_t)EV_TAG_PIPE << EV_TAG_SHIFT) < RECON_OMIT_BIT,
	       "frame identities (tags below 64) stay below RECON_OMIT_BIT");

/* How many frames of a function are open on a thread (recon.open). */
struct recon_open {
	uint64_t addr;
	uint64_t n;
};

struct recon {
	/* The stack; frames 0 .. nbegun-1 are begun (the front of the FIFO
	 * is always the oldest open frame, so begun frames are a prefix). */
	struct recon_frame *stack;
	size_t depth, cap, nbegun;
	/* The FIFO: a ring of fifo_cap slots (a power of two, grown on demand
	 * up to fifo_max); slots head .. tail-1 (sequence numbers) are live. */
	struct recon_slot *fifo;
	/* The arguments of the frames in the FIFO, parallel to it (NULL
	 * until a frame gets one); an entry is NULL unless its slot is live
	 * and has arguments, so the hot path never touches it. */
	struct recon_args **fifo_args;
	size_t fifo_cap, fifo_max;
	uint64_t head, tail;
	uint64_t last_ts;   /* last adjusted timestamp; 0 before the first record */
	uint64_t step;	    /* "later" is this many ticks later (recon_set_step()) */
	uint64_t unmatched; /* exits without an enter */
	uint64_t emitted;   /* frames emitted (complete events and begun frames) */
	uint64_t begun;	    /* frames emitted as begin/end pairs */
	uint64_t nargs;	    /* argument lists alive (0: nothing to free on drain) */
	/* Argument lists emitted, for the next frames (at most as many as
	 * were ever alive at once). */
	struct recon_args *spare;
	/* The frames emitted that Perfetto does not show (fxt/depth.h),
	 * counted as they open and uncounted when left out (short calls),
	 * and the depth of the deepest of them, else 0. */
	uint64_t deep;
	size_t max_depth;
	const struct recon_sink *sink;
	void *ctx;
	/* Short calls: the bound in ticks (0: off), and how many frames of
	 * each function are open (an open-addressing table, by address). */
	uint64_t min;
	struct addrtab open; /* struct recon_open, by function */
	uint64_t left_out;   /* frames left out */
};

/* `fifo_max`: the FIFO bound in slots (rounded up to a power of two, at
 * least 2); 0 means RECON_FIFO_MAX.  Small values are for tests. */
void recon_init(struct recon *r, const struct recon_sink *sink, void *ctx, size_t fifo_max);

/* Makes "later" mean `ticks` later (at least 1): the ticks of a
 * nanosecond, rounded up, so that times made distinct stay distinct in
 * nanoseconds (see above). */
void recon_set_step(struct recon *r, uint64_t ticks);

/* Leaves out the frames that close shorter than `ticks` (see above); the
 * sink then needs `short_call` and `short_children`.  0: none. */
void recon_set_min(struct recon *r, uint64_t ticks);

/* The out-of-line cases of recon_feed() and its drain. */
int recon__enter_slow(struct recon *r, uint64_t fn, uint64_t ts);
int recon__exit_slow(struct recon *r, uint64_t fn, uint64_t ts);
int recon__drain(struct recon *r);
int recon__feed_min(struct recon *r, uint64_t ts, uint64_t addr);

/* recon_feed() without short calls. */
static inline __attribute__((always_inline)) int recon__feed(struct recon *r, uint64_t ts,
							     uint64_t addr)
{
	if (__builtin_expect(r->last_ts && ts <= r->last_ts, 0))
		ts = r->last_ts + r->step;
	r->last_ts = ts;
	if (!(addr & SPOOL_EXIT_BIT)) {
		if (__builtin_expect(fxt__depth_hidden(r->depth), 0)) {
			r->deep++;
			if (r->depth > r->max_depth)
				r->max_depth = r->depth;
		}
		if (__builtin_expect(r->depth < r->cap && r->tail - r->head < r->fifo_cap, 1)) {
			struct recon_slot *s = &r->fifo[r->tail & (r->fifo_cap - 1)];
			struct recon_frame *f = &r->stack[r->depth++];
			s->addr = addr;
			s->start = ts;
			s->end = 0;
			f->addr = addr;
			f->start = ts;
			f->slot = r->tail++;
			return 0;
		}
		return recon__enter_slow(r, addr, ts);
	}
	addr &= ~SPOOL_EXIT_BIT;
	if (__builtin_expect(r->depth > r->nbegun && r->stack[r->depth - 1].addr == addr, 1)) {
		uint64_t seq = r->stack[--r->depth].slot;
		r->fifo[seq & (r->fifo_cap - 1)].end = ts;
		return seq == r->head ? recon__drain(r) : 0;
	}
	return recon__exit_slow(r, addr, ts);
}

/* One record: ts in ticks, addr with SPOOL_EXIT_BIT for an exit.  Returns 0,
 * -ENOMEM, or the first error of the sink. */
static inline __attribute__((always_inline)) int recon_feed(struct recon *r, uint64_t ts,
							    uint64_t addr)
{
	if (__builtin_expect(r->min != 0, 0))
		return recon__feed_min(r, ts, addr);
	return recon__feed(r, ts, addr);
}

/* The innermost open frame's address (without SPOOL_EXIT_BIT), or
 * UINT64_MAX when no frame is open. */
static inline uint64_t recon_top(const struct recon *r)
{
	return r->depth ? r->stack[r->depth - 1].addr : UINT64_MAX;
}

/* Attaches an argument to the innermost open frame: a copy of `*a` and of
 * its `a->len` bytes at `bytes` (a->off is set by the recon), and moves
 * the thread's time on by one step, so that a frame with k arguments lasts
 * at least k + 1 steps (room for instants strictly inside it).  With `a`
 * NULL, or no frame open, only the time moves.  Returns 0 or -ENOMEM. */
int recon_arg(struct recon *r, const struct recon_arg *a, const void *bytes);

/* A frame of `addr` entered and left at `ts` with nothing inside it but
 * the entries v[0 .. n) (none with bytes) and `idle` steps more (a libc
 * call's ONCE record): what recon_feed(ts, addr), recon_arg(&v[i], NULL)
 * for each entry, recon_arg(NULL, NULL) `idle` times, then
 * recon_feed(ts, addr | SPOOL_EXIT_BIT) do (where the steps fall among
 * the entries changes nothing), in one call.  When nothing waits in the
 * FIFO (and no short calls), the frame goes to the sink at once, its
 * list v itself (no copy).  Same returns as recon_feed(). */
int recon_leaf(struct recon *r, uint64_t ts, uint64_t addr, const struct recon_arg *v, size_t n,
	       size_t idle);

/* The depth of `n` leaf frames at the recon's depth, counted as
 * recon__enter_slow() counts a frame's. */
static inline __attribute__((always_inline)) void recon__leaf_depth(struct recon *r, uint64_t n)
{
	if (__builtin_expect(fxt__depth_hidden(r->depth), 0)) {
		r->deep += n;
		if (r->depth > r->max_depth)
			r->max_depth = r->depth;
	}
}

/* An enter of `addr` at ts0 whose exit, at ts1, is the thread's next
 * record (a call that called nothing: half of the calls of a recursion
 * like fib's): what recon_feed(ts0, addr) then recon_feed(ts1, addr |
 * SPOOL_EXIT_BIT) do, the same slot with the same times, without the
 * stack's push and pop and without looking for the slot again.  A full
 * FIFO and short calls take recon_feed()'s way.  Same returns. */
static inline __attribute__((always_inline)) int recon_pair(struct recon *r, uint64_t ts0,
							    uint64_t ts1, uint64_t addr)
{
	const uint64_t last = r->last_ts, seq = r->tail;
	struct recon_slot *s;

	if (__builtin_expect(r->min != 0 || seq - r->head >= r->fifo_cap, 0)) {
		int err = recon_feed(r, ts0, addr);
		return err < 0 ? err : recon_feed(r, ts1, addr | SPOOL_EXIT_BIT);
	}
	if (__builtin_expect(last && ts0 <= last, 0))
		ts0 = last + r->step;
	if (__builtin_expect(ts0 && ts1 <= ts0, 0))
		ts1 = ts0 + r->step;
	r->last_ts = ts1;
	recon__leaf_depth(r, 1);
	s = &r->fifo[seq & (r->fifo_cap - 1)];
	s->addr = addr;
	s->start = ts0;
	s->end = ts1;
	r->tail = seq + 1;
	return seq == r->head ? recon__drain(r) : 0;
}

/* recon_leaf() of the frames of n ONCE records, one after the other:
 * s[i].addr and s[i].start (its ts) in, o[i] its entries and o[i].steps,
 * given to the sink's `once` as they are, when the frames would go to
 * the sink at once.  s[i].start and s[i].end are set to the frame's
 * times (those after the ones written as well).  How many the sink
 * wrote, from the first (0: none, nothing changed: call recon_leaf()
 * with the next one's entries); or -errno.  Inline: the replay's loop
 * for nearly every record with --libc=all. */
static inline __attribute__((always_inline)) int
recon_leaf_once(struct recon *r, struct recon_slot *s, const struct recon_once *o, size_t n)
{
	uint64_t last = r->last_ts, step = r->step;
	int ret;

	/* recon_leaf()'s general way: not here. */
	if (!r->sink->once || r->min || r->head != r->tail)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t ts = s[i].start;

		if (!ts) {
			n = i; /* the general way's */
			break;
		}
		if (last && ts <= last)
			ts = last + step;
		s[i].start = ts;
		s[i].end = last = ts + o[i].steps * step;
	}
	if (!n)
		return 0;
	ret = r->sink->once(r->ctx, s, o, n);
	if (ret <= 0)
		return ret;
	recon__leaf_depth(r, (uint64_t)ret);
	r->last_ts = s[ret - 1].end;
	r->emitted += (uint64_t)ret;
	return ret;
}

/* An instant at `ts` (made strictly later than the last record, like a
 * record's), emitted in start order as RECON_MARK with `cookie` (less
 * than 2^63): it lands inside the frames open at that point, after them
 * in the stream.  Same returns as recon_feed(). */
int recon_mark(struct recon *r, uint64_t ts, uint64_t cookie);

/* Closes the frames still open at max(end_ts, last timestamp + 1 step) and
 * emits everything pending.  The recon can be fed again afterwards (it is
 * empty). */
int recon_finish(struct recon *r, uint64_t end_ts);

void recon_free(struct recon *r);

#endif /* FXT_CONVERT_RECON_H */
