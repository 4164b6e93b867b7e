/* Per-thread trace buffers: the cold paths (refill, drops, retire), and
 * those of the children that share a thread's state without fork's
 * handlers (a clone no wrapper saw; CLONE_VM).  One file past 800 lines:
 * they all take chunks and count drops through the same static helpers,
 * which would otherwise be exported for them alone. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/events.h"
#include "agent/log.h"
#include "agent/mode.h"
#include "agent/sys.h"
#include "agent/tbuf.h"

__thread struct tstate agent_tls __attribute__((tls_model("initial-exec")));

#define SLAB_BYTES (64u << 10)

/* The thread's spare staged chunks given back to the spool (the kernel
 * writes them back once unmapped), or unmapped only (`put` false). */
static AGENT_FORK_CODE void spares_drop(struct tbuf *tb, bool put)
{
	for (unsigned i = 0; i < TBUF_SPARES; i++) {
		struct spool_map *m = &tb->spare[i];
		if (!m->base)
			continue;
		if (put)
			spool_chunk_put(&agent.spool, m, m->size, false);
		else
			agent_unmap(m->base, m->size);
		m->base = NULL;
	}
}

/* Adds n drops to the spool header's count, for a recovery (spool/format.h,
 * dropped_floor): the seal's exact counts never come if the process is
 * killed. */
static void publish_drops(uint64_t n)
{
	struct spool_header *h = __atomic_load_n(&agent.spool.hdr, __ATOMIC_ACQUIRE);

	if (h)
		__atomic_fetch_add(&h->dropped_floor, n, __ATOMIC_RELAXED);
}

void agent_note_waited(void)
{
	spool_note_waited(&agent.spool);
}

static void count_drop(struct tbuf *tb, uint64_t ts)
{
	uint64_t n = tb->dropped + 1;

	if (!tb->first_drop_ts)
		__atomic_store_n(&tb->first_drop_ts, ts ? ts : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&tb->dropped, n, __ATOMIC_RELAXED);
	if (n == 1 || n % SPOOL_DROPS_PUBLISHED == 0) {
		publish_drops(n - tb->dropped_published);
		tb->dropped_published = n;
	}
}

static void count_lost(void)
{
	__atomic_fetch_add(&agent.lost, 1, __ATOMIC_RELAXED);
	publish_drops(1);
}

/* A new tbuf for the calling thread (t), on the list.  mmap'd slabs rather
 * than malloc: the first hook of a thread may run in a signal handler. */
static AGENT_FORK_CODE struct tbuf *tbuf_new(struct tstate *t)
{
	struct tbuf *tb = NULL;

	pthread_mutex_lock(&agent.lock);
	if (!agent.slab_left) {
		void *p = agent_sys_mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			goto out;
		agent.slab = p;
		agent.slab_left = SLAB_BYTES / sizeof(struct tbuf);
	}
	tb = agent.slab++;
	agent.slab_left--;
	memset(tb, 0, sizeof(*tb));
	tb->serial = ++agent.next_serial;
	tb->tid = (uint64_t)agent_sys(SYS_gettid, 0, 0, 0, 0, 0);
	tb->self = pthread_self();
	tb->owner = t;
	tb->window = agent.window;
	tb->next = agent.threads;
	/* Published whole: agent/patch/probe.c walks the list unlocked. */
	__atomic_store_n(&agent.threads, tb, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&agent.lock);
	if (tb && agent.key_ok)
		pthread_setspecific(agent.key, tb);
	return tb;
}

static void stop(struct tstate *t, struct tbuf *tb, uint64_t ts, int err)
{
	if (err != -ESHUTDOWN)
		agent_dbg("thread %llu stops recording: %s", (unsigned long long)tb->tid,
			  err != -ENOSPC	  ? strerror(-err)
			  : agent_mode_one_fill() ? "its FXT_BUFFER_SIZE is full"
						  : "FXT_MAX_SIZE reached");
	/* Past a size limit (-ENOSPC), or the seal (-ESHUTDOWN): the
	 * default cause.  Anything else is the spool's failure, said as such
	 * rather than as a limit to raise. */
	if (err != -ENOSPC && err != -ESHUTDOWN) {
		uint32_t cause = SPOOL_CAUSE_SPOOL | ((uint32_t)-err & SPOOL_CAUSE_ERRNO);

		__atomic_store_n(&tb->drop_cause, cause, __ATOMIC_RELAXED);
		spool_note_cause(&agent.spool, cause);
	}
	__atomic_store_n(&tb->stop_ts, ts ? ts : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&tb->state, TBUF_STOPPED, __ATOMIC_RELAXED);
	t->pos = t->end = NULL;
	spares_drop(tb, true);
}

