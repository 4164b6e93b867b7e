/* The libc wrappers: the helpers every wrapper uses.  Private to agent/.
 *
 * A wrapper records its call as a CALL frame (spool/records.h), its
 * function and arguments by the ids of spool/libc_table.h: an enter
 * record with the caller's address and the arguments known before the
 * call, the real call, an exit record with the result (and errno when it
 * failed).  The converter turns the frame into a duration slice named after
 * the function, category "libc.<group>", with the arguments as FXT
 * arguments.
 *
 * Rules for wrappers (agent/libc/wrap_*.c):
 *  - Always call the real function, with the same arguments, and return
 *    its result with errno as it left it.  Recording never changes what
 *    the program sees.
 *  - Record only when wrap_enter() says so: the group is on, and the
 *    thread is not inside agent code (hooks' slow paths, the seal) nor
 *    inside another wrapper (libc calling itself, e.g. fopen -> malloc,
 *    is not the program's call).
 *  - No locks, no malloc, no syscalls of our own on the common path.
 */
#ifndef FXT_AGENT_LIBC_H
#define FXT_AGENT_LIBC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/ticks.h"
#include "agent/events.h"
#include "agent/gates.h"
#include "agent/real.h"
#include "agent/tbuf.h"
#include "spool/libc_table.h"
#include "run/recording.h"

/* ------------------------------------------------------------ recording */

#define WRAP __attribute__((visibility("default"), no_instrument_function))

/* The arguments a record carries: up to a few, chosen per call. */
struct wrap_arg {
	unsigned key;
	enum ev_arg_type type;
	uint64_t value;
};

#define WARG(k, t, v) ((struct wrap_arg){ AGENT_KEY_##k, EV_ARG_##t, (uint64_t)(v) })

/* Whether to record this call: the thread to record on, or NULL.  When
 * not NULL, the wrapper must end with wrap_leave(t) (after the exit
 * record). */
static inline __attribute__((always_inline)) struct tstate *wrap_enter(unsigned group)
{
	struct tstate *t = &agent_tls;

	if (__builtin_expect(!(agent_libc_on & group), 0) || t->busy || t->wrap)
		return NULL;
	t->wrap = 1;
	return t;
}

static inline __attribute__((always_inline)) void wrap_leave(struct tstate *t)
{
	t->wrap = 0;
}

/* The slot writers the records below are made of: each fills slots at
 * `p` and returns the slot after them. */
static inline __attribute__((always_inline)) uint64_t *slot_enter(uint64_t *p, unsigned fn,
								  const void *caller, uint64_t ts)
{
	p[0] = ts;
	p[1] = EV_CALL_ADDR(fn) | ((uint64_t)(uintptr_t)caller & EV_PAYLOAD_MASK);
	return p + 2;
}

static inline __attribute__((always_inline)) uint64_t *
slot_args(uint64_t *p, const struct wrap_arg *args, unsigned n)
{
	for (unsigned i = 0; i < n; i++, p += 2) {
		p[0] = args[i].value;
		p[1] = ev_arg_w1(args[i].key, args[i].type);
	}
	return p;
}

static inline __attribute__((always_inline)) uint64_t *slot_sync(uint64_t *p, enum ev_sync_op op,
								 const void *obj)
{
	p[0] = (uint64_t)(uintptr_t)obj;
	p[1] = ev_sync_w1(op);
	return p + 2;
}

/* Slots the exit of a call needs besides its own: an errno ARG when `err`,
 * an ARG with the full result when it did not fit the payload. */
static inline __attribute__((always_inline)) unsigned slot_exit_extra(uint64_t payload, int err)
{
	return (payload == EV_RESULT_SPILLED) + (err != 0);
}

/* Those slots, then the CALL exit itself. */
static inline __attribute__((always_inline)) void slot_exit(uint64_t *p, unsigned fn, uint64_t ts,
							    uint64_t payload, int64_t full, int err)
{
	if (err) {
		p[0] = (uint64_t)(int64_t)err;
		p[1] = ev_arg_w1(AGENT_KEY_ERRNO, EV_ARG_ERRNO);
		p += 2;
	}
	if (payload == EV_RESULT_SPILLED) {
		p[0] = (uint64_t)full;
		p[1] = ev_arg_w1(AGENT_KEY_RESULT, EV_ARG_I64);
		p += 2;
	}
	p[0] = ts;
	p[1] = EV_EXIT_BIT | EV_CALL_ADDR(fn) | payload;
}

