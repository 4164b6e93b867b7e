# examples/: small real programs, built with -finstrument-functions.
#
# They run with the agent preloaded, so they are built without the
# sanitizers (their own CFLAGS and LDFLAGS replace AM_CFLAGS/AM_LDFLAGS).
# Every function they call on purpose is out of line (examples/example.h),
# so the call counts the tests expect hold at any -O level.  The traced test
# programs (tests/progs.mk) are built with the same flags.
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
