/* C++ demangling through a lazily loaded __cxa_demangle (see demangle.h). */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "symbolizer/demangle.h"

/* The soname of the GNU C++ runtime on every current Linux distribution. */
#define LIBSTDCXX_SONAME "libstdc++.so.6"

typedef void *dlopen_fn(const char *file, int mode);
typedef int dlclose_fn(void *handle);

/* The dynamic loader's own dlopen and dlclose, not an interposed one: the
 * agent wraps them to record the modules the program loads, and the
 * runtime we load for ourselves is none of them. */
static void *loader_fn(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	return fn ? fn : dlsym(RTLD_DEFAULT, name);
}

static int demangler_load(struct fxt_sym__demangler *d)
{
	void *fn, *open_fn;

	/* A C++ program (or a C++ library it loaded) already has it. */
	fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	open_fn = fn ? NULL : loader_fn("dlopen");
	if (open_fn) {
		/* RTLD_LOCAL: none of libstdc++'s symbols may start interposing
		 * on the traced program's. */
		d->handle = ((dlopen_fn *)open_fn)(LIBSTDCXX_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (d->handle)
			fn = dlsym(d->handle, "__cxa_demangle");
	}
	(void)dlerror(); /* leave no pending error behind for the program */
	if (!fn)
		return -1;
	d->fn = (fxt_sym__cxa_demangle_fn *)fn; /* POSIX allows this cast of dlsym's result */
	return 1;
}

const char *fxt_sym__demangle(struct fxt_sym__demangler *d, const char *name)
{
	char *out;
	int status = -1;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	if (d->state == 0)
		d->state = demangler_load(d);
	if (d->state < 0)
		return NULL;

	/* __cxa_demangle reallocs the buffer as needed and reports its new
	 * size; on failure the old buffer is left alone. */
	out = d->fn(name, d->buf, &d->len, &status);
	if (!out || status != 0)
		return NULL;
	d->buf = out;
	return out;
}

void fxt_sym__demangler_fini(struct fxt_sym__demangler *d)
{
	free(d->buf);
	d->buf = NULL;
	d->len = 0;
	if (d->handle) {
		void *close_fn = loader_fn("dlclose");

		if (close_fn)
			((dlclose_fn *)close_fn)(d->handle);
	}
	d->handle = NULL;
	d->fn = NULL;
	d->state = 0;
}
