# tests/e2e.mk: every end-to-end test.  An end-to-end test is a shell
# script, tests/e2e/NAME.sh, that speaks TAP through tests/lib/test_subr.sh
# and runs the built programs as a user does: fxt-run on the examples and on
# the traced test programs (tests/progs/, built by tests/progs.mk), the
# tools on the archives, and the helpers (tests/helpers/) to read them.
# Tests against programs we did not write are in tests/real.mk.  Run one
# with `make check TESTS=tests/e2e/NAME.sh`.
#
# To add one: write tests/e2e/NAME.sh (executable; start from a neighbour,
# e.g. agent-exit.sh), list it in E2E_TESTS below, and list a file it
# sources in E2E_COMMON.  A program it traces goes to tests/progs.mk.
E2E_COMMON = \
	tests/lib/test_subr.sh \
	tests/e2e/agent-common.sh \
	tests/e2e/dump-common.sh \
	tests/e2e/libc-proc-common.sh \
	tests/e2e/libc-threads-common.sh \
	tests/e2e/import-common.sh \
	tests/e2e/attach-common.sh \
	tests/e2e/view-common.sh

# The agent through fxt-run: calls (checked against uftrace when it is
# installed), C++, threads, plug-ins, exit paths, stress, fork in a signal
# handler, what a forked child's spool costs in system calls, a change
# of user, recovery, process names under retitling
# (setproctitle), exec;
# fxt-run's options, the merge of a run's processes and --recover.
# agent-calltree-helper.sh tests the reader the others use, fxt_calltree.
E2E_TESTS = \
	tests/e2e/agent-calltree-helper.sh \
	tests/e2e/agent-launcher.sh \
	tests/e2e/agent-calltree.sh \
	tests/e2e/agent-cxx.sh \
	tests/e2e/agent-threads.sh \
	tests/e2e/agent-plugin.sh \
	tests/e2e/agent-exit.sh \
	tests/e2e/agent-stress.sh \
	tests/e2e/agent-clone.sh \
	tests/e2e/agent-fork-signal.sh \
	tests/e2e/agent-fork-cost.sh \
	tests/e2e/agent-privdrop.sh \
	tests/e2e/agent-recover.sh \
	tests/e2e/agent-recover-names.sh \
	tests/e2e/agent-proctitle.sh \
	tests/e2e/agent-hotspot.sh \
	tests/e2e/agent-exec.sh \
	tests/e2e/launcher-options.sh \
	tests/e2e/launcher-fds.sh \
	tests/e2e/launcher-merge.sh \
	tests/e2e/launcher-recover.sh \
	tests/e2e/launcher-spares.sh \
	tests/e2e/launcher-batch.sh \
	tests/e2e/launcher-counts.sh \
	tests/e2e/launcher-early.sh \
	tests/e2e/launcher-early-priority.sh \
	tests/e2e/launcher-spool-release.sh \
	tests/e2e/launcher-template.sh \
	tests/e2e/modes.sh \
	tests/e2e/filters.sh \
	tests/e2e/overhead.sh \
	tests/e2e/snapshots.sh

# Source lines: each function's file:line in the archive (against
# addr2line), in fxt-report --srcline, fxt-export, fxt-flame, on every
# slice with fxt-run --srcline; without debug info, with a debug file.
E2E_TESTS += tests/e2e/srcline.sh
# srcline-cache.sh: source lines kept across runs by build ID
# (FXT_SRCLINE_CACHE), read by the next run, never served for a changed file.
E2E_TESTS += tests/e2e/srcline-cache.sh
# srcline-ahead.sh: source lines decoded by fxt-run's early thread while
# the program runs, so a first run's conversion reads them kept
E2E_TESTS += tests/e2e/srcline-ahead.sh

# The agent never reaches debuginfod: curl and tests/progs/ssl_cleanup
# (OpenSSL torn down before exit) traced with fxt-run and a plain
# LD_PRELOAD: the agent's exit-time symbolizer must not load libdebuginfod
# (its libcurl restarts OpenSSL: a crash) nor touch the network.  The test
# skips what is missing (curl; ssl_cleanup without openssl).
E2E_TESTS += tests/e2e/agent-no-debuginfod.sh

