# tests/fuzz.mk: the reader's fuzzer, tests/fuzz/fuzz_reader.c, and the
# importer's, tests/fuzz/fuzz_import.c (libFuzzer).
# Not part of make check: configure --enable-fuzzing CC=clang; then
# `make fuzz` runs it for FUZZ_SECONDS (default 60) from a seed corpus that
# tests/helpers/mkarchives writes into the build tree.  Crashes land in
# tests/fuzz/artifacts/.  The target compiles the reader's sources itself,
# with FUZZ_CFLAGS.
#
# To add a fuzz target: put tests/fuzz/fuzz_NAME.c here (it defines
# LLVMFuzzerTestOneInput), build it inside `if FUZZING` as fuzz_reader is,
# and give it a make target of its own like `fuzz`.
EXTRA_DIST += tests/fuzz/fuzz_reader.c tests/fuzz/fuzz_import.c
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_reader
tests_fuzz_fuzz_reader_SOURCES = tests/fuzz/fuzz_reader.c fxt/reader.c fxt/source.c fxt/decode.c \
	fxt/order.c fxt/reader_int.h fxt/utf8.c fxt/typenames.c
tests_fuzz_fuzz_reader_CFLAGS = $(WARN_CFLAGS) $(FUZZ_CFLAGS) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(LIBDEFLATE_CFLAGS)
tests_fuzz_fuzz_reader_LDFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_reader_LDADD = $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)

noinst_PROGRAMS += tests/fuzz/fuzz_import
tests_fuzz_fuzz_import_SOURCES = tests/fuzz/fuzz_import.c import/import.c import/ktrace.c \
	import/import.h common/addrtab.c common/addrtab.h $(FXT_CODEC_SOURCES)
tests_fuzz_fuzz_import_CFLAGS = $(WARN_CFLAGS) $(FUZZ_CFLAGS) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(LIBDEFLATE_CFLAGS)
tests_fuzz_fuzz_import_LDFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_import_LDADD = $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS) -lpthread

# `make fuzz` runs the reader's for FUZZ_SECONDS, then the importer's for
# half as long (its input is a simpler format).
FUZZ_SECONDS = 60
fuzz: fuzz-reader fuzz-import
fuzz-reader: tests/fuzz/fuzz_reader tests/helpers/mkarchives
	$(MKDIR_P) tests/fuzz/corpus tests/fuzz/seeds tests/fuzz/artifacts
	tests/helpers/mkarchives tests/fuzz/seeds
	tests/fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	  -timeout=10 -rss_limit_mb=2048 -artifact_prefix=tests/fuzz/artifacts/ \
	  tests/fuzz/corpus tests/fuzz/seeds
fuzz-import: tests/fuzz/fuzz_import tests/helpers/mkktrace
	$(MKDIR_P) tests/fuzz/import-corpus tests/fuzz/import-seeds tests/fuzz/artifacts
	for k in basic truncated bigchunk badsize badtime v2; do \
	  tests/helpers/mkktrace $$k tests/fuzz/import-seeds/$$k.kt || exit 1; done
	tests/helpers/mkktrace many 40 tests/fuzz/import-seeds/many.kt
	tests/fuzz/fuzz_import -max_total_time=$$(( $(FUZZ_SECONDS) / 2 + 1 )) -max_len=16384 \
	  -timeout=10 -rss_limit_mb=2048 -artifact_prefix=tests/fuzz/artifacts/import- \
	  tests/fuzz/import-corpus tests/fuzz/import-seeds
else
fuzz:
	@echo "make fuzz: configure with --enable-fuzzing CC=clang first" >&2; exit 1
fuzz-reader fuzz-import: fuzz
endif
.PHONY: fuzz fuzz-reader fuzz-import
clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/corpus tests/fuzz/seeds tests/fuzz/artifacts \
	  tests/fuzz/import-corpus tests/fuzz/import-seeds
.PHONY: clean-fuzz
