# tools/profile/: fxt-report and fxt-diff (its comparison, diff.c), their
# shared aggregation engine (profile.c, its lean stack lean.c, its tables
# profile-table.c, its row order profile-sort.c), the percentiles of call durations (pctl.c) and
# statistics (stats.c), the pipe of its records from a reading thread
# (recpipe.c), and the benchmark archive generator.  Their tests are in tests/unit.mk and
# tests/e2e.mk.

noinst_LTLIBRARIES += libfxtprofile.la
libfxtprofile_la_SOURCES = \
	tools/profile/profile.c tools/profile/profile.h tools/profile/profile-int.h \
	tools/profile/lean.c tools/profile/lean.h \
	tools/profile/profile-table.c tools/profile/profile-sort.c \
	tools/profile/pctl.c tools/profile/pctl.h \
	tools/profile/stats.c tools/profile/stats.h \
	tools/profile/recpipe.c tools/profile/recpipe.h tools/profile/tickconv.h
libfxtprofile_la_LIBADD = libfxttools.la libfxtcodec.la -lm -lpthread

bin_PROGRAMS += fxt-report fxt-diff
fxt_report_SOURCES = tools/profile/fxt-report.c tools/profile/report-hist.c \
	tools/profile/report-hist.h tools/profile/report-states.c tools/profile/report-states.h
fxt_report_LDADD = libfxtprofile.la
fxt_diff_SOURCES = tools/profile/fxt-diff.c tools/profile/diff.c tools/profile/diff.h \
	tools/profile/diff-pct.c tools/profile/diff-pct.h
fxt_diff_LDADD = libfxtprofile.la

# Writes large synthetic archives: for the benchmark and the e2e tests.
noinst_PROGRAMS += bench/gen_archive
bench_gen_archive_SOURCES = bench/gen_archive.c
bench_gen_archive_LDADD = libfxtcodec.la

# Times fxt-report on generated archives of BENCH_EVENTS events, complete
# events in start order (the agent's) and in end order (an exit-time
# flusher's), timestamps in ticks of a BENCH_TPS clock (a TSC's, like the
# agent's), and prints events per second of wall and CPU time.
BENCH_EVENTS = 20000000
BENCH_TPS = 2995000000
bench-report: fxt-report bench/gen_archive
	@for order in start end; do \
	  ./bench/gen_archive --events $(BENCH_EVENTS) --order $$order \
	    --ticks-per-second $(BENCH_TPS) -o bench-report.fxt || exit 1; \
	  t0=$$(date +%s%N); c0=$$(awk '{ print $$14 + $$15 + $$16 + $$17 }' /proc/$$$$/stat); \
	  ./fxt-report --top 5 bench-report.fxt > /dev/null || exit 1; \
	  t1=$$(date +%s%N); c1=$$(awk '{ print $$14 + $$15 + $$16 + $$17 }' /proc/$$$$/stat); \
	  ms=$$(( (t1 - t0) / 1000000 + 1 )); cms=$$(( (c1 - c0) * 1000 / $$(getconf CLK_TCK) + 1 )); \
	  echo "fxt-report, $$order order: $(BENCH_EVENTS) events in $$ms ms" \
	    "($$(( $(BENCH_EVENTS) * 1000 / ms )) events/s), $$cms ms CPU" \
	    "($$(( $(BENCH_EVENTS) * 1000 / cms )) events/s)"; \
	done; rm -f bench-report.fxt
.PHONY: bench-report

# `make bench-percentiles`: bench/percentiles.sh times fxt-report
# --percentiles against plain fxt-report on a ~380 MB generated archive,
# in the same run, exact and past --exact-limit (sketches), and prints the
# ratio (EVENTS=N, REPS=3, SKETCH=0).
dist_noinst_SCRIPTS += bench/percentiles.sh
bench-percentiles: fxt-report bench/gen_archive
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/percentiles.sh
.PHONY: bench-percentiles