# The libc wrappers, on uninstrumented programs: the io and sleep groups
# and the pipe/socket flows; the mem, thread and sync groups; the proc and
# log groups.  Stack sampling and the stack chart; the tools keep the
# samples apart from the calls; sampling through run-time patching's
# return trampolines.
E2E_TESTS += \
	tests/e2e/libc-io.sh \
	tests/e2e/libc-io-flows.sh \
	tests/e2e/libc-mem.sh \
	tests/e2e/libc-sync.sh \
	tests/e2e/libc-thread.sh \
	tests/e2e/libc-proc.sh \
	tests/e2e/libc-log.sh \
	tests/e2e/sample.sh \
	tests/e2e/sample-tools.sh \
	tests/e2e/sample-masks.sh \
	tests/e2e/sample-patch.sh

# The tools on archives: fxt-dump on the small valid and broken archives
# of tests/helpers/mkarchives; fxt-report and fxt-diff; fxt-flame and
# fxt-export; fxt-tree and fxt-replay; fxt-waits on the waits of
# tests/progs/waits; fxt-view (driven in tmux); the command line the tools
# share, and the fxt front command;
# the man pages, which after `make install DESTDIR=...` each render with
# their NAME and OPTIONS sections.
E2E_TESTS += \
	tests/e2e/dump-print.sh \
	tests/e2e/compressed.sh \
	tests/e2e/dump-check.sh \
	tests/e2e/time-order.sh \
	tests/e2e/reader-map.sh \
	tests/e2e/time-order-mark.sh \
	tests/e2e/ticks.sh \
	tests/e2e/dump-usage.sh \
	tests/e2e/report-basic.sh \
	tests/e2e/report-diff.sh \
	tests/e2e/diff-noise.sh \
	tests/e2e/report-errors.sh \
	tests/e2e/report-percentiles.sh \
	tests/e2e/flame-basic.sh \
	tests/e2e/flame-diff.sh \
	tests/e2e/flame-errors.sh \
	tests/e2e/calls-tree.sh \
	tests/e2e/calls-replay.sh \
	tests/e2e/calls-errors.sh \
	tests/e2e/view-tmux.sh \
	tests/e2e/view-list.sh \
	tests/e2e/view-late.sh \
	tests/e2e/view-packed.sh \
	tests/e2e/view-early.sh \
	tests/e2e/view-errors.sh \
	tests/e2e/view-reading.sh \
	tests/e2e/view-narrow.sh \
	tests/e2e/view-idle.sh \
	tests/e2e/view-help.sh \
	tests/e2e/export-chrome.sh \
	tests/e2e/waits.sh \
	tests/e2e/tools-cli.sh \
	tests/e2e/fxt-front.sh \
	tests/e2e/man-pages.sh

# The top-level README's commands, taken from README.md, run against the
# build tree, with what the README says about them.
# fxt-import and fxt-merge: trace.dat files kept in tests/data/tracecmd
# (v6, v7, v7 zstd) against their `trace-cmd report`, one recorded here
# when tracefs allows; ktrace files written by tests/helpers/mkktrace;
# merging a kernel trace with fxt-run's archive on one clock; fxt-run
# --kernel (as root, with tracefs) on tests/progs/kernel_states, the
# threads' states fxt-report --by thread and fxt waits give of it, and
# the kernel's lost events counted in the archive and said by the tools,
# a run longer than the kernel's buffer (read while it runs), each task's
# process from the events and /proc, not the kernel's saved_tgids.
E2E_TESTS += \
	tests/e2e/import-tracedat.sh \
	tests/e2e/import-ktrace.sh \
	tests/e2e/merge.sh \
	tests/e2e/kernel.sh \
	tests/e2e/kernel-states.sh \
	tests/e2e/kernel-lost.sh \
	tests/e2e/kernel-stream.sh \
	tests/e2e/kernel-tgids.sh \
	tests/e2e/kernel-forks.sh \
	tests/e2e/kernel-attach.sh
