# tools/front/: what the archive-reading tools share (common.h: the command
# line, reading an archive, writing an output; escape.h: the string
# escapers: libfxttools.la); and the front ends that need nothing else of
# tools/: fxt, fxt-import, fxt-merge (whose merger, fxt-run's too, is
# convert/merge.h, libfxtmerge.la).
noinst_LTLIBRARIES += libfxttools.la
libfxttools_la_SOURCES = tools/front/common.c tools/front/common.h \
	tools/front/escape.c tools/front/escape.h \
	tools/front/srcloc.c tools/front/srcloc.h tools/front/thrmap.h \
	tools/front/sched.c tools/front/sched.h
libfxttools_la_LIBADD = libfxtcodec.la

# fxt, the front command: `fxt report ...` runs fxt-report (fxt.c).
# Built as tools/fxt, since fxt/ is the codec's folder; installed as fxt.
bin_PROGRAMS += tools/fxt
tools_fxt_SOURCES = tools/front/fxt.c
tools_fxt_LDADD = libfxttools.la libfxtcodec.la

# fxt-import: other tracers' files -> FXT (import/).
bin_PROGRAMS += fxt-import
fxt_import_SOURCES = tools/front/fxt-import.c
fxt_import_LDADD = libfxtimport.la libfxttools.la libfxtcodec.la $(LIBTRACECMD_LIBS)

# fxt-merge: archives side by side in one, aligned on CLOCK_MONOTONIC.
bin_PROGRAMS += fxt-merge
fxt_merge_SOURCES = tools/front/fxt-merge.c
fxt_merge_LDADD = libfxtimport.la libfxtmerge.la libfxttools.la libfxtcodec.la $(LIBTRACECMD_LIBS)
