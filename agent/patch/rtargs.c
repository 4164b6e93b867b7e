/* Run-time patching's handlers for fxt-run --args/--retval and the
 * snapshot tests of values (run/argspec.h): what they read at a patched
 * function's entry and return, and how they record it (REG records,
 * spool/records.h).  Compiled as rt.c is, general registers only (rt.h).
 */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#include "agent/patch/rt.h"

#include "agent/agent.h" /* after rt.h: its slow paths */
#include "agent/sys.h"

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

uint64_t *fxt__patch_slow_n(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts, bool count)
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

/* The string at ptr read by the kernel (process_vm_readv() of the
 * process's own memory: never a fault) into the REG at p, in place. */
static unsigned read_by_kernel(uint64_t *p, uint64_t ptr)
{
	struct {
		void *base;
		size_t len;
	} local[2] = { { p, EV_REG_STR_HEAD }, { p + 2, FXT_ARG_STR_MAX + 1 - EV_REG_STR_HEAD } },
	  remote = { (void *)(uintptr_t)ptr, FXT_ARG_STR_MAX + 1 };
	long n;

	/* The agent's pid, kept up to date across fork() (a child made by a
	 * raw clone() would read its parent's memory, or nothing: never a
	 * fault).  One system call rather than two. */
	n = agent_sys_raw6(SYS_process_vm_readv,
			   (long)__atomic_load_n(&agent.pid, __ATOMIC_RELAXED),
			   (long)(uintptr_t)local, 2, (long)(uintptr_t)&remote, 1, 0);
	if (n <= 0)
		return put_string_unreadable(p, ptr);
	for (long i = 0; i < n; i++) {
		const char *b = (const char *)(i < (long)EV_REG_STR_HEAD ? p : p + 1) + i;

		if (*b == '\0')
			return put_string_read(p, (size_t)i, false);
	}
	return put_string_read(p, (size_t)n, true);
}

unsigned fxt__patch_put_string_slow(uint64_t *p)
{
	uint64_t ptr = p[0];

	return ptr < 4096 ? put_string_unreadable(p, ptr) : read_by_kernel(p, ptr);
}

static inline __attribute__((always_inline)) void capture(struct captured *c, unsigned reg,
							  uint64_t val, uint64_t fn, bool string)
{
	unsigned i = c->n++;

	c->v[i].w0 = val;
	c->v[i].w1 = ev_reg_w1(reg, fn);
	c->strs |= (uint32_t)string << i;
	c->slots += string ? CAPTURED_STR_SLOTS : 1;
}

/* The snapshot value rule's test `idx` of a call of fn, its value read
 * (regs[], by enum fxt_reg): a snapshot if it passes. */
static void test_value(unsigned idx, uint64_t fn, const uint64_t *regs)
{
	const struct agent_patch_cond *c = &agent_patch_conds[idx];
	const struct fxt_snapshot_rule *r = &agent_cfg.snap_rules[c->rule];

	/* (A bool comes back in al: the rest of rax is anything.) */
	if (c->rule >= agent_cfg.nsnap_rules ||
	    !(uint8_t)fxt__patch_call_saving((void *)run_snapshot_value_holds,
					     (uint64_t)(uintptr_t)r, regs[c->reg], c->width,
					     c->is_signed))
		return;
	fxt__patch_call_saving((void *)agent_snapshot_fn, (uint64_t)(uintptr_t)&agent_tls, fn,
			       c->rule, 0);
}

/* Whether the --include pattern's test `idx` passes for a call whose
 * registers are regs[] (by enum fxt_reg). */
static bool include_holds(unsigned idx, const uint64_t *regs)
{
	const struct agent_patch_cond *c = &agent_patch_conds[idx];

	/* (A bool comes back in al: the rest of rax is anything.) */
	return c->rule < agent_ninclude_tests &&
	       (uint8_t)fxt__patch_call_saving((void *)run_snapshot_value_holds,
					       (uint64_t)(uintptr_t)agent_include_tests[c->rule].rule,
					       regs[c->reg], c->width, c->is_signed);
}

