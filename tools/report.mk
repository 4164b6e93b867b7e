# tools/report.mk: fxt-report and fxt-diff, their shared aggregation engine
# (profile.c) and statistics (stats.c), their tests and the benchmark
# archive generator.

noinst_LTLIBRARIES += libfxtprofile.la
libfxtprofile_la_SOURCES = \
	tools/profile.c tools/profile.h \
	tools/stats.c tools/stats.h
libfxtprofile_la_LIBADD = libfxtcodec.la -lm

bin_PROGRAMS += fxt-report fxt-diff
fxt_report_SOURCES = tools/fxt-report.c
fxt_report_LDADD = libfxtprofile.la
fxt_diff_SOURCES = tools/fxt-diff.c
fxt_diff_LDADD = libfxtprofile.la

# Writes large synthetic archives: for the benchmark and the e2e tests.
noinst_PROGRAMS += bench/gen_archive
bench_gen_archive_SOURCES = bench/gen_archive.c
bench_gen_archive_LDADD = libfxtcodec.la

REPORT_UNIT_TESTS = \
	tests/unit/test_profile \
	tests/unit/test_diff_stats
check_PROGRAMS += $(REPORT_UNIT_TESTS)
TESTS += $(REPORT_UNIT_TESTS)
tests_unit_test_profile_LDADD = libfxtprofile.la
tests_unit_test_diff_stats_LDADD = libfxtprofile.la

REPORT_E2E_TESTS = \
	tests/e2e/report-basic.sh \
	tests/e2e/report-diff.sh \
	tests/e2e/report-errors.sh
TESTS += $(REPORT_E2E_TESTS)
EXTRA_DIST += $(REPORT_E2E_TESTS)

# Times fxt-report on a generated archive of BENCH_EVENTS events (end-ordered
# complete events, as the agent writes them) and prints events per second.
BENCH_EVENTS = 20000000
bench-report: fxt-report bench/gen_archive
	./bench/gen_archive --events $(BENCH_EVENTS) -o bench-report.fxt
	@t0=$$(date +%s%N); ./fxt-report --top 5 bench-report.fxt || exit 1; \
	t1=$$(date +%s%N); \
	echo "fxt-report: $(BENCH_EVENTS) events in $$(( (t1 - t0) / 1000000 )) ms:" \
	  "$$(( $(BENCH_EVENTS) * 1000 / ((t1 - t0) / 1000000 + 1) )) events/s"; \
	rm -f bench-report.fxt
.PHONY: bench-report
