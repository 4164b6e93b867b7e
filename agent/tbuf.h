/* Per-thread trace buffers: the inline hot path.  Private to agent/.
 *
 * Each thread owns one `struct tstate` in initial-exec TLS (a fixed offset
 * from %fs, no __tls_get_addr call) pointing into the spool chunk it
 * currently fills, and one `struct tbuf` (its metadata: serial, tid, drop
 * count, name) that outlives the thread until the seal.
 *
 * Signals: a handler that runs instrumented code while this thread is inside
 * a hook must neither lose its records nor corrupt the interrupted one's.
 * So a slot is reserved with one non-locked `xadd` on `pos` (one
 * instruction: a signal lands before or after it, never inside), then
 * filled; a nested hook reserves the next slot and fills it, and the
 * interrupted hook fills its own slot afterwards.  `busy` counts the hooks
 * active on the thread: only a hook that is not nested (busy == 1) may
 * replace the chunk, so `end` never changes under an interrupted hook.
 *
 * Reserve: in chunks of AGENT_FLOOR_CHUNK_SIZE and more, `end` stops
 * 1/64 of the chunk short of its real end (a first chunk, smaller, keeps
 * the floor's 1 KiB).  A hook that is not nested goes
 * to the slow path there and refills; the slots past `end` are for the
 * hooks of signal handlers that interrupt it before it has blocked signals
 * (they may not refill), so that they are recorded rather than dropped.
 * Only a nested hook that finds the reserve used up too counts its call as
 * dropped.  Smaller chunks (tests) have no reserve: their slot count stays
 * exact, which tests of FXT_MAX_SIZE rely on.
 *
 * Order: the timestamp is read before the reservation, so a handler that
 * runs between the two writes later slots with later timestamps; the
 * interrupted record then looks slightly out of order.  The converter makes
 * timestamps monotonic per thread (convert/recon.h), which keeps nesting
 * exact.
 */
#ifndef FXT_AGENT_TBUF_H
#define FXT_AGENT_TBUF_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/ticks.h"
#include "agent/cfg.h"
#include "agent/spool.h"
#include "agent/sys.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

enum tbuf_state {
	TBUF_RECORDING = 0,
	TBUF_STOPPED = 1, /* out of budget (FXT_MAX_SIZE) or spool failure */
	TBUF_RETIRED = 2, /* the thread exited (key destructor ran) */
};

/* A thread's chunks in the circular mode (spool/format.h, "Rings"), all
 * mapped: v[head] is the oldest, the one before it (circularly) the one
 * the thread fills.  An mmap'd block: the hooks that grow it may run in a
 * signal handler, where malloc may not. */
struct agent_ring {
	uint64_t bytes;	 /* of the block */
	unsigned cap, n; /* entries it has room for, entries used */
	unsigned head;	 /* the oldest */
	unsigned pad;
	struct spool_map v[];
};

/* Staged chunks a thread keeps besides the one it fills. */
#define TBUF_SPARES 3

/* Per-thread metadata, kept on agent.threads until the seal.  Fields the
 * seal reads while the thread may still run are accessed atomically. */
struct tbuf {
	struct tbuf *next;
	uint32_t serial; /* 1, 2, ... in creation order within the process */
	uint32_t seq;	 /* chunks taken so far */
	uint64_t tid;
	struct spool_map map; /* the chunk being filled; base NULL if none */
	/* The thread's other staged chunks (spool.h), base NULL where none:
	 * one while fxt-run's drain thread keeps up, more while it is behind
	 * (agent/tbuf.c, refill()). */
	struct spool_map spare[TBUF_SPARES];
	uint64_t dropped;	    /* calls not recorded (enter hooks) */
	uint64_t dropped_published; /* the part of it added to the spool header's */
	uint64_t first_drop_ts;
	uint64_t stop_ts;    /* when it stopped recording for good; 0 = never */
	uint32_t drop_cause; /* why, if not for a size limit (SPOOL_CAUSE_*) */
	uint64_t end_ts;     /* when the thread exited; 0 = alive */
	int state;	     /* enum tbuf_state */
	char name[16];	     /* comm at thread exit */
	/* Where a rename goes (spool_chunk_rename()): the file offset of the
	 * thread's newest chunk, written under the spool lock; 0: none yet. */
	uint64_t name_off;
	pthread_t self; /* the thread, for pthread_setname_np() on it */
	/* The oneshot and circular modes (run/recording.h): the bytes of
	 * chunks granted to the thread, against FXT_BUFFER_SIZE; its ring
	 * (circular), and the calls it overwrote there. */
	uint64_t bytes;
	struct agent_ring *ring;
	uint64_t overwritten;
	uint64_t refill_ticks; /* spent taking chunks, for the seal (calib.h) */
	/* The thread's state, for agent_tbuf_new_window() (under agent.lock,
	 * while the thread has not retired tb); agent.window when made. */
	struct tstate *owner;
	uint32_t window;
	/* The thread's string copies under way (agent/patch/rtargs.c):
	 * written by the thread alone, read by the one that gives SIGSEGV
	 * and SIGBUS back (agent/patch/probe.c). */
	unsigned char probing;
};

