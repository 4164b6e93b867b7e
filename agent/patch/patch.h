/* Run-time patching: exact calls of functions that were not built with
 * -finstrument-functions (FXT_PATCH; fxt-run --patch).  x86-64 only.
 * Private to agent/.
 *
 * At start-up, before main() and while the process has one thread, the
 * agent reads the symbol table of the main program and of the libraries
 * loaded with it that FXT_PATCH_MODULE's globs name, and, for each function
 * whose name (demangled for C++) matches a pattern of FXT_PATCH, asks the
 * planner (libfxt-patch.so, agent/patch/plan.h, loaded only then) whether its
 * entry can be patched.  Each one that can gets a stub in a page within
 * 2 GiB of it:
 *
 *     .quad FN                  (data, read by the trampoline)
 *     call *enter_slot          -> fxt__patch_enter_tramp (tramp.S), which
 *                                  returns with `ret $8`, past the return
 *                                  address (kept in the shadow stack)
 *     call BODY                 (its return address in the same slot)
 *     jmp  *exit_slot           -> fxt__patch_exit_tramp (the stub's exit)
 *   BODY:
 *     <the displaced instructions, relocated>
 *     jmp  FN + displaced
 *
 * and its entry a `jmp` to the stub.  The text is made writable (not
 * executable) only while it is written, the stubs' page executable (not
 * writable) once written: no page is ever writable and executable.
 *
 * Entry: the trampoline records the call as the -finstrument-functions
 * hook does (the same 16-byte record; its common case itself, else
 * through fxt__patch_enter(FN, slot): --args, the filters) and pushes
 * {slot, return address, FN, the stub's exit} on the thread's shadow
 * stack; the stub then calls the function's code, which puts the stub's
 * exit in the return address's slot.  Exit: the function returns there,
 * and the stub's exit jumps to the exit trampoline, which records the
 * exit (or fxt__patch_exit() does) and returns to the real return
 * address, which it puts back in the slot.  Each return goes where the
 * processor's return stack predicts.  So the records nest exactly as the
 * hooks' do, and everything after the spool is unchanged.
 *
 * Frames that never return through their slot:
 *   - longjmp() (and a signal handler that jumps out): a shadow entry whose
 *     slot lies at or below a new call's, or below a returning one's, is a
 *     frame that is gone; its exit is recorded then (not when the new call
 *     runs on the alternate signal stack and the entry does not).
 *   - Frames taken for gone that were not (the program switched stacks: a
 *     coroutine) find their return address in a ring of the last entries
 *     popped as gone, when they return.
 *   - C++ exceptions and forced unwinding (pthread_exit): the unwinder reads
 *     return addresses, so the agent's _Unwind_RaiseException,
 *     _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind and _Unwind_Backtrace
 *     put the real ones back first; __cxa_begin_catch records the exits of
 *     the frames that were unwound and hooks the live ones again.  The C
 *     library's pthread_exit() calls the unwinder through a pointer of its
 *     own: the pthread_exit wrapper puts them back (a thread cancelled at
 *     a cancellation point still unwinds without: the destructors of its
 *     C++ frames below a patched one do not run).
 *   - Backtraces the program takes of itself: the C library's backtrace()
 *     (which calls the unwinder through a pointer of its own too) and
 *     libunwind's unw_backtrace() are the agent's as well, and put the real
 *     return addresses back around the walk; the agent's entry points
 *     leave every frame in the agent's code out of what they give (their
 *     own, the pthread_create trampoline's under a thread's start
 *     routine), traced with --patch or not.
 *   - The sampler (sample.c), which walks the stack from a signal's
 *     context, where putting the return addresses back is not safe: it
 *     reads the real one from the shadow stack as it walks
 *     (agent_patch_sampled_ret()) where it finds a stub's exit, and
 *     fxt__patch_exit_tramp's unwind information says where the real one
 *     goes, for a sample taken in it; a sample taken in a stub is its
 *     function's (agent_patch_stub(),
 *     agent_patch_sampled_call()).  An entry is filled in an order that
 *     lets such a reader find either the real return address or nothing.
 *
 * A module whose own code walks its stack by return address (a runtime:
 * HotSpot, V8, Go; a sanitizer; libunwind's unw_step) would meet a stub's
 * exit where a return address should be: it is left alone whole,
 * known by a symbol it defines or refers to (patch.c, walker_signs).
 *
 * A module built with -finstrument-functions: the functions FXT_PATCH
 * names, and those the argspec file names with FXT_CAP_HOOKED (fxt-run
 * --args/--retval without --patch: the hooks run after the prologue, when
 * the argument registers are gone), are patched as any; their hooks'
 * records then give way to the patched ones (agent_filter_yield(),
 * agent/gates.h: the hooks go through the filters, which skip those
 * functions), so that a call has one slice, the patched one, with its
 * values, nested among the hooks' as they are.
 *
 * Libraries loaded later by dlopen() that FXT_PATCH_MODULE names are
 * patched as dlopen() returns (agent_patch_dlopened(), from the wrapper in
 * modules.c), when other threads may be running: the same stubs, but the
 * jumps are written by live.c (an int3 first, see there), and
 * forgotten when the library is unloaded, patched again if it comes back.
 *
 * The planner's verdicts go to FXT_PATCH_REPORT/patch.PID (when set):
 *     exe PATH
 *     symbols exports       (stripped, no debug file: only its exports)
 *     symbols debug PATH    (stripped: its debug file named the others)
 *     patched NAME          (one line a function)
 *     skipped NAME\tREASON
 *     unpatched REASON      (the module as a whole: its file not found)
 * which fxt-run sums up ("patched N of M functions").  A library the
 * loader found by a relative path (an rpath or LD_LIBRARY_PATH of ".") is
 * read from the file /proc/self/maps says is mapped there: the process
 * may have changed folders since.
 */
