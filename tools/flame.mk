# tools/flame.mk: fxt-flame (flame graphs, differential flame graphs, folded
# stacks) and fxt-export (Chrome trace-event JSON), their shared library
# (the tree, flame.c, is loaded by flame-load.c from tools/profile.c's
# slices and drawn by flame-svg.c) and their tests.

noinst_LTLIBRARIES += libfxtflame.la
libfxtflame_la_SOURCES = \
	tools/flame.c tools/flame.h tools/flame-tree.h \
	tools/flame-load.c tools/flame-svg.c \
	tools/export_chrome.c
libfxtflame_la_LIBADD = libfxtprofile.la -lm

bin_PROGRAMS += fxt-flame fxt-export
fxt_flame_SOURCES = tools/fxt-flame.c
fxt_flame_LDADD = libfxtflame.la
fxt_export_SOURCES = tools/fxt-export.c
fxt_export_LDADD = libfxtflame.la

FLAME_UNIT_TESTS = tests/unit/test_flame
check_PROGRAMS += $(FLAME_UNIT_TESTS)
TESTS += $(FLAME_UNIT_TESTS)
tests_unit_test_flame_LDADD = libfxtflame.la

FLAME_E2E_TESTS = \
	tests/e2e/flame-basic.sh \
	tests/e2e/flame-diff.sh \
	tests/e2e/flame-errors.sh \
	tests/e2e/export-chrome.sh
TESTS += $(FLAME_E2E_TESTS)
EXTRA_DIST += $(FLAME_E2E_TESTS)
