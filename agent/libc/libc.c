/* The libc wrappers' shared run-time parts: symbol resolution and the
 * out-of-line record writers (see libc.h). */
#include <config.h>

#include <dlfcn.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/feature.h"
#include "agent/got.h"
#include "agent/libc/libc.h"
#include "agent/log.h"
#include "agent/sys.h"

unsigned agent_libc_on;
__thread unsigned char agent_resolving __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ resolving */

/* Preloaded, the next definition after ours is the one the program would
 * have called.  Loaded late (fxt-run -p), RTLD_NEXT would search the
 * agent's own dependencies (the C library's malloc, not the program's
 * allocator, say jemalloc's): the definition the program itself is bound
 * to is the default one, the agent not being in the global scope. */
void *agent_resolve(const char *name, const char *version)
{
	void *h = agent.late ? RTLD_DEFAULT : RTLD_NEXT;
	void *p;

	agent_resolving++;
	p = version ? dlvsym(h, name, version) : dlsym(h, name);
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

AGENT_FORK_CODE void wrap_flow(struct tstate *t, enum ev_flow_phase phase, uint64_t id, bool at_end)
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

/* ------------------------------------------------------------ attached */

/* Attached to a running process (fxt-run -p), the wrappers go into its
 * modules' GOTs (agent/got.h): those of the groups asked for, and those
 * the life cycle needs whatever is recorded.  The wrappers of the other
 * groups would only pass the calls on (wrap_enter()): binding them would
 * slow the process's malloc or mutexes for nothing.  The other wings'
 * exports (sampling's sigaction, the patch wing's unwinder) are theirs to
 * bind. */
static const char *const bound_always[] = {
	"dlopen",
	"dlclose", /* new modules: patched, bound */
	"pthread_create",
	"pthread_exit", /* threads begun while attached */
	"execve",
	"execv",
	"execvp",
	"execvpe",
	"execl",
	"execlp",
	"execle", /* sealed before */
	"_exit",
	"_Exit", /* the spool says that the process exited */
	"setuid",
	"seteuid",
	"setreuid",
	"setresuid",
	"setfsuid", /* the spool held before */
	"pthread_setname_np",
	"prctl", /* threads' names */
};

static bool libc_bound(const char *name)
{
	unsigned groups = agent_cfg.libc_groups;

	for (size_t i = 0; i < sizeof(bound_always) / sizeof(bound_always[0]); i++)
		if (strcmp(name, bound_always[i]) == 0)
			return true;
	for (unsigned fn = 0; fn < AGENT_FN_COUNT; fn++)
		if (strcmp(name, agent_fn_table[fn].name) == 0)
			return (agent_fn_table[fn].group & groups) != 0;
	return (groups & AGENT_G_LOG) && agent_log_wrapped(name);
}

static bool bound; /* the GOTs hold our wrappers (until STOP) */

static void bind_all(const char *when, bool start)
{
	struct agent_got_count c = agent_got_bind(libc_bound, start);

	agent_dbg("%s: %u GOT slots bound to the wrappers, %u bound elsewhere left%s%s", when,
		  c.slots, c.skipped, c.err ? ", error: " : "", c.err ? strerror(-c.err) : "");
}

/* ------------------------------------------------------------ feature */

/* The wrappers record once the agent has started (agent/feature.h). */
static void libc_start(const struct agent_event *ev)
{
	if (agent.disabled)
		return;
	__atomic_store_n(&agent_libc_on, agent_cfg.libc_groups, __ATOMIC_RELAXED);
	/* Attached: bound whatever the groups, for the life cycle's own
	 * (a module dlopen()ed is patched, a thread begun is sampled). */
	if (ev->start.attached) {
		if (agent_cfg.libc_groups & AGENT_G_MEM)
			agent_mem_attached();
		bound = true;
		bind_all("attach", true);
	}
}

/* A module the process dlopen()ed while attached binds its calls to the
 * C library, not to us: its slots are bound too. */
static void libc_dlopened(const struct agent_event *ev)
{
	(void)ev;
	if (bound)
		bind_all("dlopen", false);
}

/* Detaching: every slot written back as it was. */
static void libc_stop(const struct agent_event *ev)
{
	struct agent_got_count c;

	(void)ev;
	if (!bound)
		return;
	bound = false;
	c = agent_got_restore();
	agent_dbg("detach: %u GOT slots written back, %u changed by the process since "
		  "(left), %u in modules unloaded%s%s",
		  c.slots, c.skipped, c.gone, c.err ? ", error: " : "",
		  c.err ? strerror(-c.err) : "");
}

/* A child of a process that sealed already records again. */
static AGENT_FORK_CODE void libc_fork_child(const struct agent_event *ev)
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
		[AGENT_EV_DLOPENED] = libc_dlopened,
		[AGENT_EV_FORK_CHILD] = libc_fork_child,
		[AGENT_EV_STOP] = libc_stop,
		[AGENT_EV_BEFORE_SEAL] = libc_before_seal,
	},
};
