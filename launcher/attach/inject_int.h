/* What launcher/attach/inject.c, wayback.c and borrow.c share (x86-64):
 * the borrowed thread's state (struct inject), the scratch memory's
 * layout, and the ptrace and memory helpers each of them uses.  Private to
 * those three files; inject.h is the interface. */
#ifndef FXT_LAUNCHER_ATTACH_INJECT_INT_H
#define FXT_LAUNCHER_ATTACH_INJECT_INT_H

#if defined(__x86_64__)

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>
#include <time.h>

#include "launcher/attach/inject.h"
#include "symbolizer/symbolizer.h"

/* The scratch memory: the data inject_push() copies from the bottom up,
 * the calls' stack from the top down. */
#define SCRATCH_BYTES (1u << 20)
#define STACK_BYTES   (768u << 10)

/* The red zone below a thread's stack pointer that leaf code may use
 * without moving it (the System V ABI's 128 bytes), and a margin. */
#define RED_ZONE 128
#define MARGIN	 512

/* The largest XSAVE area a kernel hands out (AMX tiles included). */
#define XSTATE_MAX (16u << 10)

/* Signals held while the thread runs our calls. */
#define HELD_MAX 16

/* The way back from a call (below, "the way back"): the first page of the
 * scratch memory holds the code a call returns to, the second what that
 * code tells fxt-run; how long it waits for fxt-run before it puts the
 * thread back by itself, in 1 ms steps. */
#define CODE_PAGE     0u
#define CTL_PAGE      4096u
#define DATA_START    8192u
#define WAIT_STEPS_MS 1000u

struct inject {
	pid_t pid, tid;
	struct fxt_sym *sym; /* the process's modules */
	struct user_regs_struct saved;
	unsigned char *xstate; /* the vector registers, NT_X86_XSTATE */
	size_t xlen;
	bool seized, stopped;
	uint64_t fn_mmap, fn_munmap, fn_mprotect, fn_dlopen, fn_dlerror;
	uint64_t scratch, used;
	uint64_t sigblk; /* the thread's blocked signals, for the way back */
	uint64_t frame;	 /* its signal frame, 0 until it is ready (the way back) */
	bool went_on;	 /* it put itself back, fxt-run being too slow */
	int held[HELD_MAX];
	/* Each one's siginfo (si_signo 0: not known), sent with it again: a
	 * timer's signal keeps its si_code and value (the agent's sampling
	 * timers are told from the program's by them). */
	siginfo_t held_si[HELD_MAX];
	unsigned nheld, lost;
	struct timespec stopped_at; /* FXT_RUN_DEBUG's timings */
};

/* What the stub tells fxt-run (the control page). */
#define CTL_DONE   0
#define CTL_RESULT 8
#define CTL_TV	   16

/* Waits for the thread's next stop: 0 with *status, or -ESRCH when the
 * process is gone. */
int inject__wait_stop(struct inject *in, int *status);
/* Holds signal sig for the thread, delivered again by inject__release(). */
void inject__hold(struct inject *in, int sig);
/* Seizes thread tid and stops it: 0 once it is stopped. */
int inject__seize(struct inject *in, pid_t tid, char *why, size_t cap);
/* Lets the thread go (registers restored by the caller), the held signals
 * pending again. */
void inject__release(struct inject *in);
/* len bytes to or from the process's memory at addr: 0 or -errno. */
int inject__write_mem(struct inject *in, uint64_t addr, const void *buf, size_t len);
int inject__read_mem(struct inject *in, uint64_t addr, void *buf, size_t len);
/* Runs fn(args) with its stack below `top`; the return to address 0
 * stops it.  0 with *ret, -EFAULT, or -ESRCH. */
int inject__call_on(struct inject *in, uint64_t top, uint64_t fn, const uint64_t *a, unsigned n,
		    uint64_t *ret, char *why, size_t cap);

/* wayback.c: makes the way back from a call (the stub's code and a signal
 * frame of the thread's state in the scratch memory): sets in->frame.
 * 0 or -errno: calls then return to 0. */
int inject__way_back(struct inject *in);

/* borrow.c: stops a thread of in->pid at a safe point and keeps it
 * (in->tid): 0, or -errno with why. */
int inject__borrow_thread(struct inject *in, char *why, size_t cap);
/* The thread's blocked signals (SigBlk of its /proc status): 0 or -errno. */
int inject__sigblk(pid_t pid, pid_t tid, uint64_t *mask);

#endif /* __x86_64__ */

#endif /* FXT_LAUNCHER_ATTACH_INJECT_INT_H */
