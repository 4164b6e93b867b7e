/* The real functions behind the agent's wrappers: dlsym(RTLD_NEXT),
 * resolved lazily.  Private to agent/.  For the wrappers and for any
 * agent code that must call the C library's function rather than its own
 * wrapper of it (sampling's sigaction and pthread_sigmask). */
#ifndef FXT_AGENT_REAL_H
#define FXT_AGENT_REAL_H

/* dlsym(RTLD_NEXT, name) (dlvsym with `version` when not NULL), with the
 * thread marked as resolving: dlsym may call calloc/malloc, which the mem
 * wrappers must then serve from their bootstrap arena (agent_resolving).
 * Returns NULL if not found. */
void *agent_resolve(const char *name, const char *version);
extern __thread unsigned char agent_resolving __attribute__((tls_model("initial-exec")));

/* `static __typeof__(fn) *real_fn;` and its lazy resolution. */
#define REAL_DECL(fn) static __typeof__(fn) *real_##fn
/* (A statement expression: with a conditional assignment instead, GCC's
 * -Wsequence-point warns at every `REAL(fn)(args)`.) */
#define REAL(fn)                                                                \
	({                                                                      \
		if (__builtin_expect(real_##fn == NULL, 0))                     \
			real_##fn = (__typeof__(fn) *)agent_resolve(#fn, NULL); \
		real_##fn;                                                      \
	})
#define REALV(fn, version)                                                         \
	({                                                                         \
		if (__builtin_expect(real_##fn == NULL, 0))                        \
			real_##fn = (__typeof__(fn) *)agent_resolve(#fn, version); \
		real_##fn;                                                         \
	})

#endif /* FXT_AGENT_REAL_H */
