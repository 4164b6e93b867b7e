# tools/: programs that read archives.

# Helpers the archive-reading tools share (tools/common.h), their string
# escapers (tools/escape.h), the nesting-depth tracker (tools/nesting.h)
# and the archive merger (tools/merge.h: fxt-run's and fxt-merge's), which
# the launcher links too (libfxttools.la, or these sources).
FXT_NESTING_SOURCES = tools/nesting.c tools/nesting.h
noinst_LTLIBRARIES += libfxttools.la
libfxttools_la_SOURCES = tools/common.c tools/common.h tools/escape.c tools/escape.h \
	tools/merge.c tools/merge.h $(FXT_NESTING_SOURCES)
libfxttools_la_LIBADD = libfxtcodec.la

# fxt, the front command: `fxt report ...` runs fxt-report (tools/fxt.c).
# Built as tools/fxt, since fxt/ is the codec's folder; installed as fxt.
bin_PROGRAMS += tools/fxt
tools_fxt_SOURCES = tools/fxt.c
tools_fxt_LDADD = libfxttools.la libfxtcodec.la

bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/fxt-dump.c tools/dump-check.c tools/dump-map.c tools/dump.h
fxt_dump_LDADD = libfxttools.la libfxtcodec.la

# fxt-import: other tracers' files -> FXT (import/).
bin_PROGRAMS += fxt-import
fxt_import_SOURCES = tools/fxt-import.c
fxt_import_LDADD = libfxtimport.la libfxttools.la libfxtcodec.la $(LIBTRACECMD_LIBS)

# fxt-merge: archives side by side in one, aligned on CLOCK_MONOTONIC.
bin_PROGRAMS += fxt-merge
fxt_merge_SOURCES = tools/fxt-merge.c
fxt_merge_LDADD = libfxtimport.la libfxttools.la libfxtcodec.la $(LIBTRACECMD_LIBS)
