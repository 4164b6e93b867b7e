# symbolizer/: addresses to function names with elfutils libdwfl.
FXT_SYM_SOURCES = \
	symbolizer/symbolizer.c \
	symbolizer/symbolizer.h

noinst_LTLIBRARIES += libfxtsym.la
libfxtsym_la_SOURCES = $(FXT_SYM_SOURCES)
libfxtsym_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
libfxtsym_la_LIBADD = $(LIBDW_LIBS)

check_PROGRAMS += tests/unit/test_symbolizer
TESTS += tests/unit/test_symbolizer
tests_unit_test_symbolizer_SOURCES = tests/unit/test_symbolizer.c
tests_unit_test_symbolizer_LDADD = libfxtsym.la
