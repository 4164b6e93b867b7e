/* The no-op agent: the same exported hooks doing nothing.  bench/ runs a
 * program under it to measure the bare cost of the instrumentation calls. */
#include <config.h>

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *fn, void *call_site);
HOOK void __cyg_profile_func_exit(void *fn, void *call_site);

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)fn;
	(void)call_site;
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)fn;
	(void)call_site;
}
