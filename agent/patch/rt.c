/* Run-time patching, the runtime (see patch.h): the shadow stack of each
 * thread, the enter and exit handlers the trampolines call, and the
 * unwinder's entry points, which put the real return addresses back.
 *
 * This file is compiled with -mgeneral-regs-only: the handlers run at a
 * patched function's entry and return, where every register must be as
 * the program left it, and the trampolines save only the general ones.
 * What may touch vector registers (the slow path of a record, the
 * filters, the C library) goes through fxt__patch_call_saving
 * (tramp.S), which saves them first. */
#include <config.h>

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Calls fn(a, b, c, d) with xmm0-15 saved around it (tramp.S). */
uint64_t fxt__patch_call_saving(void *fn, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* The slow path of agent_record() (tbuf.h), with the vector registers
 * saved around it: defined before tbuf.h comes in (gates.h has it). */
#define AGENT_TBUF_SLOW(t, p, ts, addr)                                           \
	fxt__patch_call_saving((void *)agent_tbuf_slow, (uint64_t)(uintptr_t)(t), \
			       (uint64_t)(uintptr_t)(p), (ts), (addr))

/* The multi-slot records' slow path likewise (agent/events.h). */
struct tstate;
static uint64_t *slow_n_saving(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts, bool count);
#define AGENT_EV_SLOW_N slow_n_saving

#include "agent/events.h"
#include "agent/gates.h"
#include "agent/log.h"
#include "agent/patch/patch.h"
#include "agent/tbuf.h"
#include "run/argspec.h"

/* One record, as the -finstrument-functions hooks write it (hooks.c):
 * through the filters when they are on. */
static inline __attribute__((always_inline)) void record(uint64_t addr)
{
	if (__builtin_expect(agent_filter_on, 0)) {
		fxt__patch_call_saving((void *)agent_filter_hook, (uint64_t)(uintptr_t)&agent_tls,
				       addr, 0, 0);
		return;
	}
	if (__builtin_expect(agent_clock_tsc, 1)) {
		agent_record_clk(&agent_tls, addr, true);
		return;
	}
	fxt__patch_call_saving((void *)agent_record_mono, (uint64_t)(uintptr_t)&agent_tls, addr, 0,
			       0);
}

/* One patched call in progress: where its return address is, what it was,
 * and the function (PATCH_FN(fn)); above its address, fn holds what to
 * read at its return (SHADOW_RET_CAPS), for --retval. */
struct shadow {
	uint64_t *slot;
	uint64_t ret;
	uint64_t fn;
};

#define SHADOW_RET_SHIFT    27 /* FXT_CAP_RETURN (bits 20..24) -> 47..51 */
#define SHADOW_RET_CAPS(fn) ((uint32_t)((fn) >> SHADOW_RET_SHIFT) & FXT_CAP_RETURN)

/* Deep enough for any recursion a stack of 8 MiB holds (a frame is at
 * least 16 bytes); reserved, not committed: pages come as they are used. */
#define SHADOW_MAX (1u << 19)

/* The last entries popped as gone (see pop_gone()), kept in a ring after
 * the stack: a frame taken for gone that returns after all (the program
 * switched stacks: coroutines, swapcontext()) finds its return address
 * there. */
#define PARKED_MAX   (1u << 12)
#define SHADOW_BYTES ((size_t)(SHADOW_MAX + PARKED_MAX) * sizeof(struct shadow))

struct pstack {
	struct shadow *v; /* NULL until the thread's first patched call */
	uint32_t n;
	uint32_t parked; /* entries ever parked; the ring is v + SHADOW_MAX */
	bool failed;	 /* no memory for it: the thread's patched calls go unrecorded */
	bool ended;	 /* the thread is ending: its stack is given back */
};

static __thread struct pstack pstack __attribute__((tls_model("initial-exec")));

/* Set once something is patched: the unwinder's entry points do their
 * work only then. */
static bool patch_active;

void agent_patch_activate(void);
void agent_patch_activate(void)
{
	__atomic_store_n(&patch_active, true, __ATOMIC_RELEASE);
}

static void *shadow_map(void)
{
	return mmap(NULL, SHADOW_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

static bool shadow_ready(struct pstack *s)
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
 * is done.  Not the frames a signal handler running on the alternate
 * signal stack interrupted, which may lie below it: an entry below
 * `below` on the other side of that stack's bounds stays (asked of the
 * kernel only then, which is rare).  Returns the real return address of
 * the entry whose slot is `below`, if one was popped (the tail call's),
 * else 0. */
static uint64_t pop_gone(struct pstack *s, uint64_t *below)
{
	uint64_t ret = 0;
	bool asked = false;
	struct range alt = { 0, 0 };

	while (s->n && s->v[s->n - 1].slot <= below) {
		struct shadow e = s->v[s->n - 1];
		if (e.slot != below) {
			if (!asked) {
				alt = alt_stack();
				asked = true;
			}
			if (in_range(alt, below) != in_range(alt, e.slot))
				break;
		}
		s->n--;
		if (e.slot == below)
			ret = e.ret;
		else
			s->v[SHADOW_MAX + s->parked++ % PARKED_MAX] = e;
		record(PATCH_FN(e.fn) | SPOOL_EXIT_BIT);
	}
	return ret;
}

/* A patched function's entry: records it and pushes its shadow entry,
 * whose fn is `tagged` (fn, with what to read at its return); whether it
 * did (not for a thread without a shadow stack). */
static inline __attribute__((always_inline)) bool enter(uint64_t fn, uint64_t *slot,
							uint64_t tagged)
{
	struct pstack *s = &pstack;

	if (__builtin_expect(!shadow_ready(s) || s->n >= SHADOW_MAX, 0)) {
		if (!s->ended) /* after its buffer, as the thread's other records */
			count_unrecorded();
		return false;
	}
	uint64_t ret = *slot, tail = pop_gone(s, slot);
	/* A tail call: the slot holds our trampoline, put there for the
	 * caller; the real return address is the caller's. */
	if (ret == (uint64_t)(uintptr_t)fxt__patch_exit_tramp && tail)
		ret = tail;
	record(fn);
	/* A signal handler's calls may come between any two of these steps:
	 * the entry is marked live (an unknown slot is above every other)
	 * before it is counted, and filled after. */
	uint32_t i = s->n;
	s->v[i].slot = (uint64_t *)UINTPTR_MAX;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->n = i + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->v[i].fn = tagged;
	s->v[i].ret = ret;
	/* Filled in this order: an entry whose slot is known has its return
	 * address (agent_patch_sampled_ret()), and a hooked slot its entry. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->v[i].slot = slot;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uint64_t)(uintptr_t)fxt__patch_exit_tramp;
	return true;
}

static void enter_args(uint64_t quad, uint64_t *slot);

void fxt__patch_enter(uint64_t fn, uint64_t *slot)
{
	if (__builtin_expect(fn & PATCH_FN_ARGS, 0)) {
		enter_args(fn, slot);
		return;
	}
	enter(fn, slot, fn);
}

void agent_patch_thread_end(void)
{
	struct pstack *s = &pstack;
	void *v = s->v;

	s->ended = true;
	if (!v)
		return;
	s->v = NULL;
	s->n = 0;
	s->parked = 0;
	munmap(v, SHADOW_BYTES);
}

static void patch_lost(uint64_t *sp)
{
	agent_err("patched function returned with an unknown stack (%p): aborting", (void *)sp);
}

static void exit_args(uint64_t tagged, const uint64_t *sp);

uint64_t fxt__patch_exit(uint64_t *sp)
{
	struct pstack *s = &pstack;
	uint64_t *slot = sp - 1;

	pop_gone(s, slot - 1);
	if (__builtin_expect(s->n && s->v[s->n - 1].slot == slot, 1)) {
		struct shadow e = s->v[s->n - 1];
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->n--;
		if (__builtin_expect(SHADOW_RET_CAPS(e.fn) != 0, 0))
			exit_args(e.fn, sp);
		record(PATCH_FN(e.fn) | SPOOL_EXIT_BIT);
		return e.ret;
	}
	/* Deeper down: the frames above it are gone (a handler on the
	 * alternate signal stack left by siglongjmp()). */
	for (uint32_t i = s->n; i-- > 0;)
		if (s->v[i].slot == slot) {
			uint64_t ret = s->v[i].ret;
			while (s->n > i) {
				s->n--;
				record(PATCH_FN(s->v[s->n].fn) | SPOOL_EXIT_BIT);
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

/* ------------------------------------------- arguments, return values */

/* fxt-run --args/--retval (run/argspec.h): a function whose stub's quad
 * has PATCH_FN_ARGS set has what to read in the quad PATCH_STUB_SPEC
 * bytes before it; the registers are read where the trampolines saved
 * them (tramp.S, SAVE_GPRS: rax rdi rsi rdx rcx r8 r9 r10 r11 pushed in
 * that order below the saved rbp, which is 2 words below the slot at the
 * entry and the stack pointer at the return), the vector ones where
 * they are: nothing here touches them before they are read. */
#define SAVED_RAX 3 /* words below slot (entry) or sp (return) */
#define SAVED_RDI 4
#define SAVED_RDX 6

/* agent_tbuf_slow_n()'s arguments, through fxt__patch_call_saving. */
struct slow_n {
	struct tstate *t;
	uint64_t *p;
	unsigned n;
	uint64_t ts;
	bool count;
};

static uint64_t slow_n_unpack(uint64_t arg)
{
	const struct slow_n *a = (const struct slow_n *)(uintptr_t)arg;

	return (uint64_t)(uintptr_t)agent_tbuf_slow_n(a->t, a->p, a->n, a->ts, a->count);
}

static uint64_t *slow_n_saving(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts, bool count)
{
	struct slow_n a = { t, p, n, ts, count };

	return (uint64_t *)(uintptr_t)fxt__patch_call_saving((void *)slow_n_unpack,
							     (uint64_t)(uintptr_t)&a, 0, 0, 0);
}

/* The low 64 bits of xmm0..7 into x. */
static inline __attribute__((always_inline)) void read_xmm(uint64_t x[FXT_ARG_XMMS])
{
	__asm__ volatile("movq %%xmm0, %0\n\t"
			 "movq %%xmm1, %1\n\t"
			 "movq %%xmm2, %2\n\t"
			 "movq %%xmm3, %3\n\t"
			 : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]));
	__asm__ volatile("movq %%xmm4, %0\n\t"
			 "movq %%xmm5, %1\n\t"
			 "movq %%xmm6, %2\n\t"
			 "movq %%xmm7, %3\n\t"
			 : "=r"(x[4]), "=r"(x[5]), "=r"(x[6]), "=r"(x[7]));
}

static inline long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* A string the program passed: at most FXT_ARG_STR_MAX bytes of it into
 * buf, read by the kernel (process_vm_readv() of the process's own
 * memory), so that a bad pointer, or a page another thread unmaps right
 * then, is an error and never a fault.  Its length; *flags says whether
 * it was cut (no NUL in the first FXT_ARG_STR_MAX bytes, or the memory
 * ended before one) or could not be read at all (NULL included). */
static size_t read_string(uint64_t p, char buf[FXT_ARG_STR_MAX + 1], uint64_t *flags)
{
	struct {
		void *base;
		size_t len;
	} local = { buf, FXT_ARG_STR_MAX + 1 },
	  remote = { (void *)(uintptr_t)p, FXT_ARG_STR_MAX + 1 };
	long n;

	*flags = 0;
	if (p < 4096) {
		*flags = EV_STR_UNREADABLE;
		return 0;
	}
	n = raw_syscall6(SYS_process_vm_readv, raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0),
			 (long)(uintptr_t)&local, 1, (long)(uintptr_t)&remote, 1, 0);
	if (n <= 0) {
		*flags = EV_STR_UNREADABLE;
		return 0;
	}
	for (long i = 0; i < n; i++)
		if (buf[i] == '\0')
			return (size_t)i;
	*flags = EV_STR_TRUNCATED;
	return n > (long)FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX : (size_t)n;
}

/* DATA slots of `len` bytes of s, without memcpy (the C library's may
 * use the vector registers). */
static void put_bytes(uint64_t *p, const char *s, size_t len)
{
	for (size_t at = 0; at < len; at += EV_DATA_BYTES, p += 2) {
		uint64_t a = 0, b = 0;

		for (size_t k = 0; k < 8 && at + k < len; k++)
			a |= (uint64_t)(uint8_t)s[at + k] << (8 * k);
		for (size_t k = 8; k < EV_DATA_BYTES && at + k < len; k++)
			b |= (uint64_t)(uint8_t)s[at + k] << (8 * (k - 8));
		p[0] = a;
		p[1] = ev_tag_bits(EV_TAG_DATA) | b;
	}
}

/* The values to record: up to 6 + 8 registers, of which up to 6 strings. */
struct captured {
	unsigned n, slots;
	uint8_t reg[FXT_ARG_GPRS + FXT_ARG_XMMS];
	uint64_t val[FXT_ARG_GPRS + FXT_ARG_XMMS];
	int8_t str[FXT_ARG_GPRS + FXT_ARG_XMMS]; /* its string's index, or -1 */
	uint64_t str_flags[FXT_ARG_GPRS];
	size_t str_len[FXT_ARG_GPRS];
	char strs[FXT_ARG_GPRS][FXT_ARG_STR_MAX + 1];
	unsigned nstr;
};

static void capture(struct captured *c, unsigned reg, uint64_t val, bool string)
{
	unsigned i = c->n++;

	c->reg[i] = (uint8_t)reg;
	c->val[i] = val;
	c->str[i] = -1;
	c->slots++;
	if (string && c->nstr < FXT_ARG_GPRS) {
		unsigned k = c->nstr++;

		c->str[i] = (int8_t)k;
		c->str_len[k] = read_string(val, c->strs[k], &c->str_flags[k]);
		c->slots += 1 + ev_data_slots(c->str_len[k]);
	}
}

/* Writes c's values as REG records of fn (one reservation: consecutive,
 * a signal handler's records before or after them). */
static void put_captured(const struct captured *c, uint64_t fn)
{
	struct tstate *t = &agent_tls;
	uint64_t *p;

	if (!c->n || !t->tb)
		return;
	p = agent_ev_begin(t, c->slots, 0, false);
	if (p) {
		for (unsigned i = 0; i < c->n; i++) {
			int k = c->str[i];

			p[0] = c->val[i];
			p[1] = ev_reg_w1(c->reg[i], fn, k >= 0);
			p += 2;
			if (k < 0)
				continue;
			p[0] = c->str_len[k];
			p[1] = ev_str_w1(0, c->str_flags[k]);
			put_bytes(p + 2, c->strs[k], c->str_len[k]);
			p += 2 + 2 * ev_data_slots(c->str_len[k]);
		}
	}
	agent_ev_end(t);
}

static __attribute__((noinline)) void enter_args(uint64_t quad, uint64_t *slot)
{
	uint64_t xmm[FXT_ARG_XMMS], fn = PATCH_FN(quad);
	const uint8_t *stub_ret = (const uint8_t *)(uintptr_t)slot[-1];
	uint32_t caps =
	    (uint32_t) * (const uint64_t *)(stub_ret - PATCH_STUB_HEAD - PATCH_STUB_SPEC);
	struct captured c;

	if (caps & FXT_CAP_ENTRY & ~(FXT_CAP_XMM(0) - 1))
		read_xmm(xmm);
	if (!enter(fn, slot, fn | ((uint64_t)(caps & FXT_CAP_RETURN) << SHADOW_RET_SHIFT)) ||
	    !(caps & FXT_CAP_ENTRY))
		return;
	c.n = c.slots = c.nstr = 0;
	for (unsigned i = 0; i < FXT_ARG_GPRS; i++)
		if (caps & FXT_CAP_GPR(i))
			capture(&c, FXT_REG_GPR0 + i, slot[-(long)(SAVED_RDI + i)],
				(caps & FXT_CAP_STR(i)) != 0);
	for (unsigned i = 0; i < FXT_ARG_XMMS; i++)
		if (caps & FXT_CAP_XMM(i))
			capture(&c, FXT_REG_XMM0 + i, xmm[i], false);
	put_captured(&c, fn);
}

static __attribute__((noinline)) void exit_args(uint64_t tagged, const uint64_t *sp)
{
	uint32_t caps = SHADOW_RET_CAPS(tagged);
	uint64_t xmm[FXT_ARG_XMMS];
	struct captured c;

	if (caps & (FXT_CAP_XMM0 | FXT_CAP_XMM1))
		read_xmm(xmm);
	c.n = c.slots = c.nstr = 0;
	if (caps & FXT_CAP_RAX)
		capture(&c, FXT_REG_RAX, sp[-SAVED_RAX], (caps & FXT_CAP_RET_STR) != 0);
	if (caps & FXT_CAP_RDX)
		capture(&c, FXT_REG_RDX, sp[-SAVED_RDX], false);
	if (caps & FXT_CAP_XMM0)
		capture(&c, FXT_REG_RET_XMM0, xmm[0], false);
	if (caps & FXT_CAP_XMM1)
		capture(&c, FXT_REG_RET_XMM1, xmm[1], false);
	put_captured(&c, PATCH_FN(tagged));
}

/* ----------------------------------------------------------- sampling */

uint64_t agent_patch_sampled_ret(const uint64_t *slot, uint32_t *from)
{
	const struct pstack *s = &pstack;
	const struct shadow *v = s->v;
	uint32_t n = s->n, top;

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
	const struct pstack *s = &pstack;
	const struct shadow *v = s->v;
	uint32_t n = s->n;

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
static void restore_all(struct pstack *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (filled(&s->v[i]) && *s->v[i].slot == (uint64_t)(uintptr_t)fxt__patch_exit_tramp)
			*s->v[i].slot = s->v[i].ret;
}

/* After an unwinding that stopped in the frame whose stack pointer is
 * `sp`: the frames below it are gone (their exits are recorded now), the
 * others hooked again. */
static void rearm(struct pstack *s, uint64_t *sp)
{
	pop_gone(s, sp - 1);
	for (uint32_t i = 0; i < s->n; i++)
		if (filled(&s->v[i]) && *s->v[i].slot == s->v[i].ret)
			*s->v[i].slot = (uint64_t)(uintptr_t)fxt__patch_exit_tramp;
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
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n;
	if (on)
		restore_all(&pstack);
	unwind_code rc = real(e);
	if (on)
		rearm(&pstack, sp);
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
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n)
		restore_all(&pstack);
	return real__Unwind_ForcedUnwind(e, stop, arg);
}

void agent_patch_thread_unwinds(void)
{
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n)
		restore_all(&pstack);
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
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n;
	if (on)
		restore_all(&pstack);
	unwind_code rc = real__Unwind_Backtrace(trace_skipping, &t);
	if (on)
		rearm(&pstack, CALLER_SP());
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
	bool on = __atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n;
	int n, m, room = size, tries = 4;

	if (on)
		restore_all(&pstack);
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
		rearm(&pstack, sp);
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
	if (__atomic_load_n(&patch_active, __ATOMIC_ACQUIRE) && pstack.n)
		rearm(&pstack, CALLER_SP());
	return real___cxa_begin_catch(e);
}
