/* Run-time patching, the runtime (see patch.h): the shadow stack of each
 * thread, the enter and exit handlers the trampolines call, and the
 * unwinder's entry points, which put the real return addresses back.
 *
 * This file is compiled with -mgeneral-regs-only: the handlers run at a
 * patched function's entry and return, where every register must be as
 * the program left it, and the trampolines save only the general ones.
 * What may touch vector registers (the slow path of a record, the
 * filters, the C library) goes through fxt__patch_call_saving
 * (tramp.S), which saves them first.
 *
 * One file past 800 lines: the shadow stack's layout is private to it,
 * and each of its readers and writers is here (rtargs.c goes through
 * fxt__patch_push(); tramp.S's fast path through tramp.h, checked here). */
#include <config.h>

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/patch/rt.h"
#include "agent/patch/tramp.h"

/* One patched call in progress: where its return address is, what it was,
 * and the function (PATCH_FN(fn)); above its address, fn holds what to
 * read at its return (SHADOW_RET_CAPS), for --retval; and what its slot
 * holds instead of the return address (its stub's exit, patch.c). */
struct shadow {
	uint64_t *slot;
	uint64_t ret;
	uint64_t fn;
	uint64_t hook;
};

/* Deep enough for any recursion a stack of 8 MiB holds (a frame is at
 * least 16 bytes); reserved, not committed: pages come as they are used. */
#define SHADOW_MAX (1u << 19)

/* The last entries popped as gone (see pop_gone()), kept in a ring after
 * the stack: a frame taken for gone that returns after all (the program
 * switched stacks: coroutines, swapcontext()) finds its return address
 * there. */
#define PARKED_MAX (1u << 12)
/* The mapping: one entry before the stack's first, whose slot is above
 * every other (the trampolines' fast path compares the innermost entry's
 * slot with no test of an empty stack: tramp.S), the stack, the ring. */
#define SHADOW_BYTES ((size_t)(1 + SHADOW_MAX + PARKED_MAX) * sizeof(struct shadow))

/* The thread's (agent/tbuf.h: in its struct tstate), which the
 * trampolines' fast path reads too (tramp.S):
 *   v       NULL until the thread's first patched call
 *   top     past the live entries (v when there is none; NULL with v)
 *   lim     v + SHADOW_MAX once v is there and the clock is the TSC,
 *           else NULL: where the fast path stops pushing (one test of
 *           top for all three)
 *   parked  entries ever parked; the ring is v + SHADOW_MAX
 *   failed  no memory for it: the thread's patched calls go unrecorded
 *   ended   the thread is ending: its stack is given back */
#define fxt__patch_pstack (agent_tls.pstack)

/* The live entries. */
static inline __attribute__((always_inline)) uint32_t depth(const struct agent_pstack *s)
{
	const struct shadow *top = s->top;

	return top ? (uint32_t)(top - s->v) : 0;
}

/* Set once something is patched: the unwinder's entry points do their
 * work only then. */
static bool patch_active;

void agent_patch_activate(void);
void agent_patch_activate(void)
{
	__atomic_store_n(&patch_active, true, __ATOMIC_RELEASE);
}

