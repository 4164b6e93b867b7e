# launcher/: fxt-run, which runs a program under the agent.
bin_PROGRAMS += fxt-run
# It converts every spool of the run with the converter (convert/).
fxt_run_SOURCES = launcher/fxt-run.c launcher/launcher.h \
	launcher/options.c launcher/setup.c launcher/supervise.c \
	launcher/spools.c launcher/status.c launcher/parts.c \
	launcher/summary.c launcher/recover.c \
	launcher/merge.c launcher/merge.h
fxt_run_CPPFLAGS = $(AM_CPPFLAGS) -DFXT_PKGLIBDIR='"$(pkglibdir)"'
fxt_run_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
fxt_run_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la $(LIBDW_LIBS) $(ZLIB_LIBS)

# End-to-end tests of the agent through fxt-run (TAP shell scripts).  The
# traced programs they run are in examples/local.mk; fxt_calltree reads an
# archive back with the reader library and prints what they assert on.
check_PROGRAMS += tests/helpers/fxt_calltree tests/helpers/calltree_fixture
tests_helpers_fxt_calltree_SOURCES = tests/helpers/fxt_calltree.c
tests_helpers_fxt_calltree_LDADD = libfxtcodec.la
# An archive of known shape, to test fxt_calltree itself.
tests_helpers_calltree_fixture_SOURCES = tests/helpers/calltree_fixture.c
tests_helpers_calltree_fixture_LDADD = libfxtcodec.la

# A traced program that dies without flushing (_exit, SIGKILL, abort),
# built like the examples (examples/local.mk), for the recovery test.
check_PROGRAMS += tests/progs/crash
tests_progs_crash_SOURCES = tests/progs/crash.c
tests_progs_crash_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_crash_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_crash_LDADD = -lpthread

# A traced program that re-executes itself with execl, execlp or execle.
check_PROGRAMS += tests/progs/exec_list
tests_progs_exec_list_SOURCES = tests/progs/exec_list.c
tests_progs_exec_list_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_exec_list_LDFLAGS = $(EXAMPLE_LINK_FLAGS)

AGENT_E2E_TESTS = \
	tests/e2e/agent-calltree-helper.sh \
	tests/e2e/agent-launcher.sh \
	tests/e2e/agent-calltree.sh \
	tests/e2e/agent-cxx.sh \
	tests/e2e/agent-threads.sh \
	tests/e2e/agent-plugin.sh \
	tests/e2e/agent-exit.sh \
	tests/e2e/agent-stress.sh \
	tests/e2e/agent-recover.sh \
	tests/e2e/agent-hotspot.sh \
	tests/e2e/agent-exec.sh \
	tests/e2e/launcher-options.sh \
	tests/e2e/launcher-merge.sh \
	tests/e2e/launcher-recover.sh
TESTS += $(AGENT_E2E_TESTS)
EXTRA_DIST += $(AGENT_E2E_TESTS) tests/e2e/agent-common.sh
