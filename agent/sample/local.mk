# agent/sample/: stack sampling, a wing of the agent (agent/sample/sample.h):
# the per-thread CPU timers, the SIGPROF handler, the walk with libunwind
# (loaded with dlopen()), compiled into libfxt-agent.so (agent/local.mk).
AGENT_SAMPLE_SOURCES = \
	agent/sample/live.c agent/sample/live.h \
	agent/sample/sample.c agent/sample/sample.h \
	agent/sample/walk.c agent/sample/walk.h
