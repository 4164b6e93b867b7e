/* fxt-diff --metric pNN's tables (diff-pct.c).  Private to fxt-diff. */
#ifndef FXT_TOOLS_DIFF_PCT_H
#define FXT_TOOLS_DIFF_PCT_H

#include <stddef.h>

#include "tools/profile/diff.h"

/* The first n functions of d: text (the heads, then a row each; '-' an
 * interval's open end, '~' approximate, '<' an upper bound) or csv (the
 * header line, then a row each).  metric: its name, "p99". */
void diff_pct_text(const struct diff *d, const char *metric, size_t n);
void diff_pct_csv(const struct diff *d, const char *metric, size_t n);

/* A function's json fields past "method", and its closing brace. */
void diff_pct_json(const struct diff_func *f);

#endif /* FXT_TOOLS_DIFF_PCT_H */
