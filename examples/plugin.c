/* plugin: dlopens a plugin built with -finstrument-functions, calls into
 * it, and dlcloses it before exiting.  The trace must still name the
 * plugin's functions (plugin_compute ×3, plugin_square ×(1+2+3)×4 = 24).
 *
 * The plugin's path is the first argument, or the one this build put it
 * at (PLUGIN_PATH, from examples/local.mk).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "examples/example.h"

typedef unsigned long (*compute_fn)(unsigned long);

EXAMPLE_NOINLINE static unsigned long run_plugin(compute_fn compute, unsigned long round)
{
	return compute(round * 4);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : PLUGIN_PATH;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "plugin: %s\n", dlerror());
		return 1;
	}

	compute_fn compute;
	*(void **)&compute = dlsym(h, "plugin_compute");
	if (compute == NULL) {
		fprintf(stderr, "plugin: %s\n", dlerror());
		dlclose(h);
		return 1;
	}

	unsigned long sum = 0;
	for (unsigned long round = 1; round <= 3; round++)
		sum += run_plugin(compute, round);
	if (dlclose(h) != 0) {
		fprintf(stderr, "plugin: %s\n", dlerror());
		return 1;
	}
	printf("plugin: sum=%lu\n", sum);
	return 0;
}
