# tools/flame.mk: fxt-flame (flame graphs, differential flame graphs, folded
# stacks) and fxt-export (Chrome trace-event JSON), their shared library
# (the tree, flame.c, is loaded by flame-load.c from tools/profile.c's
# slices and drawn by flame-svg.c).  Their tests are in tests/unit.mk and
# tests/e2e.mk.

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
