/* The mem group's wrappers: the malloc family, the mmap family, and the
 * heap counter.  See agent/libc/libc.h for the rules every wrapper follows.
 *
 * Bootstrap.  The first call of each wrapper resolves the real function
 * with dlsym, and dlsym may itself call calloc or malloc, before the real
 * allocator is known.  While the thread resolves (agent_resolving), an
 * allocation whose real function is still unknown is served from a small
 * static arena (a bump allocator, 16-byte aligned, never reused).  Its
 * blocks are recognized by address: free() ignores them, realloc() moves
 * them to the real heap, malloc_usable_size() reads their size from the
 * header before them.  None of them ever reaches the real allocator.
 *
 * Heap counter.  Each thread keeps a running delta of the heap bytes it
 * allocated minus those it freed (malloc_usable_size of results and of
 * freed pointers: what the allocator really hands out), in TLS, without
 * atomics.  A recorded call that finds a non-zero delta and its previous
 * COUNTER record about a millisecond old writes the delta as a COUNTER
 * record (spool/records.h) and starts a new one: the counter is sampled,
 * not written per call.  The converter sums the deltas of all threads in
 * time order.  A thread's last delta is written when it ends through the
 * pthread_create trampoline or pthread_exit (agent_mem_flush_delta(), from
 * wrap_thread.c), and the exiting thread's when the library's destructors
 * run; a thread still running at exit, or one cancelled, may leave its
 * last delta (under a millisecond of activity) unwritten.
 *
 * Calls libc makes inside another wrapper (fopen's malloc) are counted
 * but not recorded as slices; the agent's own allocations (t->busy) are
 * neither.  Memory allocated before the group was on and freed after
 * counts as freed only: the counter is relative to the trace's start and
 * may go below zero.
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "agent/libc/libc.h"
#include "agent/log.h"
#include "agent/sys.h"

REAL_DECL(malloc);
REAL_DECL(calloc);
REAL_DECL(realloc);
REAL_DECL(reallocarray);
REAL_DECL(free);
REAL_DECL(posix_memalign);
REAL_DECL(aligned_alloc);
REAL_DECL(memalign);
REAL_DECL(valloc);
REAL_DECL(pvalloc);
REAL_DECL(malloc_usable_size);
REAL_DECL(mmap);
REAL_DECL(mmap64);
REAL_DECL(munmap);
REAL_DECL(mremap);

/* ------------------------------------------------------------ bootstrap arena */

#define ARENA_BYTES (64u << 10)
#define ARENA_ALIGN 16u

/* Each block is preceded by its size (in the 16 bytes before it, so that
 * blocks stay 16-byte aligned).  Static memory is zero: calloc's blocks
 * come zeroed, as nothing is ever reused. */
static unsigned char arena[ARENA_BYTES] __attribute__((aligned(ARENA_ALIGN)));
static size_t arena_used;

static inline bool in_arena(const void *p)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)arena;

	return a >= base && a < base + sizeof(arena);
}

static size_t arena_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - sizeof(size), sizeof(size));
	return size;
}

/* A block of `size` bytes aligned to `align` (a power of two), or NULL
 * with ENOMEM when the arena is used up.  Threads may resolve at the same
 * time: the bump is a compare-and-swap. */
