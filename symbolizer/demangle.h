/* C++ demangling for the symbolizer.  Private to symbolizer/.
 *
 * __cxa_demangle comes from libstdc++.  The symbolizer also runs inside
 * traced C programs (the agent is preloaded), and linking libstdc++ into the
 * agent would map it into every one of them.  So it is looked up only when
 * the first mangled name shows up: in the process's global scope first (a
 * C++ program already has it), else by dlopen("libstdc++.so.6").  When
 * neither works, names stay mangled.
 */
#ifndef FXT_SYMBOLIZER_DEMANGLE_H
#define FXT_SYMBOLIZER_DEMANGLE_H

#include <stddef.h>

typedef char *fxt_sym__cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

struct fxt_sym__demangler {
	int state;		      /* 0: not looked up yet, 1: usable, -1: unavailable */
	void *handle;		      /* our own dlopen handle of libstdc++, or NULL */
	fxt_sym__cxa_demangle_fn *fn; /* __cxa_demangle when state == 1 */
	char *buf;		      /* reused output buffer (malloc'd, owned) */
	size_t len;		      /* its size */
};

/* Demangles `name` if it is an Itanium C++ name ("_Z..."); returns a string
 * valid until the next call or fxt_sym__demangler_fini, or NULL when the
 * name is not mangled, cannot be demangled, or no demangler is available. */
const char *fxt_sym__demangle(struct fxt_sym__demangler *d, const char *name);

/* Releases the buffer and the libstdc++ handle.  A zeroed struct is a valid,
 * not yet initialised demangler. */
void fxt_sym__demangler_fini(struct fxt_sym__demangler *d);

#endif /* FXT_SYMBOLIZER_DEMANGLE_H */
