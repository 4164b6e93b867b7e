# Tests of the mem, thread and sync groups of the libc wrappers
# (agent/wrap_mem.c, agent/wrap_thread.c, agent/wrap_sync.c).  The traced
# programs stand for unmodified ones: built without -finstrument-functions
# (and without the sanitizers: they run with the agent preloaded).
# libc_slices reads the archives back with the reader library and prints
# what the scripts assert on (slices with their arguments, counters, and
# which slices each flow joins).
LIBC_THREADS_C_FLAGS = $(WARN_CFLAGS) -O1 -g -fno-omit-frame-pointer
check_PROGRAMS += tests/progs/libc_mem tests/progs/libc_threads tests/helpers/libc_slices
tests_progs_libc_mem_SOURCES = tests/progs/libc_mem.c
tests_progs_libc_mem_CFLAGS = $(LIBC_THREADS_C_FLAGS)
tests_progs_libc_mem_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_threads_SOURCES = tests/progs/libc_threads.c
tests_progs_libc_threads_CFLAGS = $(LIBC_THREADS_C_FLAGS)
tests_progs_libc_threads_LDFLAGS = $(EXAMPLE_LINK_FLAGS)
tests_progs_libc_threads_LDADD = -lpthread
tests_helpers_libc_slices_SOURCES = tests/helpers/libc_slices.c
tests_helpers_libc_slices_LDADD = libfxtcodec.la

LIBC_THREADS_TESTS = \
	tests/e2e/libc-mem.sh \
	tests/e2e/libc-sync.sh \
	tests/e2e/libc-thread.sh
TESTS += $(LIBC_THREADS_TESTS)
EXTRA_DIST += $(LIBC_THREADS_TESTS) tests/e2e/libc-threads-common.sh
