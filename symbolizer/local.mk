# symbolizer/: addresses to function names with elfutils libdwfl.
# libfxt-convert.so (convert/local.mk) compiles FXT_SYM_SOURCES itself (with
# the agent's flags); tools and tests link libfxtsym.la.
FXT_SYM_SOURCES = \
	symbolizer/symbolizer.c \
	symbolizer/symbolizer.h \
	symbolizer/internal.h \
	symbolizer/maps.c \
	symbolizer/symtab.c \
	symbolizer/lines.c \
	symbolizer/linetab.c \
	symbolizer/linetab.h \
	symbolizer/lineprog.c \
	symbolizer/loccache.c \
	symbolizer/signature.c \
	symbolizer/sigabi.c \
	symbolizer/sigshow.c \
	symbolizer/signature.h \
	symbolizer/store.c \
	symbolizer/store.h \
	symbolizer/demangle.c \
	symbolizer/demangle.h \
	symbolizer/runcache.c \
	symbolizer/runcache.h \
	symbolizer/debuginfo.c

noinst_LTLIBRARIES += libfxtsym.la
libfxtsym_la_SOURCES = $(FXT_SYM_SOURCES)
libfxtsym_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
# libfxtcommon: where debug files are, their CRC (common/debugpath.h);
# libfxtrun: whether a cache file's writer still runs (run/proc.h).
libfxtsym_la_LIBADD = libfxtcommon.la libfxtrun.la $(LIBDW_LIBS)
