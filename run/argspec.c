/* The argspec file's lines (see argspec.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/argspec.h"

int run_argspec_parse(char *line, const char **module, const char **symbol, uint32_t *caps)
{
	char *t1 = strchr(line, '\t'), *t2, *end;
	unsigned long v;

	if (!t1 || t1 == line)
		return -EINVAL;
	t2 = strchr(t1 + 1, '\t');
	if (!t2 || t2 == t1 + 1)
		return -EINVAL;
	errno = 0;
	v = strtoul(t2 + 1, &end, 16);
	if (errno || end == t2 + 1 || *end != '\0' || v == 0 || (v & ~(unsigned long)FXT_CAP_ALL))
		return -EINVAL;
	*t1 = *t2 = '\0';
	*module = line;
	*symbol = t1 + 1;
	*caps = (uint32_t)v;
	return 0;
}

int run_argspec_format(char *buf, size_t cap, const char *module, const char *symbol, uint32_t caps)
{
	int n = snprintf(buf, cap, "%s\t%s\t%#x\n", module, symbol, (unsigned)caps);

	if (n < 0 || (size_t)n >= cap || strpbrk(module, "\t\n") || strpbrk(symbol, "\t\n"))
		return -ENAMETOOLONG;
	return n;
}
