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

# `make bench`: bench/run.sh (bench/README.md); BASE=BUILD adds another
# build's fxt-run in the same rounds.
dist_noinst_SCRIPTS += bench/run.sh
# The awk functions run.sh and multiproc.sh share.
EXTRA_DIST += bench/stats.sh
# The session group at nice -20 that run.sh and compress.sh time in.
EXTRA_DIST += bench/group.sh

bench: all
	abs_top_builddir='$(abs_top_builddir)' UFTRACE='$(UFTRACE)' \
	  $(SHELL) $(top_srcdir)/bench/run.sh
.PHONY: bench
EXTRA_DIST += bench/README.md bench/lua-bench.lua

# `make bench-lua-setup`: bench/src-setup.sh fetches Debian's Lua 5.4
# source (`apt-get source lua5.4`, adding a deb-src entry for Debian's
# archive if there is none; needs root for that) into the cache directory
# in which `make bench` looks for it when LUA_SRC is unset.
dist_noinst_SCRIPTS += bench/src-setup.sh
bench-lua-setup:
	$(SHELL) $(top_srcdir)/bench/src-setup.sh lua5.4 "$${XDG_CACHE_HOME:-$$HOME/.cache}/fxt-bench"
.PHONY: bench-lua-setup

# The libc wrappers' cost per call (mem and sync groups): plain, agent with
# the groups off, agent recording, in one run.  `make bench-libc`.
noinst_PROGRAMS += bench/libc_mem
bench_libc_mem_SOURCES = bench/libc_mem.c bench/libc_side.c bench/libc_side.h
bench_libc_mem_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
bench_libc_mem_LDFLAGS = -no-install
bench_libc_mem_LDADD = -lpthread

# `make bench-libc`: bench/libc-summary.sh runs every libc bench program
# (libc_mem, libc_io, then bench/sample.sh) and unmodified programs plainly
# and under fxt-run, and prints their costs side by side.
dist_noinst_SCRIPTS += bench/libc-summary.sh
bench-libc: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/libc-summary.sh
.PHONY: bench-libc

# The io wrappers' cost per call (read/write of 1 byte, a pipe round trip):
# plain, agent with the group off, agent recording, in one run (io owner).
noinst_PROGRAMS += bench/libc_io
bench_libc_io_SOURCES = bench/libc_io.c bench/libc_side.c bench/libc_side.h
bench_libc_io_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
bench_libc_io_LDFLAGS = -no-install

# Stack sampling's cost (bench/sample.sh): a CPU-bound loop without hooks,
# plain, with the agent, and with FXT_SAMPLE.  Run with `make bench-sample`.
noinst_PROGRAMS += bench/sample_hotcold
bench_sample_hotcold_SOURCES = tests/progs/sample_hotcold.c
bench_sample_hotcold_CFLAGS = $(WARN_CFLAGS) -O2 -g
bench_sample_hotcold_LDFLAGS = -no-install
bench_sample_hotcold_LDADD = -lpthread
dist_noinst_SCRIPTS += bench/sample.sh

# The symbolizer's lookups per second, cold and warm, over libc: run it by
# hand (bench/sym_bench [STEP [lines]]).  Built by make check, so that it
# keeps building.
check_PROGRAMS += bench/sym_bench
bench_sym_bench_SOURCES = bench/sym_bench.c
bench_sym_bench_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
bench_sym_bench_LDADD = libfxtsym.la $(LIBDW_LIBS)

bench-sample: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/sample.sh
.PHONY: bench-sample

# `make bench-modes`: bench/modes.sh runs the flight recorder
# (--mode=circular) for about SECONDS (60) on tests/progs/numbered and
# prints the calls per second, the peak RSS against the mode's bound and
# whether the archive holds exactly the newest window.
dist_noinst_SCRIPTS += bench/modes.sh
bench-modes: all
	$(MAKE) $(AM_MAKEFLAGS) tests/progs/numbered tests/helpers/numbers
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/modes.sh
.PHONY: bench-modes

# `make bench-import`: bench/import.sh records a ~100 MB trace.dat (root,
# tracefs) or takes TRACE_DAT=FILE, and times fxt-import on it against
# `trace-cmd report` in the same run: events/s, MB/s, peak RSS.
dist_noinst_SCRIPTS += bench/import.sh
bench-import: all
	abs_top_builddir='$(abs_top_builddir)' abs_top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/bench/import.sh
.PHONY: bench-import

