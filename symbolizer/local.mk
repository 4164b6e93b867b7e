# symbolizer/: addresses to function names with elfutils libdwfl.  The agent
# compiles FXT_SYM_SOURCES itself (with its own flags); tools and tests link
# libfxtsym.la.
FXT_SYM_SOURCES = \
	symbolizer/symbolizer.c \
	symbolizer/symbolizer.h \
	symbolizer/internal.h \
	symbolizer/maps.c \
	symbolizer/symtab.c \
	symbolizer/lines.c \
	symbolizer/store.c \
	symbolizer/store.h \
	symbolizer/demangle.c \
	symbolizer/demangle.h \
	symbolizer/runcache.c \
	symbolizer/runcache.h \
	symbolizer/debuginfo.c

noinst_LTLIBRARIES += libfxtsym.la
libfxtsym_la_SOURCES = $(FXT_SYM_SOURCES)
libfxtsym_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS)
libfxtsym_la_LIBADD = $(LIBDW_LIBS) $(ZLIB_LIBS)

# Test fixtures (tests/symfix/), built without sanitizers: the test loads
# the libraries with dlopen and runs the non-PIE program as a child.  The
# libraries are shared (-rpath) but never installed.
SYMFIX_DIR = $(abs_top_builddir)/tests/symfix
check_LTLIBRARIES += tests/symfix/libsymcxx.la tests/symfix/libsymplug.la
tests_symfix_libsymcxx_la_SOURCES = tests/symfix/cxx.cc tests/symfix/symfix.h
tests_symfix_libsymcxx_la_CXXFLAGS = $(WARN_CXXFLAGS)
tests_symfix_libsymcxx_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR)
tests_symfix_libsymplug_la_SOURCES = tests/symfix/plug.c tests/symfix/symfix.h
tests_symfix_libsymplug_la_CFLAGS = $(WARN_CFLAGS)
tests_symfix_libsymplug_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR) \
	-Wl,--version-script=$(srcdir)/tests/symfix/plug.map
EXTRA_tests_symfix_libsymplug_la_DEPENDENCIES = tests/symfix/plug.map
EXTRA_DIST += tests/symfix/plug.map

check_PROGRAMS += tests/symfix/nopie
tests_symfix_nopie_SOURCES = tests/symfix/nopie.c
tests_symfix_nopie_CFLAGS = $(WARN_CFLAGS) -fno-pie
tests_symfix_nopie_LDFLAGS = -XCClinker -no-pie

# Copies of the C++ fixture: one stripped of everything but .dynsym, and
# stripped ones with a .gnu_debuglink: to a file next to it, to one in the
# .debug/ subdirectory, and to one whose CRC32 no longer matches (appended
# to after the link was made: it must be refused).
SYMFIX_COPIES = \
	tests/symfix/libsymcxx-stripped.so \
	tests/symfix/libsymcxx-dbglink.so \
	tests/symfix/libsymcxx-dbglink.debug \
	tests/symfix/libsymcxx-dbgsub.so \
	tests/symfix/.debug/libsymcxx-dbgsub.debug \
	tests/symfix/libsymcxx-badcrc.so
CLEANFILES += tests/symfix/libsymcxx-badcrc.debug
CLEANFILES += $(SYMFIX_COPIES)
SYMFIX_OBJCOPY = objcopy
tests/symfix/libsymcxx-stripped.so: tests/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --strip-all tests/symfix/.libs/libsymcxx.so $@
tests/symfix/libsymcxx-dbglink.debug: tests/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --only-keep-debug tests/symfix/.libs/libsymcxx.so $@
tests/symfix/libsymcxx-dbglink.so: tests/symfix/libsymcxx-dbglink.debug
	$(AM_V_GEN)cd tests/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=libsymcxx-dbglink.debug .libs/libsymcxx.so libsymcxx-dbglink.so
tests/symfix/.debug/libsymcxx-dbgsub.debug: tests/symfix/libsymcxx.la
	$(AM_V_GEN)$(MKDIR_P) tests/symfix/.debug && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug tests/symfix/.libs/libsymcxx.so $@
tests/symfix/libsymcxx-dbgsub.so: tests/symfix/.debug/libsymcxx-dbgsub.debug
	$(AM_V_GEN)cd tests/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=.debug/libsymcxx-dbgsub.debug .libs/libsymcxx.so libsymcxx-dbgsub.so
tests/symfix/libsymcxx-badcrc.so: tests/symfix/libsymcxx.la
	$(AM_V_GEN)cd tests/symfix && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug .libs/libsymcxx.so libsymcxx-badcrc.debug && \
	  $(SYMFIX_OBJCOPY) --strip-all --add-gnu-debuglink=libsymcxx-badcrc.debug \
	    .libs/libsymcxx.so libsymcxx-badcrc.so && \
	  printf x >> libsymcxx-badcrc.debug

check_PROGRAMS += tests/unit/test_symbolizer
TESTS += tests/unit/test_symbolizer
tests_unit_test_symbolizer_SOURCES = tests/unit/test_symbolizer.c tests/symfix/symfix.h
tests_unit_test_symbolizer_CPPFLAGS = $(AM_CPPFLAGS) -DSYMFIX_DIR='"$(SYMFIX_DIR)"'
tests_unit_test_symbolizer_LDADD = libfxtsym.la
tests_unit_test_symbolizer_DEPENDENCIES = libfxtsym.la $(SYMFIX_COPIES) \
	tests/symfix/libsymplug.la tests/symfix/nopie$(EXEEXT)

# Lookups per second, cold and warm, over libc: run it by hand.
check_PROGRAMS += tests/symfix/sym_bench
tests_symfix_sym_bench_SOURCES = tests/symfix/sym_bench.c
tests_symfix_sym_bench_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_symfix_sym_bench_LDADD = libfxtsym.la $(LIBDW_LIBS)
