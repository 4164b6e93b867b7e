/* The records of a spool chunk: what each 16-byte slot means.  Written by
 * the agent (agent/tbuf.h for hook records, agent/events.h and
 * agent/libc/libc.h for the others), read by the converter (convert/); the one
 * owner of the slots' bit layout.  The file around the chunks is
 * spool/format.h.
 *
 * A slot is two little-endian words {w0, w1}.  A hook record is
 *
 *	w0 = ts    raw ticks
 *	w1 = addr  the function's address; bit 63 (SPOOL_EXIT_BIT) set on exit
 *
 * Code addresses are below 2^56, so bits 56..62 of w1 are free: a non-zero
 * value there is a TAG, and the slot belongs to one of the tagged records
 * below.  Tags 1..63 name a record; a w1 with bit 62 set and bit 63 clear
 * (tags 64..127) is a PAIR.  w1 is never 0 in a written slot (readers skip
 * slots whose w1 is 0: never written).
 *
 *  PAIR   w0 = ts    the enter's raw ticks
 *         w1 = [63 0] [62 1] [61:47 duration] [46:0 fn - EV_PAIR_FN_MIN]
 *         A hook enter and its exit in one slot: a call that called
 *         nothing (a leaf), entered at ts and left at ts + duration
 *         (ticks, at most EV_PAIR_DUR_MAX).  It reads as the enter record
 *         {ts, fn} followed by the exit {ts + duration, fn |
 *         SPOOL_EXIT_BIT}, at the enter's place.  Only the exit hook of
 *         the -finstrument-functions hooks writes it
 *         (agent_record_exit(), agent/tbuf.h), and the --patch exit
 *         trampoline's fast path as it does (agent/patch/tramp.S), and
 *         only where the slot
 *         just before the thread's next free one, in the same chunk, is
 *         the enter {ts, fn} of its own function: it turns that slot's w1
 *         into the PAIR's in one 8-byte store (w0 stays), and takes no
 *         slot of its own.  Where it does not fit (fn past EV_PAIR_FN_MAX or
 *         below EV_PAIR_FN_MIN, a duration past EV_PAIR_DUR_MAX or
 *         "negative", the enter in another chunk, any record between the
 *         two: a signal handler's, a libc call's, a REG) the exit is the
 *         plain hook record.  A RAW slot is payload: a HOOKV exit's last
 *         one, whose w1 (rdx) could equal fn, is followed by a zero slot
 *         when it could (agent/patch/rt.c); an entry's, or a string's,
 *         is never last before an exit hook but when the patched call's
 *         own exit went unrecorded.  So a reader that goes slot by slot sees
 *         either the enter (the exit not written yet) or the PAIR, never
 *         a half.  The word just before a chunk's first slot (the chunk
 *         header's `state`, spool/format.h) is below EV_PAIR_FN_MIN, so
 *         the first slot's exit never takes the header for an enter.
 *         Filters, --patch's full way (a call whose values are read
 *         included), the non-TSC clock and libc wrappers write the plain
 *         form.
 *
 * A record is one slot or a head slot followed by payload slots, at most
 * EV_MAX_SLOTS, written under one reservation, so its slots are
 * consecutive in the thread's chunk.  A reader that finds a payload slot
 * without its head (a torn record) skips it: every payload slot is tagged.
 *
 *  CALL   w0 = ts
 *         w1 = [63 exit] [62:56 tag] [55:47 fn] [46:0 payload]
 *         A wrapped libc call, nested like a function frame: fn is the
 *         index into the table of spool/libc_table.h.  Enter: payload = the
 *         caller's return address.  Exit: payload = the result, 47-bit
 *         two's complement for AGENT_RES_INT and AGENT_RES_ERRNO, unsigned
 *         for AGENT_RES_PTR; EV_RESULT_SPILLED when the result did not fit
 *         (an ARG with key AGENT_KEY_RESULT, written just before the exit
 *         slot in the same record, holds it).
 *  ARG    w0 = value
 *         w1 = [62:56 tag] [15:8 type] [7:0 key]
 *         An argument of the innermost open frame (a CALL).
 *  STR    w0 = length in bytes
 *         w1 = [62:56 tag] [16 truncated] [7:0 key]
 *         A string argument of the innermost open frame, followed by
 *         ceil(length / 14) DATA slots.
 *  DATA   w0 = bytes 0..7, w1 = [62:56 tag] [47:0 bytes 8..13]
 *         (little-endian: byte k of the slice is byte k of w0, then of w1.)
 *  FLOW   w0 = flow id
 *         w1 = [62:56 tag] [10 at end] [9:8 phase]
 *         A flow event bound to the innermost open frame: phase 0 begin,
 *         1 step, 2 end; placed just after the frame's start, or just
 *         before its end with "at end" (for an end that must come after a
 *         begin recorded by another thread while this frame was open).
 *  SYNC   w0 = address of the object (mutex, rwlock, cond, sem)
 *         w1 = [62:56 tag] [7:0 op]
 *         What a sync call did, inside its CALL frame; the flusher pairs
 *         them into flows (an unlock with the lock acquisition that had
 *         waited, ...).
 *  LOG    w0 = ts
 *         w1 = [62:56 tag] [47:40 syslog priority] [39:32 stream]
 *              [31:0 length]
 *         Bytes the program wrote to stdout or stderr (or a syslog
 *         message), followed by ceil(length / 14) DATA slots.  Lines are
 *         assembled at flush time, per thread and stream.
 *  COUNTER w0 = ts
 *         w1 = [62:56 tag] [55:48 counter] [47:0 signed delta]
 *         A change of a process-wide counter (heap bytes in use) since
 *         this thread's previous COUNTER record of it.
 *  SAMPLE w0 = ts
 *         w1 = [62:56 tag] [47:16 periods] [11 waited] [10:9 unsampled]
 *              [8 agent] [7:0 depth]
 *         A stack sample (innermost frame first), followed by
 *         ceil(depth / 2) FRAME slots.  periods: the sampling periods of
 *         CPU time the thread used since its previous sample (0, from an
 *         older agent: unknown); waited: the thread gave up the CPU
 *         (blocked, slept) since then.  agent: the thread was inside the
 *         agent's own code (a hook, a chunk refill, a wrapper's
 *         recording), whatever the innermost frames are (a libc call of
 *         the agent's).  A SAMPLE of depth 0 with `unsampled` set (enum
 *         ev_unsampled) says that from its time on the thread is not
 *         sampled, and why.
 *  FRAME  w0 = pc, w1 = [62:56 tag] [55:0 next pc or 0]
 *  PIPE   w0 = offset in the pipe's byte stream (session.h)
 *         w1 = [62:56 tag] [55:48 op] [47:0 pipe key]
 *         followed by one DATA-tagged slot: w0 = byte count.
 *         A write to or read from a pipe or socket, inside its CALL frame.
 *  ONCE   w0 = ts
 *         w1 = [62:56 tag] [55:47 fn] [46:0 caller]
 *         followed by one ONCE_ARG slot:
 *         w0 = the argument's value
 *         w1 = [62:56 tag] [55:47 fn] [46:0 result payload]
 *         A whole libc call in two slots, written after it returned, with
 *         one timestamp: the compact form of a CALL enter at ts with its
 *         caller, an ARG, a SYNC on the argument's object when the call
 *         makes one, and the CALL exit at ts with the result, for the
 *         calls agent_fn_once() (spool/libc_table.h) names: the hot ones
 *         (malloc, free, an uncontended mutex lock, an unlock, ...).
 *         Which key and type the argument has and which SYNC op the
 *         call makes are agent_fn_once()'s; a call that failed with an
 *         errno, or whose result does not fit the payload, takes the
 *         full form.
 *  REG    w0 = the register's contents (an XMM register's low 64 bits)
 *         w1 = [62:56 tag] [55:53 string] [52:48 reg] [47 truncated]
 *              [46:0 fn]
 *         A register read at the entry or return of a patched function
 *         fn (fxt-run --args/--retval, run/argspec.h): reg is an enum
 *         fxt_reg.  At the entry it follows the hook record, at the
 *         return it comes before it; it belongs to the innermost open
 *         frame only if that frame is fn's (a filter may have left the
 *         entry out).  "string" 0: w0 is the register.  1..5: the
 *         register held a pointer to a string, read up to its NUL (never
 *         part of it) or FXT_ARG_STR_MAX bytes: w0 is its bytes 0..7, the
 *         string - 1 RAW slots after it bytes 8.., 16 a slot
 *         (ev_reg_str_raw()), zeros after the string, whose length is
 *         thus where its first zero byte is; "truncated": not all of it.
 *         EV_REG_STR_UNREADABLE: none could be read, w0 is the pointer.
 *  HOOKV  w0 = ts
 *         w1 = [63 exit] [62:56 tag] [53:48 regs] [46:0 fn]
 *         A patched function's entry (or exit) hook record with integer
 *         registers read there, written instead of the hook record and
 *         its REG records when they go in one reservation: regs has bit i
 *         for enum fxt_reg FXT_REG_GPR0 + i at the entry, FXT_REG_RAX + i
 *         at the exit; their values follow in ceil(n / 2) RAW slots, two
 *         a slot (the last one's second word 0 when n is odd), in the
 *         order of their bits.  The values belong to fn's frame as a
 *         REG's do.
 *  RAW    16 bytes of payload, untagged: only its head says what it is.
 *         Readers that go slot by slot skip ev_raw_slots(head's w1) slots
 *         after a head; a record's head is written before its RAW slots.
 */
