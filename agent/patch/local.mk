# agent/patch/: run-time patching, a wing of the agent (agent/patch/patch.h):
# the patcher, patching while threads run (live.c), the trampolines
# (tramp.S) and the strings' copy (probe.S, probe.c), compiled into libfxt-agent.so (agent/local.mk).
AGENT_PATCH_SOURCES = \
	agent/patch/patch.c agent/patch/patch.h \
	agent/patch/args.c \
	agent/patch/live.c \
	agent/patch/probe.c \
	agent/patch/tramp.S agent/patch/tramp.h agent/patch/probe.S

# Run-time patching's handlers, which run where every register is the
# program's: general registers only (agent/patch/rt.c).
noinst_LTLIBRARIES += libfxt-patchrt.la
libfxt_patchrt_la_SOURCES = agent/patch/rt.c agent/patch/rt.h agent/patch/rtargs.c
libfxt_patchrt_la_CFLAGS = $(AGENT_CFLAGS) $(PATCHRT_CFLAGS)

# The planner (agent/patch/plan.h), with Capstone: libfxt-patch.so, which
# the agent loads only when FXT_PATCH asks for run-time patching
# (agent/patch/patch.c); built as the agent is (AGENT_CFLAGS,
# agent/local.mk).  Without Capstone, fxt-run --patch says it is not in
# this build.
if HAVE_CAPSTONE
pkglib_LTLIBRARIES += libfxt-patch.la
libfxt_patch_la_SOURCES = agent/patch/plan.c agent/patch/plan.h
libfxt_patch_la_CFLAGS = $(AGENT_CFLAGS) $(CAPSTONE_CFLAGS)
libfxt_patch_la_LDFLAGS = $(AGENT_LDFLAGS) -export-symbols-regex '^fxt_patch_plan$$'
libfxt_patch_la_LIBADD = $(CAPSTONE_LIBS) -lpthread
endif
EXTRA_DIST += agent/patch/plan.c agent/patch/plan.h