/* The entries (past the one before them, marked), or MAP_FAILED. */
static void *shadow_map(void)
{
	struct shadow *p = mmap(NULL, SHADOW_BYTES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return p;
	p->slot = (uint64_t *)UINTPTR_MAX;
	return p + 1;
}

static bool shadow_ready(struct agent_pstack *s)
{
	if (__builtin_expect(s->v != NULL, 1))
		return true;
	if (s->failed || s->ended)
		return false;
	void *p = (void *)(uintptr_t)fxt__patch_call_saving((void *)shadow_map, 0, 0, 0, 0);
	if (p == MAP_FAILED) {
		s->failed = true;
		return false;
	}
	s->v = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->lim = agent_clock_tsc ? s->v + SHADOW_MAX : NULL;
	return true;
}

static void count_unrecorded(void)
{
	if (agent_tls.tb)
		__atomic_fetch_add(&agent_tls.tb->dropped, 1, __ATOMIC_RELAXED);
}

/* The alternate signal stack the thread runs on (sigaltstack(2)), or an
 * empty range. */
struct range {
	uint64_t lo, hi;
};

static struct range alt_stack(void)
{
	stack_t ss;
	struct range r = { 0, 0 };

	if (fxt__patch_call_saving((void *)sigaltstack, 0, (uint64_t)(uintptr_t)&ss, 0, 0) == 0 &&
	    (ss.ss_flags & SS_ONSTACK)) {
		r.lo = (uint64_t)(uintptr_t)ss.ss_sp;
		r.hi = r.lo + ss.ss_size;
	}
	return r;
}

static bool in_range(struct range r, const uint64_t *p)
{
	return (uint64_t)(uintptr_t)p >= r.lo && (uint64_t)(uintptr_t)p < r.hi;
}

/* Pops the entries of frames that are gone (their slot at or below
 * `below`): longjmp() or an unwinding skipped their returns, or a tail
 * call (a jmp) to a patched function reuses the slot of the caller, which
 * is done (and still holds the caller's hook).  Not the frames a signal
 * handler running on the alternate signal stack interrupted, which may
 * lie below it: an entry below `below` on the other side of that stack's
 * bounds stays (asked of the kernel only then, which is rare).  Returns
 * the real return address of the entry whose slot is `below`, if one was
 * popped (the tail call's), else 0. */
static __attribute__((noinline)) uint64_t pop_gone_slow(struct agent_pstack *s, uint64_t *below)
{
	uint64_t ret = 0;
	bool asked = false;
	struct range alt = { 0, 0 };

	while (depth(s) && s->top[-1].slot <= below) {
		struct shadow e = s->top[-1];
		if (e.slot != below) {
			if (!asked) {
				alt = alt_stack();
				asked = true;
			}
			if (in_range(alt, below) != in_range(alt, e.slot))
				break;
		}
		s->top--;
		if (e.slot == below && *below == e.hook)
			ret = e.ret;
		else
			s->v[SHADOW_MAX + s->parked++ % PARKED_MAX] = e;
		record(shadow_exit(e.fn));
	}
	return ret;
}

/* pop_gone(), its common case inline: nothing is gone (the innermost
 * entry's slot is above `below`; one being filled is above every one). */
static inline __attribute__((always_inline)) uint64_t pop_gone(struct agent_pstack *s,
							       uint64_t *below)
{
	if (__builtin_expect(!depth(s) || s->top[-1].slot > below, 1))
		return 0;
	return pop_gone_slow(s, below);
}

/* record_ints() when the hook record goes elsewhere first (a filter) or
 * the clock is not the TSC, or there is no value: the hook record and a
 * REG record a value, apart, in the order of a HOOKV's. */
static __attribute__((noinline)) void record_ints_apart(uint64_t addr, const uint64_t *at,
							unsigned regs, bool exit)
{
	struct tstate *t = &agent_tls;
	uint64_t fn = addr & ~(SPOOL_EXIT_BIT | AGENT_FILTER_HELD), *p;
	unsigned n = ev_hookv_count(regs);

	if (!exit)
		record(addr);
	if (n && t->tb) {
		p = agent_ev_begin(t, n, 0, false);
		if (p)
			for (unsigned i = 0; i < 6; i++)
				if (regs & (1u << i)) {
					p[0] = at[-(long)(exit ? (i ? SAVED_RDX : SAVED_RAX)
							       : SAVED_RDI + i)];
					p[1] =
					    ev_reg_w1((exit ? FXT_REG_RAX : FXT_REG_GPR0) + i, fn);
					p += 2;
				}
		agent_ev_end(t);
	}
	if (exit)
		record(addr);
}

/* The hook record of a patched call's entry (addr: its function) with
 * the integer registers `caps` names (FXT_CAP_GPR(i), read at `at`: the
 * slot of its return address), or of its exit (`exit`, addr with
 * SPOOL_EXIT_BIT) with rax and rdx (FXT_CAP_RAX, FXT_CAP_RDX, read at
 * `at`: the stack pointer it returned with): one HOOKV record
 * (spool/records.h), the values two to a slot after the hook's, in one
 * reservation under one timestamp.  Apart when the hook record goes
 * elsewhere first (a filter) or the clock is not the TSC. */
static inline __attribute__((always_inline)) void record_ints(uint64_t addr, const uint64_t *at,
							      uint32_t caps, const bool exit)
{
	struct tstate *t = &agent_tls;
	uint64_t fn = addr & ~(SPOOL_EXIT_BIT | AGENT_FILTER_HELD), *p, ts;
	unsigned regs = exit ? (caps / FXT_CAP_RAX) & 3 : caps & FXT_CAP_GPRS;
	unsigned n = ev_hookv_count(regs), pad;

	if (__builtin_expect(agent_filter_on || !agent_clock_tsc || !regs, 0)) {
		record_ints_apart(addr, at, regs, exit);
		return;
	}
	/* An exit's last RAW word that could pass for an enter of a function
	 * (rdx): a zero slot after it (readers skip it), so that the exit
	 * hook of the instrumented function that called this one never takes
	 * it for its enter (spool/records.h, PAIR). */
	pad = exit && regs == 3 && ev_pair_fits(at[-SAVED_RDX], 0);
	ts = __rdtsc(); /* before the reservation, as agent_record_clk() */
	p = agent_ev_begin(t, 1 + (n + 1) / 2 + pad, ts, true);
	if (p) {
		p[0] = ts;
		p[1] = ev_hookv_w1(fn, exit, regs);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the head first */
		if (exit) {
			/* rax, rdx, or both */
			p[2] = at[-(regs & 1 ? SAVED_RAX : SAVED_RDX)];
			p[3] = regs == 3 ? at[-SAVED_RDX] : 0;
			if (pad)
				p[4] = p[5] = 0;
		} else {
			uint64_t *q = p + 2;

			for (unsigned m = regs; m; m &= m - 1)
				*q++ = at[-(SAVED_RDI + __builtin_ctz(m))];
			if (n & 1)
				*q = 0;
		}
	}
	agent_ev_end(t);
}

/* record_strs() when the hook record goes elsewhere first (a filter) or
 * the clock is not the TSC: through record_with(). */
static __attribute__((noinline)) void record_strs_apart(uint64_t fn, const uint64_t *at,
							uint32_t caps)
{
	struct captured c;

	c.n = c.slots = c.strs = 0;
	for (unsigned i = 0; i < FXT_ARG_GPRS; i++)
		if (caps & FXT_CAP_GPR(i)) {
			bool str = (caps & FXT_CAP_STR(i)) != 0;

			c.v[c.n].w0 = at[-(long)(SAVED_RDI + i)];
			c.v[c.n].w1 = ev_reg_w1(FXT_REG_GPR0 + i, fn);
			c.strs |= (uint32_t)str << c.n++;
			c.slots += str ? CAPTURED_STR_SLOTS : 1;
		}
	record_with(&c, fn);
}

/* The hook record of a patched call's entry (fn) with the integer
 * registers `caps` names (FXT_CAP_GPR(i), read at `at`: the slot of its
 * return address), strings among them (FXT_CAP_STR(i)): the hook record
 * and their REG records, each string read into its own (put_string()),
 * in one reservation of the most they may take, the rest given back, as
 * record_with() writes them; through it when the hook record goes
 * elsewhere first (a filter) or the clock is not the TSC. */
static inline __attribute__((always_inline)) void record_strs(uint64_t fn, const uint64_t *at,
							      uint32_t caps)
{
	struct tstate *t = &agent_tls;
	unsigned regs = caps & FXT_CAP_GPRS, strs = (caps & FXT_CAP_STRS) / FXT_CAP_STR(0);
	unsigned n = 1, used = 1;
	uint64_t *p, ts;

	if (__builtin_expect(agent_filter_on || !agent_clock_tsc, 0)) {
		record_strs_apart(fn, at, caps);
		return;
	}
	for (unsigned m = regs; m; m &= m - 1)
		n += (strs >> __builtin_ctz(m)) & 1 ? CAPTURED_STR_SLOTS : 1;
	ts = __rdtsc(); /* before the reservation, as agent_record_clk() */
	p = agent_ev_begin(t, n, ts, true);
	if (p) {
		p[0] = ts;
		p[1] = fn & ~AGENT_FILTER_HELD;
		for (unsigned m = regs; m; m &= m - 1) {
			unsigned i = __builtin_ctz(m);
			uint64_t *q = p + 2 * used, w1 = ev_reg_w1(FXT_REG_GPR0 + i, fn);

			q[0] = at[-(long)(SAVED_RDI + i)];
			if ((strs >> i) & 1) {
				q[1] = ev_reg_str_open_w1(w1); /* the head first */
				__atomic_signal_fence(__ATOMIC_SEQ_CST);
				used += put_string(q);
			} else {
				q[1] = w1;
				used++;
			}
		}
		agent_ev_trim(t, p, n, used);
	}
	agent_ev_end(t);
}

/* Pushes the shadow entry of a call (its return address's slot, the
 * real return address `ret`, its fn `tagged`); the stub puts the hook in
 * the slot once the trampoline returns (its call of the function's
 * code).  A signal handler's calls may come between any two of these
 * steps: the entry is marked live (an unknown slot is above every other)
 * before it is counted, and filled after. */
static inline __attribute__((always_inline)) void
shadow_push(struct agent_pstack *s, uint64_t *slot, uint64_t tagged, uint64_t ret)
{
	struct shadow *e = s->top;
	e->slot = (uint64_t *)UINTPTR_MAX;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top = e + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->fn = tagged;
	e->ret = ret;
	/* The stub's exit: the stub's call of the trampoline returns to
	 * slot[-1] (patch.h). */
	e->hook = slot[-1] - PATCH_STUB_HEAD + PATCH_STUB_EXIT;
	/* Filled in this order: an entry whose slot is known has its return
	 * address (agent_patch_sampled_ret()). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->slot = slot;
}

/* A patched function's entry: records it (with the values c holds when
 * not NULL, or the integer registers gprs names: --args, strings among
 * them when `strs`) and pushes its shadow entry, whose fn is `tagged` (fn,
 * with what to read at its return); whether it did (not for a thread
 * without a shadow stack). */
static inline __attribute__((always_inline)) bool enter(uint64_t fn, uint64_t *slot,
							uint64_t tagged, const struct captured *c,
							uint32_t gprs, const bool strs)
{
	struct agent_pstack *s = &fxt__patch_pstack;

	if (__builtin_expect(!shadow_ready(s) || depth(s) >= SHADOW_MAX, 0)) {
		if (!s->ended) /* after its buffer, as the thread's other records */
			count_unrecorded();
		return false;
	}
	uint64_t ret = *slot, tail = pop_gone(s, slot);
	/* A tail call: the slot holds the caller's hook; the real return
	 * address is the caller's. */
	if (tail)
		ret = tail;
	/* Its exit the full way too (the trampoline's fast path does not
	 * test these). */
	if (__builtin_expect(agent_filter_on || !agent_clock_tsc, 0) && !(tagged >> 47))
		tagged |= SHADOW_APART;
	if (c)
		record_with(c, fn);
	else if (strs)
		record_strs(fn, slot, gprs);
	else if (gprs)
		record_ints(fn, slot, gprs, false);
	else
		record(fn);
	shadow_push(s, slot, tagged, ret);
	return true;
}

bool fxt__patch_push(uint64_t fn, uint64_t *slot, uint64_t tagged, const struct captured *c)
{
	return enter(fn, slot, tagged, c, 0, false);
}

/* The entry of a function whose stub has PATCH_FN_ARGS: integer
 * registers only (or nothing: a return value), no test at the entry, the
 * common case, here; with strings among them, or the rest, in rtargs.c. */
static __attribute__((noinline)) bool enter_spec(uint64_t quad, uint64_t *slot)
{
	struct patch_spec sp = patch_spec_of(quad, slot);
	uint32_t entry = sp.caps & FXT_CAP_ENTRY;
	/* (One value in a register: gcc read the two fields, stored apart
	 * a moment before, back as one 8-byte load, which store forwarding
	 * cannot serve.) */
	unsigned other = (unsigned)sp.at_entry | sp.incl;

	__asm__("" : "+r"(other));
	if (__builtin_expect(other != 0, 0))
		return fxt__patch_enter_args(quad, slot); /* (a jump: read again there) */
	if (__builtin_expect(!(entry & ~FXT_CAP_GPRS), 1))
		return enter(sp.fn, slot, sp.tagged, NULL, entry, false);
	if (!(entry & ~(FXT_CAP_GPRS | FXT_CAP_STRS)))
		return enter(sp.fn, slot, sp.tagged, NULL, entry, true);
	return fxt__patch_enter_args(quad, slot);
}

bool fxt__patch_enter(uint64_t fn, uint64_t *slot)
{
	if (__builtin_expect(fn & PATCH_FN_ARGS, 0))
		return enter_spec(fn, slot);
	return enter(fn, slot, fn, NULL, 0, false);
}

/* ------------------------------------------------- the trampolines' fast path
 *
 * The common case of a patched call, nothing read and nothing filtered,
 * is done by the trampolines themselves (tramp.S), with four registers
 * saved instead of nine and no call: fxt__patch_enter()'s enter() of a
 * function whose quad is its address, with no frame gone (pop_gone()),
 * shadow_push(), then the record (the entry is pushed before it is
 * recorded, there: a signal handler's calls in between come before it);
 * fxt__patch_exit()'s common case (the
 * innermost entry's slot is the one returned through, nothing to read),
 * the record, then the entry popped.  Where their record goes to its slow
 * path (the thread's first record, a full chunk), they save the other
 * registers and call these with the slot reserved outside the buffer
 * and its timestamp, t->busy counted (agent_record_clk()). */
void fxt__patch_enter_late(uint64_t *p, uint64_t ts, uint64_t quad)
{
	AGENT_TBUF_SLOW(&agent_tls, p, ts, quad);
}

/* The innermost entry is still the call's (a signal handler's calls since
 * are done); popped after its record, as tramp.S pops it, and its real
 * return address given back. */
uint64_t fxt__patch_exit_late(uint64_t *p, uint64_t ts)
{
	struct agent_pstack *s = &fxt__patch_pstack;
	struct shadow e = s->top[-1];

	AGENT_TBUF_SLOW(&agent_tls, p, ts, e.fn | SPOOL_EXIT_BIT);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top--;
	return e.ret;
}

/* What tramp.S reads (tramp.h). */
_Static_assert(offsetof(struct tstate, pstack) + offsetof(struct agent_pstack, v) == PSTACK_V &&
		   offsetof(struct tstate, pstack) + offsetof(struct agent_pstack, top) ==
		       PSTACK_TOP &&
		   offsetof(struct tstate, pstack) + offsetof(struct agent_pstack, lim) ==
		       PSTACK_LIM,
	       "tramp.h: struct agent_pstack");
_Static_assert(offsetof(struct shadow, slot) == SHADOW_SLOT &&
		   offsetof(struct shadow, ret) == SHADOW_RETA &&
		   offsetof(struct shadow, fn) == SHADOW_FN &&
		   offsetof(struct shadow, hook) == SHADOW_HOOK &&
		   sizeof(struct shadow) == 1u << SHADOW_SIZE_LOG2 &&
		   PATCH_STUB_EXIT - PATCH_STUB_HEAD == STUB_EXIT_PAST_CALL,
	       "tramp.h: struct shadow");
_Static_assert(EV_PAIR_BIT == 1ull << PAIR_BIT && EV_PAIR_DUR_SHIFT == PAIR_DUR_SHIFT &&
		   EV_PAIR_DUR_MAX == PAIR_DUR_MAX && EV_PAIR_FN_MIN == PAIR_FN_MIN,
	       "tramp.h: the PAIR record");
_Static_assert(offsetof(struct tstate, pos) == TSTATE_POS &&
		   offsetof(struct tstate, end) == TSTATE_END &&
		   offsetof(struct tstate, busy) == TSTATE_BUSY && sizeof(agent_filter_on) == 1,
	       "tramp.h: struct tstate");

void agent_patch_thread_end(void)
{
	struct agent_pstack *s = &fxt__patch_pstack;
	void *v = s->v;

	s->ended = true;
	if (!v)
		return;
	s->lim = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->v = NULL;
	s->parked = 0;
	munmap((struct shadow *)v - 1, SHADOW_BYTES);
}

static void patch_lost(uint64_t *sp)
{
	agent_err("patched function returned with an unknown stack (%p): aborting", (void *)sp);
}

uint64_t fxt__patch_exit(uint64_t *sp)
{
	struct agent_pstack *s = &fxt__patch_pstack;
	uint64_t *slot = sp - 1;

	pop_gone(s, slot - 1);
	if (__builtin_expect(depth(s) && s->top[-1].slot == slot, 1)) {
		struct shadow e = s->top[-1];
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->top--;
		if (__builtin_expect(e.fn >> 47, 0)) {
			/* An integer result (or nothing), the common case. */
			uint32_t caps = SHADOW_RET_CAPS(e.fn);
			unsigned idx = SHADOW_COND(e.fn);
			if (idx == PATCH_COND_APART)
				record(shadow_exit(e.fn));
			else if (!(caps & ~(FXT_CAP_RAX | FXT_CAP_RDX)) && !idx)
				record_ints(shadow_exit(e.fn), sp, caps, true);
			else
				fxt__patch_exit_args(e.fn, sp);
			return e.ret;
		}
		record(e.fn | SPOOL_EXIT_BIT);
		return e.ret;
	}
	/* Deeper down: the frames above it are gone (a handler on the
	 * alternate signal stack left by siglongjmp()). */
	for (uint32_t i = depth(s); i-- > 0;)
		if (s->v[i].slot == slot) {
			uint64_t ret = s->v[i].ret;
			while (depth(s) > i) {
				s->top--;
				record(shadow_exit(s->top->fn));
			}
			return ret;
		}
	/* A frame taken for gone: the program switched stacks (a coroutine)
	 * and came back.  Its exit is recorded already. */
	uint32_t kept = s->parked < PARKED_MAX ? s->parked : PARKED_MAX;
	for (uint32_t k = 1; k <= kept; k++) {
		struct shadow *e = &s->v[SHADOW_MAX + (s->parked - k) % PARKED_MAX];
		if (e->slot == slot) {
			e->slot = NULL;
			return e->ret;
		}
	}
	/* A return into the trampoline that no entry explains (more frames
	 * parked than the ring keeps).  There is no way back to where it
	 * came from. */
	fxt__patch_call_saving((void *)patch_lost, (uint64_t)(uintptr_t)sp, 0, 0, 0);
	abort();
}

/* ----------------------------------------------------------- sampling */

uint64_t agent_patch_sampled_ret(const uint64_t *slot, uint32_t *from)
{
	const struct agent_pstack *s = &fxt__patch_pstack;
	const struct shadow *v = s->v;
	uint32_t n = depth(s), top;

	if (!v || !slot)
		return 0;
	/* The live entries, from the one the walk found last down: the
	 * frames come innermost first, as the entries are pushed.  Then the
	 * ones above it, for a walk out of that order (a handler on the
	 * alternate signal stack, whose slots lie elsewhere). */
	top = *from < n ? *from : n;
	for (uint32_t i = top; i-- > 0;)
		if (v[i].slot == slot) {
			*from = i;
			return v[i].ret;
		}
	for (uint32_t i = n; i-- > top;)
		if (v[i].slot == slot)
			return v[i].ret;
	/* Popped, its return address not back in the slot yet: the exit
	 * trampoline between fxt__patch_exit() and its write, or a tail
	 * call's entry between pop_gone() and its own.  The entry stays as
	 * it was until the next one is counted, which marks it unknown
	 * (UINTPTR_MAX) first. */
	if (n < SHADOW_MAX && v[n].slot == slot)
		return v[n].ret;
	/* Taken for gone, on a stack the program switched back to. */
	uint32_t kept = s->parked < PARKED_MAX ? s->parked : PARKED_MAX;
	for (uint32_t k = 1; k <= kept; k++) {
		const struct shadow *e = &v[SHADOW_MAX + (s->parked - k) % PARKED_MAX];
		if (e->slot == slot)
			return e->ret;
	}
	return 0;
}

uint64_t agent_patch_sampled_call(uint64_t fn, const uint64_t *sp, const uint64_t **slot)
{
	const struct agent_pstack *s = &fxt__patch_pstack;
	const struct shadow *v = s->v;
	uint32_t n = depth(s);

	/* Its entry is the last one, filled: fxt__patch_enter() returned. */
	if (!v || !n || PATCH_FN(v[n - 1].fn) != fn || v[n - 1].slot < sp ||
	    v[n - 1].slot == (uint64_t *)UINTPTR_MAX)
		return 0;
	*slot = v[n - 1].slot;
	return v[n - 1].ret;
}

/* ---------------------------------------------------------- unwinding */

/* Whether entry e is filled: a signal handler may walk the stack while
 * fxt__patch_enter() is between counting an entry and filling it (its
 * slot is still UINTPTR_MAX then, its return address not hooked yet). */
static bool filled(const struct shadow *e)
{
	return e->slot != (uint64_t *)UINTPTR_MAX;
}

/* Puts the real return addresses back in every hooked slot. */
static void restore_all(struct agent_pstack *s)
{
	for (uint32_t i = 0, n = depth(s); i < n; i++)
		if (filled(&s->v[i]) && *s->v[i].slot == s->v[i].hook)
			*s->v[i].slot = s->v[i].ret;
}

/* After an unwinding that stopped in the frame whose stack pointer is
 * `sp`: the frames below it are gone (their exits are recorded now), the
 * others hooked again. */
static void rearm(struct agent_pstack *s, uint64_t *sp)
{
	pop_gone(s, sp - 1);
	for (uint32_t i = 0, n = depth(s); i < n; i++)
		if (filled(&s->v[i]) && *s->v[i].slot == s->v[i].ret)
			*s->v[i].slot = s->v[i].hook;
}

/* The caller's stack pointer: above our return address (frame pointers
 * are kept in the agent). */
#define CALLER_SP() ((uint64_t *)__builtin_frame_address(0) + 2)

#define REAL(type, name)                                                    \
	static type real_##name;                                            \
	if (!real_##name)                                                   \
		*(void **)&real_##name = dlsym(RTLD_NEXT, #name);           \
	if (!real_##name) {                                                 \
		agent_err(#name ": not found after the agent's; aborting"); \
		abort();                                                    \
	}

struct _Unwind_Exception;
struct _Unwind_Context;
typedef int unwind_code;
typedef unwind_code unwind_stop_fn(int, int, uint64_t, struct _Unwind_Exception *,
				   struct _Unwind_Context *, void *);
typedef unwind_code unwind_trace_fn(struct _Unwind_Context *, void *);

typedef unwind_code raise_fn(struct _Unwind_Exception *);
typedef unwind_code forced_fn(struct _Unwind_Exception *, unwind_stop_fn *, void *);
typedef unwind_code backtrace_fn(unwind_trace_fn *, void *);
typedef void *begin_catch_fn(void *);

__attribute__((visibility("default"))) unwind_code
_Unwind_RaiseException(struct _Unwind_Exception *e);
__attribute__((visibility("default"))) unwind_code
_Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e);
__attribute__((visibility("default"))) unwind_code
_Unwind_ForcedUnwind(struct _Unwind_Exception *e, unwind_stop_fn *stop, void *arg);
__attribute__((visibility("default"))) unwind_code _Unwind_Backtrace(unwind_trace_fn *fn,
								     void *arg);
__attribute__((visibility("default"))) void *__cxa_begin_catch(void *e);

/* Throwing (real is _Unwind_RaiseException or _Unwind_Resume_or_Rethrow,
 * sp the thrower's stack pointer): the unwinder must see real return
 * addresses.  It returns only when nothing caught the exception (the
 * caller then terminates): nothing was unwound, every frame is hooked
 * again. */
static unwind_code throwing(raise_fn *real, struct _Unwind_Exception *e, uint64_t *sp)
{
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack);
	if (on)
		restore_all(&fxt__patch_pstack);
	unwind_code rc = real(e);
	if (on)
		rearm(&fxt__patch_pstack, sp);
	return rc;
}

unwind_code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	REAL(raise_fn *, _Unwind_RaiseException);
	return throwing(real__Unwind_RaiseException, e, CALLER_SP());
}

unwind_code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	REAL(raise_fn *, _Unwind_Resume_or_Rethrow);
	return throwing(real__Unwind_Resume_or_Rethrow, e, CALLER_SP());
}

