/* The argspec file's lines (see argspec.h). */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/argspec.h"

/* A test's field "RULE:REG:WIDTH:SIGNED" into c; 0 or -EINVAL. */
static int parse_cond(const char *f, struct fxt_argspec_cond *c)
{
	unsigned rule, reg, width, sign;
	char extra;

	if (sscanf(f, "%u:%u:%u:%u%c", &rule, &reg, &width, &sign, &extra) != 4 ||
	    rule >= FXT_ARGSPEC_NO_RULE || reg >= FXT_REG_COUNT ||
	    (width != 1 && width != 2 && width != 4 && width != 8) || sign > 1)
		return -EINVAL;
	*c = (struct fxt_argspec_cond){ rule, reg, width, sign != 0 };
	return 0;
}

int run_argspec_parse(char *line, const char **module, const char **symbol, uint32_t *caps,
		      struct fxt_argspec_cond *cond, struct fxt_argspec_cond *incl)
{
	char *t1 = strchr(line, '\t'), *t2, *t3, *end;
	unsigned long v;

	cond->rule = incl->rule = FXT_ARGSPEC_NO_RULE;
	if (!t1 || t1 == line)
		return -EINVAL;
	t2 = strchr(t1 + 1, '\t');
	if (!t2 || t2 == t1 + 1)
		return -EINVAL;
	t3 = strchr(t2 + 1, '\t');
	/* The tests, the snapshot rule's first. */
	for (char *f = t3; f;) {
		char *next = strchr(f + 1, '\t');
		bool is_incl = f[1] == 'i';
		struct fxt_argspec_cond *c = is_incl ? incl : cond;

		if (next)
			*next = '\0';
		if (c->rule != FXT_ARGSPEC_NO_RULE || (!is_incl && incl->rule != FXT_ARGSPEC_NO_RULE) ||
		    parse_cond(f + 1 + is_incl, c) != 0)
			return -EINVAL;
		f = next;
	}
	if (t3)
		*t3 = '\0';
	errno = 0;
	v = strtoul(t2 + 1, &end, 16);
	if (errno || end == t2 + 1 || *end != '\0' || !(v & FXT_CAP_ALL) ||
	    (v & ~(unsigned long)(FXT_CAP_ALL | FXT_CAP_HOOKED)))
		return -EINVAL;
	*t1 = *t2 = '\0';
	*module = line;
	*symbol = t1 + 1;
	*caps = (uint32_t)v;
	return 0;
}

/* " RULE:REG:WIDTH:SIGNED" (a tab first) for c into buf, or nothing. */
static void format_cond(char *buf, size_t cap, const char *lead,
			const struct fxt_argspec_cond *c)
{
	buf[0] = '\0';
	if (c && c->rule != FXT_ARGSPEC_NO_RULE)
		snprintf(buf, cap, "\t%s%u:%u:%u:%u", lead, c->rule, c->reg, c->width,
			 c->is_signed ? 1 : 0);
}

int run_argspec_format(char *buf, size_t cap, const char *module, const char *symbol, uint32_t caps,
		       const struct fxt_argspec_cond *cond, const struct fxt_argspec_cond *incl)
{
	char c1[64], c2[64];
	int n;

	format_cond(c1, sizeof(c1), "", cond);
	format_cond(c2, sizeof(c2), "i", incl);
	n = snprintf(buf, cap, "%s\t%s\t%#x%s%s\n", module, symbol, (unsigned)caps, c1, c2);
	if (n < 0 || (size_t)n >= cap || strpbrk(module, "\t\n") || strpbrk(symbol, "\t\n"))
		return -ENAMETOOLONG;
	return n;
}