#ifndef FXT_SPOOL_RECORDS_H
#define FXT_SPOOL_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ slots */

#define SPOOL_RECORD_SIZE 16u	       /* bytes per slot */
#define SPOOL_EXIT_BIT	  (1ull << 63) /* w1 of an exit hook */

/* The most slots one record takes: writers reserve no more at once, so
 * readers need no longer string. */
#define EV_MAX_SLOTS 160u

/* ------------------------------------------------------------ tags */

enum ev_tag {
	EV_TAG_NONE = 0, /* a hook record */
	EV_TAG_CALL = 1,
	EV_TAG_ARG = 2,
	EV_TAG_STR = 3,
	EV_TAG_DATA = 4,
	EV_TAG_FLOW = 5,
	EV_TAG_SYNC = 6,
	EV_TAG_LOG = 7,
	EV_TAG_COUNTER = 8,
	EV_TAG_SAMPLE = 9,
	EV_TAG_FRAME = 10,
	EV_TAG_PIPE = 11,
	EV_TAG_REG = 12,
	EV_TAG_HOOKV = 13,
	EV_TAG_ONCE = 14,
	EV_TAG_ONCE_ARG = 15,
};

#define EV_TAG_SHIFT 56
#define EV_TAG_MASK  0x7full
#define EV_TAG_BITS  (EV_TAG_MASK << EV_TAG_SHIFT) /* 0 in a hook record */
#define EV_EXIT_BIT  SPOOL_EXIT_BIT

