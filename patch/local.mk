# patch/: the planner of run-time patching (patch/plan.h), with Capstone:
# libfxt-patch.so, which the agent loads only when FXT_PATCH asks for
# run-time patching (agent/patch.c); built as the agent is (AGENT_CFLAGS,
# agent/local.mk).  Without Capstone, fxt-run --patch says it is not in
# this build.
if HAVE_CAPSTONE
pkglib_LTLIBRARIES += libfxt-patch.la
libfxt_patch_la_SOURCES = patch/plan.c patch/plan.h
libfxt_patch_la_CFLAGS = $(AGENT_CFLAGS) $(CAPSTONE_CFLAGS)
libfxt_patch_la_LDFLAGS = $(AGENT_LDFLAGS) -export-symbols-regex '^fxt_patch_plan$$'
libfxt_patch_la_LIBADD = $(CAPSTONE_LIBS) -lpthread
endif
EXTRA_DIST += patch/plan.c patch/plan.h