/* Whether `p` is a record slot of the chunk tb->map describes. */
static bool in_chunk(const struct tbuf *tb, const uint64_t *p)
{
	const char *base = __atomic_load_n(&tb->map.base, __ATOMIC_RELAXED);

	return base && (const char *)p >= base + SPOOL_CHUNK_HEADER_SIZE &&
	       (const char *)p + SPOOL_RECORD_SIZE <= base + tb->map.size;
}

/* Whether a thread's full chunk becomes one of its staged chunks
 * (agent/spool.h) rather than being replaced by a fresh one: past the
 * thread's first two chunks (most threads and short processes never get
 * there), for chunks of the usual sizes.  Tiny test chunks keep their
 * one-chunk-after-another layout. */
static bool reusable(const struct tbuf *tb, const struct spool_map *m)
{
	return agent_mode_stream() && tb->seq >= 3 &&
	       m->size >= AGENT_FLOOR_CHUNK_SIZE; /* m's seq is tb->seq - 1 */
}

/* ------------------------------------------------------------ rings */

/* Makes room in tb's ring for one more entry: a bigger block, mmap'd.
 * 0 or -ENOMEM. */
static int ring_grow(struct tbuf *tb)
{
	struct agent_ring *old = tb->ring, *r;
	uint64_t bytes = old ? old->bytes * 2 : 4096;
	void *p;

	if (old && old->n < old->cap)
		return 0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	r = p;
	r->bytes = bytes;
	r->cap = (unsigned)((bytes - sizeof(*r)) / sizeof(r->v[0]));
	if (old) {
		/* Entries are only added before the first is reused: in
		 * order from 0. */
		r->n = old->n;
		r->head = old->head;
		memcpy(r->v, old->v, old->n * sizeof(old->v[0]));
		agent_unmap(old, old->bytes);
	}
	tb->ring = r;
	return 0;
}

/* The size bound of tb's next new chunk in the oneshot and circular
 * modes: what is left of its buffer, and (circular) a quarter of the
 * buffer, so that a full ring has at least four chunks and a reused one
 * takes at most a quarter of the window. */
static uint64_t buffer_cap(const struct tbuf *tb)
{
	uint64_t b = agent_cfg.buffer_size, left = b > tb->bytes ? b - tb->bytes : 0;
	uint64_t quarter = b / 4;

	if (agent_mode_ring() && quarter >= AGENT_MIN_CHUNK_SIZE && left > quarter)
		left = quarter;
	return left ? left : 1; /* 1: too little for a chunk (0 is no bound) */
}

/* The circular mode's next chunk: a new one while the ring is not full,
 * else its oldest, emptied (spool_ring_reuse()); the chunk being left
 * stays mapped, in the ring.  0 or -errno. */
static int ring_next(struct tbuf *tb, struct spool_map *next)
{
	struct agent_ring *r = tb->ring;
	int err;

	if (!r || r->head == 0) {
		err = ring_grow(tb);
		if (err < 0)
			return err;
		r = tb->ring;
		err = spool_chunk_get(&agent.spool, tb->serial, tb->tid, tb->seq, buffer_cap(tb),
				      next);
		if (err == 0) {
			r->v[r->n++] = *next;
			tb->bytes += next->size;
			return 0;
		}
		if (err != -ENOSPC || !r->n)
			return err;
	}
	/* Full (or the spool is): the oldest becomes the newest. */
	*next = r->v[r->head];
	r->head = (r->head + 1) % r->n;
	__atomic_store_n(&tb->overwritten,
			 tb->overwritten +
			     spool_ring_reuse(&agent.spool, next, tb->seq, tb->overwritten),
			 __ATOMIC_RELAXED);
	return 0;
}

