# tests/real/: a small real program, wordfreq (a multi-threaded word
# counter with a dlopened plug-in), built with -finstrument-functions like
# examples/ (so without the sanitizers), and traced end to end by
# tests/real/real-*.sh as a user would: output, exit status, archive content,
# every tool, and what Perfetto needs (tests/helpers/perfetto_rules.py).
check_PROGRAMS += tests/progs/wordfreq/wordfreq
tests_progs_wordfreq_wordfreq_SOURCES = tests/progs/wordfreq/main.c tests/progs/wordfreq/table.c tests/progs/wordfreq/wf.h
tests_progs_wordfreq_wordfreq_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_wordfreq_wordfreq_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_wordfreq_wordfreq_LDADD = -lpthread -ldl

# The plug-in: a shared module, never installed (-rpath only makes libtool
# build it shared).
check_LTLIBRARIES += tests/progs/wordfreq/wfplug.la
tests_progs_wordfreq_wfplug_la_SOURCES = tests/progs/wordfreq/plugin.c tests/progs/wordfreq/wf.h
tests_progs_wordfreq_wfplug_la_CFLAGS = $(EXAMPLE_C_FLAGS)
tests_progs_wordfreq_wfplug_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

REAL_E2E_TESTS = \
	tests/real/real-wordfreq.sh \
	tests/real/real-procs.sh
TESTS += $(REAL_E2E_TESTS)
EXTRA_DIST += $(REAL_E2E_TESTS) tests/helpers/perfetto_rules.py