/* pthread_exit() and cancellation: the thread's frames go; their exits are
 * left to the end of the thread. */
unwind_code _Unwind_ForcedUnwind(struct _Unwind_Exception *e, unwind_stop_fn *stop, void *arg)
{
	REAL(forced_fn *, _Unwind_ForcedUnwind);
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack))
		restore_all(&fxt__patch_pstack);
	return real__Unwind_ForcedUnwind(e, stop, arg);
}

/* The agent's own _Unwind_RaiseException, not what the loader binds the
 * name to (which is what the program uses). */
extern __typeof__(_Unwind_RaiseException) fxt__patch_own_raise
    __attribute__((alias("_Unwind_RaiseException"), visibility("hidden")));

bool agent_patch_unwinder_ours(void)
{
	void *p = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	return !p || p == (void *)fxt__patch_own_raise;
}

void agent_patch_thread_unwinds(void)
{
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack))
		restore_all(&fxt__patch_pstack);
}

/* The agent's own ELF header, where its program headers say where its
 * code was loaded: read without a lock (backtraces are taken in signal
 * handlers, where dl_iterate_phdr() may deadlock). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

/* Whether the return address `pc` is in the agent's own code: the frame of
 * one of its entry points, of its pthread_create trampoline (under every
 * thread's start routine), of its signal handlers: frames the program
 * does not have without the agent. */
