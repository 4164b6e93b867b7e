# import/: other tracers' files -> FXT archives (fxt-import, tools/front/fxt-import.c):
# trace-cmd's trace.dat through libtracecmd (when configure found it), and
# Darwin's ktrace, read here.  The threads' table is the converter's
# (convert/addrtab.h).
noinst_LTLIBRARIES += libfxtimport.la
libfxtimport_la_SOURCES = import/import.h import/import.c import/tracedat.c import/ktrace.c \
	convert/addrtab.c convert/addrtab.h
libfxtimport_la_CFLAGS = $(AM_CFLAGS) $(LIBTRACECMD_CFLAGS)
libfxtimport_la_LIBADD = libfxtcodec.la $(LIBTRACECMD_LIBS)
