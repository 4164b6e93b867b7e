/* sigc.c optimized, whatever CFLAGS (which come after a target's flags)
 * say: gcc inlines functions into main and keeps out-of-line copies whose
 * DWARF refers to an abstract instance (DW_AT_abstract_origin). */
#ifndef __clang__
#pragma GCC optimize("O2")
#endif
#include "sigc.c"