static inline unsigned ev_tag(uint64_t w1)
{
	return (unsigned)((w1 >> EV_TAG_SHIFT) & EV_TAG_MASK);
}

static inline uint64_t ev_tag_bits(unsigned tag)
{
	return (uint64_t)tag << EV_TAG_SHIFT;
}

/* The bits of w1 below the tag: a hook record's address, a FRAME's pc. */
#define EV_ADDR_MASK ((1ull << EV_TAG_SHIFT) - 1)

/* ------------------------------------------------------------ PAIR */

#define EV_PAIR_BIT	  (1ull << 62)
#define EV_PAIR_DUR_SHIFT 47
#define EV_PAIR_DUR_MAX	  ((1ull << 15) - 1) /* ticks */
#define EV_PAIR_FN_MASK	  ((1ull << EV_PAIR_DUR_SHIFT) - 1)
/* The least fn a PAIR holds (more than any chunk header's last word), and
 * the greatest: it holds fn - EV_PAIR_FN_MIN, in 47 bits. */
#define EV_PAIR_FN_MIN 16u
#define EV_PAIR_FN_MAX (EV_PAIR_FN_MASK + EV_PAIR_FN_MIN)

static inline bool ev_is_pair(uint64_t w1)
{
	return (w1 >> 62) == 1;
}

static inline uint64_t ev_pair_fn(uint64_t w1)
{
	return (w1 & EV_PAIR_FN_MASK) + EV_PAIR_FN_MIN;
}

static inline uint64_t ev_pair_dur(uint64_t w1)
{
	return (w1 >> EV_PAIR_DUR_SHIFT) & EV_PAIR_DUR_MAX;
}

/* Whether a call of fn that lasted `dur` ticks (an unsigned difference: a
 * clock gone back is huge) fits a PAIR. */
static inline bool ev_pair_fits(uint64_t fn, uint64_t dur)
{
	/* One compare: fn - EV_PAIR_FN_MIN (huge below it) under 2^47 and
	 * dur under 2^15. */
	return (((fn - EV_PAIR_FN_MIN) >> (EV_PAIR_DUR_SHIFT - 15)) | dur) <= EV_PAIR_DUR_MAX;
}

/* A PAIR's w1 (ev_pair_fits(fn, dur)). */
static inline uint64_t ev_pair_w1(uint64_t fn, uint64_t dur)
{
	return EV_PAIR_BIT | dur << EV_PAIR_DUR_SHIFT | (fn - EV_PAIR_FN_MIN);
}

