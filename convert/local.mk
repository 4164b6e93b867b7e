# convert/: a spool -> its FXT archive, outside the traced process when
# fxt-run is there (launcher/), inside it otherwise (libfxt-convert.so,
# agent/local.mk, which the agent loads then).  What it shares with the
# agent, the spool's layout and records, is in spool/.
CONVERT_SOURCES = \
	convert/convert.c convert/convert.h \
	convert/flush.c convert/flush.h \
	convert/chunks.c convert/chunks.h \
	convert/counters.c convert/counters.h \
	convert/decode.c convert/decode.h \
	convert/emit.c convert/emit.h \
	convert/entries.h convert/grow.h \
	convert/loglines.c convert/loglines.h \
	convert/names.c convert/names.h \
	convert/prepass.c convert/prepass.h \
	convert/recon.c convert/recon.h \
	convert/stackchart.c convert/stackchart.h

noinst_LTLIBRARIES += libfxtconvert.la
libfxtconvert_la_SOURCES = $(CONVERT_SOURCES) $(SPOOL_SOURCES)
libfxtconvert_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
libfxtconvert_la_LIBADD = libfxtsym.la libfxtcodec.la $(LIBDW_LIBS) $(ZLIB_LIBS)

# Unit tests of the converter: the stack reconstruction alone, and the
# flusher on spools written by the tests' own writer
# (tests/unit/spool_test_writer.h), read back through the reader.
CONVERT_UNIT_TESTS = \
	tests/unit/test_recon \
	tests/unit/test_convert_flush
check_PROGRAMS += $(CONVERT_UNIT_TESTS)
TESTS += $(CONVERT_UNIT_TESTS)
tests_unit_test_recon_SOURCES = tests/unit/test_recon.c \
	tests/unit/agent_test_nest.h convert/recon.c convert/recon.h
tests_unit_test_convert_flush_SOURCES = tests/unit/test_convert_flush.c \
	tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_flush_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_flush_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS)
