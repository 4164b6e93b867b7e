/* fxt-report --by thread: each thread's time running, runnable and
 * blocked from the kernel's context switches (tools/front/sched.h), after
 * the calls' table (text) or in "thread_states" (json).  Private to
 * fxt-report. */
#ifndef FXT_TOOLS_REPORT_STATES_H
#define FXT_TOOLS_REPORT_STATES_H

#include "tools/profile/profile.h"

/* The threads that have rows of the profile and switches; nothing when
 * the archive has no context switches. */
void report_states_text(const struct profile *p);
void report_states_json(const struct profile *p);

#endif /* FXT_TOOLS_REPORT_STATES_H */
