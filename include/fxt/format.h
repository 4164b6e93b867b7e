/* Fuchsia Trace Format (FXT): constants and bit layouts, in one place.
 *
 * Every record is a sequence of little-endian 64-bit words; the first word is
 * the header.  Fields are written [lo .. hi], inclusive, as in the spec
 * (shared/seeds/000_*.txt, the authoritative revision).  Nothing outside this
 * header and fxt/ should shift or mask FXT bits by hand.
 */
#ifndef FXT_FORMAT_H
#define FXT_FORMAT_H

#include <stdint.h>

/* ----------------------------------------------------------------- limits */

#define FXT_WORD_SIZE		   8u
#define FXT_MAX_RECORD_WORDS	   4095u /* 12-bit size field */
#define FXT_MAX_RECORD_BYTES	   (FXT_MAX_RECORD_WORDS * FXT_WORD_SIZE)
#define FXT_MAX_STRING_INDEX	   0x7fffu     /* string table holds 1 .. 0x7fff */
#define FXT_MAX_THREAD_INDEX	   0xffu       /* thread table holds 1 .. 0xff */
#define FXT_MAX_STRING_LEN	   32000u      /* the spec's conservative limit */
#define FXT_MAX_ARGS		   15u	       /* 4-bit argument count */
#define FXT_MAX_ARG_WORDS	   4095u       /* 12-bit argument size field */
#define FXT_MAX_LARGE_RECORD_WORDS 0xffffffffu /* 32-bit size field */

/* The magic number record, as one little-endian word: 10 00 04 46 78 54 16 00. */
#define FXT_MAGIC_RECORD 0x0016547846040010ull
#define FXT_MAGIC_NUMBER 0x16547846u

/* fxtrace's mark that each thread's events are in time order in this
 * archive (up to a second magic record): the content of a plain string
 * record right after the magic record (fxt_writer_time_ordered()).  A
 * reader that does not know it just registers a string; fxtrace's readers
 * then skip FXT_READER_TIME_ORDER's pass at open. */
#define FXT_TIME_ORDERED_MARK "fxtrace.time-ordered.v1"

/* ----------------------------------------------------------- record types */

enum fxt_record_type {
	FXT_RECORD_METADATA = 0,
	FXT_RECORD_INITIALIZATION = 1,
	FXT_RECORD_STRING = 2,
	FXT_RECORD_THREAD = 3,
	FXT_RECORD_EVENT = 4,
	FXT_RECORD_BLOB = 5,
	FXT_RECORD_USERSPACE_OBJECT = 6,
	FXT_RECORD_KERNEL_OBJECT = 7,
	FXT_RECORD_CONTEXT_SWITCH = 8,
	FXT_RECORD_LOG = 9,
	/* 10 .. 14 are reserved. */
	FXT_RECORD_LARGE = 15,
};

enum fxt_metadata_type {
	/* fxtrace's padding: a metadata record of a type the spec assigns to
	 * nothing, zeros after its header, which readers skip (the spec:
	 * unrecognized records can be skipped).  fxt_writer_move_to_fd()
	 * writes one where an archive's opening records end short of the
	 * events written in place after them. */
	FXT_METADATA_PADDING = 0,
	FXT_METADATA_PROVIDER_INFO = 1,
	FXT_METADATA_PROVIDER_SECTION = 2,
	FXT_METADATA_PROVIDER_EVENT = 3,
	FXT_METADATA_TRACE_INFO = 4,
};

enum fxt_provider_event {
	FXT_PROVIDER_EVENT_BUFFER_FULL = 0, /* "a buffer filled up, records were likely dropped" */
};

enum fxt_trace_info_type {
	FXT_TRACE_INFO_MAGIC = 0,
};

/* The current numbering (the spec revision with duration complete events).
 * An older revision numbered async begin as 4 .. flow end as 9: never write it. */
enum fxt_event_type {
	FXT_EVENT_INSTANT = 0,
	FXT_EVENT_COUNTER = 1,
	FXT_EVENT_DURATION_BEGIN = 2,
	FXT_EVENT_DURATION_END = 3,
	FXT_EVENT_DURATION_COMPLETE = 4,
	FXT_EVENT_ASYNC_BEGIN = 5,
	FXT_EVENT_ASYNC_INSTANT = 6,
	FXT_EVENT_ASYNC_END = 7,
	FXT_EVENT_FLOW_BEGIN = 8,
	FXT_EVENT_FLOW_STEP = 9,
	FXT_EVENT_FLOW_END = 10,
	FXT_EVENT_TYPE_COUNT = 11,
};

