# Real, unmodified programs of the Debian system (sort, gzip, find, git, a
# sh -c pipeline of tar, python3 with threads) under fxt-run --libc=all
# (sort, find and python3 with --sample too): output and exit status
# unchanged, archives valid, the libc calls, flows, log records and
# samples they must show.  A program that is not installed is
# skipped.  tests/helpers/libc-real-flows.py resolves flows to the slices they
# bind to, as Perfetto does.
LIBC_REAL_TESTS = \
	tests/real/libc-real-files.sh \
	tests/real/libc-real-pipeline.sh \
	tests/real/libc-real-python.sh
TESTS += $(LIBC_REAL_TESTS)
EXTRA_DIST += $(LIBC_REAL_TESTS) tests/real/libc-real-common.sh tests/helpers/libc-real-flows.py
