# agent/libc/: the libc wrappers, a wing of the agent (agent/libc/libc.h):
# every exported wrapper (fd, stdio, net, sleep, mem, sync, thread, proc,
# log, exec) and the fd-kind cache, compiled into libfxt-agent.so
# (agent/local.mk).
AGENT_LIBC_SOURCES = \
	agent/libc/libc.c agent/libc/libc.h \
	agent/libc/io.h agent/libc/io_fds.c \
	agent/libc/wrap_fd.c agent/libc/wrap_stdio.c agent/libc/wrap_net.c \
	agent/libc/wrap_sleep.c \
	agent/libc/wrap_mem.c agent/libc/wrap_sync.c agent/libc/wrap_thread.c \
	agent/libc/wrap_proc.c agent/libc/wrap_log.c agent/libc/wrap_exec.c
