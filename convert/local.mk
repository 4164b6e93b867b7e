# convert/: a spool -> its FXT archive, outside the traced process when
# fxt-run is there (launcher/), inside it otherwise (libfxt-convert.so,
# below, which the agent loads then).  What it shares with the
# agent, the spool's layout and records, is in spool/, the run's names
# and session in run/.
CONVERT_SOURCES = \
	convert/convert.c convert/convert.h \
	convert/batch.c convert/batch.h \
	convert/pipeline.c convert/pipeline.h \
	convert/thread.c convert/thread.h convert/early.c \
	convert/chunks.c convert/chunks.h \
	convert/counters.c convert/counters.h \
	convert/replay.c convert/replay.h \
	convert/emit.c convert/emit.h convert/emitargs.c convert/emitcall.c convert/emitloc.c \
	convert/entries.h \
	convert/loglines.c convert/loglines.h \
	convert/symnames.c convert/symnames.h \
	convert/prepass.c convert/prepass.h \
	convert/recon.c convert/recon.h \
	convert/shortcalls.c convert/shortcalls.h \
	convert/stackchart.c convert/stackchart.h \
	convert/timebase.h

noinst_LTLIBRARIES += libfxtconvert.la
libfxtconvert_la_SOURCES = $(CONVERT_SOURCES)
libfxtconvert_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
libfxtconvert_la_LIBADD = libfxtrun.la libfxtsym.la libfxtcodec.la libfxtcommon.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)

# Merging archives into one (merge.h): fxt-run's parts and fxt-merge's
# inputs; the codec's reader and writer only.
noinst_LTLIBRARIES += libfxtmerge.la
libfxtmerge_la_SOURCES = convert/merge.c convert/merge.h
libfxtmerge_la_LIBADD = libfxtcodec.la

# libfxt-convert.so: what a process that has no fxt-run loads to convert its
# own spool (convert/self.c), from the converter's, codec's and
# symbolizer's sources built as the agent is (AGENT_CFLAGS, agent/local.mk:
# no sanitizers, hidden visibility).
pkglib_LTLIBRARIES += libfxt-convert.la
libfxt_convert_la_SOURCES = convert/self.c $(CONVERT_SOURCES) $(RUN_CONTRACT_SOURCES) $(SPOOL_SOURCES) \
	$(FXT_CODEC_SOURCES) $(FXT_SYM_SOURCES) $(COMMON_SOURCES)
libfxt_convert_la_CFLAGS = $(AGENT_CFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(LIBDEFLATE_CFLAGS)
libfxt_convert_la_LDFLAGS = $(AGENT_LDFLAGS)
libfxt_convert_la_LIBADD = $(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS) -lpthread -ldl
