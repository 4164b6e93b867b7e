# Stack sampling (agent/sample.c) and the stack chart (convert/stackchart.c).

# The stack chart against a real recon with a recording sink.
check_PROGRAMS += tests/unit/test_stackchart
TESTS += tests/unit/test_stackchart
tests_unit_test_stackchart_SOURCES = tests/unit/test_stackchart.c \
	tests/unit/agent_test_nest.h convert/stackchart.c convert/stackchart.h \
	convert/recon.c convert/recon.h
tests_unit_test_stackchart_CFLAGS = $(AM_CFLAGS)

# The end-to-end test's programs: CPU-bound, -O2, without hooks (and the
# same with hooks, to check that samples and hooks coexist).  Built like
# the examples: no sanitizers, since the agent is preloaded.
check_PROGRAMS += tests/progs/sample_hotcold tests/progs/sample_hotcold_hooks
tests_progs_sample_hotcold_SOURCES = tests/progs/sample_hotcold.c
tests_progs_sample_hotcold_CFLAGS = $(WARN_CFLAGS) -O2 -g
tests_progs_sample_hotcold_LDFLAGS = -no-install
tests_progs_sample_hotcold_LDADD = -lpthread
tests_progs_sample_hotcold_hooks_SOURCES = tests/progs/sample_hotcold.c
tests_progs_sample_hotcold_hooks_CFLAGS = $(WARN_CFLAGS) -O2 -g -finstrument-functions
tests_progs_sample_hotcold_hooks_LDFLAGS = -no-install
tests_progs_sample_hotcold_hooks_LDADD = -lpthread

SAMPLE_E2E_TESTS = tests/e2e/sample.sh
TESTS += $(SAMPLE_E2E_TESTS)
EXTRA_DIST += $(SAMPLE_E2E_TESTS)
