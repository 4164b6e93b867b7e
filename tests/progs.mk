# tests/progs.mk: the programs the tests observe, tests/progs/: what they
# trace under fxt-run or a preloaded agent, and the fixtures the
# symbolizer's unit test loads and names.  (The programs the tests observe
# *with*, which write or read archives, are tests/helpers/, helpers.mk; the
# user-facing examples, which the tests trace too, stay in examples/.)
#
# The agent is preloaded into these programs, so none gets the sanitizers:
# each sets its own CFLAGS (which replace AM_CFLAGS) and links with
# EXAMPLE_LINK_FLAGS (-no-install: a real binary, not a libtool wrapper).
# Instrumented ones use EXAMPLE_C_FLAGS (examples/local.mk: -O1 -g
# -finstrument-functions) and call out-of-line functions
# (examples/example.h), so the call counts the tests expect hold at any -O
# level; "unmodified" ones (the libc wrappers' and sampling's tests) are
# built without -finstrument-functions, some the way Debian builds its
# packages (_FORTIFY_SOURCE=2, -O2), to reach the __*_chk entry points.
#
# To add one: put tests/progs/NAME.c here, add tests/progs/NAME to
# check_PROGRAMS with its CFLAGS and LDFLAGS as its neighbours have them,
# and run it from a test as "$PROGS/NAME" (tests/lib/test_subr.sh).

# ------------------------------------ instrumented, for the agent's tests
# stress_threads, deep_recursion, signals, fork_child, loop: the agent under
# stress, fork, drops, fxt-run's options; fork_in_handler forks inside a
# signal handler that interrupted a libc call or a hook; privdrop changes
# from root to nobody, then works; crash dies without flushing
# (_exit, SIGKILL, abort) for the recovery test; named_threads names its
# threads every way a program can, then dies or hangs, for the names of
# recovered archives; exec_list re-executes itself with execl, execlp or
# execle; numbered makes calls that say their own number, for the
# recording modes; proctitle retitles itself for ps over its argv, as
# servers do, then forks, for the process names; calls_fib recurses, for
# the call views (fxt-tree, fxt-replay); leader_exit records from a
# worker after main's pthread_exit(), for fxt-run's spare spool files;
# thread_end_signals ends threads while a signal handler runs instrumented
# code; busy_threads keeps a thread for every core busy until told to stop,
# for the early converter's priority; clone_kinds makes its children
# every way but fork() (_Fork, clone, raw clone system calls).
PROGS_TRACED = \
	tests/progs/stress_threads \
	tests/progs/deep_recursion \
	tests/progs/signals \
	tests/progs/fork_child \
	tests/progs/fork_in_handler \
	tests/progs/clone_kinds \
	tests/progs/privdrop \
	tests/progs/loop \
	tests/progs/busy_threads \
	tests/progs/crash \
	tests/progs/named_threads \
	tests/progs/exec_list \
	tests/progs/numbered \
	tests/progs/proctitle \
	tests/progs/calls_fib \
	tests/progs/leader_exit \
	tests/progs/thread_end_signals
check_PROGRAMS += $(PROGS_TRACED)

tests_progs_thread_end_signals_SOURCES = tests/progs/thread_end_signals.c
tests_progs_thread_end_signals_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_thread_end_signals_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_thread_end_signals_LDADD = -lpthread

tests_progs_leader_exit_SOURCES = tests/progs/leader_exit.c
tests_progs_leader_exit_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_leader_exit_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_leader_exit_LDADD = -lpthread

tests_progs_calls_fib_SOURCES = tests/progs/calls_fib.c
tests_progs_calls_fib_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_calls_fib_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_numbered_SOURCES = tests/progs/numbered.c
tests_progs_numbered_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_numbered_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_numbered_LDADD = -lpthread

tests_progs_stress_threads_SOURCES = tests/progs/stress_threads.c
tests_progs_stress_threads_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_stress_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_stress_threads_LDADD = -lpthread

