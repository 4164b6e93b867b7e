/* What the agent's core (hooks, wrappers, life cycle) branches on, and the
 * out-of-line code behind it.  Private to agent/.
 *
 * The core declares these here and the features (filters, snapshots,
 * sampling) define them, so that hot code sees a flag and a call and
 * includes no feature's header.  Each is documented where it is defined.
 * So too what one feature reads of another (the sampler, of patched
 * frames): no feature includes another's header (tests/e2e/layout.sh).
 */
#ifndef FXT_AGENT_GATES_H
#define FXT_AGENT_GATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/tbuf.h"

/* ------------------------------------------------------------ filters */

/* Set (to 1) once filters are compiled: the hooks then go through
 * agent_filter_hook() (agent/keep/filter.h). */
extern unsigned char agent_filter_on;

/* The hook when filtering: `addr` has SPOOL_EXIT_BIT for an exit, and
 * AGENT_FILTER_HELD when the call's test of an argument held at its entry
 * (an FXT_INCLUDE pattern's, "lookup@arg1==42": run-time patching tests
 * it, agent/patch/rtargs.c, and gives its exit the same bit). */
#define AGENT_FILTER_HELD (1ull << 61)
void agent_filter_hook(struct tstate *t, uint64_t addr) __attribute__((noinline));

/* The same for a patched call's entry or return (agent/patch/rt.h): a
 * function whose hooks yield is recorded here. */
void agent_filter_patched(struct tstate *t, uint64_t addr) __attribute__((noinline));

/* The functions fn[0..n) of a -finstrument-functions build are patched
 * (agent/patch/patch.h): from now on their hooks record nothing, the
 * patched entry and return record their calls (filtering on from then).
 * 0, or -ENOMEM (the hooks still record them). */
int agent_filter_yield(const uint64_t *fn, size_t n);
/* FXT_INCLUDE's patterns with a test of an argument (run/recording.h):
 * each test, and the pattern's index among FXT_INCLUDE's lines. */
struct fxt_snapshot_rule;
struct agent_include_test {
	unsigned line;
	const struct fxt_snapshot_rule *rule;
};
extern struct agent_include_test agent_include_tests[];
extern unsigned agent_ninclude_tests;

/* ------------------------------------------------------------ snapshots */

/* The libc groups (AGENT_G_*) a rule watches; 0: none (agent/keep/snapshot.h). */
extern unsigned agent_snap_libc;

/* A recorded libc call (spool/libc_table.h's id `fn`) begins, and ends
 * (after its exit record): when a rule watches its group and it took
 * longer than the rule says, a snapshot.  Called when agent_snap_libc is
 * not 0. */
void agent_snapshot_libc_begin(struct tstate *t, unsigned fn);
void agent_snapshot_libc_end(struct tstate *t, unsigned fn);

/* The call of the function at `fn` that rule `rule` (agent_cfg.snap_rules)
 * watches ended on thread t after dur_ns, over the rule's limit, or, a
 * rule on a value (dur_ns 0), passed its test (run-time patching's
 * handlers, agent/patch/rtargs.c): takes a snapshot (agent/keep/snapshot.c). */
void agent_snapshot_fn(struct tstate *t, uint64_t fn, unsigned rule, uint64_t dur_ns);

/* ------------------------------------------------------------ libc calls */

/* The groups switched on (FXT_LIBC), 0 until the settings are loaded and
 * after the seal started.  Read on every wrapped call (agent/libc/libc.h). */
extern unsigned agent_libc_on;

/* ------------------------------------------------------------ sampling */

/* Around a call that gives the calling thread's real mask to a new thread
 * (pthread_create) or process (posix_spawn, system): whether the
 * program's view of the mask blocks SIGPROF while the real mask does not
 * (see "Masks" in sample.c), and then the real mask blocks it too until
 * agent_sample_release_prof(that answer).  So the new thread starts with
 * SIGPROF blocked, as the program means it to, until its start has
 * agent_sample_thread_start() take it over, and a new program gets the
 * mask it would have had.  errno is kept.  (agent/sample/sample.h) */
bool agent_sample_hold_prof(void);
void agent_sample_release_prof(bool prof_blocked);

/* Non-zero while the thread is inside dlopen or dlclose (modules.c): no
 * stack samples meanwhile (agent/sample/sample.h).  Defined in sample.c. */
