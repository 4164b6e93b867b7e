# import/: other tracers' files -> FXT archives (fxt-import, tools/front/fxt-import.c):
# trace-cmd's trace.dat through libtracecmd (when configure found it), and
# Darwin's ktrace, read here.  The threads' table is common/addrtab.h.
noinst_LTLIBRARIES += libfxtimport.la
libfxtimport_la_SOURCES = import/import.h import/import.c import/tracedat.c import/ktrace.c
libfxtimport_la_CFLAGS = $(AM_CFLAGS) $(LIBTRACECMD_CFLAGS)
libfxtimport_la_LIBADD = libfxtcodec.la libfxtcommon.la $(LIBTRACECMD_LIBS)