tests_progs_deep_recursion_SOURCES = tests/progs/deep_recursion.c
tests_progs_deep_recursion_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_deep_recursion_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_deep_recursion_LDADD = -lpthread

tests_progs_signals_SOURCES = tests/progs/signals.c
tests_progs_signals_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_signals_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_signals_LDADD = -lpthread

tests_progs_fork_child_SOURCES = tests/progs/fork_child.c
tests_progs_fork_child_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_fork_child_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_fork_in_handler_SOURCES = tests/progs/fork_in_handler.c
tests_progs_fork_in_handler_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_fork_in_handler_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_clone_kinds_SOURCES = tests/progs/clone_kinds.c
tests_progs_clone_kinds_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_clone_kinds_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_privdrop_SOURCES = tests/progs/privdrop.c
tests_progs_privdrop_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_privdrop_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_privdrop_LDADD = -lpthread

tests_progs_busy_threads_SOURCES = tests/progs/busy_threads.c
tests_progs_busy_threads_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_busy_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_busy_threads_LDADD = -lpthread

tests_progs_loop_SOURCES = tests/progs/loop.c
tests_progs_loop_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_loop_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_proctitle_SOURCES = tests/progs/proctitle.c
tests_progs_proctitle_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_proctitle_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

tests_progs_named_threads_SOURCES = tests/progs/named_threads.c
tests_progs_named_threads_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_named_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_named_threads_LDADD = -lpthread

tests_progs_crash_SOURCES = tests/progs/crash.c
tests_progs_crash_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_crash_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_crash_LDADD = -lpthread

tests_progs_exec_list_SOURCES = tests/progs/exec_list.c
tests_progs_exec_list_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_exec_list_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

# ----------------------------------------------- wordfreq (tests/real/)
# A small real program: a multi-threaded word counter with a dlopened
# plug-in.  The plug-in is a shared module, never installed (-rpath only
# makes libtool build it shared).
check_PROGRAMS += tests/progs/wordfreq/wordfreq
tests_progs_wordfreq_wordfreq_SOURCES = tests/progs/wordfreq/main.c \
	tests/progs/wordfreq/table.c tests/progs/wordfreq/wf.h
tests_progs_wordfreq_wordfreq_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_wordfreq_wordfreq_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_wordfreq_wordfreq_LDADD = -lpthread -ldl

check_LTLIBRARIES += tests/progs/wordfreq/wfplug.la
tests_progs_wordfreq_wfplug_la_SOURCES = tests/progs/wordfreq/plugin.c tests/progs/wordfreq/wf.h
tests_progs_wordfreq_wfplug_la_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_wordfreq_wfplug_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

# ------------------------------------- OpenSSL torn down before exit
# For agent-no-debuginfod.sh; built when configure finds openssl.
if HAVE_OPENSSL
check_PROGRAMS += tests/progs/ssl_cleanup
tests_progs_ssl_cleanup_SOURCES = tests/progs/ssl_cleanup.c
tests_progs_ssl_cleanup_CFLAGS = $(WARN_CFLAGS) $(OPENSSL_CFLAGS) -O1 -g
tests_progs_ssl_cleanup_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_ssl_cleanup_LDADD = $(OPENSSL_LIBS)
endif
EXTRA_DIST += tests/progs/ssl_cleanup.c