/* ------------------------------------------------------------ CALL */

#define EV_FN_SHIFT	  47
#define EV_FN_MASK	  0x1ffu /* 9 bits: up to 512 wrapped functions */
#define EV_PAYLOAD_MASK	  ((1ull << 47) - 1)
#define EV_RESULT_SPILLED (1ull << 46) /* as a payload: see ARG */
#define EV_CALL_ADDR(fn)  (ev_tag_bits(EV_TAG_CALL) | ((uint64_t)(fn) << EV_FN_SHIFT))
#define EV_CALL_ADDR_MASK (~(EV_EXIT_BIT | EV_PAYLOAD_MASK))

static inline unsigned ev_call_fn(uint64_t w1)
{
	return (unsigned)((w1 >> EV_FN_SHIFT) & EV_FN_MASK);
}

/* A signed result as a payload, or EV_RESULT_SPILLED when it does not fit
 * (-2^46 itself is spilled too: it is the marker). */
static inline uint64_t ev_int_payload(int64_t v)
{
	if (v <= -(1ll << 46) || v >= (1ll << 46))
		return EV_RESULT_SPILLED;
	return (uint64_t)v & EV_PAYLOAD_MASK;
}

static inline int64_t ev_payload_int(uint64_t payload)
{
	return (int64_t)(payload << 17) >> 17;
}

static inline uint64_t ev_ptr_payload(uint64_t v)
{
	return v > EV_PAYLOAD_MASK || v == EV_RESULT_SPILLED ? EV_RESULT_SPILLED : v;
}

/* ------------------------------------------------------------ ONCE */

/* A ONCE head of `fn` called from `caller`, and its ONCE_ARG slot's w1
 * with the result `payload` (not EV_RESULT_SPILLED). */
static inline uint64_t ev_once_w1(unsigned fn, uint64_t caller)
{
	return ev_tag_bits(EV_TAG_ONCE) | ((uint64_t)fn << EV_FN_SHIFT) |
	       (caller & EV_PAYLOAD_MASK);
}

static inline uint64_t ev_once_arg_w1(unsigned fn, uint64_t payload)
{
	return ev_tag_bits(EV_TAG_ONCE_ARG) | ((uint64_t)fn << EV_FN_SHIFT) |
	       (payload & EV_PAYLOAD_MASK);
}

/* ------------------------------------------------------------ ARG */

enum ev_arg_type {
	EV_ARG_I64 = 0,	  /* signed integer */
	EV_ARG_U64 = 1,	  /* unsigned integer */
	EV_ARG_PTR = 2,	  /* a data address (shown as a pointer) */
	EV_ARG_CODE = 3,  /* a code address: symbolized at flush, a string */
	EV_ARG_ERRNO = 4, /* an errno value: shown by name ("ENOENT") */
	EV_ARG_BOOL = 5,
};

static inline uint64_t ev_arg_w1(unsigned key, enum ev_arg_type type)
{
	return ev_tag_bits(EV_TAG_ARG) | ((uint64_t)type << 8) | (key & 0xffu);
}

/* The key of an ARG or a STR (an agent_key, spool/libc_table.h). */
static inline unsigned ev_key(uint64_t w1)
{
	return (unsigned)(w1 & 0xff);
}

/* The type of an ARG (enum ev_arg_type; later agents may add types). */
static inline unsigned ev_arg_type(uint64_t w1)
{
	return (unsigned)((w1 >> 8) & 0xff);
}

/* ------------------------------------------------------------ STR, DATA */

#define EV_DATA_BYTES	 14u /* bytes per DATA slot */
#define EV_STR_TRUNCATED (1ull << 16)

/* A STR head; `flags` is 0 or EV_STR_TRUNCATED. */
static inline uint64_t ev_str_w1(unsigned key, uint64_t flags)
{
	return ev_tag_bits(EV_TAG_STR) | flags | (key & 0xffu);
}

static inline unsigned ev_data_slots(size_t len)
{
	return (unsigned)((len + EV_DATA_BYTES - 1) / EV_DATA_BYTES);
}

/* Fills DATA slots from `s` (len bytes; the last slot's tail is zero). */
static inline void ev_put_data(uint64_t *p, const char *s, size_t len)
{
	while (len) {
		uint64_t a = 0, b = 0;
		size_t k = len < 8 ? len : 8;

		memcpy(&a, s, k);
		if (len > 8)
			memcpy(&b, s + 8, len - 8 < 6 ? len - 8 : 6);
		p[0] = a;
		p[1] = ev_tag_bits(EV_TAG_DATA) | b;
		p += 2;
		s += len < EV_DATA_BYTES ? len : EV_DATA_BYTES;
		len -= len < EV_DATA_BYTES ? len : EV_DATA_BYTES;
	}
}

