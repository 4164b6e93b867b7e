# common/: helpers that several stages share, at the bottom of the data
# path: they include nothing of ours.  hash.h, the one hash function of
# every in-memory table (the codec's, the symbolizer's, the session's,
# the converter's, the tools'); grow.h, growing an array by doubling;
# addrtab.[ch], a table keyed by address (the converter's and the
# importers'); debugpath.[ch], where a module's separate debug file may be,
# and crc32.[ch], the CRC its .gnu_debuglink stores (the agent's planner's
# and the symbolizer's); hooksym.h, the symbol that tells a
# -finstrument-functions build (the agent's and the symbolizer's);
# writeall.[ch], a whole buffer to a descriptor (fxt-run's, the
# symbolizer's kept source lines).  libfxtcommon.la is linked by the converter, the importers
# and the tests, with the tools' flags; libfxt-convert.so, built as the
# agent is, compiles COMMON_SOURCES itself (convert/local.mk).
COMMON_SOURCES = \
	common/addrtab.c common/addrtab.h \
	common/crc32.c common/crc32.h \
	common/debugpath.c common/debugpath.h \
	common/writeall.c common/writeall.h \
	common/grow.h \
	common/hash.h \
	common/hooksym.h

noinst_LTLIBRARIES += libfxtcommon.la
libfxtcommon_la_SOURCES = $(COMMON_SOURCES)
