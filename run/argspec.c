/* The argspec file's lines (see argspec.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/argspec.h"

int run_argspec_parse(char *line, const char **module, const char **symbol, uint32_t *caps,
		      struct fxt_argspec_cond *cond)
{
	char *t1 = strchr(line, '\t'), *t2, *t3, *end;
	unsigned long v;

	cond->rule = FXT_ARGSPEC_NO_RULE;
	if (!t1 || t1 == line)
		return -EINVAL;
	t2 = strchr(t1 + 1, '\t');
	if (!t2 || t2 == t1 + 1)
		return -EINVAL;
	t3 = strchr(t2 + 1, '\t');
	if (t3) {
		unsigned rule, reg, width, sign;
		char extra;

		if (sscanf(t3 + 1, "%u:%u:%u:%u%c", &rule, &reg, &width, &sign, &extra) != 4 ||
		    rule >= FXT_ARGSPEC_NO_RULE || reg >= FXT_REG_COUNT ||
		    (width != 1 && width != 2 && width != 4 && width != 8) || sign > 1)
			return -EINVAL;
		*t3 = '\0';
		*cond = (struct fxt_argspec_cond){ rule, reg, width, sign != 0 };
	}
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

int run_argspec_format(char *buf, size_t cap, const char *module, const char *symbol, uint32_t caps,
		       const struct fxt_argspec_cond *cond)
{
	int n;

	if (cond && cond->rule != FXT_ARGSPEC_NO_RULE)
		n = snprintf(buf, cap, "%s\t%s\t%#x\t%u:%u:%u:%u\n", module, symbol, (unsigned)caps,
			     cond->rule, cond->reg, cond->width, cond->is_signed ? 1 : 0);
	else
		n = snprintf(buf, cap, "%s\t%s\t%#x\n", module, symbol, (unsigned)caps);
	if (n < 0 || (size_t)n >= cap || strpbrk(module, "\t\n") || strpbrk(symbol, "\t\n"))
		return -ENAMETOOLONG;
	return n;
}