static void *arena_alloc(size_t size, size_t align)
{
	size_t old = __atomic_load_n(&arena_used, __ATOMIC_RELAXED), start, end;

	if (align < ARENA_ALIGN)
		align = ARENA_ALIGN;
	do {
		start = (old + ARENA_ALIGN + align - 1) & ~(align - 1);
		if (size > sizeof(arena) || start > sizeof(arena) - size) {
			errno = ENOMEM;
			return NULL;
		}
		end = (start + size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	} while (!__atomic_compare_exchange_n(&arena_used, &old, end, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(arena + start - sizeof(size), &size, sizeof(size));
	return arena + start;
}

/* Whether an allocation must come from the arena: its real function is
 * not known yet and this thread is inside dlsym. */
#define BOOTSTRAP(fn) (__builtin_expect(real_##fn == NULL, 0) && agent_resolving)

/* ------------------------------------------------------------ heap counter */

struct heap_delta {
	int64_t bytes;	  /* allocated minus freed since the last COUNTER record */
	uint64_t last_ts; /* when the last COUNTER record was written */
};

static __thread struct heap_delta heap __attribute__((tls_model("initial-exec")));

/* About a millisecond: 2^21 TSC ticks (0.5 to 1 ms at 2 to 4 GHz), or 1e6
 * ns with the monotonic clock.  The exact period does not matter. */
static inline uint64_t heap_period(void)
{
	return agent_clock_tsc ? 1ull << 21 : 1000000u;
}

/* Attached to a process (START .attached, before its calls come to the
 * wrappers).  If its allocator (its own, defining malloc) leaves
 * malloc_usable_size to the C library's, which would read that
 * allocator's blocks as its own, the counter counts nothing. */
static bool usable_foreign;

void agent_mem_attached(void)
{
	void *m = REAL(malloc), *u = REAL(malloc_usable_size);
	Dl_info a, b;

	/* Every real function known before the wrappers go in: none is
	 * looked up later, so no block of the bootstrap arena is handed out
	 * while attached (one freed after the detach would reach the real
	 * free()). */
	(void)REAL(calloc), (void)REAL(realloc), (void)REAL(reallocarray), (void)REAL(free);
	(void)REAL(posix_memalign), (void)REAL(aligned_alloc), (void)REAL(memalign);
	(void)REAL(valloc), (void)REAL(pvalloc), (void)REAL(mmap), (void)REAL(mmap64);
	(void)REAL(munmap), (void)REAL(mremap);

	if (!m || !u || !dladdr(m, &a) || !dladdr(u, &b) || a.dli_fbase != b.dli_fbase) {
		usable_foreign = true;
		agent_dbg("malloc and malloc_usable_size are not of one allocator: the heap "
			  "counter stays at 0");
	}
}

/* The usable size of a block of the real heap (0 for NULL, and while
 * malloc_usable_size itself is being resolved: dlsym's allocations must
 * not resolve it again). */
static inline size_t usable(void *p)
{
	if (!p || BOOTSTRAP(malloc_usable_size) || usable_foreign)
		return 0;
	return REAL(malloc_usable_size)(p);
}

/* Writes the pending delta as a COUNTER record at `ts`; keeps it if the
 * record was dropped. */
static __attribute__((noinline)) void heap_write(struct tstate *t, uint64_t ts)
{
	uint64_t *p = agent_ev_begin(t, 1, ts, false);

	if (p) {
		p[0] = ts;
		p[1] = ev_counter_w1(EV_COUNTER_HEAP, heap.bytes);
		heap.bytes = 0;
	}
	agent_ev_end(t);
	heap.last_ts = ts;
}

void agent_mem_flush_delta(struct tstate *t)
{
	if (heap.bytes && (agent_libc_on & AGENT_G_MEM) && !t->busy)
		heap_write(t, agent_ticks());
}

/* The thread that calls exit() runs the destructors: its delta goes in
 * before the seal (an atexit handler registered earlier, so it runs
 * later: agent/lifecycle.c). */
__attribute__((destructor)) static void mem_fini(void)
{
	agent_mem_flush_delta(&agent_tls);
}

/* A fork child starts a new trace: the parent writes its own delta. */
static AGENT_FORK_CODE void mem_atfork_child(void)
{
	heap.bytes = 0;
	heap.last_ts = 0;
}

__attribute__((constructor)) static void mem_init(void)
{
	pthread_atfork(NULL, NULL, mem_atfork_child);
}

/* ------------------------------------------------------------ recording */

/* The thread whose heap calls are seen (the group is on and this is not
 * agent code), or NULL.  Its `wrap` says whether the call is the
 * program's (record it) or libc's inside another wrapper (count only). */
static inline __attribute__((always_inline)) struct tstate *mem_thread(void)
{
	struct tstate *t = &agent_tls;

	if (__builtin_expect(!(agent_libc_on & AGENT_G_MEM), 1) || t->busy)
		return NULL;
	return t;
}

/* The enter record, after the COUNTER record when one is due: the
 * counter's value before the call (callers apply the call's own change
 * after this). */
static inline __attribute__((always_inline)) bool mem_begin(struct tstate *t, unsigned fn,
							    const void *caller,
							    const struct wrap_arg *args, unsigned n)
{
	uint64_t ts = agent_ticks();

	t->wrap = 1;
	if (heap.bytes && ts - heap.last_ts >= heap_period())
		heap_write(t, ts);
	return wrap_call_begin_ts(t, fn, caller, args, n, ts);
}

/* The exit record of a call returning a pointer (NULL or MAP_FAILED with
 * errno on failure), and the end of the call. */
static inline __attribute__((always_inline)) void mem_end_ptr(struct tstate *t, unsigned fn,
							      bool rec, const void *r, bool failed)
{
	if (rec)
		wrap_end_ptr(t, fn, r, failed ? errno : 0);
	wrap_leave(t);
}

/* The hot calls (malloc, calloc, realloc, free): one record written after
 * the call with the one timestamp `ts` read before it (wrap_call_once:
 * a second timestamp would cost more than the call), after the COUNTER
 * record when one is due.  errno is left as the real call left it. */
static inline __attribute__((always_inline)) void mem_once(struct tstate *t, unsigned fn,
							   const void *caller, uint64_t ts,
							   const struct wrap_arg *args, unsigned n,
							   const void *r, bool failed, int err,
							   int64_t change)
{
	uint64_t v = (uint64_t)(uintptr_t)r;

	/* The counter's value before the call, then the call's change. */
	if (heap.bytes && ts - heap.last_ts >= heap_period())
		heap_write(t, ts);
	heap.bytes += change;
	wrap_call_once(t, fn, caller, ts, args, n, 0, NULL,
		       fn == AGENT_FN_free ? 0 : ev_ptr_payload(v), (int64_t)v, failed ? err : 0);
	wrap_leave(t);
	errno = err;
}

/* ------------------------------------------------------------ malloc family */

WRAP void *malloc(size_t size)
{
	struct tstate *t;
	void *r;

	if (BOOTSTRAP(malloc))
		return arena_alloc(size, ARENA_ALIGN);
	t = mem_thread();
	if (!t)
		return REAL(malloc)(size);
	if (t->wrap) {
		r = REAL(malloc)(size);
		heap.bytes += (int64_t)usable(r);
		return r;
	}
	{
		struct wrap_arg a[] = { WARG(SIZE, U64, size) };
		uint64_t ts = agent_ticks();
		int err;

		t->wrap = 1;
		r = REAL(malloc)(size);
		err = errno;
		mem_once(t, AGENT_FN_malloc, CALLER, ts, a, 1, r, !r, err, (int64_t)usable(r));
	}
	return r;
}

WRAP void *calloc(size_t nmemb, size_t size)
{
	struct tstate *t;
	size_t total;
	void *r;

	if (BOOTSTRAP(calloc)) {
		if (__builtin_mul_overflow(nmemb, size, &total)) {
			errno = ENOMEM;
			return NULL;
		}
		return arena_alloc(total, ARENA_ALIGN);
	}
	t = mem_thread();
	if (!t)
		return REAL(calloc)(nmemb, size);
	if (t->wrap) {
		r = REAL(calloc)(nmemb, size);
		heap.bytes += (int64_t)usable(r);
		return r;
	}
	{
		struct wrap_arg a[] = { WARG(NMEMB, U64, nmemb), WARG(SIZE, U64, size) };
		uint64_t ts = agent_ticks();
		int err;

		t->wrap = 1;
		r = REAL(calloc)(nmemb, size);
		err = errno;
		mem_once(t, AGENT_FN_calloc, CALLER, ts, a, 2, r, !r, err, (int64_t)usable(r));
	}
	return r;
}

/* realloc of an arena block: a new block (from the arena while still
 * bootstrapping), the old one left in place. */
static void *arena_realloc(void *ptr, size_t size)
{
	size_t old = arena_size(ptr);
	void *r = BOOTSTRAP(malloc) ? arena_alloc(size, ARENA_ALIGN) : REAL(malloc)(size);

	if (r)
		memcpy(r, ptr, old < size ? old : size);
	return r;
}

/* The heap change of a realloc of `ptr` (whose usable size was `old`) to
 * `size` bytes that returned `r`: NULL with a size of 0 freed the block
 * (glibc), NULL otherwise left it alone. */
static inline int64_t realloc_change(void *ptr, size_t old, size_t size, void *r)
{
	if (r)
		return (int64_t)usable(r) - (int64_t)old;
	return ptr && size == 0 ? -(int64_t)old : 0;
}

WRAP void *realloc(void *ptr, size_t size)
{
	struct tstate *t;
	size_t old;
	void *r;

	if (__builtin_expect(in_arena(ptr), 0))
		return arena_realloc(ptr, size);
	if (BOOTSTRAP(realloc) && !ptr)
		return arena_alloc(size, ARENA_ALIGN);
	t = mem_thread();
	if (!t)
		return REAL(realloc)(ptr, size);
	old = usable(ptr);
	if (t->wrap) {
		r = REAL(realloc)(ptr, size);
		heap.bytes += realloc_change(ptr, old, size, r);
		return r;
	}
	{
		struct wrap_arg a[] = { WARG(PTR, PTR, ptr), WARG(SIZE, U64, size) };
		uint64_t ts = agent_ticks();
		int err;

		t->wrap = 1;
		r = REAL(realloc)(ptr, size);
		err = errno;
		mem_once(t, AGENT_FN_realloc, CALLER, ts, a, 2, r, !r && size, err,
			 realloc_change(ptr, old, size, r));
	}
	return r;
}

WRAP void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	struct tstate *t;
	size_t old, total;
	void *r;
	bool rec;

	if (__builtin_expect(in_arena(ptr), 0)) {
		if (__builtin_mul_overflow(nmemb, size, &total)) {
			errno = ENOMEM;
			return NULL;
		}
		return arena_realloc(ptr, total);
	}
	t = mem_thread();
	if (!t)
		return REAL(reallocarray)(ptr, nmemb, size);
	/* An overflow fails before anything is freed: no change. */
	if (__builtin_mul_overflow(nmemb, size, &total))
		total = 1;
	old = usable(ptr);
	if (t->wrap) {
		r = REAL(reallocarray)(ptr, nmemb, size);
		heap.bytes += realloc_change(ptr, old, total, r);
		return r;
	}
	{
		struct wrap_arg a[] = { WARG(PTR, PTR, ptr), WARG(NMEMB, U64, nmemb),
					WARG(SIZE, U64, size) };
		rec = mem_begin(t, AGENT_FN_reallocarray, CALLER, a, 3);
	}
	r = REAL(reallocarray)(ptr, nmemb, size);
	heap.bytes += realloc_change(ptr, old, total, r);
	mem_end_ptr(t, AGENT_FN_reallocarray, rec, r, !r && total);
	return r;
}

WRAP void free(void *ptr)
{
	struct tstate *t;
	size_t old;

	if (__builtin_expect(in_arena(ptr), 0))
		return;
	/* dlsym() frees the error string of a failed lookup before it looks
	 * up again: if that look-up is ours, for free() itself, resolving it
	 * here would come back here.  The string is leaked, once. */
	if (BOOTSTRAP(free))
		return;
	t = mem_thread();
	if (!t) {
		REAL(free)(ptr);
		return;
	}
	old = usable(ptr);
	if (t->wrap) {
		heap.bytes -= (int64_t)old;
		REAL(free)(ptr);
		return;
	}
	{
		struct wrap_arg a[] = { WARG(PTR, PTR, ptr) };
		uint64_t ts = agent_ticks();
		int err = errno;

		t->wrap = 1;
		REAL(free)(ptr);
		mem_once(t, AGENT_FN_free, CALLER, ts, a, 1, NULL, false, err, -(int64_t)old);
	}
}

WRAP size_t malloc_usable_size(void *ptr)
{
	if (__builtin_expect(in_arena(ptr), 0))
		return arena_size(ptr);
	return REAL(malloc_usable_size)(ptr);
}

/* ------------------------------------------------------------ aligned */

WRAP int posix_memalign(void **memptr, size_t alignment, size_t size)
{
	struct tstate *t;
	bool rec;
	int r;

	if (BOOTSTRAP(posix_memalign)) {
		void *p;

		if (alignment < sizeof(void *) || (alignment & (alignment - 1)))
			return EINVAL;
		p = arena_alloc(size, alignment);

		if (!p)
			return ENOMEM;
		*memptr = p;
		return 0;
	}
	t = mem_thread();
	if (!t)
		return REAL(posix_memalign)(memptr, alignment, size);
	if (t->wrap) {
		r = REAL(posix_memalign)(memptr, alignment, size);
		if (r == 0)
			heap.bytes += (int64_t)usable(*memptr);
		return r;
	}
	{
		struct wrap_arg a[] = { WARG(ALIGNMENT, U64, alignment), WARG(SIZE, U64, size) };
		rec = mem_begin(t, AGENT_FN_posix_memalign, CALLER, a, 2);
	}
	r = REAL(posix_memalign)(memptr, alignment, size);
	if (r == 0)
		heap.bytes += (int64_t)usable(*memptr);
	if (rec) {
		/* The block, as an argument: the result is the error number. */
		struct wrap_arg a[] = { WARG(PTR, PTR, r == 0 ? *memptr : NULL) };
		wrap_call_end(t, AGENT_FN_posix_memalign, ev_int_payload(r), r, 0, a, r == 0);
	}
	wrap_leave(t);
	return r;
}

/* aligned_alloc, memalign, valloc, pvalloc: a size (and an alignment),
 * a pointer or NULL with errno. */
#define ALIGNED_WRAPPER(fn, params, call_args, bootstrap_align, nargs, ...)    \
	WRAP void *fn params                                                   \
	{                                                                      \
		struct tstate *t;                                              \
		void *r;                                                       \
		bool rec;                                                      \
                                                                               \
		if (BOOTSTRAP(fn))                                             \
			return arena_alloc(size, (bootstrap_align));           \
		t = mem_thread();                                              \
		if (!t)                                                        \
			return REAL(fn) call_args;                             \
		if (t->wrap) {                                                 \
			r = REAL(fn) call_args;                                \
			heap.bytes += (int64_t)usable(r);                      \
			return r;                                              \
		}                                                              \
		{                                                              \
			struct wrap_arg a[] = { __VA_ARGS__ };                 \
			rec = mem_begin(t, AGENT_FN_##fn, CALLER, a, (nargs)); \
		}                                                              \
		r = REAL(fn) call_args;                                        \
		heap.bytes += (int64_t)usable(r);                              \
		mem_end_ptr(t, AGENT_FN_##fn, rec, r, !r);                     \
		return r;                                                      \
	}

ALIGNED_WRAPPER(aligned_alloc, (size_t alignment, size_t size), (alignment, size), alignment, 2,
		WARG(ALIGNMENT, U64, alignment), WARG(SIZE, U64, size))
ALIGNED_WRAPPER(memalign, (size_t alignment, size_t size), (alignment, size), alignment, 2,
		WARG(ALIGNMENT, U64, alignment), WARG(SIZE, U64, size))
ALIGNED_WRAPPER(valloc, (size_t size), (size), 4096, 1, WARG(SIZE, U64, size))
ALIGNED_WRAPPER(pvalloc, (size_t size), (size), 4096, 1, WARG(SIZE, U64, size))

/* ------------------------------------------------------------ mmap family */

/* Mappings are not heap: recorded, not counted.  (glibc's malloc maps
 * large blocks itself, through internal calls that do not come here.) */
#define MMAP_ARGS(addr, length, prot, flags, fd, offset)                                  \
	{                                                                                 \
		WARG(ADDR, PTR, addr), WARG(LENGTH, U64, length), WARG(PROT, I64, prot),  \
		    WARG(FLAGS, I64, flags), WARG(FD, I64, fd), WARG(OFFSET, I64, offset) \
	}

WRAP void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	struct tstate *t = wrap_enter(AGENT_G_MEM);
	void *r;
	bool rec;

	if (!t)
		return REAL(mmap)(addr, length, prot, flags, fd, offset);
	{
		struct wrap_arg a[] = MMAP_ARGS(addr, length, prot, flags, fd, offset);
		rec = wrap_call_begin(t, AGENT_FN_mmap, CALLER, a, 6);
	}
	r = REAL(mmap)(addr, length, prot, flags, fd, offset);
	mem_end_ptr(t, AGENT_FN_mmap, rec, r, r == MAP_FAILED);
	return r;
}

WRAP void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off64_t offset)
{
	struct tstate *t = wrap_enter(AGENT_G_MEM);
	void *r;
	bool rec;

	if (!t)
		return REAL(mmap64)(addr, length, prot, flags, fd, offset);
	{
		struct wrap_arg a[] = MMAP_ARGS(addr, length, prot, flags, fd, offset);
		rec = wrap_call_begin(t, AGENT_FN_mmap64, CALLER, a, 6);
	}
	r = REAL(mmap64)(addr, length, prot, flags, fd, offset);
	mem_end_ptr(t, AGENT_FN_mmap64, rec, r, r == MAP_FAILED);
	return r;
}

WRAP int munmap(void *addr, size_t length)
{
	struct tstate *t = wrap_enter(AGENT_G_MEM);
	bool rec;
	int r;

	if (!t)
		return REAL(munmap)(addr, length);
	{
		struct wrap_arg a[] = { WARG(ADDR, PTR, addr), WARG(LENGTH, U64, length) };
		rec = wrap_call_begin(t, AGENT_FN_munmap, CALLER, a, 2);
	}
	r = REAL(munmap)(addr, length);
	if (rec)
		wrap_end_int(t, AGENT_FN_munmap, r, r < 0 ? errno : 0);
	wrap_leave(t);
	return r;
}

/* The fifth argument exists only with MREMAP_FIXED: read it then only. */
WRAP void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...)
{
	struct tstate *t;
	void *new_address = NULL, *r;
	bool rec;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_address = va_arg(ap, void *);
		va_end(ap);
	}
	t = wrap_enter(AGENT_G_MEM);
	if (!t)
		return REAL(mremap)(old_address, old_size, new_size, flags, new_address);
	{
		struct wrap_arg a[] = { WARG(ADDR, PTR, old_address), WARG(OLD_SIZE, U64, old_size),
					WARG(NEW_SIZE, U64, new_size), WARG(FLAGS, I64, flags) };
		rec = wrap_call_begin(t, AGENT_FN_mremap, CALLER, a, 4);
	}
	r = REAL(mremap)(old_address, old_size, new_size, flags, new_address);
	mem_end_ptr(t, AGENT_FN_mremap, rec, r, r == MAP_FAILED);
	return r;
}
