# convert/: a spool -> its FXT archive, outside the traced process when
# fxt-run is there (launcher/), inside it otherwise (libfxt-convert.so,
# agent/local.mk, which the agent loads then).  The record format and the
# libc function table still live in agent/ (events.h, libc_table.c), as do
# the formatter the flusher shares with the agent (log.c).
CONVERT_ONLY_SOURCES = \
	convert/convert.c convert/convert.h \
	convert/flush.c convert/flush.h \
	convert/recon.c convert/recon.h \
	convert/stackchart.c convert/stackchart.h
CONVERT_SOURCES = $(CONVERT_ONLY_SOURCES) \
	agent/events.h agent/libc.h agent/libc_table.c \
	agent/log.c agent/log.h \
	agent/settings.c agent/settings.h

noinst_LTLIBRARIES += libfxtconvert.la
libfxtconvert_la_SOURCES = $(CONVERT_SOURCES) $(SPOOL_SOURCES)
libfxtconvert_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
libfxtconvert_la_LIBADD = libfxtsym.la libfxtcodec.la $(LIBDW_LIBS) $(ZLIB_LIBS)
