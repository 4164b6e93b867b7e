# tools/: programs that read archives.

# Helpers the archive-reading tools share (tools/common.h), their string
# escapers (tools/escape.h), and the nesting-depth tracker
# (tools/nesting.h), which the launcher can link too (libfxttools.la, or
# these sources).
FXT_NESTING_SOURCES = tools/nesting.c tools/nesting.h
noinst_LTLIBRARIES += libfxttools.la
libfxttools_la_SOURCES = tools/common.c tools/common.h tools/escape.c tools/escape.h \
	$(FXT_NESTING_SOURCES)
libfxttools_la_LIBADD = libfxtcodec.la

# fxt, the front command: `fxt report ...` runs fxt-report (tools/fxt.c).
# Built as tools/fxt, since fxt/ is the codec's folder; installed as fxt.
bin_PROGRAMS += tools/fxt
tools_fxt_SOURCES = tools/fxt.c
tools_fxt_LDADD = libfxttools.la libfxtcodec.la

bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/fxt-dump.c tools/dump-check.c tools/dump-map.c tools/dump.h
fxt_dump_LDADD = libfxttools.la libfxtcodec.la

# The nesting-depth tracker.
check_PROGRAMS += tests/unit/test_nesting
TESTS += tests/unit/test_nesting
tests_unit_test_nesting_LDADD = libfxttools.la libfxtcodec.la

# The JSON, CSV and text escapers.
check_PROGRAMS += tests/unit/test_escape
TESTS += tests/unit/test_escape
tests_unit_test_escape_LDADD = libfxttools.la libfxtcodec.la

# The command line the tools share, and the fxt front command.
TOOLS_E2E_TESTS = tests/e2e/tools-cli.sh tests/e2e/fxt-front.sh
TESTS += $(TOOLS_E2E_TESTS)
EXTRA_DIST += $(TOOLS_E2E_TESTS)