EXTRA_DIST += tests/data/tracecmd/README.md tests/data/tracecmd/record.sh \
	tests/data/tracecmd/v6.dat tests/data/tracecmd/v6.report.gz \
	tests/data/tracecmd/v7-plain.dat tests/data/tracecmd/v7-plain.report.gz \
	tests/data/tracecmd/v7-zstd.dat tests/data/tracecmd/v7-zstd.report.gz

# fxt-run --patch: exact calls of -O2 programs without hooks, C and C++
# (tests/progs/patchme, patchme_cxx), against uftrace -P. when installed.
E2E_TESTS += tests/e2e/patch.sh
E2E_TESTS += tests/e2e/args.sh
E2E_TESTS += tests/e2e/args-faults.sh
# --args/--retval on -finstrument-functions builds (tests/progs/args_hooked,
# -O0 and -O2): patched for the values, one slice a call.
E2E_TESTS += tests/e2e/args-hooked.sh
E2E_TESTS += tests/e2e/args-include.sh
# fxt-run --patch and programs that walk their own stack: backtraces
# (tests/progs/patchme_bt) print the plain run's frames; runtimes that walk
# it by return address (patchme_walk, libwalkrt; java when installed) are
# left alone.
E2E_TESTS += tests/e2e/patch-walkers.sh
# fxt-run --patch on stripped programs: their functions from a separate
# debug file (debuglink, .debug/, build ID under --debug-root), a CRC or
# build ID that does not match refused (tests/progs/stripme).
E2E_TESTS += tests/e2e/patch-debugfile.sh
# A program printing its own backtrace in a thread, traced with the default
# options, --libc=all or --patch=.: the plain run's frames, none of the
# agent's thread trampoline (tests/progs/patchme_bt thread).
E2E_TESTS += tests/e2e/backtrace-thread.sh

# The injector fxt-run -p builds on: a library loaded into a running
# process and a function of it called, the process none the wiser
# (tests/helpers/fxt_inject, tests/progs/attach_target).
E2E_TESTS += tests/e2e/attach-inject.sh
# The agent attached to a running process by calls: dormant when loaded,
# started with a settings block, stopped with its patches written back;
# the exact calls of the window in the archive.
E2E_TESTS += tests/e2e/attach-agent.sh
# fxt-run -p: a window of a running process, its exact calls, detached at
# --duration, SIGINT or its exit; the refusals.
E2E_TESTS += tests/e2e/attach-run.sh
# fxt-run -p: a process that exits while the agent starts leaves no spool.
E2E_TESTS += tests/e2e/attach-ended.sh
# fxt-run -p --libc: the wrappers bound into the GOTs of a running process
# (the exact calls of the window, with their arguments), every slot as it
# was after the detach; a process with its own malloc served by it
# (tests/progs/attach_malloc, tests/helpers/got_slots.py).
E2E_TESTS += tests/e2e/attach-libc.sh
# fxt-run -p again and again (a window each), children followed, exec said,
# signals during an attach.
E2E_TESTS += tests/e2e/attach-again.sh
# fxt-run -p --sample: every thread running at the attach sampled, nothing
# of ours left after the detach (timers, SIGPROF's action); threads started
# while attached counted; a program using SIGPROF refused.
E2E_TESTS += tests/e2e/attach-sample.sh
# A thread's signals delivered while the agent starts an attach.
E2E_TESTS += tests/e2e/attach-signals.sh

E2E_TESTS += tests/e2e/readme.sh
# The tree's layout: who may include whom (the agent's core and wings, the
# stages), and a reason in every source past 800 lines.
E2E_TESTS += tests/e2e/layout.sh

TESTS += $(E2E_TESTS)
EXTRA_DIST += $(E2E_TESTS) $(E2E_COMMON)