/* Unmaps every chunk of tb's ring but `keep` (its base), and the ring. */
static AGENT_FORK_CODE void ring_free(struct tbuf *tb, const void *keep, bool put)
{
	struct agent_ring *r = tb->ring;

	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->v[i].base == keep)
			continue;
		if (put)
			spool_chunk_put(&agent.spool, &r->v[i], r->v[i].size, false);
		else
			agent_unmap(r->v[i].base, r->v[i].size);
	}
	agent_unmap(r, r->bytes);
	tb->ring = NULL;
}

/* Where refill() puts the full staged chunk it leaves to the drain
 * thread: the slot of a spare the drain thread has copied (the thread goes
 * on in it), else an empty one (a fresh chunk: while the drain thread is
 * behind, a thread keeps up to TBUF_SPARES full chunks waiting for it
 * rather than copy one itself, which on a busy machine also waits for
 * the file's lock that the drain thread's copy holds); NULL when every
 * spare waits. */
static struct spool_map *spare_slot(struct tbuf *tb)
{
	struct spool_map *empty = NULL;

	for (unsigned i = 0; i < TBUF_SPARES; i++) {
		if (!tb->spare[i].base) {
			if (!empty)
				empty = &tb->spare[i];
		} else if (spool_stage_copied(&tb->spare[i])) {
			return &tb->spare[i];
		}
	}
	return empty;
}

/* Installs the next chunk.  The caller blocks signals meanwhile, but a
 * synchronous one (or a future caller) could still run a handler's hooks
 * in between, so the order is kept safe for them (they cannot refill, see
 * tbuf.h): `end` is NULL first, so their reservations fail and come to the
 * slow path, which accepts a slot only if it lies in tb->map, published
 * (base last) before `pos` moves into it.  No slot handed out is left
 * unwritten. */
