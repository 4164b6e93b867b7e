# tools/: programs that read archives.
bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/fxt-dump.c
fxt_dump_LDADD = libfxtcodec.la
