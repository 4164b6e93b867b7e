# bench/: benchmarks (not tests).  Run with `make bench`.

# The workload: fib, with and without the hooks, -O2 as a real build.
noinst_PROGRAMS += bench/fib bench/fib-plain
bench_fib_SOURCES = bench/fib.c
bench_fib_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer -finstrument-functions
bench_fib_LDFLAGS = -no-install
bench_fib_LDADD = -lpthread
bench_fib_plain_SOURCES = bench/fib.c
bench_fib_plain_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
bench_fib_plain_LDFLAGS = -no-install
bench_fib_plain_LDADD = -lpthread

# The null recorder: the cheapest possible hooks, a floor for the agent.
noinst_LTLIBRARIES += bench/libnull-recorder.la
bench_libnull_recorder_la_SOURCES = bench/null_recorder.c
bench_libnull_recorder_la_CFLAGS = $(WARN_CFLAGS) -O2 -fno-omit-frame-pointer
bench_libnull_recorder_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

dist_noinst_SCRIPTS += bench/run.sh

bench: all
	abs_top_builddir='$(abs_top_builddir)' UFTRACE='$(UFTRACE)' \
	  $(SHELL) $(top_srcdir)/bench/run.sh
.PHONY: bench
EXTRA_DIST += bench/README.md bench/lua-bench.lua