#define AGENT_WATCH_DEPTH 16u
#define AGENT_WRAP_FORK	  2u

struct tstate {
	uint64_t *pos; /* next free record slot */
	uint64_t *end; /* end of the chunk; pos >= end sends hooks to the slow path */
	struct tbuf *tb;
	unsigned char busy; /* hooks (or agent code) active on this thread */
	/* A libc wrapper is recording a call (agent/libc/libc.h): 1, or
	 * AGENT_WRAP_FORK for fork's own wrapper, which the child goes on
	 * with (agent/libc/wrap_proc.c); any other is the parent's alone. */
	unsigned char wrap;
	/* The filters (agent/keep/filter.h): include and exclude functions active
	 * on the thread, the depth of the calls that pass them. */
	uint32_t f_inc, f_exc, f_depth;
	/* Snapshot rules (agent/keep/snapshot.h): the calls of watched functions
	 * open on the thread, and when they began (CLOCK_MONOTONIC ns), up to
	 * AGENT_WATCH_DEPTH (w_over counts those past it); and when the libc
	 * call being recorded began, if its group is watched. */
	uint32_t w_n, w_over;
	uint64_t w_fn[AGENT_WATCH_DEPTH];
	uint64_t w_t0[AGENT_WATCH_DEPTH];
	uint64_t w_libc_t0;
	/* Run-time patching's shadow stack (agent/patch/rt.c, which says
	 * what it holds): here, so that the trampolines' fast path reaches
	 * it and the buffer through one TLS offset (agent/patch/tramp.S). */
	struct agent_pstack {
		struct shadow *v, *top, *lim;
		uint32_t parked;
		bool failed, ended;
	} pstack;
	/* Children made by clone(CLONE_VM) without a TLS of their own run on
	 * this very state, in the same memory (agent/libc/wrap_proc.c): the
	 * hooks cannot tell them from the thread.  While `vm_children` is
	 * not 0, `end` is NULL, so that every record comes to the slow path,
	 * which writes the thread's own at `vm_pos` (the chunk's cursor,
	 * saved with its end in `vm_end` when the first child was made; the
	 * thread's next chunks go there too) and counts the children's calls
	 * in `vm_dropped`; once they are gone,
	 * the thread's next slow path goes back to the chunk
	 * (agent_tbuf_vm_resume()). */
	uint32_t vm_children;
	bool vm_saved;	   /* vm_pos and vm_end hold the chunk's */
	bool vm_refilling; /* the thread takes its next chunk (tbuf.c) */
	uintptr_t vm_pos, vm_end;
	uint64_t vm_dropped;
};

extern __thread struct tstate agent_tls __attribute__((tls_model("initial-exec")));

/* Ends a count of `busy` (agent code, or a hook, leaving), never below 0:
 * a fork child made in a signal handler starts at 0 (atfork_child(),
 * lifecycle.c) under frames of the parent's that the handler interrupted,
 * which end their counts once it returns.  Branch-free: a borrow undoes
 * the decrement of a 0.  Everywhere else the counts are balanced, and
 * this is busy--. */
static inline __attribute__((always_inline)) void agent_busy_leave(struct tstate *t)
{
	unsigned char b = t->busy;

	t->busy = (unsigned char)(b - (b != 0));
}

