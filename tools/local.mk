# tools/: programs that read archives.

# Helpers the archive-reading tools share (tools/common.h).
noinst_LTLIBRARIES += libfxttools.la
libfxttools_la_SOURCES = tools/common.c tools/common.h
libfxttools_la_LIBADD = libfxtcodec.la

bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/fxt-dump.c tools/dump-check.c tools/dump-map.c tools/dump.h
fxt_dump_LDADD = libfxttools.la libfxtcodec.la