static bool in_agent_text(uintptr_t pc)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	const ElfW(Phdr) *ph = (const void *)((const char *)eh + eh->e_phoff);
	uintptr_t bias = 0;

	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
			bias = (uintptr_t)eh - ph[i].p_vaddr;
			break;
		}
	/* A return address may be just past its call's function. */
	pc--;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    pc - (bias + ph[i].p_vaddr) < ph[i].p_memsz)
			return true;
	return false;
}

/* The caller's callback, behind one that passes over the frames in the
 * agent's code: the agent's _Unwind_Backtrace first, which its caller's
 * would be without the agent, and the pthread_create trampoline's last.
 * get_ip is the unwinder's own (its context is its own). */
typedef uintptr_t get_ip_fn(struct _Unwind_Context *);

struct trace_skip {
	unwind_trace_fn *fn;
	void *arg;
	get_ip_fn *get_ip;
};

static unwind_code trace_skipping(struct _Unwind_Context *ctx, void *arg)
{
	struct trace_skip *t = arg;

	if (in_agent_text(t->get_ip(ctx)))
		return 0; /* _URC_NO_REASON */
	return t->fn(ctx, t->arg);
}

/* A backtrace walks the frames and leaves them: hooked again after.  The
 * callback sees the frames it would see without the agent. */
