/* Fixtures of the symbolizer test (tests/unit/test_symbolizer.c): what the
 * fixture libraries export, and the order of the addresses they hand out. */
#ifndef FXT_TESTS_SYMFIX_H
#define FXT_TESTS_SYMFIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libsymcxx.so: indices into the array filled by fxsym_cxx_addrs(). */
enum {
	FXSYM_BOX_GET,	    /* fxsym::inner::Box<int>::get(int) const */
	FXSYM_BOX_GET_LONG, /* fxsym::inner::Box<long>::get(long) const */
	FXSYM_OVER_INT,	    /* fxsym::over(int) */
	FXSYM_OVER_DOUBLE,  /* fxsym::over(double) */
	FXSYM_OVER_STR,	    /* fxsym::over(char const*) */
	FXSYM_TWICE,	    /* long fxsym::twice<long>(long) */
	FXSYM_LAMBDA,	    /* operator() of a lambda in the inline fxsym::with_lambda */
	FXSYM_STATIC,	    /* a function with internal linkage: not in .dynsym */
	FXSYM_C,	    /* fxsym_plain_c, extern "C" */
	FXSYM_COUNT
};
typedef size_t fxsym_cxx_addrs_fn(uintptr_t out[FXSYM_COUNT]);
size_t fxsym_cxx_addrs(uintptr_t out[FXSYM_COUNT]);

/* libsymplug.so, a C plugin the test dlclose's before symbolizing. */
enum {
	FXSYM_PLUG_ENTRY,  /* fxsym_plug_entry */
	FXSYM_PLUG_STATIC, /* plug_static */
	FXSYM_PLUG_VER1,   /* fxsym_plug_ver@VERS_1 */
	FXSYM_PLUG_VER2,   /* fxsym_plug_ver@@VERS_2 */
	FXSYM_PLUG_COUNT
};
typedef size_t fxsym_plug_addrs_fn(uintptr_t out[FXSYM_PLUG_COUNT]);
size_t fxsym_plug_addrs(uintptr_t out[FXSYM_PLUG_COUNT]);

#ifdef __cplusplus
}
#endif

#endif /* FXT_TESTS_SYMFIX_H */