# --------------------------------- unmodified, for the libc wrappers' tests
# The io and sleep groups (libc_io_prog), the proc and log groups (libc_proc,
# libc_log), the mem, thread and sync groups (libc_mem, libc_threads;
# dlsym_first: failed dlsym() look-ups before the first free()).
# libc_io_prog_fortify and libc_log_fortify are the same sources built as
# Debian builds its packages, so that they call the fortified entry points
# (__open_2, __read_chk, __printf_chk ...).
LIBC_IO_C_FLAGS = $(WARN_CFLAGS) -O1 -g -fno-omit-frame-pointer
check_PROGRAMS += tests/progs/libc_io_prog tests/progs/libc_io_prog_fortify
tests_progs_libc_io_prog_SOURCES = tests/progs/libc_io_prog.c
tests_progs_libc_io_prog_CFLAGS = $(LIBC_IO_C_FLAGS)
tests_progs_libc_io_prog_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_io_prog_LDADD = -lpthread
tests_progs_libc_io_prog_fortify_SOURCES = tests/progs/libc_io_prog.c
tests_progs_libc_io_prog_fortify_CPPFLAGS = $(AM_CPPFLAGS) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
tests_progs_libc_io_prog_fortify_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libc_io_prog_fortify_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_io_prog_fortify_LDADD = -lpthread

LIBC_PROC_C_FLAGS = $(WARN_CFLAGS) -O0 -g
check_PROGRAMS += tests/progs/libc_proc tests/progs/libc_log tests/progs/libc_log_fortify
tests_progs_libc_proc_SOURCES = tests/progs/libc_proc.c
tests_progs_libc_proc_CFLAGS = $(LIBC_PROC_C_FLAGS)
tests_progs_libc_proc_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_log_SOURCES = tests/progs/libc_log.c
tests_progs_libc_log_CFLAGS = $(LIBC_PROC_C_FLAGS)
tests_progs_libc_log_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_log_LDADD = -lpthread
tests_progs_libc_log_fortify_SOURCES = tests/progs/libc_log.c
tests_progs_libc_log_fortify_CPPFLAGS = $(AM_CPPFLAGS) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
tests_progs_libc_log_fortify_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libc_log_fortify_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_log_fortify_LDADD = -lpthread

LIBC_THREADS_C_FLAGS = $(WARN_CFLAGS) -O1 -g -fno-omit-frame-pointer
check_PROGRAMS += tests/progs/libc_mem tests/progs/libc_threads tests/progs/dlsym_first
tests_progs_dlsym_first_SOURCES = tests/progs/dlsym_first.c
tests_progs_dlsym_first_CFLAGS = $(LIBC_THREADS_C_FLAGS)
tests_progs_dlsym_first_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_dlsym_first_LDADD = -ldl
tests_progs_libc_mem_SOURCES = tests/progs/libc_mem.c
tests_progs_libc_mem_CFLAGS = $(LIBC_THREADS_C_FLAGS)
tests_progs_libc_mem_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_threads_SOURCES = tests/progs/libc_threads.c
tests_progs_libc_threads_CFLAGS = $(LIBC_THREADS_C_FLAGS)
tests_progs_libc_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_threads_LDADD = -lpthread

# fxt-waits' test: one known wait per mode (a mutex, a condition, a pipe
# between two processes, a join), between functions with hooks.
check_PROGRAMS += tests/progs/waits
tests_progs_waits_SOURCES = tests/progs/waits.c
tests_progs_waits_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_waits_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_waits_LDADD = -lpthread

# fxt-run --kernel's test: a thread that sleeps, one that spins, one that
# waits for a mutex main holds (tests/e2e/kernel.sh).
check_PROGRAMS += tests/progs/kernel_states
tests_progs_kernel_states_SOURCES = tests/progs/kernel_states.c
tests_progs_kernel_states_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_kernel_states_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_kernel_states_LDADD = -lpthread
# many_tasks: N threads one after the other, more tasks than perf's task
# buffer holds (tests/e2e/kernel-forks.sh).
check_PROGRAMS += tests/progs/many_tasks
tests_progs_many_tasks_SOURCES = tests/progs/many_tasks.c
tests_progs_many_tasks_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_many_tasks_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_many_tasks_LDADD = -lpthread
# kernel_naps: naps 1 ms N times, a steady flow of the kernel's events
# (tests/e2e/kernel-stream.sh).
check_PROGRAMS += tests/progs/kernel_naps
tests_progs_kernel_naps_SOURCES = tests/progs/kernel_naps.c
tests_progs_kernel_naps_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_kernel_naps_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

