/* Each thread's time running, runnable and blocked from the kernel's
 * context switches and wake-ups in an archive (sched.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>

#include "tools/front/common.h"
#include "tools/front/sched.h"

static struct sched_thread *get(struct sched *s, uint64_t pid, uint64_t tid)
{
	bool fresh;
	int64_t i = thrmap_get(&s->map, pid, tid, (uint32_t)s->n, &fresh);

	if (i < 0)
		return NULL;
	if (fresh) {
		if (TOOL_GROW(s->t, s->cap, s->n + 1) < 0)
			return NULL; /* the map keeps an index past n: never read */
		s->t[s->n++] = (struct sched_thread){ .pid = pid, .tid = tid, .state = SCHED_NONE };
	}
	return (size_t)i < s->n ? &s->t[i] : NULL;
}

/* Ends t's open state at ts and opens `next` (SCHED_NONE: none). */
static void enter(struct sched_thread *t, uint8_t next, uint64_t ts)
{
	if (t->state < SCHED_NSTATES && ts > t->since)
		t->ns[t->state] += ts - t->since;
	t->state = next;
	t->since = ts;
}

/* CPU cpu's last switch-in; NULL when out of memory. */
static struct sched_cpu *cpu_of(struct sched *s, unsigned cpu)
{
	if (cpu >= s->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct sched_cpu *c = realloc(s->cpus, n * sizeof(*c));
		if (c == NULL)
			return NULL;
		memset(c + s->ncpus, 0, (n - s->ncpus) * sizeof(*c));
		s->cpus = c;
		s->ncpus = n;
	}
	return &s->cpus[cpu];
}

/* A switch on CPU c at ts switches out `out_tid`, while the last switch
 * on c switched in another thread: one or more switches between were not
 * recorded.  The thread c had runs from its switch-in to a moment not
 * known, and `out_tid` came in at a moment not known: from the switch-in
 * on, both are unrecorded (the one switched out, from then or from its
 * own last state change, whichever is later).  0 or -ENOMEM. */
static int unrecorded(struct sched *s, const struct sched_cpu *c, uint64_t out_pid,
		      uint64_t out_tid, uint64_t ts)
{
	struct sched_thread *t;

	s->unrecorded++;
	/* The thread c had: running since its switch-in there, unless it
	 * has been switched since (then that switch said where it is). */
	if (c->tid != 0) {
		if (!(t = get(s, c->pid, c->tid)))
			return -ENOMEM;
		if (t->state == SCHED_RUNNING && t->since == c->since) {
			t->state = SCHED_UNRECORDED;
			enter(t, SCHED_NONE, ts);
		}
	}
	if (out_tid == 0)
		return 0;
	if (!(t = get(s, out_pid, out_tid)))
		return -ENOMEM;
	if (t->state == SCHED_RUNNING) /* on another CPU, its leaving it unrecorded */
		t->state = SCHED_UNRECORDED;
	else
		enter(t, SCHED_UNRECORDED, c->since > t->since ? c->since : t->since);
	return 0;
}

static bool is_str(const struct fxt_string *s, const char *lit)
{
	return s->len == strlen(lit) && memcmp(s->data, lit, s->len) == 0;
}

/* A thread's name, from its kernel object record. */
static int see_name(struct sched *s, const struct fxt_record *rec)
{
	bool fresh;
	int64_t i = thrmap_get(&s->namemap, 0, rec->u.kobj.koid, (uint32_t)s->nnames, &fresh);
	size_t len = rec->u.kobj.name.len;

	if (i < 0)
		return -ENOMEM;
	if (fresh && TOOL_GROW(s->names, s->capnames, s->nnames + 1) < 0)
		return -ENOMEM;
	if (fresh)
		s->nnames++;
	if ((size_t)i >= s->nnames)
		return 0;
	if (len >= sizeof(s->names[i].name))
		len = sizeof(s->names[i].name) - 1;
	memcpy(s->names[i].name, rec->u.kobj.name.data, len);
	s->names[i].name[len] = '\0';
	return 0;
}

