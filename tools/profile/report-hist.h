/* fxt-report --histogram NAME (report-hist.c): log2 buckets of the
 * per-call inclusive times of each row of calls named NAME.  Private to
 * fxt-report. */
#ifndef FXT_TOOLS_REPORT_HIST_H
#define FXT_TOOLS_REPORT_HIST_H

#include <regex.h>

#include "tools/front/common.h"
#include "tools/profile/profile.h"

struct report_hist {
	const char *path; /* the archive, for the headings */
	const char *name; /* the function, matched exactly */
	enum profile_by by;
	enum tool_format format;
	const regex_t *cat_re; /* --category, or NULL */
};

/* Prints one histogram per row of calls named o->name (sampled rows
 * aside; the profile kept durations).  Returns 0, -ENOENT when no row has
 * that name (nothing printed but a csv header or json opening), or
 * -EINVAL when the durations were not kept. */
int report_histograms(const struct profile *p, const struct report_hist *o);

#endif /* FXT_TOOLS_REPORT_HIST_H */