/* Reads `len` bytes of DATA slots into `out` (which has room for them). */
static inline void ev_get_data(const uint64_t *p, char *out, size_t len)
{
	while (len) {
		uint64_t b = p[1] & ((1ull << 48) - 1);
		size_t k = len < 8 ? len : 8;

		memcpy(out, &p[0], k);
		if (len > 8)
			memcpy(out + 8, &b, len - 8 < 6 ? len - 8 : 6);
		p += 2;
		out += len < EV_DATA_BYTES ? len : EV_DATA_BYTES;
		len -= len < EV_DATA_BYTES ? len : EV_DATA_BYTES;
	}
}

/* ------------------------------------------------------------ REG, HOOKV */

#define EV_REG_STR_SHIFT      53
#define EV_REG_STR_MASK	      7ull
#define EV_REG_STR_UNREADABLE (6ull << EV_REG_STR_SHIFT) /* w0: the pointer */
#define EV_REG_STR_TRUNCATED  (1ull << 47)
#define EV_REG_FN	      ((1ull << 47) - 1)
#define EV_REG_STR_HEAD	      8u  /* a string's bytes in its REG's w0 */
#define EV_RAW_BYTES	      16u /* bytes of a RAW slot */

/* A REG of a register's value (no string). */
static inline uint64_t ev_reg_w1(unsigned reg, uint64_t fn)
{
	return ev_tag_bits(EV_TAG_REG) | ((uint64_t)(reg & 0x1f) << 48) | (fn & EV_REG_FN);
}

/* The RAW slots after the REG of a string of `len` bytes. */
static inline unsigned ev_reg_str_raw(size_t len)
{
	return len <= EV_REG_STR_HEAD
		   ? 0
		   : (unsigned)((len - EV_REG_STR_HEAD + EV_RAW_BYTES - 1) / EV_RAW_BYTES);
}

/* A REG of a string of `len` bytes (<= FXT_ARG_STR_MAX), cut if
 * `truncated`. */
static inline uint64_t ev_reg_str_w1(unsigned reg, uint64_t fn, size_t len, bool truncated)
{
	return ev_reg_w1(reg, fn) | (uint64_t)(1 + ev_reg_str_raw(len)) << EV_REG_STR_SHIFT |
	       (truncated ? EV_REG_STR_TRUNCATED : 0);
}

static inline unsigned ev_reg_num(uint64_t w1)
{
	return (unsigned)((w1 >> 48) & 0x1f);
}

static inline uint64_t ev_reg_fn(uint64_t w1)
{
	return w1 & EV_REG_FN;
}

/* A REG's "string": 0 a value, 1..5 a string, 6 unreadable (7: none yet,
 * taken for unreadable). */
static inline unsigned ev_reg_str(uint64_t w1)
{
	return (unsigned)((w1 >> EV_REG_STR_SHIFT) & EV_REG_STR_MASK);
}

#define EV_HOOKV_REGS_SHIFT 48
#define EV_HOOKV_REGS_MASK  0x3fu

/* A HOOKV of fn's entry, or exit when `exit`, with the registers `regs`
 * (bit i: FXT_REG_GPR0 + i, or FXT_REG_RAX + i at the exit). */
static inline uint64_t ev_hookv_w1(uint64_t fn, bool exit, unsigned regs)
{
	return (exit ? EV_EXIT_BIT : 0) | ev_tag_bits(EV_TAG_HOOKV) |
	       (uint64_t)(regs & EV_HOOKV_REGS_MASK) << EV_HOOKV_REGS_SHIFT | (fn & EV_REG_FN);
}

static inline unsigned ev_hookv_regs(uint64_t w1)
{
	return (unsigned)((w1 >> EV_HOOKV_REGS_SHIFT) & EV_HOOKV_REGS_MASK);
}

/* How many values a HOOKV's regs name (no popcnt: the baseline x86-64
 * lacks it). */
static inline unsigned ev_hookv_count(unsigned regs)
{
	return (unsigned)((0x4332322132212110ull >> (4 * (regs & 15))) & 15) +
	       (unsigned)((0x2110u >> (4 * ((regs >> 4) & 3))) & 15);
}

/* The hook address a HOOKV stands for: fn, with SPOOL_EXIT_BIT at an
 * exit. */
