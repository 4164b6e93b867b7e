# Tests of the proc and log groups of the libc wrappers (agent/wrap_proc.c,
# agent/wrap_log.c, the exec wrappers of agent/lifecycle.c).  The traced
# programs stand for unmodified ones: built without -finstrument-functions
# (and without the sanitizers, as they run with the agent preloaded);
# libc_log_fortify is built the way Debian builds its packages, so that it
# calls the __*_chk entry points.
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

LIBC_PROC_TESTS = \
	tests/e2e/libc-proc.sh \
	tests/e2e/libc-log.sh
TESTS += $(LIBC_PROC_TESTS)
EXTRA_DIST += $(LIBC_PROC_TESTS) tests/e2e/libc-proc-common.sh