/* The enter record: CALL enter with the caller, then `n` arguments, at
 * `ts` (agent_ticks(), read by the caller).  Returns false if it was
 * dropped (then record nothing more for the call, just wrap_leave()). */
static inline __attribute__((always_inline)) bool wrap_call_begin_ts(struct tstate *t, unsigned fn,
								     const void *caller,
								     const struct wrap_arg *args,
								     unsigned n, uint64_t ts)
{
	uint64_t *p = agent_ev_begin(t, 1 + n, ts, true);

	if (__builtin_expect(p != NULL, 1))
		slot_args(slot_enter(p, fn, caller, ts), args, n);
	agent_ev_end(t);
	if (__builtin_expect(agent_snap_libc != 0, 0))
		agent_snapshot_libc_begin(t, fn);
	return p != NULL;
}

/* The same, with the timestamp taken here. */
static inline __attribute__((always_inline)) bool wrap_call_begin(struct tstate *t, unsigned fn,
								  const void *caller,
								  const struct wrap_arg *args,
								  unsigned n)
{
	return wrap_call_begin_ts(t, fn, caller, args, n, agent_ticks());
}

/* The exit record: `n` arguments, then CALL exit with the result payload
 * (ev_int_payload / ev_ptr_payload, or 0 for AGENT_RES_VOID); a result
 * that does not fit goes in an extra ARG.  `err` != 0 adds an errno ARG. */
static inline __attribute__((always_inline)) void
wrap_call_end(struct tstate *t, unsigned fn, uint64_t payload, int64_t full, int err,
	      const struct wrap_arg *args, unsigned n)
{
	uint64_t ts = agent_ticks();
	uint64_t *p = agent_ev_begin(t, 1 + n + slot_exit_extra(payload, err), ts, false);

	if (__builtin_expect(p != NULL, 1))
		slot_exit(slot_args(p, args, n), fn, ts, payload, full, err);
	agent_ev_end(t);
	if (__builtin_expect(agent_snap_libc != 0, 0))
		agent_snapshot_libc_end(t, fn);
}

/* A whole call in one record, written after the call, with ONE
 * timestamp `ts` (read before the call): the enter, its arguments, a SYNC
 * record of `op` on `obj` when op is not 0, the exit at the same time (the
 * converter gives each slot the next tick: the slice lasts a few ticks);
 * a ONCE record (two slots) for the calls agent_fn_once() names.
 * For calls too short for a second timestamp to be worth its cost (the
 * heap allocator, a lock that did not wait, an unlock): on this machine a
 * timestamp costs more than malloc.  Arguments and result as for
 * wrap_call_begin() and wrap_call_end(). */
static inline __attribute__((always_inline)) void
wrap_call_once(struct tstate *t, unsigned fn, const void *caller, uint64_t ts,
	       const struct wrap_arg *args, unsigned n, enum ev_sync_op op, const void *obj,
	       uint64_t payload, int64_t full, int err)
{
	struct agent_once o;
	uint64_t *p;

	/* The calls of agent_fn_once() in two slots (a ONCE record) when
	 * nothing needs more: all but `err` and `payload` is constant per
	 * wrapper, so the choice costs one branch. */
	if (agent_fn_once(fn, &o) && n == 1 && args[0].key == o.key && args[0].type == o.type &&
	    op == o.op && (!op || (uint64_t)(uintptr_t)obj == args[0].value) && !err &&
	    payload != EV_RESULT_SPILLED) {
		p = agent_ev_begin(t, 2, ts, true);
		if (__builtin_expect(p != NULL, 1)) {
			p[0] = ts;
			p[1] = ev_once_w1(fn, (uint64_t)(uintptr_t)caller);
			p[2] = args[0].value;
			p[3] = ev_once_arg_w1(fn, payload);
		}
		agent_ev_end(t);
		return;
	}
	p = agent_ev_begin(t, 2 + n + (op != 0) + slot_exit_extra(payload, err), ts, true);

	if (__builtin_expect(p != NULL, 1)) {
		p = slot_args(slot_enter(p, fn, caller, ts), args, n);
		if (op)
			p = slot_sync(p, op, obj);
		slot_exit(p, fn, ts, payload, full, err);
	}
	agent_ev_end(t);
}

