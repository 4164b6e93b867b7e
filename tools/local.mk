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
