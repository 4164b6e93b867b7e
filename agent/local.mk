# agent/: libfxt-agent.so, preloaded into the traced program.  Built without
# sanitizers and with hidden visibility; only the hooks and the libc
# wrappers (dlopen/dlclose, the exec family) are exported.  It does not
# convert: at exit it seals its spool, and fxt-run converts it.  A process
# that must convert its own (no fxt-run) loads libfxt-convert.so
# (convert/local.mk), built with the same flags (AGENT_CFLAGS and
# AGENT_LDFLAGS, for every library a traced process loads: the
# planner's, agent/patch/local.mk, too), so that libdw and the libraries it
# loads never enter a traced process under fxt-run.  The agent itself
# uses neither libdw nor zlib, and libunwind's headers only (it loads
# libunwind with dlopen()).
AGENT_CFLAGS = $(WARN_CFLAGS) -fvisibility=hidden -fno-omit-frame-pointer \
	-ftls-model=initial-exec
# AGENT_RELR_LDFLAGS: relative relocations packed where the linker and the
# C library can (configure.ac), read by the loader in every exec'd image.
AGENT_LDFLAGS = -module -avoid-version -shared -Wl,--no-undefined -Wl,-z,nodelete \
	$(AGENT_RELR_LDFLAGS)

# The agent's own modules (without the hooks and the life cycle, which
# unit tests cannot link: they define the constructor and the wrappers).
AGENT_RECORD_SOURCES = \
	agent/agent.h \
	agent/ticks.c agent/ticks.h \
	agent/events.h agent/gates.h agent/real.h \
	agent/log.c agent/log.h \
	agent/mode.h \
	agent/cfg.c agent/cfg.h \
	agent/spool.c agent/spool.h agent/spool_make.c agent/spool_make.h \
	agent/tbuf.c agent/tbuf.h agent/sys.h \
	$(RUN_SOURCES) $(SPOOL_SOURCES)

# The core at the top of agent/, then the wings, each in its folder with
# its own fragment (agent/libc/, agent/patch/, agent/sample/, agent/keep/:
# Makefile.am includes them before this one).
pkglib_LTLIBRARIES += libfxt-agent.la
libfxt_agent_la_SOURCES = $(AGENT_RECORD_SOURCES) \
	agent/hooks.c \
	agent/lifecycle.c agent/seal.c agent/taskfield.c agent/feature.h agent/features.c \
	agent/modules.c agent/modules.h \
	agent/got.c agent/got.h \
	agent/sigact.c \
	agent/patterns.c agent/patterns.h \
	agent/calib.c agent/calib.h \
	agent/elfsyms.c agent/elfsyms.h \
	common/crc32.c common/crc32.h common/debugpath.c common/debugpath.h \
	$(AGENT_LIBC_SOURCES) $(AGENT_PATCH_SOURCES) $(AGENT_SAMPLE_SOURCES) \
	$(AGENT_KEEP_SOURCES)
# libunwind is loaded with dlopen() when sampling starts (agent/sample/sample.c):
# its headers, not its library.
# AGENT_DATA_CFLAGS: its big buffers after the small variables (configure.ac).
libfxt_agent_la_CFLAGS = $(AGENT_CFLAGS) $(AGENT_DATA_CFLAGS) $(LIBUNWIND_CFLAGS)
libfxt_agent_la_LDFLAGS = $(AGENT_LDFLAGS)
libfxt_agent_la_LIBADD = libfxt-patchrt.la -lpthread -ldl -lrt

# The no-op agent: the same hooks doing nothing, a baseline for bench/.
pkglib_LTLIBRARIES += libfxt-agent-nop.la
libfxt_agent_nop_la_SOURCES = agent/hooks_nop.c
libfxt_agent_nop_la_CFLAGS = $(AGENT_CFLAGS)
libfxt_agent_nop_la_LDFLAGS = $(AGENT_LDFLAGS)