/* The cold path, out of line: `p` is the slot the hook reserved, outside
 * `end` (first hook of the thread, chunk full, stopped, retired).  Called
 * with t->busy already counted; it ends the hook (agent_busy_leave()), so that the
 * hooks can reach it with a tail jump and need no stack frame. */
void agent_tbuf_slow(struct tstate *t, uint64_t *p, uint64_t ts, uint64_t addr)
    __attribute__((noinline, cold));

/* The whole hook when ticks are not the TSC: out of line, so that the
 * hooks' TSC path makes no call (and needs no frame) either. */
void agent_record_mono(struct tstate *t, uint64_t addr) __attribute__((noinline));

/* Unmaps one of the agent's own mappings (chunks, the spool header, rings,
 * slabs) with the system call rather than through the agent's munmap
 * wrapper, which records nothing here anyway: a process that never called
 * munmap() leaves the wrapper's real function unresolved, and each of its
 * fork children then looked it up with dlsym() (lazy binding, the
 * loader's lookup, about ten page faults a child) to unmap the parent's
 * chunks. */
static inline void agent_unmap(void *addr, uint64_t len)
{
	(void)agent_sys(SYS_munmap, (long)addr, (long)len, 0, 0, 0);
}

/* The reserve of a chunk of `size` bytes, in bytes (see above).  A
 * thread's first chunk (AGENT_FIRST_CHUNK_SIZE), and other chunks under the
 * floor when chunks are larger (recycled tails), keep the floor's. */
static inline uint64_t agent_tbuf_reserve(uint64_t size)
{
	if (size >= AGENT_FLOOR_CHUNK_SIZE)
		return size / 64;
	return size >= AGENT_FIRST_CHUNK_SIZE && agent_cfg.chunk_size > AGENT_FLOOR_CHUNK_SIZE
		   ? AGENT_FLOOR_CHUNK_SIZE / 64
		   : 0;
}

/* How the inline hooks below reach the slow path; run-time patching's
 * handlers (agent/patch/rt.c), which run with no vector register saved,
 * route it through a shim that saves them. */
#ifndef AGENT_TBUF_SLOW
#define AGENT_TBUF_SLOW agent_tbuf_slow
#endif

/* Reserves one 16-byte slot: returns the old `*pos` and advances it, in one
 * instruction that a signal cannot split (not locked: only this thread and
 * its signal handlers touch it). */
static inline __attribute__((always_inline)) uint64_t *agent_reserve(uint64_t **pos)
{
#if defined(__x86_64__)
	uintptr_t v = SPOOL_RECORD_SIZE;

	__asm__("xaddq %0, %1" : "+r"(v), "+m"(*pos));
	return (uint64_t *)v;
#else
	return __atomic_fetch_add(pos, 2, __ATOMIC_RELAXED);
#endif
}

/* Appends one record {ts, addr} to the calling thread's buffer.  No locks,
 * no syscalls, no calls on the common path: one timestamp (rdtsc when
 * `tsc`, a constant where inlined), one reservation, a bounds check, one
 * 16-byte store, and the nesting count around them.  The slow path is the
 * last thing done (a tail jump), so the hooks need no stack frame. */
static inline __attribute__((always_inline)) void agent_record_clk(struct tstate *t, uint64_t addr,
								   bool tsc)
{
	uint64_t ts, *p;

	t->busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
	ts = tsc ? __rdtsc() : agent_mono_ticks();
#else
	(void)tsc;
	ts = agent_mono_ticks();
#endif
	p = agent_reserve(&t->pos);
	if (likely(p < t->end)) {
		p[0] = ts;
		p[1] = addr;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		agent_busy_leave(t);
		return;
	}
	AGENT_TBUF_SLOW(t, p, ts, addr);
}

/* One hook: `addr` has SPOOL_EXIT_BIT set for an exit hook.  The timestamp
 * is read before the reservation (see the ordering note above). */
static inline __attribute__((always_inline)) void agent_record(struct tstate *t, uint64_t addr)
{
#if defined(__x86_64__)
	if (likely(agent_clock_tsc)) {
		agent_record_clk(t, addr, true);
		return;
	}
#endif
	agent_record_mono(t, addr);
}