unwind_code _Unwind_Backtrace(unwind_trace_fn *fn, void *arg)
{
	REAL(backtrace_fn *, _Unwind_Backtrace);
	REAL(get_ip_fn *, _Unwind_GetIP);
	struct trace_skip t = { fn, arg, real__Unwind_GetIP };
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack);
	if (on)
		restore_all(&fxt__patch_pstack);
	unwind_code rc = real__Unwind_Backtrace(trace_skipping, &t);
	if (on)
		rearm(&fxt__patch_pstack, CALLER_SP());
	return rc;
}

/* Leaves the addresses in the agent's code out of v[0..n): how many are
 * left, in their order. */
static int leave_out_agent(void **v, int n)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		if (!in_agent_text((uintptr_t)v[i]))
			v[m++] = v[i];
	return m;
}

/* backtrace(3) and the like (real), called from the agent's of the same
 * name, whose caller's stack pointer is sp.  The real return addresses
 * are put back around the walk.  The addresses in the agent's code (the
 * entry point's first, the thread trampoline's last) are left out; when
 * the walk filled the buffer and that left room, it is walked again with
 * room for as many more, in pages of their own (backtraces are taken in
 * crash handlers, where malloc() is not safe), until the buffer is full
 * of the program's frames or the walk ends before the room does. */
