# tests/real.mk: every test against a real program, tests/real/NAME.sh:
# shell scripts in the TAP style of tests/e2e/ that trace a program as a
# user would and check that it behaves exactly as without fxt-run (output,
# exit status) and that its archive holds what it did.  Run one with
# `make check TESTS=tests/real/NAME.sh`.
#
#  - real-*.sh: wordfreq (tests/progs/wordfreq/, tests/progs.mk), a small
#    multi-threaded word counter with a dlopened plug-in, built with
#    -finstrument-functions: exact call counts, every tool, what Perfetto
#    needs (tests/helpers/perfetto_rules.py), run as a daemon would be.
#  - libc-real-*.sh: unmodified programs of the Debian system (sort, gzip,
#    find, git, a sh -c pipeline of tar, python3 with threads) under
#    fxt-run --libc=all (sort, find and python3 with --sample too): archives
#    valid, the libc calls, flows, log records and samples they must show
#    (tests/helpers/libc-real-flows.py resolves flows to the slices they
#    bind to, as Perfetto does).  A program that is not installed is skipped.
#  - waits-real-sort.sh: fxt-waits on sort --parallel=2's two threads.
#
# To add one: write tests/real/NAME.sh (executable), list it in REAL_TESTS
# below; list a file it sources in REAL_COMMON.
REAL_TESTS = \
	tests/real/real-wordfreq.sh \
	tests/real/real-procs.sh \
	tests/real/libc-real-files.sh \
	tests/real/libc-real-pipeline.sh \
	tests/real/libc-real-python.sh \
	tests/real/waits-real-sort.sh
REAL_COMMON = tests/real/libc-real-common.sh
TESTS += $(REAL_TESTS)
EXTRA_DIST += $(REAL_TESTS) $(REAL_COMMON)
