# tools/waits/: fxt-waits, who made each thread wait and for how long, from
# the flows of an archive: its engine (waits.c, one pass over the records)
# and its command line and outputs (fxt-waits.c).  Its tests are in
# tests/unit.mk and tests/e2e.mk; its benchmark is bench/waits.sh.

bin_PROGRAMS += fxt-waits
fxt_waits_SOURCES = tools/waits/fxt-waits.c tools/waits/waits.c tools/waits/waits.h
fxt_waits_LDADD = libfxttools.la libfxtcodec.la
