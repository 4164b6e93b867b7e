/* The -finstrument-functions hooks: a short shell around one append (the
 * exit's: or a leaf's enter turned into a PAIR, spool/records.h).
 *
 * Nothing here touches errno on the common path (it calls nothing); the
 * cold paths that make system calls save and restore it themselves. */
#include <config.h>

#include <stdint.h>

#include "agent/gates.h"
#include "agent/spool.h"
#include "agent/tbuf.h"

/* No frame pointer in the hooks: they are leaves on the fast path, and the
 * frame setup would be a measurable part of their cost. */
#define HOOK                                                               \
	__attribute__((visibility("default"), no_instrument_function, hot, \
		       optimize("omit-frame-pointer")))

HOOK void __cyg_profile_func_enter(void *fn, void *call_site);
HOOK void __cyg_profile_func_exit(void *fn, void *call_site);

/* With filters (agent/keep/filter.h), every call goes through them, out of
 * line; without, the one branch on a byte the hooks share costs nothing
 * measurable (bench/README.md). */
void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	if (__builtin_expect(agent_filter_on, 0)) {
		agent_filter_hook(&agent_tls, (uint64_t)(uintptr_t)fn);
		return;
	}
	agent_record(&agent_tls, (uint64_t)(uintptr_t)fn);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	if (__builtin_expect(agent_filter_on, 0)) {
		agent_filter_hook(&agent_tls, (uint64_t)(uintptr_t)fn | SPOOL_EXIT_BIT);
		return;
	}
	agent_record_exit(&agent_tls, (uint64_t)(uintptr_t)fn);
}
