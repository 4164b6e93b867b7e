# Tests of the io and sleep groups of the libc wrappers (agent/wrap_fd.c,
# agent/wrap_stdio.c, agent/wrap_net.c, agent/io_fds.c, agent/wrap_sleep.c)
# and of the pipe/socket flows (spool/session.c).  The
# traced program stands for an unmodified one: built without
# -finstrument-functions (and without the sanitizers: it runs with the
# agent preloaded); libc_io_prog_fortify is built as Debian builds its
# packages, so that it calls the fortified entry points (__open_2,
# __read_chk ...).  The archives are read back with tests/helpers/libc_slices
# (tests/libc-threads.mk).
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

# The session file's tables, mapped by two processes.
check_PROGRAMS += tests/unit/test_agent_session
TESTS += tests/unit/test_agent_session
tests_unit_test_agent_session_SOURCES = tests/unit/test_agent_session.c \
	spool/session.c spool/session.h spool/names.c spool/names.h

LIBC_IO_TESTS = \
	tests/e2e/libc-io.sh \
	tests/e2e/libc-io-flows.sh
TESTS += $(LIBC_IO_TESTS)
EXTRA_DIST += $(LIBC_IO_TESTS)
