# tools/waits/: fxt-waits, who made each thread wait and for how long, from
# the flows of an archive: its engine (waits.c, one pass over the records)
# and its command line and outputs (fxt-waits.c).  Its tests are in
# tests/unit.mk and tests/e2e.mk; its benchmark is bench/waits.sh.

noinst_LTLIBRARIES += libfxtwaits.la
libfxtwaits_la_SOURCES = tools/waits/waits.c tools/waits/waits.h tools/waits/waits-int.h \
	tools/waits/waits-pair.c
libfxtwaits_la_LIBADD = libfxtprofile.la libfxttools.la libfxtcodec.la

bin_PROGRAMS += fxt-waits
fxt_waits_SOURCES = tools/waits/fxt-waits.c
fxt_waits_LDADD = libfxtwaits.la

# `make bench-waits`: bench/waits.sh times fxt-waits against fxt-report on a
# ~400 MB generated archive with waits, in the same run, and prints events
# per second of each (EVENTS=N, REPS=3, WAITS=50).
dist_noinst_SCRIPTS += bench/waits.sh
bench-waits: fxt-waits fxt-report fxt-dump bench/gen_archive
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/waits.sh
.PHONY: bench-waits
