# tools/flame/: fxt-flame (flame graphs, differential flame graphs, folded
# stacks) and its library: the tree (flame.c), loaded by flame-load.c from
# the slices that tools/profile/profile.c reconstructs, drawn by
# flame-svg.c.  Its tests are in tests/unit.mk and tests/e2e.mk.

noinst_LTLIBRARIES += libfxtflame.la
libfxtflame_la_SOURCES = \
	tools/flame/flame.c tools/flame/flame.h tools/flame/flame-tree.h \
	tools/flame/flame-load.c tools/flame/flame-svg.c
libfxtflame_la_LIBADD = libfxtprofile.la -lm

bin_PROGRAMS += fxt-flame
fxt_flame_SOURCES = tools/flame/fxt-flame.c
fxt_flame_LDADD = libfxtflame.la