static inline uint64_t ev_hookv_addr(uint64_t w1)
{
	return (w1 & EV_REG_FN) | (w1 & EV_EXIT_BIT);
}

/* The RAW slots after a head whose second word is w1 (0 for every record
 * but a string's REG and a HOOKV). */
static inline unsigned ev_raw_slots(uint64_t w1)
{
	unsigned tag = ev_tag(w1), s;

	if (tag == EV_TAG_HOOKV)
		return (ev_hookv_count(ev_hookv_regs(w1)) + 1) / 2;
	if (tag != EV_TAG_REG)
		return 0;
	s = ev_reg_str(w1);
	return s >= 1 && s <= 5 ? s - 1 : 0;
}

/* The most RAW slots a string's REG has ("string" 5). */
#define EV_REG_STR_RAW_MAX 4u

/* A string's REG written in place, its length not known yet: the head
 * first, w1 a REG of a value (ev_reg_w1()) made one of a string with
 * EV_REG_STR_RAW_MAX RAW slots, so that a reader of a torn record skips
 * them all; then the string's bytes as ev_reg_str_seal() says. */
static inline uint64_t ev_reg_str_open_w1(uint64_t w1)
{
	return w1 | (uint64_t)(1 + EV_REG_STR_RAW_MAX) << EV_REG_STR_SHIFT;
}

/* The REG at p opened with ev_reg_str_open_w1(), its string's bytes
 * written in place, as this layout puts them (bytes 0..7 in p[0], 8.. from
 * p + 2 on), up to at least byte `len` (whatever is past it, up to the
 * end of the last RAW slot of a string of EV_REG_STR_RAW_MAX), or
 * unreadable (`len` 0, w0 the pointer again): zeros past len, then its
 * head.  The slots the record takes (those past it were not written:
 * w1 0, skipped by readers). */
static inline unsigned ev_reg_str_seal(uint64_t *p, size_t len, bool truncated, bool unreadable)
{
	unsigned reg = ev_reg_num(p[1]), raw = ev_reg_str_raw(len), last = 2 * raw;
	uint64_t fn = ev_reg_fn(p[1]);

	if (unreadable) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		p[1] = ev_reg_w1(reg, fn) | EV_REG_STR_UNREADABLE;
		return 1;
	}
	if (len / 8 <= last) { /* the word of byte len: what is past it 0 */
		size_t k = len / 8;
		uint64_t *w = k ? &p[k + 1] : &p[0];

		*w &= (1ull << (8 * (len % 8))) - 1;
		if (k < last) /* (never more than one word more) */
			p[k + 2] = 0;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the bytes before the head that counts them */
	p[1] = ev_reg_str_w1(reg, fn, len, truncated);
	return 1 + raw;
}

/* The words of the REG of a string of `len` bytes of s (len <=
 * FXT_ARG_STR_MAX, no NUL among them): its w0 at p[0], its RAW slots from
 * p + 2 on, zeros past len.  Reads s a word at a time, up to the end of
 * the last RAW slot: s must have room for EV_REG_STR_HEAD +
 * ev_reg_str_raw(len) * EV_RAW_BYTES bytes.  (Tests build records with
 * it; the agent writes a string in place, ev_reg_str_seal().) */
static inline void ev_reg_put_str(uint64_t *p, const char *s, size_t len)
{
	unsigned words = 1 + 2 * ev_reg_str_raw(len);

	for (unsigned k = 0; k < words; k++) {
		size_t at = 8 * (size_t)k;
		uint64_t a;

		__builtin_memcpy(&a, s + at, 8);
		if (len < at + 8)
			a = len > at ? a & ((1ull << (8 * (len - at))) - 1) : 0;
		p[k ? k + 1 : 0] = a;
	}
}

/* A walk slot by slot over a block [.., stop) that skipped RAW slots
 * up to p: how many it has still to skip at the next block's start. */
static inline size_t ev_raw_skip(const uint64_t *p, const uint64_t *stop)
{
	return p > stop ? (size_t)(p - stop) / 2 : 0;
}

/* The string of a REG at p (string 1..5) whose `raw` RAW slots follow (as
 * many as there are: fewer for a torn record) into out (room for
 * EV_REG_STR_HEAD + raw * EV_RAW_BYTES bytes); its length. */