# `make bench-patch`: bench/patch.sh times fxt-run --patch on bench/fib-plain
# against the -finstrument-functions hook (bench/fib) and uftrace -P., per
# call and whole run, in interleaved rounds (BASE=BUILD: another build's too).
dist_noinst_SCRIPTS += bench/patch.sh
bench-patch: all
	abs_top_builddir='$(abs_top_builddir)' UFTRACE='$(UFTRACE)' BASE='$(BASE)' \
	  $(SHELL) $(top_srcdir)/bench/patch.sh
.PHONY: bench-patch

# `make bench-args`: bench/args.sh times what fxt-run --args/--retval add
# to a patched call (two integers and a result, a string) against the same
# call patched without them, in one run.
noinst_PROGRAMS += bench/args-calls
bench_args_calls_SOURCES = bench/args_calls.c
bench_args_calls_CFLAGS = -O2 -g
bench_args_calls_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
dist_noinst_SCRIPTS += bench/args.sh
bench-args: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/args.sh
.PHONY: bench-args

# `make bench-patch-compare`: bench/patch-compare.sh compares fxt-run
# --patch=. with uftrace record -P., function by function, on -O2 builds
# of the examples, Lua 5.4 and SQLite's shell (Debian's sources, fetched
# by bench/src-setup.sh).
dist_noinst_SCRIPTS += bench/patch-compare.sh
EXTRA_DIST += bench/sqlite-bench.sql
bench-patch-compare: all
	abs_top_builddir='$(abs_top_builddir)' abs_top_srcdir='$(abs_top_srcdir)' \
	  UFTRACE='$(UFTRACE)' $(SHELL) $(top_srcdir)/bench/patch-compare.sh
.PHONY: bench-patch-compare

# `make bench-multiproc`: bench/multiproc.sh times real multi-process
# workloads (bash pipes, find | xargs md5sum, make -j2, cc -O2 -c, python3
# through sh) plainly and under fxt-run (default --libc and --libc=none),
# and prints the wall-time slowdowns side by side.  N=5 for more rounds.
dist_noinst_SCRIPTS += bench/multiproc.sh
bench-multiproc: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/multiproc.sh
.PHONY: bench-multiproc

# `make bench-overhead`: bench/overhead.sh checks fxt-report
# --subtract-overhead against the untraced program: fib, tiny calls
# (tests/progs/numbered) and Lua (when make bench-lua-setup fetched it).
dist_noinst_SCRIPTS += bench/overhead.sh
bench-overhead: all
	$(MAKE) $(AM_MAKEFLAGS) tests/progs/numbered
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/overhead.sh
.PHONY: bench-overhead

# `make bench-attach`: bench/attach.sh times fxt-run -p on a process whose
# threads call ATTACH_FUNCS (10000) distinct functions (generated into the
# build tree by bench/attach-gen.sh, never committed): attach and detach,
# the borrowed thread's stop, the cost of a call while attached against
# fxt-run --patch at launch and the -finstrument-functions twin, and perf
# record -p and bpftrace's uprobes beside them.  Built only for it.
ATTACH_FUNCS = 10000
EXTRA_PROGRAMS = bench/attach-target bench/attach-target-hooks
bench_attach_target_SOURCES = bench/attach_target.c
nodist_bench_attach_target_SOURCES = bench/attach_funcs.c
bench_attach_target_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
bench_attach_target_LDFLAGS = -no-install
bench_attach_target_LDADD = -lpthread
bench_attach_target_hooks_SOURCES = bench/attach_target.c
nodist_bench_attach_target_hooks_SOURCES = bench/attach_funcs.c
bench_attach_target_hooks_CFLAGS = $(bench_attach_target_CFLAGS) -finstrument-functions
bench_attach_target_hooks_LDFLAGS = -no-install
bench_attach_target_hooks_LDADD = -lpthread
bench/attach_funcs.c: $(srcdir)/bench/attach-gen.sh
	$(AM_V_GEN)$(MKDIR_P) bench && \
	  $(SHELL) $(srcdir)/bench/attach-gen.sh $(ATTACH_FUNCS) > $@.tmp && mv $@.tmp $@
CLEANFILES += bench/attach_funcs.c bench/attach-target$(EXEEXT) bench/attach-target-hooks$(EXEEXT)
dist_noinst_SCRIPTS += bench/attach-gen.sh bench/attach.sh
bench-attach: all bench/attach-target$(EXEEXT) bench/attach-target-hooks$(EXEEXT)
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/attach.sh
.PHONY: bench-attach