int sched_add_record(struct sched *s, const struct fxt_record *rec, uint64_t ts)
{
	struct sched_thread *t;

	if (rec->type == FXT_RECORD_KERNEL_OBJECT) {
		if (rec->u.kobj.obj_type != FXT_OBJ_THREAD || !rec->u.kobj.name.len)
			return 0;
		return see_name(s, rec);
	}

	if (rec->type == FXT_RECORD_CONTEXT_SWITCH) {
		const typeof(rec->u.cswitch) *cs = &rec->u.cswitch;

		struct sched_cpu *c = cpu_of(s, cs->cpu);
		if (c == NULL)
			return -ENOMEM;
		s->nswitch++;
		if (ts > s->last_ns)
			s->last_ns = ts;
		if (c->known && c->tid != cs->out_tid &&
		    unrecorded(s, c, cs->out_pid, cs->out_tid, ts) < 0)
			return -ENOMEM;
		c->known = true;
		c->pid = cs->in_pid;
		c->tid = cs->in_tid;
		c->since = ts;
		if (cs->out_tid != 0 && cs->out_tid != cs->in_tid) { /* 0: a CPU's idle */
			if (!(t = get(s, cs->out_pid, cs->out_tid)))
				return -ENOMEM;
			t->switches++;
			enter(t,
			      cs->out_state == FXT_THREAD_RUNNING ? SCHED_RUNNABLE
			      : cs->out_state == FXT_THREAD_BLOCKED ||
				      cs->out_state == FXT_THREAD_SUSPENDED
				  ? SCHED_BLOCKED
				  : SCHED_NONE,
			      ts);
		}
		if (cs->in_tid != 0 && cs->out_tid != cs->in_tid) {
			if (!(t = get(s, cs->in_pid, cs->in_tid)))
				return -ENOMEM;
			/* Running already: its switch-out elsewhere unrecorded. */
			if (t->state == SCHED_RUNNING)
				t->state = SCHED_UNRECORDED;
			enter(t, SCHED_RUNNING, ts);
		}
		return 0;
	}
	if (rec->type != FXT_RECORD_EVENT || rec->u.event.type != FXT_EVENT_INSTANT ||
	    !is_str(&rec->u.event.category, "sched") ||
	    !(is_str(&rec->u.event.name, "sched_waking") ||
	      is_str(&rec->u.event.name, "sched_wakeup") ||
	      is_str(&rec->u.event.name, "sched_wakeup_new")))
		return 0;
	if (!(t = get(s, rec->u.event.pid, rec->u.event.tid)))
		return -ENOMEM;
	if (t->state == SCHED_BLOCKED) {
		t->wakeups++;
		enter(t, SCHED_RUNNABLE, ts);
	}
	return 0;
}

void sched_finish(struct sched *s, uint64_t end_ns)
{
	if (s->last_ns > end_ns)
		end_ns = s->last_ns;
	for (size_t i = 0; i < s->n; i++)
		enter(&s->t[i], SCHED_NONE, end_ns);
}

const struct sched_thread *sched_find(const struct sched *s, uint64_t pid, uint64_t tid)
{
	if (!s->map.e)
		return NULL;
	uint32_t i = thrmap__slot(&s->map, pid, tid);
	uint32_t idx = s->map.e[i].idx;

	return idx && idx - 1 < s->n ? &s->t[idx - 1] : NULL;
}

const char *sched_name(const struct sched *s, uint64_t tid)
{
	if (!s->namemap.e)
		return NULL;
	uint32_t idx = s->namemap.e[thrmap__slot(&s->namemap, 0, tid)].idx;

	return idx && idx - 1 < s->nnames ? s->names[idx - 1].name : NULL;
}

void sched_free(struct sched *s)
{
	free(s->t);
	thrmap_free(&s->map);
	free(s->names);
	thrmap_free(&s->namemap);
	free(s->cpus);
	*s = (struct sched){ 0 };
}

void sched_put_text_head(FILE *f, const char *lead)
{
	fprintf(f,
		"%sthread states from the kernel's context switches (runnable: waiting for "
		"a CPU; blocked: asleep, on a lock, on I/O; unrecorded: next to a switch "
		"the kernel did not record)\n",
		lead);
	fprintf(f, "%12s %12s %12s %12s %8s %8s  thread\n", "running", "runnable", "blocked",
		"unrecorded", "pid", "tid");
}

void sched_put_text(FILE *f, const struct sched_thread *t, const char *name)
{
	char b[SCHED_NSTATES][32];

	for (int k = 0; k < SCHED_NSTATES; k++)
		tool_fmt_ns(b[k], sizeof(b[k]), (double)t->ns[k]);
	fprintf(f, "%12s %12s %12s %12s %8" PRIu64 " %8" PRIu64 "  %s\n", b[0], b[1], b[2], b[3],
		t->pid, t->tid, name ? name : "");
}

void sched_put_json(FILE *f, const struct sched_thread *t)
{
	fprintf(f,
		"\"running_ns\":%" PRIu64 ",\"runnable_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
		",\"unrecorded_ns\":%" PRIu64,
		t->ns[SCHED_RUNNING], t->ns[SCHED_RUNNABLE], t->ns[SCHED_BLOCKED],
		t->ns[SCHED_UNRECORDED]);
}
