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

# Test fixtures (tests/progs/symfix/), built without sanitizers: the test loads
# the libraries with dlopen and runs the non-PIE program as a child.  The
# libraries are shared (-rpath) but never installed.
SYMFIX_DIR = $(abs_top_builddir)/tests/progs/symfix
check_LTLIBRARIES += tests/progs/symfix/libsymcxx.la tests/progs/symfix/libsymplug.la
tests_progs_symfix_libsymcxx_la_SOURCES = tests/progs/symfix/cxx.cc tests/progs/symfix/symfix.h
tests_progs_symfix_libsymcxx_la_CXXFLAGS = $(WARN_CXXFLAGS)
tests_progs_symfix_libsymcxx_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR)
tests_progs_symfix_libsymplug_la_SOURCES = tests/progs/symfix/plug.c tests/progs/symfix/symfix.h
tests_progs_symfix_libsymplug_la_CFLAGS = $(WARN_CFLAGS)
tests_progs_symfix_libsymplug_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR) \
	-Wl,--version-script=$(srcdir)/tests/progs/symfix/plug.map
EXTRA_tests_progs_symfix_libsymplug_la_DEPENDENCIES = tests/progs/symfix/plug.map
EXTRA_DIST += tests/progs/symfix/plug.map

check_PROGRAMS += tests/progs/symfix/nopie
tests_progs_symfix_nopie_SOURCES = tests/progs/symfix/nopie.c
tests_progs_symfix_nopie_CFLAGS = $(WARN_CFLAGS) -fno-pie
tests_progs_symfix_nopie_LDFLAGS = -XCClinker -no-pie

# Copies of the C++ fixture: one stripped of everything but .dynsym, and
# stripped ones with a .gnu_debuglink: to a file next to it, to one in the
# .debug/ subdirectory, and to one whose CRC32 no longer matches (appended
# to after the link was made: it must be refused).
SYMFIX_COPIES = \
	tests/progs/symfix/libsymcxx-stripped.so \
	tests/progs/symfix/libsymcxx-dbglink.so \
	tests/progs/symfix/libsymcxx-dbglink.debug \
	tests/progs/symfix/libsymcxx-dbgsub.so \
	tests/progs/symfix/.debug/libsymcxx-dbgsub.debug \
	tests/progs/symfix/libsymcxx-badcrc.so
CLEANFILES += tests/progs/symfix/libsymcxx-badcrc.debug
CLEANFILES += $(SYMFIX_COPIES)
SYMFIX_OBJCOPY = objcopy
tests/progs/symfix/libsymcxx-stripped.so: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --strip-all tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbglink.debug: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --only-keep-debug tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbglink.so: tests/progs/symfix/libsymcxx-dbglink.debug
	$(AM_V_GEN)cd tests/progs/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=libsymcxx-dbglink.debug .libs/libsymcxx.so libsymcxx-dbglink.so
tests/progs/symfix/.debug/libsymcxx-dbgsub.debug: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(MKDIR_P) tests/progs/symfix/.debug && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbgsub.so: tests/progs/symfix/.debug/libsymcxx-dbgsub.debug
	$(AM_V_GEN)cd tests/progs/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=.debug/libsymcxx-dbgsub.debug .libs/libsymcxx.so libsymcxx-dbgsub.so
tests/progs/symfix/libsymcxx-badcrc.so: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)cd tests/progs/symfix && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug .libs/libsymcxx.so libsymcxx-badcrc.debug && \
	  $(SYMFIX_OBJCOPY) --strip-all --add-gnu-debuglink=libsymcxx-badcrc.debug \
	    .libs/libsymcxx.so libsymcxx-badcrc.so && \
	  printf x >> libsymcxx-badcrc.debug

check_PROGRAMS += tests/unit/test_symbolizer
TESTS += tests/unit/test_symbolizer
tests_unit_test_symbolizer_SOURCES = tests/unit/test_symbolizer.c tests/progs/symfix/symfix.h
tests_unit_test_symbolizer_CPPFLAGS = $(AM_CPPFLAGS) -DSYMFIX_DIR='"$(SYMFIX_DIR)"'
tests_unit_test_symbolizer_LDADD = libfxtsym.la
tests_unit_test_symbolizer_DEPENDENCIES = libfxtsym.la $(SYMFIX_COPIES) \
	tests/progs/symfix/libsymplug.la tests/progs/symfix/nopie$(EXEEXT)

# Lookups per second, cold and warm, over libc: run it by hand.
check_PROGRAMS += bench/sym_bench
bench_sym_bench_SOURCES = bench/sym_bench.c
bench_sym_bench_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
bench_sym_bench_LDADD = libfxtsym.la $(LIBDW_LIBS)
