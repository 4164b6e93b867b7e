/* Growing arrays: one rule for all of them (the converter's, the address
 * tables'). */
#ifndef FXT_COMMON_GROW_H
#define FXT_COMMON_GROW_H

#include <errno.h>
#include <stdlib.h>

/* Makes room for `need` elements of `size` bytes in *v (of *cap), by
 * doubling from 64.  Returns 0 or -ENOMEM (*v unchanged). */
static inline int fxt__grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	void *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

#endif /* FXT_COMMON_GROW_H */