# ---------------------------------------------------- for stack sampling
# CPU-bound, -O2, without hooks (and the same with hooks, to check that
# samples and hooks coexist).  bench/ builds the same source as
# bench/sample_hotcold.
check_PROGRAMS += tests/progs/sample_hotcold tests/progs/sample_hotcold_hooks
tests_progs_sample_hotcold_SOURCES = tests/progs/sample_hotcold.c
tests_progs_sample_hotcold_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_sample_hotcold_LDFLAGS = -no-install
tests_progs_sample_hotcold_LDADD = -lpthread
tests_progs_sample_hotcold_hooks_SOURCES = tests/progs/sample_hotcold.c
tests_progs_sample_hotcold_hooks_CFLAGS = $(WARN_CFLAGS) -O2 -g -finstrument-functions
tests_progs_sample_hotcold_hooks_LDFLAGS = -no-install
tests_progs_sample_hotcold_hooks_LDADD = -lpthread
# sample_chain: main -> outer -> middle -> leaf spinning, for sampling
# under run-time patching (tests/e2e/sample-patch.sh).
check_PROGRAMS += tests/progs/sample_chain
tests_progs_sample_chain_SOURCES = tests/progs/sample_chain.c
tests_progs_sample_chain_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_sample_chain_LDFLAGS = -no-install
tests_progs_sample_chain_LDADD = -lpthread
# sample_masked: threads started with every signal blocked, a thread that
# mostly waits (tests/e2e/sample-masks.sh).
check_PROGRAMS += tests/progs/sample_masked
tests_progs_sample_masked_SOURCES = tests/progs/sample_masked.c
tests_progs_sample_masked_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_sample_masked_LDFLAGS = -no-install
tests_progs_sample_masked_LDADD = -lpthread

# --------------------------------------------------- run-time patching
# patchme (C) and patchme_cxx (C++ exceptions) are built the way a
# distribution builds a program, -O2 -g, without -finstrument-functions:
# fxt-run --patch makes their calls exact (tests/e2e/patch.sh).
# args_target: every kind of argument and return value, with known
# values, for fxt-run --args/--retval (tests/e2e/args.sh).
check_PROGRAMS += tests/progs/args_target
tests_progs_args_target_SOURCES = tests/progs/args_target.c
tests_progs_args_target_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_args_target_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
# args_faults: faults and SIGSEGV handlers of the program's own around
# strings read (tests/e2e/args-faults.sh).
check_PROGRAMS += tests/progs/args_faults
tests_progs_args_faults_SOURCES = tests/progs/args_faults.c
tests_progs_args_faults_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_args_faults_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_args_faults_LDADD = -lpthread
# args_hooked: known values in a build with -finstrument-functions, at
# -O0 and -O2, for --args/--retval without --patch (tests/e2e/args-hooked.sh).
check_PROGRAMS += tests/progs/args_hooked_O0 tests/progs/args_hooked_O2
tests_progs_args_hooked_O0_SOURCES = tests/progs/args_hooked.c
tests_progs_args_hooked_O0_CFLAGS = $(WARN_CFLAGS) -O0 -g -finstrument-functions
tests_progs_args_hooked_O0_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_args_hooked_O0_LDADD = -lpthread
tests_progs_args_hooked_O2_SOURCES = tests/progs/args_hooked.c
tests_progs_args_hooked_O2_CFLAGS = $(WARN_CFLAGS) -O2 -g -finstrument-functions
tests_progs_args_hooked_O2_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_args_hooked_O2_LDADD = -lpthread
check_PROGRAMS += tests/progs/args_cxx
tests_progs_args_cxx_SOURCES = tests/progs/args_cxx.cc
tests_progs_args_cxx_CXXFLAGS = $(WARN_CXXFLAGS) -O2 -g
tests_progs_args_cxx_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
check_PROGRAMS += tests/progs/patchme tests/progs/patchme_cxx
tests_progs_patchme_SOURCES = tests/progs/patchme.c tests/progs/wx_maps.h
tests_progs_patchme_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_LDADD = -lpthread
tests_progs_patchme_cxx_SOURCES = tests/progs/patchme_cxx.cc
tests_progs_patchme_cxx_CXXFLAGS = $(WARN_CXXFLAGS) -O2 -g
tests_progs_patchme_cxx_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_cxx_LDADD = -lpthread
# patchme built with a nop sled at each entry (-fpatchable-function-entry=5):
# the sled is used as it is.
check_PROGRAMS += tests/progs/patchme_pfe
tests_progs_patchme_pfe_SOURCES = tests/progs/patchme.c tests/progs/wx_maps.h
tests_progs_patchme_pfe_CFLAGS = $(WARN_CFLAGS) -O2 -g -fpatchable-function-entry=5
tests_progs_patchme_pfe_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_pfe_LDADD = -lpthread
# srcline: functions whose file:line srcline.sh checks against addr2line.
check_PROGRAMS += tests/progs/srcline
tests_progs_srcline_SOURCES = tests/progs/srcline.c tests/progs/srcline_other.c
tests_progs_srcline_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_srcline_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
# linetab: the line tables test_linetab reads, as DWARF 4 and DWARF 5
# (symbolizer/linetab.c decodes both); not run.
LINETAB_DIR = $(abs_top_builddir)/tests/progs/linetab
check_PROGRAMS += tests/progs/linetab/linetab_dw4 tests/progs/linetab/linetab_dw5
tests_progs_linetab_linetab_dw4_SOURCES = tests/progs/linetab/linetab.c \
	tests/progs/linetab/linetab.h
