# tests/: shared test support, end-to-end tests and the fuzz targets.
# Unit tests are declared next to the code they test (fxt/local.mk ...).
EXTRA_DIST += tests/lib/test_subr.sh

# ------------------------------------------- the agent never reaches debuginfod
# curl and tests/progs/ssl_cleanup (OpenSSL torn down before exit) traced
# with fxt-run and a plain LD_PRELOAD: the agent's exit-time symbolizer
# must not load libdebuginfod (its libcurl restarts OpenSSL: a crash) nor
# touch the network.  ssl_cleanup is built when configure finds openssl,
# like the examples (no sanitizers: the agent is preloaded into it); the
# test skips what is missing.
if HAVE_OPENSSL
check_PROGRAMS += tests/progs/ssl_cleanup
tests_progs_ssl_cleanup_SOURCES = tests/progs/ssl_cleanup.c
tests_progs_ssl_cleanup_CFLAGS = $(WARN_CFLAGS) $(OPENSSL_CFLAGS) -O1 -g
tests_progs_ssl_cleanup_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_ssl_cleanup_LDADD = $(OPENSSL_LIBS)
endif
TESTS += tests/e2e/agent-no-debuginfod.sh
EXTRA_DIST += tests/e2e/agent-no-debuginfod.sh tests/progs/ssl_cleanup.c

# ------------------------------------------------ fxt-dump end-to-end tests
# tests/helpers/mkarchives writes small valid and broken archives; the dump-*.sh
# tests run fxt-dump on them (and the fuzzer starts from them).
check_PROGRAMS += tests/helpers/mkarchives
tests_helpers_mkarchives_LDADD = libfxtcodec.la
DUMP_E2E_TESTS = \
	tests/e2e/dump-print.sh \
	tests/e2e/dump-check.sh \
	tests/e2e/dump-usage.sh
TESTS += $(DUMP_E2E_TESTS)
EXTRA_DIST += $(DUMP_E2E_TESTS) tests/e2e/dump-common.sh

# ----------------------------------------------------------------- fuzzing
# configure --enable-fuzzing CC=clang; then `make fuzz` runs the reader's
# fuzzer for FUZZ_SECONDS (default 60) from a seed corpus written by
# mkarchives into the build tree.  Crashes land in tests/fuzz/artifacts/.
# The target compiles the reader sources itself, with FUZZ_CFLAGS.
EXTRA_DIST += tests/fuzz/fuzz_reader.c
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_reader
tests_fuzz_fuzz_reader_SOURCES = tests/fuzz/fuzz_reader.c fxt/reader.c fxt/source.c fxt/decode.c fxt/reader_int.h fxt/utf8.c fxt/names.c
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
