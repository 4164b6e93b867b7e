/* sigc.c unoptimized, whatever CFLAGS (which come after a target's flags)
 * say: each function's DWARF describes it directly. */
#ifdef __clang__
#pragma clang optimize off
#else
#pragma GCC optimize("O0")
#endif
#include "sigc.c"
