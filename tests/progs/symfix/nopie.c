/* A non-PIE program for the symbolizer test.  It prints the addresses of
 * two of its functions, then its /proc/self/maps, and exits: the test then
 * symbolizes the addresses of a process that is gone.
 *
 *	fn 0x401136 nopie_global
 *	fn 0x401126 nopie_static
 *	maps
 *	00400000-00401000 r--p 00000000 fe:01 1234 /.../nopie
 *	...
 */
#include <stdint.h>
#include <stdio.h>

int nopie_global(int x);

static int nopie_static(int x)
{
	return x * 5 + 1;
}

int nopie_global(int x)
{
	return nopie_static(x) - 2;
}

int main(void)
{
	int (*fn)(int) = nopie_static;
	FILE *maps;
	char buf[4096];
	size_t n;

	printf("fn 0x%jx nopie_global\n", (uintmax_t)(uintptr_t)&nopie_global);
	printf("fn 0x%jx nopie_static\n", (uintmax_t)(uintptr_t)fn);
	printf("maps\n");
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return 1;
	while ((n = fread(buf, 1, sizeof(buf), maps)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(maps);
	return nopie_global(0) == -1 ? 0 : 1;
}