tests_progs_linetab_linetab_dw4_CFLAGS = $(WARN_CFLAGS) -O2 -g -gdwarf-4
tests_progs_linetab_linetab_dw4_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_linetab_linetab_dw5_SOURCES = $(tests_progs_linetab_linetab_dw4_SOURCES)
tests_progs_linetab_linetab_dw5_CFLAGS = $(WARN_CFLAGS) -O2 -g -gdwarf-5
tests_progs_linetab_linetab_dw5_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
# stripme: stripped by patch-debugfile.sh, which gives it back its
# functions through a separate debug file; one of them exported.
check_PROGRAMS += tests/progs/stripme
tests_progs_stripme_SOURCES = tests/progs/stripme.c
tests_progs_stripme_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_stripme_LDFLAGS = $(EXAMPLE_LINK_FLAGS) \
	-Wl,--build-id -Wl,--export-dynamic-symbol=stripme_exported
# examples/cxx_demo linked with -static-libgcc: its own copy of the
# unwinder resumes what libstdc++ throws (agent-cxx.sh).
check_PROGRAMS += tests/progs/cxx_static_libgcc
tests_progs_cxx_static_libgcc_SOURCES = examples/cxx_demo.cc
tests_progs_cxx_static_libgcc_CXXFLAGS = $(EXAMPLE_CXX_FLAGS)
tests_progs_cxx_static_libgcc_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -static-libgcc
# patchme_cxx with the unwinder linked in (-static-libgcc), and with C++'s
# library too (-static-libstdc++: left alone).
check_PROGRAMS += tests/progs/patchme_cxx_slg tests/progs/patchme_cxx_static
tests_progs_patchme_cxx_slg_SOURCES = tests/progs/patchme_cxx.cc
tests_progs_patchme_cxx_slg_CXXFLAGS = $(WARN_CXXFLAGS) -O2 -g
tests_progs_patchme_cxx_slg_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -static-libgcc
tests_progs_patchme_cxx_slg_LDADD = -lpthread
tests_progs_patchme_cxx_static_SOURCES = tests/progs/patchme_cxx.cc
tests_progs_patchme_cxx_static_CXXFLAGS = $(WARN_CXXFLAGS) -O2 -g
tests_progs_patchme_cxx_static_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -static-libgcc -static-libstdc++
tests_progs_patchme_cxx_static_LDADD = -lpthread
# patchme_bt prints its own backtraces (backtrace(), _Unwind_Backtrace());
# patchme_bt_unw, linked with libunwind, unw_backtrace() too: the frames of
# the plain run, in a thread too (tests/e2e/patch-walkers.sh, backtrace-thread.sh).
check_PROGRAMS += tests/progs/patchme_bt tests/progs/patchme_bt_unw
tests_progs_patchme_bt_SOURCES = tests/progs/patchme_bt.c
tests_progs_patchme_bt_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_bt_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -rdynamic
tests_progs_patchme_bt_LDADD = -lpthread
tests_progs_patchme_bt_unw_SOURCES = tests/progs/patchme_bt.c
tests_progs_patchme_bt_unw_CFLAGS = $(WARN_CFLAGS) -O2 -g -DPATCHME_BT_UNW $(LIBUNWIND_CFLAGS)
tests_progs_patchme_bt_unw_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -rdynamic
tests_progs_patchme_bt_unw_LDADD = $(LIBUNWIND_LIBS) -lpthread
# patchme_walk walks its own stack by return address, and calls libwalkrt,
# which does too (standing for HotSpot's libjvm): left alone.  Frame
# pointers, which both walk.
check_LTLIBRARIES += tests/progs/libwalkrt.la
tests_progs_libwalkrt_la_SOURCES = tests/progs/walkrt.c tests/progs/walkrt.h
tests_progs_libwalkrt_la_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
tests_progs_libwalkrt_la_LDFLAGS = -avoid-version -shared -rpath /nowhere
check_PROGRAMS += tests/progs/patchme_walk
tests_progs_patchme_walk_SOURCES = tests/progs/patchme_walk.c
tests_progs_patchme_walk_CFLAGS = $(WARN_CFLAGS) -O2 -g -fno-omit-frame-pointer
tests_progs_patchme_walk_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_walk_LDADD = tests/progs/libwalkrt.la
# patchme_gosym has a function named as the Go runtime's, since Go 1.17, of
# a cgo program (runtime.morestack.abi0): left alone, as such a program is.
check_PROGRAMS += tests/progs/patchme_gosym
tests_progs_patchme_gosym_SOURCES = tests/progs/patchme_gosym.c
tests_progs_patchme_gosym_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_gosym_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
# patchme_lib and its library libpatchlib: --patch-module.
check_LTLIBRARIES += tests/progs/libpatchlib.la
tests_progs_libpatchlib_la_SOURCES = tests/progs/patchlib.c tests/progs/patchlib.h
tests_progs_libpatchlib_la_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libpatchlib_la_LDFLAGS = -avoid-version -shared -rpath /nowhere
check_PROGRAMS += tests/progs/patchme_lib
tests_progs_patchme_lib_SOURCES = tests/progs/patchme_lib.c
tests_progs_patchme_lib_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_lib_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_lib_LDADD = tests/progs/libpatchlib.la
# patchme_librel: the same program, its library found by a relative rpath
# ("."): the loader's name for it is ./libpatchlib.so.
check_PROGRAMS += tests/progs/patchme_librel
tests_progs_patchme_librel_SOURCES = tests/progs/patchme_lib.c
tests_progs_patchme_librel_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_librel_LDFLAGS = $(EXAMPLE_LINK_FLAGS) -Wl,-rpath,.
tests_progs_patchme_librel_LDADD = -L$(top_builddir)/tests/progs/.libs -lpatchlib
tests_progs_patchme_librel_DEPENDENCIES = tests/progs/libpatchlib.la
# libkillafter: preloaded into fxt-run or a traced process, kills it right
# after it put an archive in place, before it removed the spool
# (launcher-recover.sh).
check_LTLIBRARIES += tests/progs/libkillafter.la
tests_progs_libkillafter_la_SOURCES = tests/progs/killafter.c
tests_progs_libkillafter_la_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libkillafter_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_progs_libkillafter_la_LIBADD = -ldl
# patchme_dl and the plug-in it loads, libpatchdl: dlopen() with threads
# running.
check_LTLIBRARIES += tests/progs/libpatchdl.la
tests_progs_libpatchdl_la_SOURCES = tests/progs/patchdl.c
tests_progs_libpatchdl_la_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libpatchdl_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_progs_libpatchdl_la_LIBADD = -lpthread
check_PROGRAMS += tests/progs/patchme_dl
tests_progs_patchme_dl_SOURCES = tests/progs/patchme_dl.c tests/progs/wx_maps.h
tests_progs_patchme_dl_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_patchme_dl_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_patchme_dl_LDADD = -lpthread -ldl

