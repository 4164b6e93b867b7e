/* Stack sampling's walk (agent/sample/walk.c) through run-time patching's
 * exit trampoline, on a stack of the test's own: a sample taken at the
 * trampoline's first instruction, as a patched function has just returned
 * into it, goes on to the function's caller as one taken further in does.
 * There the unwind information puts the return address just below the
 * stack pointer, where the trampoline's own address still is, and
 * libunwind, finding a frame that unwinds to itself, stopped the walk: the
 * stack ended at the agent's frame (sample-patch.sh, about one CI run in
 * two under load).
 *
 * probe() saves where it is (getcontext()) and raises a signal whose
 * handler, on an alternate stack, puts the trampoline's address in the
 * slot below probe's stack pointer (raise()'s return address, put back
 * after) and walks from a context that is probe's with the trampoline's
 * address for its pc: as if a patched function called from probe() had
 * just returned. */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "agent/cfg.h"
#include "agent/gates.h"
#include "agent/patch/patch.h"
#include "agent/sample/walk.h"
#include "tests/lib/tap.h"

struct agent_config agent_cfg; /* agent_dbg() reads it */

/* Run-time patching's side of the walk (agent/patch/rt.c in the agent):
 * one patched call in progress, whose return address slot `hooked` holds
 * the trampoline's address, the real one being `real`. */
static const uint64_t *hooked;
static uint64_t real;

uint64_t agent_patch_sampled_ret(const uint64_t *slot, uint32_t *from)
{
	(void)from;
	return slot == hooked ? real : 0;
}

uint64_t agent_patch_stub(uint64_t pc)
{
	(void)pc;
	return 0;
}

uint64_t agent_patch_sampled_call(uint64_t fn, const uint64_t *sp, const uint64_t **slot)
{
	(void)fn, (void)sp, (void)slot;
	return 0;
}

/* The trampolines' handlers (tramp.S calls them): never run here. */
bool fxt__patch_enter(uint64_t fn, uint64_t *slot)
{
	(void)fn, (void)slot;
	abort();
}

uint64_t fxt__patch_exit(uint64_t *sp)
{
	(void)sp;
	abort();
}

void fxt__patch_enter_late(uint64_t *p, uint64_t ts, uint64_t quad)
{
	(void)p, (void)ts, (void)quad;
	abort();
}

uint64_t fxt__patch_exit_late(uint64_t *p, uint64_t ts)
{
	(void)p, (void)ts;
	abort();
}

/* What the trampolines' fast path reads (agent/patch/tramp.h): never
 * read here either. */
unsigned char agent_filter_on;
__thread struct tstate agent_tls;
extern __thread uint64_t fxt__patch_pstack[2];
__thread uint64_t fxt__patch_pstack[2];

static ucontext_t at;	   /* probe(), where getcontext() returned */
static uint64_t probe_ret; /* probe()'s return address, in main() */
static uint64_t pcs[32];
static unsigned npcs;

static void on_usr1(int sig)
{
	uint64_t *slot = (uint64_t *)(uintptr_t)at.uc_mcontext.gregs[REG_RSP] - 1;
	uint64_t saved = *slot;
	ucontext_t uc = at;

	(void)sig;
	hooked = slot;
	real = (uint64_t)at.uc_mcontext.gregs[REG_RIP];
	*slot = (uint64_t)(uintptr_t)fxt__patch_exit_tramp;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fxt__patch_exit_tramp;
	npcs = agent_sample_walk(&uc, pcs, sizeof(pcs) / sizeof(pcs[0]));
	*slot = saved;
}

static __attribute__((noinline)) void probe(void)
{
	probe_ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	if (getcontext(&at) != 0)
		abort();
	raise(SIGUSR1); /* called with the stack pointer getcontext() saw */
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;

	plan(4);
	if (!agent_sample_unwind_setup()) {
		skip(4, "libunwind cannot be loaded");
		return exit_status();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		bail_out("sigaltstack/sigaction");
	probe();
	diag("%u frames: %#lx %#lx %#lx", npcs, (unsigned long)pcs[0], (unsigned long)pcs[1],
	     (unsigned long)pcs[2]);
	ok(npcs >= 3, "at the exit trampoline's first instruction: the walk goes on (%u frames)",
	   npcs);
	ok(pcs[0] == (uint64_t)(uintptr_t)fxt__patch_exit_tramp,
	   "... frame 0 is the trampoline (the agent's frame)");
	ok(pcs[1] == real, "... frame 1 the real return address, in the function's caller");
	ok(npcs >= 3 && pcs[2] == probe_ret, "... frame 2 the caller's caller");
	return exit_status();
}