enum fxt_arg_type {
	FXT_ARG_NULL = 0,
	FXT_ARG_INT32 = 1,
	FXT_ARG_UINT32 = 2,
	FXT_ARG_INT64 = 3,
	FXT_ARG_UINT64 = 4,
	FXT_ARG_DOUBLE = 5,
	FXT_ARG_STRING = 6,
	FXT_ARG_POINTER = 7,
	FXT_ARG_KOID = 8,
	FXT_ARG_BOOL = 9,
	FXT_ARG_TYPE_COUNT = 10,
};

enum fxt_large_record_type {
	FXT_LARGE_BLOB = 0,
};

enum fxt_large_blob_format {
	FXT_BLOB_FORMAT_EVENT = 0,	/* with timestamp, thread and arguments */
	FXT_BLOB_FORMAT_ATTACHMENT = 1, /* category and name only */
};

enum fxt_blob_type {
	FXT_BLOB_DATA = 1,
	FXT_BLOB_LAST_BRANCH = 2,
};

enum fxt_thread_state {
	FXT_THREAD_NEW = 0,
	FXT_THREAD_RUNNING = 1,
	FXT_THREAD_SUSPENDED = 2,
	FXT_THREAD_BLOCKED = 3,
	FXT_THREAD_DYING = 4,
	FXT_THREAD_DEAD = 5,
};

/* Zircon object types used in kernel object records (zircon/types.h). */
enum fxt_obj_type {
	FXT_OBJ_PROCESS = 1,
	FXT_OBJ_THREAD = 2,
};

/* fxtrace's drop marker.  Perfetto ignores the FXT provider event "buffer
 * full", so the agent also writes an instant event named
 * FXT_DROP_PREFIX "N" FXT_DROP_SUFFIX ("fxt: N records dropped") on each
 * thread that dropped records; fxt_dropped_in_name() (reader.h) reads N. */
#define FXT_DROP_PREFIX "fxt: "
#define FXT_DROP_SUFFIX " records dropped"

/* The drop marker's argument when the records were dropped for another
 * reason than a size limit (fxt-run --max-size, --buffer-size): a string
 * saying why, a phrase that reads after "because" ("the spool could not
 * be written (Permission denied)"), at most FXT_DROP_CAUSE_MAX - 1
 * bytes. */
#define FXT_DROP_CAUSE_ARG "cause"
#define FXT_DROP_CAUSE_MAX 160

/* fxtrace's flight-recorder marker: where a thread's kept records begin
 * when older ones were overwritten (fxt-run --mode=circular), an instant
 * event named FXT_DROP_PREFIX "N" FXT_OVERWRITE_SUFFIX ("fxt: N records
 * overwritten"); fxt_overwritten_in_name() (reader.h) reads N. */
#define FXT_OVERWRITE_SUFFIX " records overwritten"

/* Events the kernel lost (fxt-run --kernel, fxt-import of a trace.dat: its
 * ring buffer was full): an instant event of category "fxt" named
 * FXT_DROP_PREFIX "N" FXT_KERNEL_LOST_SUFFIX ("fxt: N kernel events
 * lost"), with the provider's buffer-full event; fxt_kernel_lost_in_name()
 * (reader.h) reads N.  Not calls: the threads' states around it are
 * partial. */
#define FXT_KERNEL_LOST_SUFFIX " kernel events lost"

/* fxtrace's stack samples (fxt-run --sample): each sampled thread gets a
 * track of its own, a thread of koid tid | FXT_SAMPLE_KOID_BIT named after
 * the thread with FXT_SAMPLE_TRACK_SUFFIX ("main (samples)"), whose slices
 * are the stack chart of its samples (categories: the frames' modules, as
 * hooked functions have).  Those slices are estimates of where CPU time
 * went, not calls: readers keep them apart from the slices of calls. */
#define FXT_SAMPLE_KOID_BIT	(UINT64_C(1) << 30)
#define FXT_SAMPLE_TRACK_SUFFIX " (samples)"

/* fxtrace's mark of a thread that stack sampling (fxt-run --sample) could
 * not sample from some time on: an instant event of category "fxt" on the
 * thread, at that time, named FXT_UNSAMPLED_PREFIX and the reason,
 * fxt_unsampled_reason() of the agent's code for it (1 to
 * FXT_UNSAMPLED_REASONS - 1: spool/records.h, enum ev_unsampled). */
#define FXT_UNSAMPLED_PREFIX  "fxt: not sampled: "
#define FXT_UNSAMPLED_REASONS 4u

static inline const char *fxt_unsampled_reason(unsigned code)
{
	switch (code) {
	case 1:
		return "it blocks SIGPROF, which the program handles itself";
	case 2:
		return "a SIGPROF of the program's came while it blocked SIGPROF";
	case 3:
		return "no CPU-time timer";
	default:
		return "unknown reason";
	}
}

