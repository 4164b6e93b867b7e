# examples/: small real programs, built with -finstrument-functions.
#
# They run with the agent preloaded, so they are built without the
# sanitizers (their own CFLAGS and LDFLAGS replace AM_CFLAGS/AM_LDFLAGS).
# Every function they call on purpose is out of line (examples/example.h),
# so the call counts the tests expect hold at any -O level.
EXAMPLE_C_FLAGS = $(WARN_CFLAGS) -O1 -g -fno-omit-frame-pointer -finstrument-functions
# Only the example's own code: the inline functions of the C++ library
# would add calls that change with the compiler's version.
EXAMPLE_CXX_FLAGS = $(WARN_CXXFLAGS) -O1 -g -fno-omit-frame-pointer -finstrument-functions \
	-finstrument-functions-exclude-file-list=/usr/include
EXAMPLE_LINK_FLAGS = -no-install

noinst_PROGRAMS += \
	examples/calltree \
	examples/cxx_demo \
	examples/threads \
	examples/plugin \
	examples/deep_exit \
	examples/hotspot
noinst_HEADERS += examples/example.h
EXTRA_DIST += examples/README.md

examples_calltree_SOURCES = examples/calltree.c
examples_calltree_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_calltree_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

examples_cxx_demo_SOURCES = examples/cxx_demo.cc
examples_cxx_demo_CXXFLAGS = $(EXAMPLE_CXX_FLAGS)
examples_cxx_demo_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

examples_threads_SOURCES = examples/threads.c
examples_threads_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
examples_threads_LDADD = -lpthread

examples_hotspot_SOURCES = examples/hotspot.c
examples_hotspot_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_hotspot_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

examples_deep_exit_SOURCES = examples/deep_exit.c
examples_deep_exit_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_deep_exit_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

# The plugin: a shared module (not installed), dlopened by examples/plugin
# from where libtool leaves it.
noinst_LTLIBRARIES += examples/plugin_lib.la
examples_plugin_lib_la_SOURCES = examples/plugin_lib.c
examples_plugin_lib_la_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_plugin_lib_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

examples_plugin_SOURCES = examples/plugin.c
examples_plugin_CFLAGS = $(EXAMPLE_C_FLAGS)
examples_plugin_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPLUGIN_PATH='"$(abs_top_builddir)/examples/.libs/plugin_lib.so"'
examples_plugin_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
examples_plugin_LDADD = -ldl
EXTRA_examples_plugin_DEPENDENCIES = examples/plugin_lib.la

# Traced helper programs of the end-to-end tests (tests/e2e/), built the
# same way.
E2E_TRACED = \
	tests/progs/stress_threads \
	tests/progs/deep_recursion \
	tests/progs/signals \
	tests/progs/fork_child \
	tests/progs/loop
check_PROGRAMS += $(E2E_TRACED)

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

tests_progs_loop_SOURCES = tests/progs/loop.c
tests_progs_loop_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_loop_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
