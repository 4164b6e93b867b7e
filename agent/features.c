/* The table of the agent's features and its walker (agent/feature.h). */
#include <config.h>

#include <errno.h>
#include <stddef.h>

#include "agent/feature.h"
#include "agent/sys.h"

#define AGENT_FEATURE_ROW(name) &agent_feature_##name,
static const struct agent_feature *const table[] = { AGENT_FEATURES(AGENT_FEATURE_ROW) NULL };

/* At most 32 rows: `active` has a bit each. */
_Static_assert(sizeof(table) / sizeof(table[0]) - 1 <= 32, "too many features");
_Static_assert(AGENT_EV_COUNT <= 32, "agent_feature_want has a bit per event");

static const struct agent_feature *const *rows = table;
static unsigned nrows, active; /* bit i: rows[i] said on() at CONFIGURE */
static bool configured;
unsigned agent_feature_want;

int agent_features_configure(void)
{
	unsigned want = 0;

	if (configured)
		return -EALREADY;
	configured = true;
	for (nrows = 0; rows[nrows]; nrows++) {
		const struct agent_feature *f = rows[nrows];

		if (f->on && !f->on())
			continue;
		active |= 1u << nrows;
		for (unsigned ev = 0; ev < AGENT_EV_COUNT; ev++)
			if (f->at[ev])
				want |= 1u << ev;
	}
	__atomic_store_n(&agent_feature_want, want, __ATOMIC_RELAXED);
	agent_features_emit(AGENT_EV_CONFIGURE, NULL);
	return 0;
}

int agent_features_reconfigure(void)
{
	__atomic_store_n(&agent_feature_want, 0, __ATOMIC_RELAXED);
	nrows = active = 0;
	configured = false;
	return agent_features_configure();
}

AGENT_FORK_CODE void agent_features_emit(enum agent_ev ev, const struct agent_event *arg)
{
	unsigned on = active;

	if (!agent_features_want(ev))
		return;
	if (AGENT_EV_IS_END(ev)) {
		for (unsigned i = nrows; i-- > 0;)
			if ((on & (1u << i)) && rows[i]->at[ev])
				rows[i]->at[ev](arg);
	} else {
		for (unsigned i = 0; i < nrows; i++)
			if ((on & (1u << i)) && rows[i]->at[ev])
				rows[i]->at[ev](arg);
	}
}

void agent__features_set(const struct agent_feature *const *v)
{
	rows = v ? v : table;
	nrows = active = 0;
	configured = false;
	__atomic_store_n(&agent_feature_want, 0, __ATOMIC_RELAXED);
}