/* fxtrace's summary of calls written as no slice (fxt-run --min-duration:
 * shorter than the bound): per thread and function, one instant event of
 * category FXT_SHORT_CATEGORY named after the function, at the thread's
 * end, with the arguments FXT_SHORT_ARG_*: the function's module (the
 * category its slices have), its calls left out, the sum of their
 * durations, their inclusive time counted as a total is (a recursion once),
 * their self time, the shortest and longest, and the time of the calls
 * left out directly under its own calls that were written (which a reader
 * that subtracts children from a slice's time did not subtract).  Times
 * in ns. */
#define FXT_SHORT_CATEGORY   "fxt.short"
#define FXT_SHORT_ARG_MODULE "module"
#define FXT_SHORT_ARG_CALLS  "calls"
#define FXT_SHORT_ARG_SUM    "sum_ns"
#define FXT_SHORT_ARG_TOTAL  "total_ns"
#define FXT_SHORT_ARG_SELF   "self_ns"
#define FXT_SHORT_ARG_MIN    "min_ns"
#define FXT_SHORT_ARG_MAX    "max_ns"
#define FXT_SHORT_ARG_CHILD  "left_out_children_ns"

/* fxtrace's measure of its own hooks (agent/calib.h): per process, one
 * instant event of category "fxt" named FXT_HOOK_COST_NAME on its main
 * thread, before its other events, with two double arguments, in ns,
 * against the program run without tracing (whose hooks are the C
 * library's, empty): what an enter and exit hook pair adds to the code
 * around a call (the chunk refills spread over the calls included), and
 * what the part of a pair inside the call's own interval adds (below 0
 * when it is less than the empty pair the untraced call pays).
 * fxt-report --subtract-overhead takes, from each call's measured time,
 * "inside" and one pair per call it made. */
#define FXT_HOOK_COST_NAME  "fxt: hook cost"
#define FXT_HOOK_ARG_PAIR   "pair_ns"
#define FXT_HOOK_ARG_INSIDE "inside_ns"

/* A snapshot (fxt-run --snapshot-if): its archive holds one instant
 * event of category "fxt" on the thread whose call set it off, at the
 * call's end, named FXT_SNAPSHOT_PREFIX "N: NAME took DURATION" (or,
 * set off by a value, "N: NAME (retval<0)"), with arguments: the
 * snapshot's number, the function, the call's duration and the rule's
 * limit in ns (0 for a value), and the rule as given. */
#define FXT_SNAPSHOT_PREFIX	  "fxt: snapshot "
#define FXT_SNAPSHOT_ARG_NUMBER	  "snapshot"
#define FXT_SNAPSHOT_ARG_FUNCTION "function"
#define FXT_SNAPSHOT_ARG_DURATION "duration_ns"
#define FXT_SNAPSHOT_ARG_LIMIT	  "limit_ns"
#define FXT_SNAPSHOT_ARG_RULE	  "rule"

/* fxtrace's source locations: where each function is in the source.  Per
 * thread, one kernel object record per function its slices name (not per
 * call), before the function's first slice or, when fxt-run had it only
 * later (decoded beside the conversion), after the thread's events: a
 * reader takes it wherever it comes.  Of object type
 * FXT_OBJ_FUNCTION (no Zircon object type: Zircon's stay below 64, and a
 * reader that does not know a kernel object's type skips the record, as
 * Perfetto's importer does), koid the function's entry address in the
 * process, named after the function as its slices are, with the string
 * argument FXT_LOC_ARG_MODULE, the category its slices have (its module),
 * and the location, the line-table entry at the function's entry (as
 * `addr2line` gives it; FILE relative to the unit's compilation folder
 * when under it, else as DWARF has it: absolute), in one of two forms
 * that say the same text, "FILE:LINE", followed by FXT_LOC_INLINED when
 * DWARF says the function is also inlined into its callers:
 *  - FXT_LOC_ARG_FILE, a string (the same ref for each function of a
 *    file: a string record once per file), FXT_LOC_ARG_LINE, a uint32,
 *    and FXT_LOC_ARG_INLINED, a bool, true, only when inlined: five words
 *    (six) whatever the file's length; what fxt-run writes since
 *    2026-11-29;
 *  - FXT_LOC_ARG, the text as a string: what fxt-run wrote before, and
 *    still writes for a location of no FILE:LINE, "(no debug info)" when
 *    no DWARF line covers the function, and with --srcline (the slices'
 *    string ref, already registered).
 * A reader takes either (tools/front/srcloc.c, tool_srcloc_text(), gives
 * the text of both).  Archives without them read as before: no location known.
 * fxt-run --srcline also puts FXT_LOC_ARG, the text, on each slice of the
 * function: the per-event source location Tracy's FXT importer reads. */
