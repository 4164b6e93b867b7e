# tests/fuzz.mk: the reader's fuzzer, tests/fuzz/fuzz_reader.c (libFuzzer).
# Not part of make check: configure --enable-fuzzing CC=clang; then
# `make fuzz` runs it for FUZZ_SECONDS (default 60) from a seed corpus that
# tests/helpers/mkarchives writes into the build tree.  Crashes land in
# tests/fuzz/artifacts/.  The target compiles the reader's sources itself,
# with FUZZ_CFLAGS.
#
# To add a fuzz target: put tests/fuzz/fuzz_NAME.c here (it defines
# LLVMFuzzerTestOneInput), build it inside `if FUZZING` as fuzz_reader is,
# and give it a make target of its own like `fuzz`.
EXTRA_DIST += tests/fuzz/fuzz_reader.c
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_reader
tests_fuzz_fuzz_reader_SOURCES = tests/fuzz/fuzz_reader.c fxt/reader.c fxt/source.c fxt/decode.c \
	fxt/reader_int.h fxt/utf8.c fxt/names.c
tests_fuzz_fuzz_reader_CFLAGS = $(WARN_CFLAGS) $(FUZZ_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_fuzz_reader_LDFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_reader_LDADD = $(ZLIB_LIBS)

FUZZ_SECONDS = 60
fuzz: tests/fuzz/fuzz_reader tests/helpers/mkarchives
	$(MKDIR_P) tests/fuzz/corpus tests/fuzz/seeds tests/fuzz/artifacts
	tests/helpers/mkarchives tests/fuzz/seeds
	tests/fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	  -timeout=10 -rss_limit_mb=2048 -artifact_prefix=tests/fuzz/artifacts/ \
	  tests/fuzz/corpus tests/fuzz/seeds
else
fuzz:
	@echo "make fuzz: configure with --enable-fuzzing CC=clang first" >&2; exit 1
endif
.PHONY: fuzz
clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/corpus tests/fuzz/seeds tests/fuzz/artifacts
.PHONY: clean-fuzz
