/* The libc wrappers' shared run-time parts: symbol resolution and the
 * out-of-line record writers (see libc.h). */
#include <config.h>

#include <dlfcn.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/feature.h"
#include "agent/libc/libc.h"

unsigned agent_libc_on;
__thread unsigned char agent_resolving __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ resolving */

void *agent_resolve(const char *name, const char *version)
{
	void *p;

	agent_resolving++;
	p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
	agent_resolving--;
	return p;
}

/* ------------------------------------------------------------ records */

void wrap_str(struct tstate *t, unsigned key, const char *s, size_t max)
{
	size_t len;
	uint64_t *p, flags = 0;

	if (!s)
		return;
	len = strnlen(s, max + 1);
	if (len > max) {
		len = max;
		flags = EV_STR_TRUNCATED;
	}
	p = agent_ev_begin(t, 1 + ev_data_slots(len), 0, false);
	if (p) {
		p[0] = len;
		p[1] = ev_str_w1(key, flags);
		ev_put_data(p + 2, s, len);
	}
	agent_ev_end(t);
}

void wrap_flow(struct tstate *t, enum ev_flow_phase phase, uint64_t id, bool at_end)
{
	uint64_t *p = agent_ev_begin(t, 1, 0, false);

	if (p) {
		p[0] = id;
		p[1] = ev_flow_w1(phase, at_end);
	}
	agent_ev_end(t);
}

static uint32_t flow_seq;

uint64_t agent_new_flow_id(enum ev_flowid_kind kind)
{
	uint32_t seq = __atomic_add_fetch(&flow_seq, 1, __ATOMIC_RELAXED);

	return ev_flow_id(kind, (uint64_t)agent.pid, seq);
}

/* ------------------------------------------------------------ feature */

/* The wrappers record once the agent has started (agent/feature.h). */
static void libc_start(const struct agent_event *ev)
{
	(void)ev;
	if (!agent.disabled)
		__atomic_store_n(&agent_libc_on, agent_cfg.libc_groups, __ATOMIC_RELAXED);
}

/* A child of a process that sealed already records again. */
static void libc_fork_child(const struct agent_event *ev)
{
	(void)ev;
	if (!agent.disabled)
		agent_libc_on = agent_cfg.libc_groups;
}

/* No more libc calls recorded: the seal's own are not the program's, and
 * other threads' would not make it into the archive. */
static void libc_before_seal(const struct agent_event *ev)
{
	(void)ev;
	__atomic_store_n(&agent_libc_on, 0, __ATOMIC_RELAXED);
}

const struct agent_feature agent_feature_libc = {
	.name = "libc",
	.at = {
		[AGENT_EV_START] = libc_start,
		[AGENT_EV_FORK_CHILD] = libc_fork_child,
		[AGENT_EV_BEFORE_SEAL] = libc_before_seal,
	},
};
