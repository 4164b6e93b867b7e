/* null_recorder: the cheapest recorder we can think of, a baseline for
 * the agent's hook cost.  Each hook reads the TSC and makes one 16-byte
 * store into thread-local storage; nothing is kept or written.  Preload it
 * into a program built with -finstrument-functions.
 */
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ticks(void)
{
	return __rdtsc();
}
#else
#include <time.h>
static inline uint64_t ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

struct slot {
	uint64_t ts;
	uintptr_t fn; /* bit 0 set: exit */
};

/* Not static: the compiler must keep stores that another module could
 * read. */
extern __thread struct slot fxt_null_last;
__thread struct slot fxt_null_last __attribute__((tls_model("initial-exec")));

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	fxt_null_last = (struct slot){ ticks(), (uintptr_t)fn };
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	fxt_null_last = (struct slot){ ticks(), (uintptr_t)fn | 1 };
}
