/* dlsym_first: a program built without hooks whose first calls are two
 * dlsym() look-ups that fail, before any free(): the C library frees the
 * first failure's error string inside the second look-up, which under
 * the mem group is the agent's first free(), resolved then (the bug was
 * an endless recursion there).  Prints what it found; exits 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	void *a = dlsym(RTLD_DEFAULT, "fxt_no_such_symbol_1");
	void *b = dlsym(RTLD_DEFAULT, "fxt_no_such_symbol_2");
	char *p = malloc(64);

	free(p);
	printf("dlsym_first: %s %s\n", a ? "found" : "missing", b ? "found" : "missing");
	return 0;
}
