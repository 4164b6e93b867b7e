# fxt/: the FXT codec.  libfxtcodec.la is linked into the tools and tests
# (with sanitizers when configured); libfxt.la is the installed shared
# library with the same code.  libfxt-convert.so, which the agent loads,
# compiles these sources itself, without sanitizers (see convert/local.mk).
FXT_CODEC_SOURCES = \
	fxt/encode.c fxt/encode.h \
	fxt/writer.c fxt/writer_int.h fxt/tables.c fxt/compress.c fxt/compress.h \
	fxt/zstdenc.c fxt/zstdenc.h \
	fxt/behind.c fxt/behind.h fxt/ahead.c fxt/ahead.h \
	fxt/reader_int.h fxt/reader.c fxt/source.c fxt/decode.c fxt/order.c \
	fxt/utf8.c \
	fxt/typenames.c \
	fxt/counts.c fxt/counts.h \
	fxt/depth.c fxt/depth.h \
	fxt/internal.h

noinst_LTLIBRARIES += libfxtcodec.la
libfxtcodec_la_SOURCES = $(FXT_CODEC_SOURCES)
libfxtcodec_la_LIBADD = $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS) -lpthread
libfxtcodec_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(LIBDEFLATE_CFLAGS)

lib_LTLIBRARIES += libfxt.la
libfxt_la_SOURCES =
nodist_EXTRA_libfxt_la_SOURCES = fxt/dummy.c
libfxt_la_LIBADD = libfxtcodec.la $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
libfxt_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^fxt_'

fxtinclude_HEADERS += include/fxt/format.h include/fxt/writer.h include/fxt/reader.h \
	include/fxt/utf8.h