bool fxt__patch_enter_args(uint64_t quad, uint64_t *slot)
{
	struct patch_spec spec = patch_spec_of(quad, slot), *sp = &spec;
	uint64_t fn = sp->fn;
	uint32_t caps = sp->caps;
	uint64_t regs[FXT_REG_COUNT];
	struct captured c;

	/* Read before the entry is recorded, to go in its reservation. */
	c.n = c.slots = c.strs = 0;
	if (caps & FXT_CAP_ENTRY & ~(FXT_CAP_XMM(0) - 1))
		read_xmm(regs + FXT_REG_XMM0);
	for (unsigned i = 0; i < FXT_ARG_GPRS; i++) {
		regs[FXT_REG_GPR0 + i] = slot[-(long)(SAVED_RDI + i)];
		if (caps & FXT_CAP_GPR(i))
			capture(&c, FXT_REG_GPR0 + i, regs[FXT_REG_GPR0 + i], fn,
				(caps & FXT_CAP_STR(i)) != 0);
	}
	if (caps & FXT_CAP_ENTRY & ~(FXT_CAP_XMM(0) - 1))
		for (unsigned i = 0; i < FXT_ARG_XMMS; i++)
			if (caps & FXT_CAP_XMM(i))
				capture(&c, FXT_REG_XMM0 + i, regs[FXT_REG_XMM0 + i], fn, false);
	/* Its --include pattern's test: the filter gets the verdict with the
	 * hook of its entry, and (the shadow entry keeps it) of its exit. */
	bool held = sp->incl && include_holds(sp->incl, regs);
	bool pushed =
	    held ? fxt__patch_push(fn | AGENT_FILTER_HELD, slot, sp->tagged | SHADOW_HELD, &c)
		 : fxt__patch_push(fn, slot, sp->tagged, &c);
	if (pushed && sp->at_entry)
		test_value(sp->idx, fn, regs);
	return pushed;
}


/* A patched call's return that reads more than rax and rdx, or tests a
 * value (the exit handler popped its frame, and records the integer
 * results itself): records the values and the exit, then tests. */
void fxt__patch_exit_args(uint64_t tagged, const uint64_t *sp)
{
	uint32_t caps = SHADOW_RET_CAPS(tagged);
	uint64_t xmm[FXT_ARG_XMMS], regs[FXT_REG_COUNT], fn = PATCH_FN(tagged);
	unsigned idx = SHADOW_COND(tagged);
	struct captured c;

	if ((caps & (FXT_CAP_XMM0 | FXT_CAP_XMM1)) ||
	    (idx && agent_patch_conds[idx].reg >= FXT_REG_RET_XMM0))
		read_xmm(xmm);
	else
		xmm[0] = xmm[1] = 0;
	c.n = c.slots = c.strs = 0;
	regs[FXT_REG_RAX] = sp[-SAVED_RAX];
	regs[FXT_REG_RDX] = sp[-SAVED_RDX];
	regs[FXT_REG_RET_XMM0] = xmm[0];
	regs[FXT_REG_RET_XMM1] = xmm[1];
	if (caps & FXT_CAP_RAX)
		capture(&c, FXT_REG_RAX, regs[FXT_REG_RAX], fn, (caps & FXT_CAP_RET_STR) != 0);
	if (caps & FXT_CAP_RDX)
		capture(&c, FXT_REG_RDX, regs[FXT_REG_RDX], fn, false);
	if (caps & FXT_CAP_XMM0)
		capture(&c, FXT_REG_RET_XMM0, xmm[0], fn, false);
	if (caps & FXT_CAP_XMM1)
		capture(&c, FXT_REG_RET_XMM1, xmm[1], fn, false);
	record_with(&c, shadow_exit(tagged));
	if (idx)
		test_value(idx, fn, regs);
}