static inline size_t ev_reg_get_str(const uint64_t *p, unsigned raw, char *out)
{
	size_t n = EV_REG_STR_HEAD + (size_t)raw * EV_RAW_BYTES, len = 0;

	memcpy(out, &p[0], EV_REG_STR_HEAD);
	memcpy(out + EV_REG_STR_HEAD, p + 2, (size_t)raw * EV_RAW_BYTES);
	while (len < n && out[len])
		len++;
	return len;
}

/* ------------------------------------------------------------ FLOW */

enum ev_flow_phase { EV_FLOW_BEGIN = 0, EV_FLOW_STEP = 1, EV_FLOW_END = 2 };
#define EV_FLOW_AT_END (1ull << 10)

static inline uint64_t ev_flow_w1(enum ev_flow_phase phase, bool at_end)
{
	return ev_tag_bits(EV_TAG_FLOW) | (at_end ? EV_FLOW_AT_END : 0) | ((uint64_t)phase << 8);
}

/* A FLOW's phase: enum ev_flow_phase, or 3 (no phase: ignored). */
static inline unsigned ev_flow_phase(uint64_t w1)
{
	return (unsigned)((w1 >> 8) & 3);
}

/* Flow ids are unique across the processes of one trace:
 *   [63:60] kind  [59:32] pid (28 bits)  [31:0] per-kind sequence
 * A fork flow is [63:60] EV_FLOWID_FORK [59:30] parent pid [29:0] child
 * pid, which parent and child can both compute. */
enum ev_flowid_kind {
	EV_FLOWID_LOCAL = 1,  /* paired inside one process (threads, sync) */
	EV_FLOWID_FORK = 2,   /* fork -> child */
	EV_FLOWID_PIPE = 3,   /* pipe/socket write -> read (session.h) */
	EV_FLOWID_THREAD = 4, /* pthread_create -> the thread */
};

static inline uint64_t ev_flow_id(enum ev_flowid_kind kind, uint64_t pid, uint32_t seq)
{
	return ((uint64_t)kind << 60) | ((pid & 0xfffffffull) << 32) | seq;
}

static inline uint64_t ev_fork_flow_id(uint64_t ppid, uint64_t cpid)
{
	return ((uint64_t)EV_FLOWID_FORK << 60) | ((ppid & 0x3fffffffull) << 30) |
	       (cpid & 0x3fffffffull);
}

/* ------------------------------------------------------------ SYNC */

enum ev_sync_op {
	EV_SYNC_UNLOCK = 1,	 /* mutex or rwlock released */
	EV_SYNC_LOCK_WAITED = 2, /* acquired after having to wait */
	EV_SYNC_SIGNAL = 3,	 /* pthread_cond_signal */
	EV_SYNC_BROADCAST = 4,	 /* pthread_cond_broadcast */
	EV_SYNC_WOKEN = 5,	 /* a cond wait that returned 0 */
	EV_SYNC_POST = 6,	 /* sem_post */
	EV_SYNC_SEM_WAITED = 7,	 /* a sem_wait that had to wait */
	EV_SYNC_BARRIER = 8,	 /* pthread_barrier_wait returned */
};

static inline uint64_t ev_sync_w1(enum ev_sync_op op)
{
	return ev_tag_bits(EV_TAG_SYNC) | (unsigned)op;
}

static inline unsigned ev_sync_op(uint64_t w1)
{
	return (unsigned)(w1 & 0xff);
}

/* ------------------------------------------------------------ LOG */

enum ev_log_stream {
	EV_LOG_STDOUT = 1,
	EV_LOG_STDERR = 2,
	EV_LOG_SYSLOG = 3,
};
#define EV_LOG_MAX_RECORD 1024u /* bytes per LOG record (longer writes: more records) */

/* A LOG head of `len` (< 2^32) bytes. */
static inline uint64_t ev_log_w1(enum ev_log_stream stream, unsigned prio, uint64_t len)
{
	return ev_tag_bits(EV_TAG_LOG) | (uint64_t)(prio & 0xffu) << 40 |
	       (uint64_t)((unsigned)stream & 0xffu) << 32 | len;
}

static inline unsigned ev_log_stream(uint64_t w1)
{
	return (unsigned)((w1 >> 32) & 0xff);
}

static inline unsigned ev_log_prio(uint64_t w1)
{
	return (unsigned)((w1 >> 40) & 0xff);
}

static inline uint64_t ev_log_len(uint64_t w1)
{
	return w1 & 0xffffffffu;
}

/* ------------------------------------------------------------ COUNTER */

enum ev_counter { EV_COUNTER_HEAP = 1 };
#define EV_DELTA_MASK ((1ull << 48) - 1)

