# tests/helpers.mk: the programs the tests observe with, tests/helpers/:
# they write archives of known shape or read archives back and print what
# a test asserts on.  They link the codec (libfxtcodec.la) with the test
# flags, sanitizers included; the tests run them as "$HELPERS/NAME"
# (tests/lib/test_subr.sh).
#
#  - fxt_calltree: an archive's call tree, flat call counts, threads and
#    stats (the agent's tests); calltree_fixture writes an archive of
#    known nesting, to test fxt_calltree itself (agent-calltree-helper.sh).
#  - libc_slices: the libc wrappers' slices with their arguments, counters,
#    and which slices each flow joins (the libc-*.sh tests).
#  - mkarchives: small valid and broken archives, for fxt-dump and the
#    other tools' tests, and the seed corpus of the fuzzer (tests/fuzz.mk).
#  - mkktrace: Darwin ktrace V3 files built by hand, valid and broken
#    (import-ktrace.sh, and the import fuzzer's seeds).
#  - mkdist: calls of known distributions of durations, for fxt-report
#    --percentiles / --histogram and fxt-diff --metric (report-percentiles.sh).
#  - mkruns: one run of a simulated program of many functions, with
#    machine and per-call noise, for fxt-diff's statistics (diff-noise.sh).
#  - numbers: the numbered calls of tests/progs/numbered read back from an
#    archive, and the calls kept, overwritten, dropped (modes.sh).
#  - perfetto_rules.py, libc-real-flows.py (Python 3): what Perfetto needs
#    of an archive, and flows resolved to the slices they bind to, as
#    Perfetto does (tests/real/).
#  - got_slots.py (Python 3): the GOT slots of modules of a running process,
#    read from /proc/PID/mem (attach-libc.sh).
#
# To add one: put tests/helpers/NAME.c here and add tests/helpers/NAME to
# check_PROGRAMS with its LDADD; a script goes to EXTRA_DIST.
check_PROGRAMS += \
	tests/helpers/fxt_calltree \
	tests/helpers/calltree_fixture \
	tests/helpers/libc_slices \
	tests/helpers/mkarchives \
	tests/helpers/mkktrace \
	tests/helpers/mkdist \
	tests/helpers/mkruns \
	tests/helpers/numbers
tests_helpers_fxt_calltree_LDADD = libfxtcodec.la
tests_helpers_calltree_fixture_LDADD = libfxtcodec.la
tests_helpers_libc_slices_LDADD = libfxtcodec.la
tests_helpers_mkarchives_LDADD = libfxtcodec.la
tests_helpers_mkdist_LDADD = libfxtcodec.la
tests_helpers_mkruns_LDADD = libfxtcodec.la -lm
tests_helpers_numbers_LDADD = libfxtcodec.la
EXTRA_DIST += tests/helpers/perfetto_rules.py tests/helpers/libc-real-flows.py \
	tests/helpers/got_slots.py

# fxt_inject: the injector (launcher/attach/inject.c) by hand: borrows a
# thread of a running process, loads a library into it and calls a
# function of it (attach-inject.sh).
check_PROGRAMS += tests/helpers/fxt_inject
tests_helpers_fxt_inject_LDADD = libfxtattach.la libfxtsym.la libfxtcodec.la $(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
