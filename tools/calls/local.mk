# tools/calls/: the call views, on the profile's stack reconstruction: the
# aggregated call tree (calltree.c: fxt-tree), the calls as a stream
# (callstream.c: fxt-replay) and every thread's merged by time
# (callmerge.c: fxt-replay --time-order), in libfxtcalls for the views
# that draw them too (tools/view/).  Their tests are in tests/unit.mk and tests/e2e.mk.

noinst_LTLIBRARIES += libfxtcalls.la
libfxtcalls_la_SOURCES = tools/calls/calltree.c tools/calls/calltree.h \
	tools/calls/callstream.c tools/calls/callstream.h \
	tools/calls/callmerge.c tools/calls/callmerge.h
libfxtcalls_la_LIBADD = libfxtprofile.la libfxtrun.la

bin_PROGRAMS += fxt-tree fxt-replay
fxt_tree_SOURCES = tools/calls/fxt-tree.c
fxt_tree_LDADD = libfxtcalls.la
fxt_replay_SOURCES = tools/calls/fxt-replay.c
fxt_replay_LDADD = libfxtcalls.la

# `make bench-calls`: bench/calls.sh times fxt-tree against fxt-report on
# a ~380 MB generated archive, in the same run, and fxt-replay's time to
# its first line on it (EVENTS=N, REPS=3); and fxt-view's opening of it
# when ncurses built it (tools/view/).
dist_noinst_SCRIPTS += bench/calls.sh
BENCH_CALLS_VIEW =
if HAVE_NCURSES
BENCH_CALLS_VIEW += fxt-view$(EXEEXT)
endif
bench-calls: fxt-report fxt-tree fxt-replay bench/gen_archive $(BENCH_CALLS_VIEW)
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/calls.sh
.PHONY: bench-calls
