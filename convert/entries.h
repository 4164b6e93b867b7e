/* What the conversion attaches to a frame (struct recon_arg, recon.h): the
 * vocabulary between the readers of records (replay.c, prepass.c), which
 * make the entries from tagged records, and the emitter (emit.c), which
 * writes them as FXT arguments and flow events.  Private to convert/. */
#ifndef FXT_CONVERT_ENTRIES_H
#define FXT_CONVERT_ENTRIES_H

#include "spool/records.h"

/* An entry's type: enum ev_arg_type's values for arguments read from the
 * spool, then these. */
enum {
	ARGT_STR = 16,	  /* a string: its bytes are the entry's */
	ARGT_FLOW = 17,	  /* a flow event: key = phase | FLOW_AT_END, value = id */
	ARGT_RETURN = 18, /* a return address (a call's caller): symbolized */
	/* A register read at a patched function's entry or return (--args,
	 * --retval): key = enum fxt_reg (run/argspec.h); value = its
	 * contents.  Shown by the function's signature (symbolizer/signature.h). */
	ARGT_REG = 19,
	/* ... and the string it pointed to: its bytes are the entry's; key
	 * has REG_STR_TRUNCATED or REG_STR_UNREADABLE besides the register. */
	ARGT_REGSTR = 20,
};
#define REG_STR_TRUNCATED  0x100u
#define REG_STR_UNREADABLE 0x200u
#define REG_KEY_REG	   0xffu
#define FLOW_AT_END	   4u

/* An entry's key: an agent_key (spool/libc_table.h), or one of these. */
enum {
	KEY_ERROR = 256,	 /* "error": the name of an errno result */
	KEY_STREAM_OFFSET = 257, /* "stream_offset" of a pipe transfer */
	/* "start_overwritten" (true): a frame open where a thread's kept
	 * records begin, whose start was overwritten (pipeline.h). */
	KEY_START_OVERWRITTEN = 258,
	KEY_COUNT = 259,
};

/* The cookies of recon_mark(): where a thread's drop instant, its log
 * lines, its overwrite instant and its "not sampled" instant (the cookie
 * MARK_UNSAMPLED + enum ev_unsampled) go among its frames. */
enum { MARK_DROPS = 0, MARK_LOG = 1, MARK_OVERWRITTEN = 2, MARK_UNSAMPLED = 3 };

/* Strings shown in arguments and log events are cut here. */
#define MESSAGE_MAX 4096u
/* The longest string a record carries. */
#define STR_MAX (EV_MAX_SLOTS * EV_DATA_BYTES)

#endif /* FXT_CONVERT_ENTRIES_H */
