/* Shared by the example programs; private to examples/ and tests/e2e/. */
#ifndef FXT_EXAMPLES_EXAMPLE_H
#define FXT_EXAMPLES_EXAMPLE_H

/* A function the compiler must call for real: not inlined, and (GCC) not
 * cloned or specialised by IPA either, so that the exact counts the tests
 * expect hold at every optimisation level. */
#if defined(__clang__)
#define EXAMPLE_NOINLINE __attribute__((noinline))
#else
#define EXAMPLE_NOINLINE __attribute__((noinline, noipa))
#endif

#endif /* FXT_EXAMPLES_EXAMPLE_H */
