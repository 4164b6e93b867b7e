/* Stack sampling of threads' CPU time (FXT_SAMPLE).  Private to agent/.
 *
 * Each sampled thread has a POSIX timer on its own CPU-time clock
 * (CLOCK_THREAD_CPUTIME_ID) that sends SIGPROF to that thread
 * (SIGEV_THREAD_ID) every 1/FXT_SAMPLE seconds of CPU time it uses.  The
 * handler (SA_SIGINFO | SA_RESTART, installed once per process image)
 * walks the interrupted stack with libunwind from the signal's context, up
 * to EV_SAMPLE_MAX_DEPTH frames, and writes one SAMPLE record and its
 * FRAME slots (events.h) into the thread's buffer: no malloc, no lock of
 * ours, errno preserved.  The converter turns consecutive samples into a
 * stack chart (stackchart.h) on a track of its own.
 *
 * SIGPROF is shared with the program: our handler stays installed, and
 * the agent's sigaction() and signal() keep the action the program sets
 * for SIGPROF aside (returning it as the old action, as if it were
 * installed).  Our handler applies it to every SIGPROF that is not our
 * timers' (si_code SI_TIMER with our cookie): kill(), raise(), the
 * program's setitimer(ITIMER_PROF) or timers reach the program's handler,
 * under its mask, or get the default action (termination), or are ignored,
 * as without the agent; our timers' signals never reach the program (GNU
 * sort, for one, dies of any SIGPROF it catches).  A program that sets
 * SIG_IGN gets it for real, and our samples stop.  Not emulated:
 * SA_RESETHAND, SA_NODEFER (SIGPROF stays blocked in the program's
 * handler), and programs that set the action by a raw system call.
 *
 * What is skipped (no sample):
 *  - a thread inside dlopen/dlclose (modules.c sets agent_in_dl): the
 *    loader's lists, which libunwind reads through dl_iterate_phdr, are
 *    changing (its lock is recursive, so the same thread would not wait,
 *    it would read a half-made list);
 *  - a thread between our fork handlers: the agent's prepare handler holds
 *    the agent's and the spool's locks, which a sample needing a new chunk
 *    would take again;
 *  - everything once the seal has started (the archive is being written).
 * With FXT_DEBUG, the seal logs the samples taken and their average cost
 * (7-15 us for a dozen frames on the machine this was written on).
 * A thread inside a hook or other agent code (tstate.busy) is sampled, but
 * its sample counts as nested: it uses the chunk's reserve and never takes
 * a new chunk (tbuf.h), so it takes no lock either.  libunwind's one-time
 * initialisation is done before the handler is installed, and its cache of
 * unwind rules is per thread (UNW_CACHE_PER_THREAD): a handler never waits
 * for another thread's walk (the global cache's lock), and the cache is
 * flushed after each dlclose.  libunwind blocks signals around its calls
 * of dl_iterate_phdr, whose lock is recursive; the one place a thread
 * holds the loader's locks for long is dlopen/dlclose, skipped above.
 *
 * Limits:
 *  - a process that had a SIGPROF handler before the agent started is not
 *    sampled.  A thread that blocks SIGPROF is sampled all the same while
 *    the program has no SIGPROF action of its own: the mask it sees and
 *    sets through pthread_sigmask() and sigprocmask() is a view, its real
 *    one leaves SIGPROF unblocked ("Masks" in sample.c).  Otherwise it is
 *    not sampled while it blocks SIGPROF, and a record says so (the
 *    converter's instant "fxt: not sampled: REASON").  Not in the view: the
 *    masks set by other calls (sigsuspend, pselect and the like set the
 *    real one for their while, which is fine; sigsetmask, sighold, a raw
 *    system call, a siglongjmp back to a mask saved before, a signal
 *    handler's change of the view, which its return does not undo), the
 *    mask a popen() child inherits (SIGPROF unblocked where the view
 *    blocks it: posix_spawn(), system(), exec and new threads get the
 *    view), and a program's own thread-directed timer signals, which may
 *    go to another thread once re-sent.
 *  - Each sample says how many periods of CPU time it stands for (1 + the
 *    timer's overruns, + the periods of signals that took no sample), and
 *    whether the thread gave up the CPU since the sample before (its
 *    voluntary context switches, getrusage(RUSAGE_THREAD)): the converter
 *    draws a sample for that CPU time, not for the thread's wait after it
 *    (stackchart.h).
 *  - A sample taken while the thread is in agent code (busy) is marked as
 *    the agent's: the converter shows it as "fxtrace", even when its
 *    innermost frames are the C library's (a refill's pthread_sigmask, at
 *    whose return a sample that waited for it is taken).
 *  - SA_RESTART (also for the program's own SIGPROFs, whatever its
 *    flags) restarts most interrupted system calls, but the ones
 *    signal(7) lists as never restarted (poll, select, epoll_wait,
 *    nanosleep, ... with timeouts) can return EINTR when a sample lands
 *    while the thread is in them; it is rare (the timer ticks with CPU
 *    time, so mostly in user code), and any program may get EINTR there.
 *  - Linux fires CPU-time timers from its scheduler tick: a thread gets at
 *    most CONFIG_HZ samples per second of CPU time (often 250), whatever
 *    FXT_SAMPLE asks; the chart's slices stay exact in time, only coarser.
 *  - Stacks deeper than EV_SAMPLE_MAX_DEPTH keep their innermost frames:
 *    their outermost frame then changes from sample to sample, and so
 *    does the chart's outer part.
 *  - Run-time patching (patch.h) puts its return trampoline in place of
 *    each patched call's return address: the walk takes the real one from
 *    the thread's shadow stack and walks on from there (sample.c, "patched
 *    calls"); a sample in the trampolines or the agent's handlers is the
 *    agent's, under the function whose entry or return it was in, and one
 *    in a patched function's stub (its first instructions, moved there)
 *    is the function's.  A sample taken in the few instructions of a tail
 *    call's entry where the return address is neither hooked nor known
 *    ends at that frame; one in a stub whose first instructions changed a
 *    register other than the frame pointer that a caller's unwind rules
 *    need (rare: -O2 code finds its frames by the stack pointer) may get
 *    a wrong caller.
 *  - Code without unwind information (JIT code, some assembly) ends the
 *    walk early or, through libunwind's frame-pointer guess, gives a wrong
 *    caller.  A program that itself walks stacks with libunwind, on the
 *    thread a sample interrupts, shares that thread's cache with us.
 *  - libunwind opens a pipe at its first use (two O_CLOEXEC descriptors,
 *    kept open), to check addresses before reading them when it has to
 *    guess a frame: a sampled program that lists its descriptors sees
 *    them.  They cannot be closed behind libunwind's back: a program that
 *    reuses their numbers would then have its own pipe read (and block) by
 *    the next guess.
 *  - Threads that do not start through pthread_create (raw clone) are not
 *    sampled.
 *  - Timers are not inherited by fork children: the child starts its own
 *    for the forking thread (lifecycle.c); exec deletes them, and the new
 *    image starts afresh.
 *  - Attached to a process already running (fxt-run -p), none of the
 *    wrappers above is called: a program with a SIGPROF action or a
 *    blocked SIGPROF of its own is not sampled, the threads it starts while
 *    attached are not either, and a thread inside the loader's code is
 *    not walked (its sample carried to the next); the timers and the
 *    action given back at the detach: sample.c, "Attached".
 */
#ifndef FXT_AGENT_SAMPLE_H
#define FXT_AGENT_SAMPLE_H

#include <stdbool.h>

#include "agent/gates.h"

/* Starts sampling the calling thread (a no-op when FXT_SAMPLE is off, or
 * when it is sampled already).  Called for the main thread at init, in
 * each new thread before its start routine (wrap_thread.c), and in a fork
 * child.  `prof_blocked`: the thread's creator's view of its mask blocked
 * SIGPROF (agent_sample_hold_prof()), which the new thread inherits.
 * Never fails the caller: a thread whose timer cannot be created is just
 * not sampled (and says so).  errno is preserved. */
void agent_sample_thread_start(bool prof_blocked);

/* agent_sample_hold_prof() and agent_sample_release_prof(), which the
 * wrappers call, and agent_in_dl: agent/gates.h. */

/* Stops sampling the calling thread (thread exit: also called from a
 * thread key destructor of our own, for threads that never recorded
 * anything; the start of the seal).  errno is preserved. */
void agent_sample_thread_stop(void);

/* After a dlclose (modules.c): forgets the unwind information cached for
 * the library's addresses. */
void agent_sample_dlclosed(void);

#endif /* FXT_AGENT_SAMPLE_H */