# ------------------------------------ the symbolizer's fixtures (symfix/)
# Built without sanitizers: test_symbolizer loads the libraries with dlopen
# and runs the non-PIE program as a child.  The libraries are shared
# (-rpath) but never installed.
SYMFIX_DIR = $(abs_top_builddir)/tests/progs/symfix
check_LTLIBRARIES += tests/progs/symfix/libsymcxx.la tests/progs/symfix/libsymplug.la
tests_progs_symfix_libsymcxx_la_SOURCES = tests/progs/symfix/cxx.cc tests/progs/symfix/symfix.h
tests_progs_symfix_libsymcxx_la_CXXFLAGS = $(WARN_CXXFLAGS)
tests_progs_symfix_libsymcxx_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR)
tests_progs_symfix_libsymplug_la_SOURCES = tests/progs/symfix/plug.c tests/progs/symfix/symfix.h
tests_progs_symfix_libsymplug_la_CFLAGS = $(WARN_CFLAGS)
tests_progs_symfix_libsymplug_la_LDFLAGS = -module -avoid-version -shared -rpath $(SYMFIX_DIR) \
	-Wl,--version-script=$(srcdir)/tests/progs/symfix/plug.map
EXTRA_tests_progs_symfix_libsymplug_la_DEPENDENCIES = tests/progs/symfix/plug.map
EXTRA_DIST += tests/progs/symfix/plug.map

