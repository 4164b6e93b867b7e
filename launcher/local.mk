# launcher/: fxt-run, which runs a program under the agent.
bin_PROGRAMS += fxt-run
fxt_run_SOURCES = launcher/fxt-run.c
fxt_run_CPPFLAGS = $(AM_CPPFLAGS) -DFXT_PKGLIBDIR='"$(pkglibdir)"'
fxt_run_LDADD = libfxtcodec.la

# End-to-end tests of the agent through fxt-run (TAP shell scripts).  The
# traced programs they run are in examples/local.mk; fxt_calltree reads an
# archive back with the reader library and prints what they assert on.
check_PROGRAMS += tests/e2e/fxt_calltree tests/e2e/calltree_fixture
tests_e2e_fxt_calltree_SOURCES = tests/e2e/fxt_calltree.c
tests_e2e_fxt_calltree_LDADD = libfxtcodec.la
# An archive of known shape, to test fxt_calltree itself.
tests_e2e_calltree_fixture_SOURCES = tests/e2e/calltree_fixture.c
tests_e2e_calltree_fixture_LDADD = libfxtcodec.la

AGENT_E2E_TESTS = \
	tests/e2e/agent-calltree-helper.sh \
	tests/e2e/agent-launcher.sh \
	tests/e2e/agent-calltree.sh \
	tests/e2e/agent-cxx.sh \
	tests/e2e/agent-threads.sh \
	tests/e2e/agent-plugin.sh \
	tests/e2e/agent-exit.sh \
	tests/e2e/agent-stress.sh
TESTS += $(AGENT_E2E_TESTS)
EXTRA_DIST += $(AGENT_E2E_TESTS) tests/e2e/agent-common.sh