extern __thread unsigned char agent_in_dl __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ signal actions
 *
 * The program's sigaction() and signal() (and signal()'s other names,
 * sigset()) are the agent's (agent/sigact.c): it hands each signal a wing
 * keeps to that wing, and any other to the C library. */

/* SIGPROF while sampling: whether the program's view of its action is kept
 * apart from the real one; then agent_sample_prof_action() sets and reads
 * that view as sigaction() does (agent/sample/sample.c). */
struct sigaction;
bool agent_sample_prof_virtual(void);
int agent_sample_prof_action(const struct sigaction *act, struct sigaction *old);

/* SIGSEGV and SIGBUS while run-time patching's handler recovers the
 * faults of its string copies (agent/patch/probe.c): whether it holds
 * them (the program's view: their default actions); and giving them back
 * before the program sets either, for good: the default actions put back
 * once no copy is under way, strings read by the kernel from then on. */
bool agent_patch_faults_owned(void);
void agent_patch_faults_give_back(void);

/* ------------------------------------------------------------ patched frames
 *
 * What the sampler's stack walk (agent/sample/walk.c) reads of run-time
 * patching's frames (agent/patch/ defines these; patch.h says how): a
 * patched call's return address is its stub's exit (PATCH_STUB_EXIT), the
 * real one is in the thread's shadow stack. */

/* For a stack walk in a signal handler of the calling thread (the
 * sampler, sample.c), which meets a stub's exit (or, the function just
 * returned, fxt__patch_exit_tramp) where a patched call's return address
 * was: the real return address of the call whose
 * return address's slot is `slot`, from the thread's shadow stack, or 0
 * when none is known (an entry counted but not filled yet, a thread
 * without one).  `*from` keeps where the walk is in the shadow stack:
 * UINT32_MAX at its start, then given back to each call.  Reads only:
 * async-signal-safe, whatever the interrupted code was writing. */
uint64_t agent_patch_sampled_ret(const uint64_t *slot, uint32_t *from);

/* For the sampler: the start of the stub (its function's address) that
 * `pc` is in, or 0 when it is in none.  Async-signal-safe. */
uint64_t agent_patch_stub(uint64_t pc);

/* For the sampler, in a signal handler of the calling thread that came
 * while it ran the stub of `fn` past its call of fxt__patch_enter_tramp,
 * the stack pointer at `sp`: the real return address of that call, its
 * slot in *slot, from the thread's shadow stack; 0 when that call's entry
 * is not there (not recorded). */
uint64_t agent_patch_sampled_call(uint64_t fn, const uint64_t *sp, const uint64_t **slot);

/* A stub's head: the function's address (8 bytes: the stub's entry is
 * that far in) and the call of fxt__patch_enter_tramp (6), whose return
 * address is PATCH_STUB_HEAD past the function's address. */
#define PATCH_STUB_ENTRY 8
#define PATCH_STUB_HEAD	 (PATCH_STUB_ENTRY + 6)
/* The stub's exit, past its call of the function's code (patch.c): the
 * return address of a patched call in progress, in its slot; and where
 * in the stub that call is, where the trampoline returns past the
 * return address (a sample there has the real return address just below
 * its stack pointer). */
#define PATCH_STUB_CALL PATCH_STUB_HEAD
#define PATCH_STUB_EXIT (PATCH_STUB_HEAD + 5)

/* The stub's first quad is the function's address, with PATCH_FN_ARGS
 * set for a function whose arguments or return value are read (fxt-run
 * --args/--retval): then the quad PATCH_STUB_SPEC bytes before it holds
 * what to read (run/argspec.h's FXT_CAP_* bits).  Read the address with
 * PATCH_FN(). */
#define PATCH_FN_ARGS	(1ull << 62)
#define PATCH_FN(quad)	((quad) & ((1ull << 47) - 1))
#define PATCH_STUB_SPEC 16

/* The trampolines; fxt__patch_enter_tramp_end is where the first ends,
 * fxt__patch_enter_full its full way, within it (the stubs of functions
 * whose arguments or return value are read call it). */
void fxt__patch_enter_tramp(void);
void fxt__patch_enter_tramp_end(void);
void fxt__patch_enter_full(void);
void fxt__patch_exit_tramp(void);

#endif /* FXT_AGENT_GATES_H */
