/* libpatchlib's functions (tests/progs/patchlib.c). */
#ifndef FXT_TESTS_PATCHLIB_H
#define FXT_TESTS_PATCHLIB_H

/* fib(n), recursively, in the library. */
int lib_work(int n);

/* Calls fn(0) .. fn(n - 1): the library calling back into the program. */
void lib_each(int n, void (*fn)(int));

#endif
