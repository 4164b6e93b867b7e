/* Calling functions inside another running process (x86-64, ptrace): what
 * `fxt-run -p PID` uses to load the agent into a program it did not start.
 *
 * One thread of the process is borrowed, the others keep running: a thread
 * stopped while it holds a lock of the C library (malloc's, the loader's)
 * could make our call wait for ever, so the thread borrowed is one blocked
 * in a system call (it holds none), else one caught outside the C
 * library, the dynamic loader and the unwinder.  Its
 * registers (general and vector) are saved, each call runs on a stack of
 * our own mapped in the process and returns into code of ours there,
 * which waits for fxt-run to stop the thread, and inject_close() puts the
 * registers back: a system call the thread was blocked in restarts as the
 * kernel would have restarted it, with no EINTR the program did not expect.
 * Should fxt-run die during a call, that code puts the thread back by
 * itself after a second (rt_sigreturn on a signal frame of its saved
 * state): the program goes on.  Signals that arrive for the thread
 * meanwhile are held and delivered after.
 *
 * Errors: a negative errno and one line in `why` that names the problem.
 */
#ifndef FXT_LAUNCHER_ATTACH_INJECT_H
#define FXT_LAUNCHER_ATTACH_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inject;

/* Borrows a thread of process pid and maps scratch memory in it.
 * -ESRCH: no such process (or it ended); -EPERM: not ours to trace;
 * -ENOENT: no C library functions to call (a static program, or not
 * glibc); -EBUSY: no thread at a safe point; -ENOMEM. */
int inject_open(pid_t pid, struct inject **out, char *why, size_t cap);

/* The thread borrowed, and how long it has been stopped (ms). */
pid_t inject_tid(const struct inject *in);
double inject_stopped_ms(const struct inject *in);

/* Calls fn(args[0], ..., args[n - 1]) (n <= 6, integer or pointer
 * arguments) in the process and returns its result in *ret.  -EFAULT: the
 * call faulted (the process is left as the fault left it); -ESRCH: the
 * process ended. */
int inject_call(struct inject *in, uint64_t fn, const uint64_t *args, unsigned n, uint64_t *ret,
		char *why, size_t cap);

/* Copies len bytes into the scratch memory; *addr is their address in the
 * process.  -ENOSPC when the scratch memory is full. */
int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr);

/* dlopen(path, RTLD_NOW) in the process: the handle in *handle, or
 * -ENOEXEC and dlerror()'s text in why. */
int inject_dlopen(struct inject *in, const char *path, uint64_t *handle, char *why, size_t cap);

/* The address of function `name` of the process's module whose basename
 * is `module`, as the process has it mapped now: 0 or -ENOENT. */
int inject_symbol(struct inject *in, const char *module, const char *name, uint64_t *addr);

/* Unmaps the scratch memory, puts the thread back as it was, lets it go
 * and delivers the signals held.  NULL is accepted.  0, or the first
 * error (the thread is let go in any case). */
int inject_close(struct inject *in);

#endif /* FXT_LAUNCHER_ATTACH_INJECT_H */