static AGENT_FORK_CODE int refill_to(struct tstate *t, struct tbuf *tb, uint64_t **pos,
				     uint64_t **end)
{
	struct spool_map m = tb->map, next = { 0 };
	int err;

	t->end = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (agent_mode_ring()) {
		/* The chunk being left stays mapped, in the ring. */
		__atomic_store_n(&tb->map.base, NULL, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		err = ring_next(tb, &next);
		if (err < 0)
			return err;
	} else if (m.base) {
		/* Unpublished while it changes hands: a nested hook drops its
		 * call rather than write into a chunk being copied. */
		__atomic_store_n(&tb->map.base, NULL, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (reusable(tb, &m) && spool_stage_full(&agent.spool, &m) == 0) {
			struct spool_map *slot = NULL;

			if (__atomic_load_n(&agent.spool.bell, __ATOMIC_ACQUIRE))
				slot = spare_slot(tb);
			if (slot) {
				/* m waits for fxt-run's drain thread; go on in
				 * a spare it has copied, or in a fresh chunk
				 * (next.base NULL), a spare no more. */
				next = *slot;
				*slot = m;
			} else {
				/* Nobody else copies, or the drain thread is
				 * behind by every spare (a busy machine):
				 * copy m now, while it is in the cache, and
				 * fill it again.  The others wait for the
				 * drain thread. */
				next = m;
			}
			if (next.base && spool_stage_take(&agent.spool, &next, tb->seq) < 0)
				spool_chunk_put(&agent.spool, &next, next.size, false);
		} else {
			/* The kernel writes a full chunk back once unmapped. */
			spool_chunk_put(&agent.spool, &m, m.size, false);
		}
	}
	if (!next.base) {
		/* Oneshot: no more than the thread's buffer. */
		err = spool_chunk_get(&agent.spool, tb->serial, tb->tid, tb->seq,
				      agent_mode_one_fill() ? buffer_cap(tb) : 0, &next);
		if (err < 0)
			return err;
		tb->bytes += next.size;
	}
	/* Named now, a fresh chunk or a staged one filled again: a killed
	 * process's threads are named after their newest chunk. */
	spool_chunk_name(&agent.spool, &next, &tb->name_off);
	tb->seq++;
	tb->map.off = next.off;
	tb->map.size = next.size;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tb->map.base, next.base, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*pos = (uint64_t *)((char *)next.base + SPOOL_CHUNK_HEADER_SIZE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*end = (uint64_t *)((char *)next.base + next.size - agent_tbuf_reserve(next.size));
	return 0;
}

/* The thread's next chunk, its cursor and end in t's. */
static AGENT_FORK_CODE int refill(struct tstate *t, struct tbuf *tb)
{
	return refill_to(t, tb, &t->pos, &t->end);
}

/* The slow paths are entered with the hook's count taken, but a fork
 * child made in a signal handler that interrupted one counts from 0
 * (agent/lifecycle.c): once signals are blocked, the count is made the
 * hook's own again, so that the refill's wrapped system calls record
 * nothing (recording would refill inside the refill).  Ended as usual,
 * with agent_busy_leave(). */
static void hold_busy(struct tstate *t)
{
	if (!t->busy)
		t->busy = 1;
}

/* Attached (fxt-run -p): a thread's first chunk waits for the start that
 * fxt_attach_start() runs on the starter thread (do_init(): the symbols,
 * the patching, a tenth of a second or more), before the slow path blocks
 * the thread's signals, so that a signal of the program's (its timer, a
 * SIGUSR1 it waits for) is delivered meanwhile rather than held until the
 * start ends.  A handler's hooks then find the thread busy, with no chunk:
 * their records are counted lost (count_lost()).  Launched, the start ran
 * before main(): nothing to wait for.  What agent_ensure_init() says. */
static int init_wait(void)
{
	return agent.late ? agent_ensure_init() : 0;
}

/* Whether tb is of an earlier attach window (agent_tbuf_new_window()). */
static inline bool stale(const struct tbuf *tb)
{
	return tb && tb->window != __atomic_load_n(&agent.window, __ATOMIC_ACQUIRE);
}

/* Forgets the calling thread's buffer of an earlier window: its chunks
 * (of a spool converted already) unmapped, the thread without a buffer, as
 * before its first record.  Signals blocked: a handler's record on this
 * thread must not find the chunk half gone. */
static void forget_stale(struct tstate *t, struct tbuf *tb)
{
	sigset_t old;

	agent_signals_block(&old);
	ring_free(tb, tb->map.base, false);
	if (tb->map.base)
		agent_unmap(tb->map.base, tb->map.size);
	spares_drop(tb, false);
	tb->map.base = NULL;
	t->tb = NULL;
	t->pos = t->end = NULL;
	agent_signals_restore(&old);
}

/* Whether the thread's buffer is no longer `tb`, the one its slow path
 * began with: a signal handler that came in before the slow path blocked
 * signals forked, and the child forgot the parent's buffers
 * (agent_tbuf_forget_all(); nested records never replace a buffer).  The
 * record being made is then the interrupted code's, a call of the
 * parent's, whose other half is in the parent's archive: it is left out,
 * as the converter leaves out such a call's exit; the child's records go
 * on in a buffer of its own. */
static bool forked_since(const struct tstate *t, const struct tbuf *tb)
{
	return t->tb != tb;
}

static void put_record(uint64_t *p, uint64_t ts, uint64_t addr)
{
	p[0] = ts;
	p[1] = addr;
}

/* ------------------------------------------------------------ raw clones */

AGENT_FORK_CODE void agent_tbuf_raw_child(struct tstate *t)
{
	uint64_t ts = agent_ticks();
	struct tbuf *tb;

	if (agent_ensure_init() < 0 || agent.disabled || !(tb = tbuf_new(t)))
		return;
	t->tb = tb;
	if (refill(t, tb) < 0) {
		count_lost();
		return;
	}
	__atomic_store_n(&tb->drop_cause, SPOOL_CAUSE_RAW_CLONE, __ATOMIC_RELAXED);
	spool_note_cause(&agent.spool, SPOOL_CAUSE_RAW_CLONE);
	count_drop(tb, ts);
}

/* ------------------------------------------------------------ CLONE_VM children */

/* Signals blocked: a handler's hook on this thread must find the state
 * either before (the chunk) or after (the slow path, vm_pos). */
void agent_tbuf_vm_child(struct tstate *t)
{
	sigset_t old;

	agent_signals_block(&old);
	if (__atomic_fetch_add(&t->vm_children, 1, __ATOMIC_ACQ_REL) == 0 && !t->vm_saved) {
		t->vm_pos = (uintptr_t)t->pos;
		t->vm_end = (uintptr_t)t->end;
		t->vm_saved = true;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&t->end, NULL, __ATOMIC_RELEASE);
		/* The slots the two reserve from it meanwhile lie in no chunk
		 * (in_chunk()), whatever they add up to. */
		__atomic_store_n(&t->pos, NULL, __ATOMIC_RELEASE);
	}
	agent_signals_restore(&old);
}

void agent_tbuf_vm_gone(struct tstate *t)
{
	__atomic_fetch_sub(&t->vm_children, 1, __ATOMIC_ACQ_REL);
}

bool agent_tbuf_vm_leaving(struct tstate *t)
{
	if (!__atomic_load_n(&t->vm_children, __ATOMIC_ACQUIRE) ||
	    agent_sys(SYS_getpid, 0, 0, 0, 0, 0) == (long)agent.pid)
		return false;
	agent_tbuf_vm_gone(t);
	return true;
}

/* The thread's cursor reached its chunk's end while children share t:
 * its next chunk, into vm_pos and vm_end (t's stay NULL: the children
 * take none of it).  Signals blocked (a handler's record waits or, its
 * chunk full, drops); `vm_refilling` keeps one that comes first out.
 * Whether the thread has room again. */
static bool vm_refill(struct tstate *t, struct tbuf *tb)
{
	uint64_t *pos = NULL, *end = NULL;
	sigset_t old;
	int err = -EBUSY;

	agent_signals_block(&old);
	if (!t->vm_refilling && tb->state == TBUF_RECORDING) {
		t->vm_refilling = true;
		err = refill_to(t, tb, &pos, &end);
		t->end = NULL;
		t->pos = NULL;
		if (err < 0) {
			stop(t, tb, agent_ticks(), err);
			pos = end = NULL;
		}
		t->vm_pos = (uintptr_t)pos;
		t->vm_end = (uintptr_t)end;
		t->vm_refilling = false;
	}
	agent_signals_restore(&old);
	return err == 0;
}

/* The slow path while CLONE_VM children share t: where the n slots of a
 * record of the thread's own go (at vm_pos, one system call to know the
 * thread from a child), or NULL for a child's, counted when `count`
 * (an enter).  The thread's own past the chunk's end are counted too. */
static uint64_t *vm_slots(struct tstate *t, unsigned n, bool count)
{
	struct tbuf *tb = t->tb;
	uintptr_t size = (uintptr_t)n * SPOOL_RECORD_SIZE;

	if (tb && t->vm_end && (uint64_t)agent_sys(SYS_gettid, 0, 0, 0, 0, 0) == tb->tid) {
		for (int tries = 0; tries < 2; tries++) {
			uintptr_t p = __atomic_fetch_add(&t->vm_pos, size, __ATOMIC_RELAXED);

			if (p + size <= t->vm_end)
				return (uint64_t *)p;
			if (tries || !vm_refill(t, tb))
				break;
		}
	}
	if (count)
		__atomic_fetch_add(&t->vm_dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The children are gone: the thread goes on in its chunk where vm_pos
 * left it, and their calls are counted as its drops, with their cause.
 * Not nested (busy 1): nothing else moves `pos` meanwhile. */
static void vm_resume(struct tstate *t, uint64_t ts)
{
	uint64_t n = __atomic_exchange_n(&t->vm_dropped, 0, __ATOMIC_RELAXED);
	struct tbuf *tb = t->tb;

	t->pos = (uint64_t *)t->vm_pos;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->end = (uint64_t *)t->vm_end;
	t->vm_saved = false;
	t->vm_pos = t->vm_end = 0;
	if (!n)
		return;
	if (!tb) {
		__atomic_fetch_add(&agent.lost, n, __ATOMIC_RELAXED);
		publish_drops(n);
		return;
	}
	if (!tb->drop_cause) {
		__atomic_store_n(&tb->drop_cause, SPOOL_CAUSE_VM_CHILD, __ATOMIC_RELAXED);
		spool_note_cause(&agent.spool, SPOOL_CAUSE_VM_CHILD);
	}
	while (n--)
		count_drop(tb, ts);
}

/* Whether the slow path is the shared state's (vm_children); false too
 * for the first after the children ended, which goes back to the chunk:
 * then `*p`, reserved in no chunk, is NULL.  A hook's (`hook`) makes the
 * nesting count its own again: a child running at once on another core
 * counted on it too, and an increment or a decrement of one may have been
 * lost to the other's (agent_busy_leave() takes a count below the truth).
 * A slot reserved by a hook this one interrupted lies in no chunk, and
 * its slow path finds the chunk back (vm_saved cleared). */
static bool vm_slow(struct tstate *t, uint64_t **p, uint64_t ts, bool hook)
{
	if (__builtin_expect(!t->vm_saved, 1))
		return false;
	if (__atomic_load_n(&t->vm_children, __ATOMIC_ACQUIRE))
		return true;
	vm_resume(t, ts);
	if (hook && t->busy > 1)
		t->busy = 1;
	*p = NULL;
	return false;
}

/* Before a refill of `*tb` (signals blocked): whether this is still the
 * process the state is of (agent_check_process(): one getpid() a chunk).
 * 1 when it was not but is now, a child of a clone no wrapper saw, with
 * a buffer of its own in a fresh chunk (*tb); -1 in a child that shares
 * the memory of the process the state is of, which records nothing; 0
 * otherwise. */
static int raw_check(struct tstate *t, struct tbuf **tb)
{
	if (!*tb)
		return 0;
	if (!agent_check_process())
		return -1;
	if (t->tb == *tb)
		return 0;
	*tb = t->tb;
	return 1;
}

void agent_tbuf_slow(struct tstate *t, uint64_t *p, uint64_t ts, uint64_t addr)
{
	int saved = errno;
	struct tbuf *tb = t->tb;
	sigset_t old;
	bool written = false, shared = t->vm_saved;
	int err;

	if (vm_slow(t, &p, ts, true)) {
		uint64_t *q = vm_slots(t, 1, !(addr & SPOOL_EXIT_BIT));

		if (q)
			put_record(q, ts, addr);
		goto out;
	}
	if (shared) {
		/* Back in the chunk (vm_resume()): the record's slot. */
		p = agent_reserve(&t->pos);
		if (likely(p < t->end)) {
			put_record(p, ts, addr);
			goto out;
		}
	}
	if (t->busy > 1) {
		/* Nested in an interrupted hook: never replace the chunk under
		 * it.  The slot is still good if it lies in the chunk's reserve,
		 * or if the interrupted hook is installing a chunk and already
		 * moved `pos` into it. */
		if (tb && in_chunk(tb, p)) {
			put_record(p, ts, addr);
			goto out;
		}
		goto drop;
	}
	if (stale(tb)) {
		forget_stale(t, tb);
		tb = NULL;
	}
	if (tb && tb->state != TBUF_RECORDING)
		goto drop;
	/* The first slot of the reserve is ours, and slots after it may
	 * already hold a signal handler's records: fill it (a zero slot
	 * would end the chunk for readers), then refill. */
	if (tb && in_chunk(tb, p)) {
		put_record(p, ts, addr);
		written = true;
	}
	/* Attached: the thread's first chunk waits for the start first
	 * (init_wait()), its signals as the program has them. */
	if (!tb && init_wait() < 0)
		goto drop;
	/* Signals wait while we take a chunk: their handlers' hooks would
	 * have to use the reserve meanwhile (they cannot refill), and the
	 * system calls below are where pending signals get delivered. */
	agent_signals_block(&old);
	hold_busy(t);
	if (forked_since(t, tb)) {
		agent_signals_restore(&old);
		goto out;
	}
	switch (raw_check(t, &tb)) {
	case -1:
		agent_signals_restore(&old);
		goto drop;
	case 1:
		agent_signals_restore(&old);
		if (!tb)
			goto drop;
		written = false; /* the parent's chunk held it */
		err = 0;
		goto reserve;
	}
	if (!tb) {
		if (agent_ensure_init() < 0 || agent.disabled || !(tb = tbuf_new(t))) {
			agent_signals_restore(&old);
			goto drop;
		}
		t->tb = tb;
	}
	{
		uint64_t r0 = agent_ticks();
		err = refill(t, tb);
		__atomic_store_n(&tb->refill_ticks, tb->refill_ticks + agent_ticks() - r0,
				 __ATOMIC_RELAXED);
	}
	if (err < 0)
		stop(t, tb, ts, err);
	agent_signals_restore(&old);
	if (written)
		goto out;
reserve:
	if (err < 0)
		goto drop;
	p = agent_reserve(&t->pos);
	if (likely(p < t->end)) {
		put_record(p, ts, addr);
		goto out;
	}
	/* A signal handler filled the whole new chunk meanwhile. */
drop:
	if (!(addr & SPOOL_EXIT_BIT)) {
		if (tb)
			count_drop(tb, ts);
		else
			count_lost();
	}
out:
	errno = saved;
	/* The hook ends here (see tbuf.h). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	agent_busy_leave(t);
}

/* Whether the n slots at `p` all lie in the chunk tb->map describes. */
static bool range_in_chunk(const struct tbuf *tb, const uint64_t *p, unsigned n)
{
	return in_chunk(tb, p) && in_chunk(tb, p + 2 * (n - 1));
}

/* The slow path of a tagged record (events.h): like agent_tbuf_slow(), for
 * n slots, returning them instead of writing them.  The slots reserved in
 * the old chunk that are not used stay zero: readers skip them. */
AGENT_FORK_CODE uint64_t *agent_tbuf_slow_n(struct tstate *t, uint64_t *p, unsigned n, uint64_t ts,
					    bool count)
{
	int saved = errno;
	struct tbuf *tb = t->tb;
	sigset_t old;
	int err;

	if (vm_slow(t, &p, ts, false)) {
		p = vm_slots(t, n, count);
		goto out;
	}
	if (t->busy > 1) {
		/* Nested (a signal handler's record): never refill here. */
		if (tb && range_in_chunk(tb, p, n))
			goto out;
		goto drop;
	}
	if (stale(tb)) {
		forget_stale(t, tb);
		tb = NULL;
	}
	if (tb && tb->state != TBUF_RECORDING) {
		/* After the thread's buffer was retired, only its TLS
		 * destructors and libc's thread exit run: their libc calls are
		 * not the program's work, and counting them as drops would
		 * tell the user to raise a limit that is not the cause. */
		if (tb->state == TBUF_RETIRED)
			count = false;
		goto drop;
	}
	if (!tb && init_wait() < 0) /* as in agent_tbuf_slow() */
		goto drop;
	agent_signals_block(&old);
	hold_busy(t);
	if (forked_since(t, tb)) {
		agent_signals_restore(&old);
		p = NULL;
		goto out;
	}
	switch (raw_check(t, &tb)) {
	case -1:
		agent_signals_restore(&old);
		goto drop;
	case 1:
		if (!tb) {
			agent_signals_restore(&old);
			goto drop;
		}
		err = 0;
		goto reserve;
	}
	if (!tb) {
		if (agent_ensure_init() < 0 || agent.disabled || !(tb = tbuf_new(t))) {
			agent_signals_restore(&old);
			goto drop;
		}
		t->tb = tb;
	}
	{
		uint64_t r0 = agent_ticks();
		err = refill(t, tb);
		__atomic_store_n(&tb->refill_ticks, tb->refill_ticks + agent_ticks() - r0,
				 __ATOMIC_RELAXED);
	}
reserve:
	if (err < 0) {
		stop(t, tb, ts, err);
	} else {
		/* Reserved before signals can come in again. */
		p = t->pos;
		t->pos += 2 * n;
	}
	agent_signals_restore(&old);
	if (err >= 0 && p + 2 * n <= t->end)
		goto out;
	/* A record larger than the chunk (only with tiny test chunks). */
drop:
	p = NULL;
	if (count) {
		if (tb)
			count_drop(tb, ts);
		else
			count_lost();
	}
out:
	errno = saved;
	return p;
}

void agent_record_mono(struct tstate *t, uint64_t addr)
{
	agent_record_clk(t, addr, false);
}

void agent_tbuf_retire(struct tstate *t)
{
	struct tbuf *tb = t->tb;
	int saved = errno;

	if (!tb || tb->state == TBUF_RETIRED)
		return;
	if (stale(tb)) {
		forget_stale(t, tb);
		return;
	}
	t->busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The chunk is unmapped below, and a signal handler's hooks (nested:
	 * busy > 1) must not write into it meanwhile.  `end` goes first: a
	 * reservation then takes the slow path, which writes only inside the
	 * chunk, still mapped; then `pos`, in one exchange that a signal
	 * cannot split: after it a reservation lies in no chunk, and the slow
	 * path drops it and counts it. */
	if (!tb->dropped && !tb->drop_cause) /* what it drops from now, said */
		__atomic_store_n(&tb->drop_cause, SPOOL_CAUSE_THREAD_END, __ATOMIC_RELAXED);
	t->end = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t *pos = __atomic_exchange_n(&t->pos, NULL, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tb->end_ts, agent_ticks(), __ATOMIC_RELAXED);
	if (prctl(PR_GET_NAME, tb->name) != 0)
		tb->name[0] = '\0';
	tb->name[sizeof(tb->name) - 1] = '\0';
	/* A ring's other chunks hold its window: unmapped, not recycled. */
	ring_free(tb, tb->map.base, true);
	if (tb->map.base) {
		uint64_t used = (uint64_t)((char *)pos - (char *)tb->map.base);
		spool_chunk_put(&agent.spool, &tb->map, used, true);
	}
	spares_drop(tb, true);
	/* Under the lock: agent_tbuf_new_window() writes the state of a
	 * thread whose buffer is not retired, which must still exist. */
	pthread_mutex_lock(&agent.lock);
	__atomic_store_n(&tb->state, TBUF_RETIRED, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&agent.lock);
	t->pos = t->end = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	agent_busy_leave(t);
	errno = saved;
}

/* Replaces the mapping at base by anonymous memory, in place. */
static void to_anon(void *base, uint64_t size)
{
	if (base &&
	    mmap(base, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		agent_dbg("cannot let go of a chunk at %p: %s", base, strerror(errno));
}

void agent_tbuf_let_go(void)
{
	pthread_mutex_lock(&agent.lock);
	for (struct tbuf *tb = agent.threads; tb; tb = tb->next) {
		if (__atomic_load_n(&tb->state, __ATOMIC_RELAXED) == TBUF_RETIRED)
			continue;
		to_anon(tb->map.base, tb->map.size);
		for (unsigned i = 0; i < TBUF_SPARES; i++)
			to_anon(tb->spare[i].base, tb->spare[i].size);
		for (unsigned i = 0; tb->ring && i < tb->ring->n; i++)
			if (tb->ring->v[i].base != tb->map.base)
				to_anon(tb->ring->v[i].base, tb->ring->v[i].size);
	}
	pthread_mutex_unlock(&agent.lock);
}

void agent_tbuf_new_window(void)
{
	pthread_mutex_lock(&agent.lock);
	__atomic_add_fetch(&agent.window, 1, __ATOMIC_RELEASE);
	/* A thread that passed its `end` check just before keeps writing its
	 * record in the old chunk, still mapped: only the thread unmaps it. */
	for (struct tbuf *tb = agent.threads; tb; tb = tb->next)
		if (tb->owner && __atomic_load_n(&tb->state, __ATOMIC_RELAXED) != TBUF_RETIRED)
			__atomic_store_n(&tb->owner->end, NULL, __ATOMIC_RELAXED);
	agent.threads = NULL;
	agent.next_serial = 0;
	pthread_mutex_unlock(&agent.lock);
}

AGENT_FORK_CODE void agent_tbuf_forget_all(struct tstate *self, bool interrupted)
{
	/* The parent's chunks are still mapped here (MAP_SHARED, so writing
	 * them would clobber the parent's data): unmap them, nothing more. */
	for (struct tbuf *tb = agent.threads; tb; tb = tb->next) {
		ring_free(tb, tb->map.base, false);
		if (tb->map.base && interrupted && tb == self->tb) {
			/* Left mapped for good (untouched pages cost no memory). */
			if (mmap(tb->map.base, tb->map.size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
				 0) == MAP_FAILED)
				agent_unmap(tb->map.base, tb->map.size);
		} else if (tb->map.base) {
			agent_unmap(tb->map.base, tb->map.size);
		}
		spares_drop(tb, false);
	}
	agent.threads = NULL;
	agent.next_serial = 0;
	agent.slab = NULL;
	agent.slab_left = 0;
	self->tb = NULL;
	self->pos = self->end = NULL;
	/* A CLONE_VM child of the parent's shares none of ours. */
	self->vm_children = 0;
	self->vm_saved = self->vm_refilling = false;
	self->vm_pos = self->vm_end = 0;
	self->vm_dropped = 0;
	if (agent.key_ok)
		pthread_setspecific(agent.key, NULL);
}