/* Common shapes of the exit record. */
static inline __attribute__((always_inline)) void wrap_end_int(struct tstate *t, unsigned fn,
							       int64_t r, int err)
{
	wrap_call_end(t, fn, ev_int_payload(r), r, err, NULL, 0);
}

static inline __attribute__((always_inline)) void wrap_end_ptr(struct tstate *t, unsigned fn,
							       const void *r, int err)
{
	uint64_t v = (uint64_t)(uintptr_t)r;

	wrap_call_end(t, fn, ev_ptr_payload(v), (int64_t)v, err, NULL, 0);
}

/* A string argument of the open frame (a path, a command): one STR head
 * and its DATA slots, at most `max` bytes (longer ones are cut and marked
 * truncated).  NULL strings are not recorded. */
void wrap_str(struct tstate *t, unsigned key, const char *s, size_t max);

/* A FLOW record bound to the open frame. */
void wrap_flow(struct tstate *t, enum ev_flow_phase phase, uint64_t id, bool at_end);

/* A SYNC record inside the open frame. */
static inline __attribute__((always_inline)) void wrap_sync(struct tstate *t, enum ev_sync_op op,
							    const void *obj)
{
	uint64_t *p;

	/* What the converter pairs (spool/format.h, `waited`): the mark
	 * first, then the record.  op is a constant: the test folds away. */
	if (op == EV_SYNC_LOCK_WAITED || op == EV_SYNC_WOKEN || op == EV_SYNC_SEM_WAITED)
		agent_note_waited();
	p = agent_ev_begin(t, 1, 0, false);
	if (__builtin_expect(p != NULL, 1))
		slot_sync(p, op, obj);
	agent_ev_end(t);
}

/* A new flow id of kind `kind`, unique in this process (and across the
 * trace, with the pid in it). */
uint64_t agent_new_flow_id(enum ev_flowid_kind kind);

/* Attached to a running process (START .attached): the mem wrappers check
 * that the allocator they call is whole.  (wrap_mem.c) */
void agent_mem_attached(void);

/* Whether `name` is one of the log group's wrappers (wrap_log.c): bound
 * at attach when the group is asked for (libc.c). */
bool agent_log_wrapped(const char *name);

/* The log group: bytes the program wrote to stdout or stderr (a write on
 * fd 1/2, stdio on stdout/stderr) or a syslog message (stream
 * EV_LOG_SYSLOG, with its priority) as LOG records; lines are assembled by
 * the converter.  Called by any wrapper that writes program output, with
 * `t` from wrap_enter().  (wrap_log.c) */
void agent_log_bytes(struct tstate *t, enum ev_log_stream stream, unsigned prio, const char *buf,
		     size_t len);

/* Before a stdio call on `stream` whose text the log group does not take
 * itself (fwrite, fflush, fclose): logs what inline stdio code (putc_unlocked
 * & co.: no call) stored into stdout's or stderr's buffer since the last
 * output logged on it.  errno is kept.  (wrap_log.c) */
struct _IO_FILE;
void agent_log_catch_up(struct tstate *t, struct _IO_FILE *stream);

/* The mem group's heap counter: writes the calling thread's pending heap
 * delta as a COUNTER record now, if it has one (thread end: wrap_thread.c).
 * (wrap_mem.c) */
void agent_mem_flush_delta(struct tstate *t);

#define CALLER __builtin_return_address(0)

/* syscall(SYS_clone or SYS_clone3, ...): a fork of ours unless CLONE_VM
 * (agent/libc/wrap_proc.c); `a`: the six arguments. */
long agent_syscall_clone(long nr, const long a[6], const void *caller);

#endif /* FXT_AGENT_LIBC_H */