check_PROGRAMS += tests/progs/symfix/nopie
tests_progs_symfix_nopie_SOURCES = tests/progs/symfix/nopie.c
tests_progs_symfix_nopie_CFLAGS = $(WARN_CFLAGS) -fno-pie
tests_progs_symfix_nopie_LDFLAGS = -XCClinker -no-pie

# Copies of the C++ fixture: one stripped of everything but .dynsym, and
# stripped ones with a .gnu_debuglink: to a file next to it, to one in the
# .debug/ subdirectory, and to one whose CRC32 no longer matches (appended
# to after the link was made: it must be refused).
SYMFIX_COPIES = \
	tests/progs/symfix/libsymcxx-stripped.so \
	tests/progs/symfix/libsymcxx-dbglink.so \
	tests/progs/symfix/libsymcxx-dbglink.debug \
	tests/progs/symfix/libsymcxx-dbgsub.so \
	tests/progs/symfix/.debug/libsymcxx-dbgsub.debug \
	tests/progs/symfix/libsymcxx-badcrc.so
CLEANFILES += tests/progs/symfix/libsymcxx-badcrc.debug
CLEANFILES += $(SYMFIX_COPIES)
SYMFIX_OBJCOPY = objcopy
tests/progs/symfix/libsymcxx-stripped.so: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --strip-all tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbglink.debug: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(SYMFIX_OBJCOPY) --only-keep-debug tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbglink.so: tests/progs/symfix/libsymcxx-dbglink.debug
	$(AM_V_GEN)cd tests/progs/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=libsymcxx-dbglink.debug .libs/libsymcxx.so libsymcxx-dbglink.so
