# agent/keep/: what is kept, a wing of the agent: the filters
# (agent/keep/filter.h) and the snapshots (agent/keep/snapshot.h),
# compiled into libfxt-agent.so (agent/local.mk).
AGENT_KEEP_SOURCES = \
	agent/keep/filter.c agent/keep/filter.h \
	agent/keep/snapshot.c agent/keep/snapshot.h
