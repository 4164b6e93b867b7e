# tools/export/: fxt-export (Chrome trace-event JSON), one pass over the
# records (export_chrome.c, its library: tests/unit.mk's test_flame links
# it too).  Its tests are in tests/unit.mk and tests/e2e.mk.
noinst_LTLIBRARIES += libfxtexport.la
libfxtexport_la_SOURCES = tools/export/export_chrome.c tools/export/export.h
libfxtexport_la_LIBADD = libfxttools.la libfxtcodec.la

bin_PROGRAMS += fxt-export
fxt_export_SOURCES = tools/export/fxt-export.c
fxt_export_LDADD = libfxtexport.la