tests/progs/symfix/.debug/libsymcxx-dbgsub.debug: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)$(MKDIR_P) tests/progs/symfix/.debug && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug tests/progs/symfix/.libs/libsymcxx.so $@
tests/progs/symfix/libsymcxx-dbgsub.so: tests/progs/symfix/.debug/libsymcxx-dbgsub.debug
	$(AM_V_GEN)cd tests/progs/symfix && $(SYMFIX_OBJCOPY) --strip-all \
	  --add-gnu-debuglink=.debug/libsymcxx-dbgsub.debug .libs/libsymcxx.so libsymcxx-dbgsub.so
tests/progs/symfix/libsymcxx-badcrc.so: tests/progs/symfix/libsymcxx.la
	$(AM_V_GEN)cd tests/progs/symfix && \
	  $(SYMFIX_OBJCOPY) --only-keep-debug .libs/libsymcxx.so libsymcxx-badcrc.debug && \
	  $(SYMFIX_OBJCOPY) --strip-all --add-gnu-debuglink=libsymcxx-badcrc.debug \
	    .libs/libsymcxx.so libsymcxx-badcrc.so && \
	  printf x >> libsymcxx-badcrc.debug
# ------------------------------------ the signature test's fixtures (sigfix/)
# Loaded into a symbolizer by tests/unit/test_signature, never run: sigc.c
# unoptimized and optimized (sigc_O0.c, sigc_O2.c say so with a pragma,
# since CFLAGS come last), and a C++ program.
SIGFIX_DIR = $(abs_top_builddir)/tests/progs/sigfix
check_PROGRAMS += tests/progs/sigfix/sigc_O0 tests/progs/sigfix/sigc_O2 tests/progs/sigfix/sigcxx
tests_progs_sigfix_sigc_O0_SOURCES = tests/progs/sigfix/sigc_O0.c
tests_progs_sigfix_sigc_O0_CFLAGS = $(WARN_CFLAGS) -O0 -g
tests_progs_sigfix_sigc_O0_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_sigfix_sigc_O2_SOURCES = tests/progs/sigfix/sigc_O2.c
tests_progs_sigfix_sigc_O2_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_sigfix_sigc_O2_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_sigfix_sigcxx_SOURCES = tests/progs/sigfix/sigcxx.cc
tests_progs_sigfix_sigcxx_CXXFLAGS = $(WARN_CXXFLAGS) -O0 -g
tests_progs_sigfix_sigcxx_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
EXTRA_DIST += tests/progs/sigfix/sigc.c

# attach_target and the library loaded into it, libinject_probe: a process
# being attached to, blocked in read(2), spinning, taking SIGALRM, with
# threads busy in malloc, and its own SIGSEGV/SIGTRAP handlers
# (attach-inject.sh).
check_PROGRAMS += tests/progs/attach_target
tests_progs_attach_target_SOURCES = tests/progs/attach_target.c
tests_progs_attach_target_CFLAGS = $(WARN_CFLAGS) -O2 -g
# No sanitizer runtime, as the other traced programs: the agent is preloaded
# into it, and patching leaves alone a program whose runtime walks stacks.
tests_progs_attach_target_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_attach_target_LDADD = -lpthread -ldl
check_LTLIBRARIES += tests/progs/libinject_probe.la
tests_progs_libinject_probe_la_SOURCES = tests/progs/inject_probe.c
tests_progs_libinject_probe_la_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_libinject_probe_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
# attach_malloc: a process with its own allocator, attached to with
# --libc=mem (attach-libc.sh).
check_PROGRAMS += tests/progs/attach_malloc
tests_progs_attach_malloc_SOURCES = tests/progs/attach_malloc.c
tests_progs_attach_malloc_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_attach_malloc_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
# attach_static: the same program linked statically: refused (no dlopen).
check_PROGRAMS += tests/progs/attach_static
tests_progs_attach_static_SOURCES = tests/progs/attach_target.c
tests_progs_attach_static_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_attach_static_LDFLAGS = -all-static
tests_progs_attach_static_LDADD = -lpthread
