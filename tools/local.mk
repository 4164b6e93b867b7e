# tools/: programs that read archives.
bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/fxt-dump.c tools/dump-check.c tools/dump-map.c tools/dump.h
fxt_dump_LDADD = libfxtcodec.la