/* One exit hook of fn (without SPOOL_EXIT_BIT): where the slot just
 * before the next free one, in this chunk, is fn's enter and the call
 * fits, that slot becomes the call's PAIR (spool/records.h) and no slot is
 * taken; otherwise the plain exit record, as agent_record() writes it.
 *
 * `pos` is read once, plainly: a signal handler's hooks may move it on
 * (never back, never to another chunk: they cannot refill) between that
 * read and the store, but they write only at and past it, so the enter
 * slot is still fn's when the PAIR replaces it; the handler's records then
 * follow the PAIR, as they follow the exit's timestamp, which was read
 * before.  1 <= pos <= end says that pos - 1 lies in the chunk being
 * filled (pos and end are NULL before the first chunk; end is NULL while
 * a chunk changes hands); at the chunk's first slot it is the header's
 * last word, which no fn of a PAIR equals.  The w1 is replaced in one
 * 8-byte store: a reader sees the enter or the PAIR, and w0 (the enter's
 * time) stays. */
static inline __attribute__((always_inline)) void agent_record_exit(struct tstate *t, uint64_t fn)
{
#if defined(__x86_64__)
	if (likely(agent_clock_tsc)) {
		uint64_t ts, *p;

		t->busy++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ts = __rdtsc();
		p = t->pos;
		if (likely((uintptr_t)p - 1 < (uintptr_t)t->end) && p[-1] == fn) {
			uint64_t d = ts - p[-2];

			if (likely(ev_pair_fits(fn, d))) {
				p[-1] = ev_pair_w1(fn, d);
				__atomic_signal_fence(__ATOMIC_SEQ_CST);
				agent_busy_leave(t);
				return;
			}
		}
		p = agent_reserve(&t->pos);
		if (likely(p < t->end)) {
			p[0] = ts;
			p[1] = fn | SPOOL_EXIT_BIT;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			agent_busy_leave(t);
			return;
		}
		AGENT_TBUF_SLOW(t, p, ts, fn | SPOOL_EXIT_BIT);
		return;
	}
#endif
	agent_record_mono(t, fn | SPOOL_EXIT_BIT);
}

/* Before clone(CLONE_VM) without CLONE_SETTLS makes a child on t, the
 * calling thread's state: see vm_children above.  Counted once per child;
 * agent_tbuf_vm_gone() when it ends (the child, or the parent of a
 * CLONE_VFORK child once it resumes). */
void agent_tbuf_vm_child(struct tstate *t);
void agent_tbuf_vm_gone(struct tstate *t);

/* In a CLONE_VM child that is about to end (_exit, exit, exec): its count
 * on t given back, if it was counted and is not the process itself;
 * whether it was. */
bool agent_tbuf_vm_leaving(struct tstate *t);

/* In a process agent_check_process() made its own: a buffer for the
 * calling thread (the spool made), one drop counted in it with the cause
 * SPOOL_CAUSE_RAW_CLONE.  Signals blocked, `busy` counted. */
void agent_tbuf_raw_child(struct tstate *t);

/* Thread exit (pthread key destructor): stamps the end time and name,
 * returns the chunk (recycling its tail) and leaves tb on the list. */
void agent_tbuf_retire(struct tstate *t);

/* After fork, in the child: forgets every buffer of the parent (unmapping
 * the chunks still mapped) without touching their contents.  With
 * `interrupted` (the fork ran in a signal handler that interrupted agent
 * code on this thread), the calling thread's chunk is not unmapped but
 * replaced by private memory: the interrupted hook may still store the slot
 * it reserved there, and that must neither fault nor reach the parent's
 * records. */
void agent_tbuf_forget_all(struct tstate *self, bool interrupted);

/* A detach, after the seal: every thread's chunks of the spool, still
 * mapped (a thread may be writing its last record), are replaced by
 * anonymous memory in place, so that the spool's pages go once fxt-run
 * removes the file; the thread unmaps them at its next window. */
void agent_tbuf_let_go(void);

/* A new attach window (fxt_attach_start() after a detach): the buffers of
 * the last one, whose spool fxt-run converted, are taken off the list, and
 * each thread that has one is sent to its slow path (its `end` cleared),
 * where it unmaps its old chunks and starts a buffer in the new spool.
 * Call before the new spool records. */
void agent_tbuf_new_window(void);

#endif /* FXT_AGENT_TBUF_H */