#ifndef FXT_AGENT_PATCH_H
#define FXT_AGENT_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/gates.h" /* what the sampler reads of patched frames */

/* Patches the main program's functions that FXT_PATCH names (and the
 * libraries FXT_PATCH_MODULE names).  Called once from the agent's
 * start-up, before main(); or, `live`, when attached to a running process
 * whose other threads run (live.c's way).  0 or -errno (logged). */
int agent_patch_init(bool live);

/* Writes back every entry patched while the process ran (detach): the
 * functions run as before; a thread inside a trampoline or a stub
 * returns through it, as they stay.  0 or the first -errno. */
int agent_patch_unpatch(void);

/* Patches the libraries that FXT_PATCH_MODULE names and that are loaded
 * but not patched yet: called after each dlopen(), when other threads may
 * be running (live.c).  Logs what fails. */
void agent_patch_dlopened(void);

/* Forgets the patched libraries that are no longer loaded: after each
 * dlclose(). */
void agent_patch_dlclosed(void);

/* What to read at the entry and return of the function `symbol` (its
 * name in the symbol table) of the module at `module_path`, for fxt-run
 * --args/--retval: FXT_CAP_* bits (run/argspec.h), the index of the
 * snapshot test of its calls in agent_patch_conds shifted by
 * PATCH_COND_SHIFT (0: none), and that of its --include pattern's test
 * shifted by PATCH_INCL_SHIFT; 0 for nothing.  The run's argspec file is
 * read at the first call.  (args.c) */
uint64_t agent_patch_args_spec(const char *module_path, const char *symbol);

/* The tests of values (run/argspec.h, struct fxt_argspec_cond), by index
 * from 1: a snapshot value rule's (rule: its index in agent_cfg's), or an
 * --include pattern's (rule: its index in agent_include_tests, gates.h). */
struct agent_patch_cond {
	uint8_t rule, reg, width, is_signed;
};
#define PATCH_CONDS_MAX	     2048u		   /* 11 bits (rt.h's shadow entries) */
#define PATCH_COND_APART     (PATCH_CONDS_MAX - 1) /* no test's: rt.h's SHADOW_APART */
#define PATCH_COND_SHIFT     32
#define PATCH_COND_IDX(spec) ((unsigned)((spec) >> PATCH_COND_SHIFT) & (PATCH_CONDS_MAX - 1))
#define PATCH_INCL_SHIFT     44
#define PATCH_INCL_IDX(spec) ((unsigned)((spec) >> PATCH_INCL_SHIFT) & (PATCH_CONDS_MAX - 1))
extern struct agent_patch_cond agent_patch_conds[PATCH_CONDS_MAX];

/* Forgets the argspec file: the next window of an attach reads its own. */
void agent_patch_args_forget(void);

/* Whether the argspec file names a function of the program at exe_path,
 * a -finstrument-functions build, that FXT_PATCH does not
 * (FXT_CAP_HOOKED): patched for its values (read now if it was not).
 * (Without FXT_PATCH, only the program's own functions are: another that
 * a child executes is not read.) */
bool agent_patch_args_hooked(const char *exe_path);

/* Whether some function's string is read (FXT_CAP_STR, FXT_CAP_RET_STR
 * in the argspec file, read now if it was not). */