# What source lines cost the conversion (bench/srcline.sh): a generated
# program of 10,000 functions, its spool converted with names only and
# with source lines, in the same rounds.  Run with `make bench-srcline`.
# Built by make check, so that it keeps building.
check_PROGRAMS += bench/srcline_bench
bench_srcline_bench_SOURCES = bench/srcline_bench.c
bench_srcline_bench_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
bench_srcline_bench_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
dist_noinst_SCRIPTS += bench/srcline.sh
bench-srcline: all bench/srcline_bench
	abs_top_builddir='$(abs_top_builddir)' BASE='$(BASE)' $(SHELL) $(top_srcdir)/bench/srcline.sh
.PHONY: bench-srcline

# `make bench-compress`: bench/compress.sh times fib(33)'s whole run under
# fxt-run writing .fxt, .fxt.gz and .fxt.zst, interleaved, each compressed
# run against the plain one of its round.
dist_noinst_SCRIPTS += bench/compress.sh
bench-compress: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/compress.sh
.PHONY: bench-compress
# `make bench-forks`: bench/forks.sh times short processes under fxt-run
# against the same run plainly, in one run: bench/forkloop (500 fork +
# _exit) and 200 four-stage sh pipelines (echo | sed | tr | wc).
noinst_PROGRAMS += bench/forkloop
bench_forkloop_SOURCES = bench/forkloop.c
bench_forkloop_CFLAGS = $(WARN_CFLAGS) -O2
bench_forkloop_LDFLAGS = -no-install
dist_noinst_SCRIPTS += bench/forks.sh
bench-forks: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/forks.sh
.PHONY: bench-forks

# `make bench-log`: bench/log.sh times `git log -p` (about 5 MB of output,
# the source tree's history or a repository made of its files) plainly and
# under fxt-run with the default options, output to a file and to a pipe.
dist_noinst_SCRIPTS += bench/log.sh
bench-log: all
	abs_top_builddir='$(abs_top_builddir)' abs_top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/bench/log.sh
.PHONY: bench-log

# `make bench-readers`: bench/readers.sh times fxt-report, fxt-tree and
# fxt-waits on one ~720 MB generated archive (marked time-ordered, as
# fxt-run's), in interleaved rounds, beside another build's (BASE=BUILD,
# whose outputs must be the same, byte for byte); then fxt-replay's first line on
# it, on it unmarked and on a kernel-like merge; EVENTS, THREADS, REPS, MARK=0, REPLAY=0.
dist_noinst_SCRIPTS += bench/readers.sh
bench-readers: fxt-report$(EXEEXT) fxt-tree$(EXEEXT) fxt-waits$(EXEEXT) fxt-dump$(EXEEXT) fxt-replay$(EXEEXT) fxt-import$(EXEEXT) fxt-merge$(EXEEXT) bench/gen_archive$(EXEEXT)
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/readers.sh
.PHONY: bench-readers

# `make bench-deep`: bench/deep.sh times fxt-tree on one recursion 1 M
# frames deep (complete events in start and end order, begin/end pairs),
# beside another build's (BASE=BUILD, under a time limit); DEEP, REPS, LIMIT.
dist_noinst_SCRIPTS += bench/deep.sh
bench-deep: fxt-tree$(EXEEXT) bench/gen_archive$(EXEEXT)
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/deep.sh
.PHONY: bench-deep

# `make bench-view`: bench/view.sh times fxt-view in tmux on one ~720 MB
# generated archive as .fxt, .fxt.gz and .fxt.zst: its first screen, the
# tree complete, keys while it reads and in the replay list, its peak RSS,
# then End pressed right after the first screen (EARLY=0: not; only);
# beside another build's (BASE=BUILD); EVENTS, THREADS, REPS, FORMATS.
dist_noinst_SCRIPTS += bench/view.sh
bench-view: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/view.sh
.PHONY: bench-view
# `make bench-kernel` (as root): bench/kernel.sh times `fxt-run
# --kernel=sched` against fxt-run alone on make -j2 of the examples and a
# bash pipeline, in the same rounds, and the merge's share of the
# conversion (REPS=5); BASE=BUILD adds another build's fxt-run --kernel
# to the same rounds.
dist_noinst_SCRIPTS += bench/kernel.sh
bench-kernel: fxt-run libfxt-agent.la
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/kernel.sh
.PHONY: bench-kernel
# `make bench-libc-all`: bench/libc-all.sh times real programs under
# fxt-run --libc=all (every libc call recorded with its arguments) against
# the same programs plainly, in interleaved rounds: sqlite3 inserting
# 50,000 rows and node with timers and a worker thread, each skipped
# (with the reason) when not installed.  BASE=BUILD adds another build's
# fxt-run to the same rounds.
dist_noinst_SCRIPTS += bench/libc-all.sh
bench-libc-all: all
	abs_top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/bench/libc-all.sh
.PHONY: bench-libc-all
