/* Stack sampling's walk (see walk.h): libunwind, loaded when sampling is
 * set up, and the walk from a signal's context, through run-time
 * patching's trampolines and stubs (their addresses and shadow stacks:
 * agent/gates.h). */
#include <config.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "agent/gates.h"
#include "agent/log.h"
#include "agent/sample/walk.h"

/* libunwind, loaded with dlopen(RTLD_LOCAL) when sampling is set up, not
 * linked to the agent: its _Unwind_* entry points (a second unwinder with
 * GCC's interface) would then come before libgcc_s's for the whole
 * program, whose C++ exceptions would be thrown by libunwind (and, in a
 * program built -static-libgcc, resumed by its own copy of libgcc's:
 * abort). */
static struct {
	__typeof__(unw_init_local2) *init_local2;
	__typeof__(unw_init_local) *init_local;
	__typeof__(unw_get_reg) *get_reg;
	__typeof__(unw_is_signal_frame) *is_signal_frame;
	__typeof__(unw_step) *step;
	__typeof__(unw_set_caching_policy) *set_caching_policy;
	__typeof__(unw_flush_cache) *flush_cache;
	__typeof__(unw_tdep_getcontext) *getcontext;
	__typeof__(unw_local_addr_space) *local_addr_space;
} unw;

#define STR(x)	#x
#define NAME(x) STR(x) /* the symbol a libunwind.h macro names */

static bool load_libunwind(void)
{
	static const char *const sonames[] = { "libunwind.so.8", "libunwind.so" };
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(sonames) / sizeof(sonames[0]); i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		agent_dbg("libunwind: %s: no sampling", dlerror());
		return false;
	}
	*(void **)&unw.init_local2 = dlsym(h, NAME(unw_init_local2));
	*(void **)&unw.init_local = dlsym(h, NAME(unw_init_local));
	*(void **)&unw.get_reg = dlsym(h, NAME(unw_get_reg));
	*(void **)&unw.is_signal_frame = dlsym(h, NAME(unw_is_signal_frame));
	*(void **)&unw.step = dlsym(h, NAME(unw_step));
	*(void **)&unw.set_caching_policy = dlsym(h, NAME(unw_set_caching_policy));
	*(void **)&unw.flush_cache = dlsym(h, NAME(unw_flush_cache));
	*(void **)&unw.getcontext = dlsym(h, NAME(unw_tdep_getcontext));
	unw.local_addr_space = dlsym(h, NAME(unw_local_addr_space));
	if (!unw.init_local2 || !unw.init_local || !unw.get_reg || !unw.is_signal_frame ||
	    !unw.step || !unw.set_caching_policy || !unw.flush_cache || !unw.getcontext ||
	    !unw.local_addr_space) {
		agent_dbg("libunwind: a function is missing: no sampling");
		return false;
	}
	return true;
}

bool agent_sample_unwind_setup(void)
{
	unw_context_t uc;
	unw_cursor_t cur;

	if (!load_libunwind())
		return false;
	/* A cache per thread: no lock shared with other threads' handlers
	 * (see sample.h). */
	unw.set_caching_policy(*unw.local_addr_space, UNW_CACHE_PER_THREAD);
	if (unw.getcontext(&uc) == 0 && unw.init_local(&cur, &uc) == 0)
		while (unw.step(&cur) > 0)
			;
	return true;
}

void agent_sample_unwind_forget(void)
{
	unw.flush_cache(*unw.local_addr_space, 0, 0);
}

#if defined(__x86_64__)
/* ------------------------------------------------------------ patched calls
 *
 * Run-time patching (patch.h) puts its stub's exit (PATCH_STUB_EXIT) in
 * the return address's slot of each patched call in progress, and keeps
 * the real one in the thread's shadow stack.  The walk takes that address
 * (or fxt__patch_exit_tramp's, where the function just returned) for the
 * real one (agent_patch_sampled_ret()) and walks on from there
 * with a cursor of its own, whose context is the caller's: its pc the
 * real return address, its stack pointer above the slot, the registers a
 * callee keeps as libunwind found them.  Nothing is written to the stack,
 * whatever the interrupted code was doing.  A frame in
 * fxt__patch_enter_tramp was called by the patched function's stub, which
 * has no unwind information: the stub's frame is the function's at its
 * entry (the function is read from the stub as the trampoline reads it,
 * before its return address: PATCH_STUB_HEAD), its return address above
 * it.  A sample that lands in a stub (agent_patch_stub()) is in its
 * function: at the stub's entry, as at the function's; past its call of
 * the trampoline, in the first instructions of the function, moved
 * there, or at its exit, whose slot the thread's last shadow entry gives
 * (agent_patch_sampled_call()): where the stub calls those instructions,
 * or the function returned to its exit, that slot is just below the
 * stack pointer. */

/* The registers a walk on from a frame needs: the callee-saved ones. */
static const struct {
	int unw, greg;
} kept_regs[] = {
	{ UNW_X86_64_RBX, REG_RBX }, { UNW_X86_64_RBP, REG_RBP }, { UNW_X86_64_R12, REG_R12 },
	{ UNW_X86_64_R13, REG_R13 }, { UNW_X86_64_R14, REG_R14 }, { UNW_X86_64_R15, REG_R15 },
};

/* Moves the cursor to the frame that returns to `pc` with its stack
 * pointer at `sp`, the other registers those of the cursor's frame, but
 * for a frame pointer set up by the function's first instructions (run
 * in its stub: it points below the return address, at the caller's).
 * false: no walk on from there. */