bool agent_patch_args_strings(void);

/* ------------------------------------------------------------ strings
 *
 * The fast path of reading a string argument (rt.h's put_string(),
 * probe.c): a copy with plain loads (probe.S)
 * straight into its record, whose fault the agent's SIGSEGV/SIGBUS
 * handler recovers, taken while agent_patch_probe_on.  Otherwise the
 * kernel reads it (process_vm_readv()).  A copy counts itself in its
 * thread's tbuf (probing), then reads agent_patch_probe_on again, so that
 * giving the signals back can wait until no copy is under way (probe.c):
 * with membarrier() there, or a full barrier in each copy
 * (PATCH_PROBE_FENCED, when the kernel has no membarrier()). */
extern unsigned char agent_patch_probe_on; /* 0 (off), or these: */
#define PATCH_PROBE_ON	   1u
#define PATCH_PROBE_FENCED 2u

/* probe.S: copies the string at src, up to its NUL or n bytes, into the
 * REG record at rec (room for 1 + the words of n + 7 bytes), as
 * spool/records.h lays a string out (rec[1], the head, untouched; the
 * bytes past the NUL in its word anything); the string's length if its
 * NUL is among the first n bytes, else n; ~k (negative) for a fault after
 * k bytes (none of them a NUL). */
long fxt__patch_probe_reg(uint64_t *rec, const char *src, size_t n);
void fxt__patch_probe_end(void);
void fxt__patch_probe_landing(void);

/* Launched (not attached) with strings to read, both signals at their
 * default action: the agent's handler goes in and the fast path is on.
 * Before main(), one thread. */
void agent_patch_probe_setup(void);

/* The forking thread's child: the give-back's lock free. */
void agent_patch_probe_fork_child(void);

/* One entry to patch in a running program: the jump at `site` to `stub`
 * over `len` bytes (5 <= len <= PATCH_SITE_MAX), which were `orig`. */
#define PATCH_SITE_MAX 20
struct agent_patch_site {
	uint64_t site, stub;
	uint32_t len;
	uint8_t orig[PATCH_SITE_MAX];
};

/* The sites one agent_patch_live() call wrote, as its SIGTRAP handler
 * knows them (live.c). */
struct agent_live_sites;

/* Writes the jumps of v[0..n) (sorted by site) while other threads may be
 * running (live.c), their stubs being complete and executable.  0
 * with *sites set (NULL when n is 0), or -errno with nothing changed. */
int agent_patch_live(const struct agent_patch_site *v, size_t n, struct agent_live_sites **sites);

/* Takes back the jumps of one agent_patch_live() call (detach): the
 * original bytes written in the same three steps, int3 first.  0 or
 * -errno (the sites not written back keep their jump). */
int agent_patch_unlive(struct agent_live_sites *sites);

/* Detach, after every agent_patch_unlive(): the program's SIGTRAP action
 * put back, once no thread can still be sent to our handler.  0, or
 * -EBUSY (the handler stays: it sends a thread back to the instruction
 * its int3 was over). */
int agent_patch_live_end(void);

/* The sites of one agent_patch_live() call are gone (their library was
 * unloaded): a trap there is no longer ours. */
void agent_patch_live_forget(struct agent_live_sites *sites);

/* The thread unwinds its stack to end (pthread_exit()): the C library
 * calls the unwinder through a pointer of its own, not the agent's entry
 * points, so the real return addresses are put back first. */
void agent_patch_thread_unwinds(void);

/* Whether the process's unwinder entry points are the agent's (rt.c): not
 * when the agent came after the C library's unwinder was bound (attached,
 * fxt-run -p), where an exception would meet a stub's exit and end the
 * program (std::terminate). */
bool agent_patch_unwinder_ours(void);

/* The thread is ending (its TLS destructors run): its shadow stack is
 * given back; its patched calls from then on go unrecorded, as its other
 * records do. */
void agent_patch_thread_end(void);

/* The runtime the trampolines call (tramp.S); see above.  Whether
 * fxt__patch_enter() pushed the call (not without a shadow stack); the
 * real return address from fxt__patch_exit().  The late ones when the
 * trampolines' own record of a call's entry or exit went to its slow
 * path (p, ts: rt.c). */
bool fxt__patch_enter(uint64_t fn, uint64_t *slot);
uint64_t fxt__patch_exit(uint64_t *sp);
void fxt__patch_enter_late(uint64_t *p, uint64_t ts, uint64_t quad);
uint64_t fxt__patch_exit_late(uint64_t *p, uint64_t ts);

#endif /* FXT_AGENT_PATCH_H */
