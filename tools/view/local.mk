# tools/view/: fxt-view, the interactive terminal view (ncurses) of the
# call engines of tools/calls/ (the call tree, the replay stream) and of
# its own per-thread timeline (timeline.c, built in the tree's pass).
# Built only with ncurses (configure --with-ncurses); its tests are in
# tests/unit.mk (the timeline) and tests/e2e.mk (driven through tmux).

if HAVE_NCURSES
noinst_LTLIBRARIES += libfxtview.la
libfxtview_la_SOURCES = tools/view/timeline.c tools/view/timeline.h
libfxtview_la_LIBADD = libfxtcalls.la

bin_PROGRAMS += fxt-view
fxt_view_SOURCES = tools/view/fxt-view.c tools/view/view.h tools/view/vtree.c \
	tools/view/vtime.c tools/view/vlist.c tools/view/vlist.h tools/view/vindex.c \
	tools/view/vload.c
fxt_view_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS)
fxt_view_LDADD = libfxtview.la $(NCURSES_LIBS)
endif
