/* For the run-time patching test programs (tests/progs/patchme*.c): prints
 * each mapping of the process that is writable and executable ("wx: LINE"),
 * or "wx: none". */
#ifndef FXT_TESTS_PROGS_WX_MAPS_H
#define FXT_TESTS_PROGS_WX_MAPS_H

#include <stdio.h>

static inline void print_wx_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	int wx = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x') {
			printf("wx: %s", line);
			wx++;
		}
	if (f)
		fclose(f);
	if (!wx)
		printf("wx: none\n");
}

#endif /* FXT_TESTS_PROGS_WX_MAPS_H */
