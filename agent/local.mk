# agent/: libfxt-agent.so, preloaded into the traced program.  Built without
# sanitizers and with hidden visibility; only the hooks (and later the libc
# wrappers) are exported.  It compiles the codec and symbolizer sources
# itself so that they carry its flags.
AGENT_CFLAGS = $(WARN_CFLAGS) -fvisibility=hidden -fno-omit-frame-pointer \
	-ftls-model=initial-exec $(LIBDW_CFLAGS) $(ZLIB_CFLAGS)
AGENT_LDFLAGS = -module -avoid-version -shared -Wl,--no-undefined -Wl,-z,nodelete

pkglib_LTLIBRARIES += libfxt-agent.la
libfxt_agent_la_SOURCES = agent/hooks.c
libfxt_agent_la_CFLAGS = $(AGENT_CFLAGS)
libfxt_agent_la_LDFLAGS = $(AGENT_LDFLAGS)
libfxt_agent_la_LIBADD = $(LIBDW_LIBS) $(ZLIB_LIBS) -lpthread -ldl

# The no-op agent: the same hooks doing nothing, a baseline for bench/.
pkglib_LTLIBRARIES += libfxt-agent-nop.la
libfxt_agent_nop_la_SOURCES = agent/hooks.c
libfxt_agent_nop_la_CFLAGS = $(AGENT_CFLAGS)
libfxt_agent_nop_la_LDFLAGS = $(AGENT_LDFLAGS)