typedef int walk_fn(void **, int);

static inline __attribute__((always_inline)) int walk_for_caller(walk_fn *real, void **array,
								 int size, uint64_t *sp)
{
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack);
	int n, m, room = size, tries = 4;

	if (on)
		restore_all(&fxt__patch_pstack);
	n = real(array, size);
	m = n > 0 ? leave_out_agent(array, n) : 0;
	while (n == room && m < size && size - m <= INT_MAX - 8 - room && tries--) {
		room += size - m + 8;
		size_t len = (size_t)room * sizeof(void *);
		void **v =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED)
			break;
		n = real(v, room);
		int k = n > 0 ? leave_out_agent(v, n) : 0;
		if (k > m) {
			m = k < size ? k : size;
			memcpy(array, v, (size_t)m * sizeof(void *));
		}
		munmap(v, len);
	}
	if (on)
		rearm(&fxt__patch_pstack, sp);
	return m;
}

/* The C library's backtrace() calls the unwinder through a pointer of its
 * own (it loads libgcc_s itself), not through the agent's
 * _Unwind_Backtrace. */
__attribute__((visibility("default"))) int backtrace(void **array, int size);
int backtrace(void **array, int size)
{
	REAL(walk_fn *, backtrace);
	return walk_for_caller(real_backtrace, array, size, CALLER_SP());
}

/* libunwind's, which walks with an unwinder of its own. */
__attribute__((visibility("default"))) int unw_backtrace(void **array, int size);
int unw_backtrace(void **array, int size)
{
	REAL(walk_fn *, unw_backtrace);
	return walk_for_caller(real_unw_backtrace, array, size, CALLER_SP());
}

/* A catch: the frames between the throw and the catching one are gone. */
void *__cxa_begin_catch(void *e)
{
	REAL(begin_catch_fn *, __cxa_begin_catch);
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && depth(&fxt__patch_pstack))
		rearm(&fxt__patch_pstack, CALLER_SP());
	return real___cxa_begin_catch(e);
}