#define FXT_OBJ_FUNCTION    240u
#define FXT_LOC_ARG	    "loc"
#define FXT_LOC_ARG_MODULE  "module"
#define FXT_LOC_ARG_FILE    "file"
#define FXT_LOC_ARG_LINE    "line"
#define FXT_LOC_ARG_INLINED "inlined"
#define FXT_LOC_INLINED	    " (inlined)"

/* ------------------------------------------------------------ string refs
 * 16 bits: 0 = empty; MSB clear = index 1 .. 0x7fff; MSB set = inline string
 * whose byte length is the low 15 bits, stored in the record as a stream. */
#define FXT_STRREF_EMPTY       0x0000u
#define FXT_STRREF_INLINE_FLAG 0x8000u
#define FXT_STRREF_INLINE(len) ((uint16_t)(FXT_STRREF_INLINE_FLAG | ((len)&0x7fffu)))

static inline int fxt_strref_is_inline(uint16_t ref)
{
	return (ref & FXT_STRREF_INLINE_FLAG) != 0;
}

static inline unsigned fxt_strref_inline_len(uint16_t ref)
{
	return ref & 0x7fffu;
}

/* ------------------------------------------------------------- thread refs
 * 8 bits: 0 = inline (pid and tid words follow in the record), else index. */
#define FXT_THREADREF_INLINE 0u

/* ---------------------------------------------------------- bit helpers */

/* Bits [lo .. hi] of w, shifted down. */
static inline uint64_t fxt_bits(uint64_t w, unsigned lo, unsigned hi)
{
	unsigned n = hi - lo + 1;
	return n >= 64 ? w >> lo : (w >> lo) & ((UINT64_C(1) << n) - 1);
}

/* v placed at [lo .. hi]; v must fit (callers check ranges first). */
static inline uint64_t fxt_field(uint64_t v, unsigned lo, unsigned hi)
{
	unsigned n = hi - lo + 1;
	uint64_t mask = n >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << n) - 1);
	return (v & mask) << lo;
}

/* Words needed for a stream of n bytes padded to 8. */
static inline uint64_t fxt_stream_words(uint64_t nbytes)
{
	return (nbytes + 7) / 8;
}

/* Common header fields. */
static inline unsigned fxt_header_type(uint64_t h)
{
	return (unsigned)fxt_bits(h, 0, 3);
}

static inline unsigned fxt_header_size(uint64_t h)
{
	return (unsigned)fxt_bits(h, 4, 15);
}

static inline uint64_t fxt_large_header_size(uint64_t h)
{
	return fxt_bits(h, 4, 35);
}

/* ---------------------------------------------------------- event header
 * [0..3] record type (4), [4..15] size in words, [16..19] event type,
 * [20..23] argument count, [24..31] thread ref, [32..47] category ref,
 * [48..63] name ref.  For a writer that encodes many events of one thread
 * itself (the converter's hot path): the header without refs once, then
 * fxt_event_header_refs() per event. */

/* The category and name refs, placed in an event header. */
static inline uint64_t fxt_event_header_refs(uint16_t category, uint16_t name)
{
	return fxt_field(category, 32, 47) | fxt_field(name, 48, 63);
}

static inline uint64_t fxt_event_header(uint64_t nwords, unsigned event_type, unsigned nargs,
					uint8_t thread, uint16_t category, uint16_t name)
{
	return fxt_field(FXT_RECORD_EVENT, 0, 3) | fxt_field(nwords, 4, 15) |
	       fxt_field(event_type, 16, 19) | fxt_field(nargs, 20, 23) |
	       fxt_field(thread, 24, 31) | fxt_event_header_refs(category, name);
}

/* Words of a duration complete event with an indexed thread, indexed
 * strings and no arguments: the header, the start and the end time. */
#define FXT_COMPLETE_INDEXED_WORDS 3u

/* ------------------------------------------------------- argument header
 * [0..3] argument type, [4..15] size in words, [16..31] name ref,
 * [32..63] the value when it fits there (32-bit numbers, bool, a string
 * argument's value ref). */
static inline uint64_t fxt_arg_header(unsigned type, uint64_t nwords, uint16_t name,
				      uint32_t inline_value)
{
	return fxt_field(type, 0, 3) | fxt_field(nwords, 4, 15) | fxt_field(name, 16, 31) |
	       fxt_field(inline_value, 32, 63);
}

#endif /* FXT_FORMAT_H */