static inline uint64_t ev_counter_w1(enum ev_counter counter, int64_t delta)
{
	return ev_tag_bits(EV_TAG_COUNTER) | ((uint64_t)counter << 48) |
	       ((uint64_t)delta & EV_DELTA_MASK);
}

static inline unsigned ev_counter_id(uint64_t w1)
{
	return (unsigned)((w1 >> 48) & 0xff);
}

static inline int64_t ev_counter_delta(uint64_t w1)
{
	return (int64_t)(w1 << 16) >> 16;
}

/* ------------------------------------------------------------ SAMPLE */

#define EV_SAMPLE_MAX_DEPTH 128u

#define EV_SAMPLE_AGENT	      (1ull << 8)
#define EV_SAMPLE_WAITED      (1ull << 11)
#define EV_SAMPLE_MAX_PERIODS 0xffffffffull

/* Why a thread is not sampled (a SAMPLE of depth 0). */
enum ev_unsampled {
	EV_UNSAMPLED_NONE = 0,
	/* It blocks SIGPROF, which the program handles itself (its handler
	 * must not run where the program blocked it). */
	EV_UNSAMPLED_SIGPROF_USED = 1,
	/* A SIGPROF of the program's came while the thread blocked SIGPROF:
	 * the agent gave the thread its mask back, to leave the signal
	 * pending for the program as it would have been. */
	EV_UNSAMPLED_SIGPROF_PENDING = 2,
	/* Its CPU-time timer could not be created. */
	EV_UNSAMPLED_NO_TIMER = 3,
};

static inline uint64_t ev_sample_w1(unsigned depth)
{
	return ev_tag_bits(EV_TAG_SAMPLE) | depth;
}

/* A sample of `depth` frames standing for `periods` (capped), taken inside
 * the agent's own code when `in_agent`, after the thread waited when
 * `waited`. */
static inline uint64_t ev_sample_w1_full(unsigned depth, uint64_t periods, bool in_agent,
					 bool waited)
{
	if (periods > EV_SAMPLE_MAX_PERIODS)
		periods = EV_SAMPLE_MAX_PERIODS;
	return ev_sample_w1(depth) | periods << 16 | (in_agent ? EV_SAMPLE_AGENT : 0) |
	       (waited ? EV_SAMPLE_WAITED : 0);
}

/* The head of "not sampled from here on, for `why`". */
static inline uint64_t ev_unsampled_w1(enum ev_unsampled why)
{
	return ev_sample_w1(0) | ((uint64_t)why & 3) << 9;
}

static inline unsigned ev_sample_depth(uint64_t w1)
{
	return (unsigned)(w1 & 0xff);
}

static inline uint64_t ev_sample_periods(uint64_t w1)
{
	return (w1 >> 16) & EV_SAMPLE_MAX_PERIODS;
}

static inline bool ev_sample_waited(uint64_t w1)
{
	return (w1 & EV_SAMPLE_WAITED) != 0;
}

static inline bool ev_sample_agent(uint64_t w1)
{
	return (w1 & EV_SAMPLE_AGENT) != 0;
}

static inline enum ev_unsampled ev_sample_unsampled(uint64_t w1)
{
	return ev_sample_depth(w1) ? EV_UNSAMPLED_NONE : (enum ev_unsampled)((w1 >> 9) & 3);
}

/* A FRAME whose second pc is `pc` (0: none). */
static inline uint64_t ev_frame_w1(uint64_t pc)
{
	return ev_tag_bits(EV_TAG_FRAME) | (pc & EV_ADDR_MASK);
}

/* A FRAME's second pc, or 0. */
static inline uint64_t ev_frame_pc(uint64_t w1)
{
	return w1 & EV_ADDR_MASK;
}

/* ------------------------------------------------------------ PIPE */

enum ev_pipe_op { EV_PIPE_WRITE = 0, EV_PIPE_READ = 1 };
#define EV_PIPE_KEY_MASK ((1ull << 48) - 1)

/* A PIPE head; the DATA slot after it holds the byte count. */
static inline uint64_t ev_pipe_w1(unsigned op, uint64_t key)
{
	return ev_tag_bits(EV_TAG_PIPE) | (uint64_t)op << 48 | (key & EV_PIPE_KEY_MASK);
}

static inline unsigned ev_pipe_op(uint64_t w1)
{
	return (unsigned)((w1 >> 48) & 0xff);
}

static inline uint64_t ev_pipe_key(uint64_t w1)
{
	return w1 & EV_PIPE_KEY_MASK;
}

#endif /* FXT_SPOOL_RECORDS_H */