static bool walk_on(unw_cursor_t *cur, ucontext_t *at, uint64_t pc, uint64_t sp)
{
	enum { NKEPT = sizeof(kept_regs) / sizeof(kept_regs[0]) };
	unw_word_t v[NKEPT];

	if (!pc)
		return false;
	/* Read before `at` is written: the cursor may read them there (its
	 * context when the walk went on once already). */
	for (size_t i = 0; i < NKEPT; i++) {
		if (unw.get_reg(cur, kept_regs[i].unw, &v[i]) < 0)
			v[i] = 0;
		if (kept_regs[i].unw == UNW_X86_64_RBP && v[i] == sp - 16)
			v[i] = *(const uint64_t *)(uintptr_t)v[i];
	}
	memset(at, 0, sizeof(*at));
	for (size_t i = 0; i < NKEPT; i++)
		at->uc_mcontext.gregs[kept_regs[i].greg] = (greg_t)v[i];
	at->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	at->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	return unw.init_local2(cur, (unw_context_t *)at, 0) == 0;
}

/* Whether pc is a stub's exit: a patched call's hooked return address. */
static bool is_stub_exit(uint64_t pc)
{
	uint64_t stub = agent_patch_stub(pc);

	return stub && pc == stub + PATCH_STUB_EXIT;
}

/* The return address in `slot`, the real one when it is hooked. */
static uint64_t real_ret(const uint64_t *slot, uint32_t *from)
{
	uint64_t ret = *slot;

	if (ret == (uint64_t)(uintptr_t)fxt__patch_exit_tramp || is_stub_exit(ret))
		ret = agent_patch_sampled_ret(slot, from);
	return ret;
}

static bool in_enter_tramp(uint64_t ip)
{
	return ip >= (uint64_t)(uintptr_t)fxt__patch_enter_tramp &&
	       ip < (uint64_t)(uintptr_t)fxt__patch_enter_tramp_end;
}
#endif

/* Patched calls: see above. */
unsigned agent_sample_walk(ucontext_t *uc, uint64_t *pcs, unsigned max)
{
	unw_cursor_t cur;
	unsigned n = 0;
	bool exact = true;
#if defined(__x86_64__)
	ucontext_t at;
	uint32_t from = UINT32_MAX;
#endif

	if (unw.init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	while (n < max) {
		unw_word_t ip;

		if (unw.get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
#if defined(__x86_64__)
		uint64_t stub = exact ? agent_patch_stub(ip) : 0;
		if (stub) {
			/* Interrupted in a stub: its function's frame. */
			uint64_t fn = PATCH_FN(*(const uint64_t *)(uintptr_t)stub), ret;
			const uint64_t *slot;
			unw_word_t sp;

			if (unw.get_reg(&cur, UNW_REG_SP, &sp) < 0)
				break;
			slot = (const uint64_t *)(uintptr_t)sp;
			if (ip == stub + PATCH_STUB_ENTRY) { /* the function's entry */
				ret = real_ret(slot, &from);
			} else {
				if (ip >= stub + PATCH_STUB_CALL && ip <= stub + PATCH_STUB_EXIT)
					slot--;
				ret = agent_patch_sampled_call(fn, slot, &slot);
			}
			pcs[n] = fn + (n ? 1 : 0);
			n++;
			exact = false;
			if (n >= max || !walk_on(&cur, &at, ret, (uint64_t)(uintptr_t)(slot + 1)))
				break;
			continue;
		}
		if (ip == (uint64_t)(uintptr_t)fxt__patch_exit_tramp ||
		    (!exact && is_stub_exit(ip))) {
			/* A patched call's return address, in the slot
			 * below the caller's stack pointer; or, interrupted
			 * there (exact), the trampoline's first instruction,
			 * the function just returned: the same slot below
			 * the same stack pointer, still the trampoline's
			 * address, which libunwind would take for a frame
			 * unwinding to itself (it stops the walk). */
			unw_word_t sp;

			if (unw.get_reg(&cur, UNW_REG_SP, &sp) < 0)
				break;
			if (exact) {
				pcs[n] = (uint64_t)ip + (n ? 1 : 0);
				if (++n >= max)
					break;
				exact = false;
			}
			ip = agent_patch_sampled_ret((const uint64_t *)(uintptr_t)sp - 1, &from);
			if (!walk_on(&cur, &at, ip, sp))
				break;
		}
#endif
		pcs[n] = (uint64_t)ip + (n && exact ? 1 : 0);
		n++;
		exact = unw.is_signal_frame(&cur) > 0;
#if defined(__x86_64__)
		if (in_enter_tramp(ip) && n < max) {
			/* The stub's frame next, then the function's caller. */
			unw_word_t ret_stub, sp;

			if (unw.step(&cur) <= 0 || unw.get_reg(&cur, UNW_REG_IP, &ret_stub) < 0 ||
			    unw.get_reg(&cur, UNW_REG_SP, &sp) < 0)
				break;
			pcs[n++] =
			    PATCH_FN(*(const uint64_t *)(uintptr_t)(ret_stub - PATCH_STUB_HEAD)) +
			    1;
			exact = false;
			const uint64_t *slot = (const uint64_t *)(uintptr_t)sp;
			if (!walk_on(&cur, &at, real_ret(slot, &from), sp + 8))
				break;
			continue;
		}
#endif
		if (unw.step(&cur) <= 0)
			break;
	}
	return n;
}
