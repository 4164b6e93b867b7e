/* fxt-report --by thread: the threads' states from the kernel's context
 * switches (report-states.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/front/escape.h"
#include "tools/front/sched.h"
#include "tools/profile/report-states.h"

static bool is_sched(const struct profile_row *r)
{
	return strcmp(r->category, "sched") == 0;
}

/* Whether thread (pid, tid) has a row (grouped by thread) of calls, or
 * when no thread has any (an imported trace alone), a row. */
static bool has_row(const struct profile *p, uint64_t pid, uint64_t tid)
{
	bool calls = false;

	for (size_t i = 0; i < profile_nrows(p) && !calls; i++)
		calls = !is_sched(profile_row(p, i));
	for (size_t i = 0; i < profile_nrows(p); i++) {
		const struct profile_row *r = profile_row(p, i);
		if (r->pid == pid && r->tid == tid && !(calls && is_sched(r)))
			return true;
	}
	return false;
}

void report_states_text(const struct profile *p)
{
	const struct sched *s = profile_sched(p);
	bool head = false;

	for (size_t i = 0; s && i < s->n; i++) {
		if (!has_row(p, s->t[i].pid, s->t[i].tid))
			continue;
		if (!head)
			sched_put_text_head(stdout, "# ");
		head = true;
		sched_put_text(stdout, &s->t[i], sched_name(s, s->t[i].tid));
	}
}

void report_states_json(const struct profile *p)
{
	const struct sched *s = profile_sched(p);
	bool first = true;

	if (!s)
		return;
	fputs(",\"thread_states\":[", stdout);
	for (size_t i = 0; i < s->n; i++) {
		if (!has_row(p, s->t[i].pid, s->t[i].tid))
			continue;
		const char *name = sched_name(s, s->t[i].tid);
		printf("%s{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"thread\":", first ? "" : ",",
		       s->t[i].pid, s->t[i].tid);
		if (name)
			tool_put_json_str(stdout, name);
		else
			fputs("null", stdout);
		putchar(',');
		sched_put_json(stdout, &s->t[i]);
		putchar('}');
		first = false;
	}
	putchar(']');
}
