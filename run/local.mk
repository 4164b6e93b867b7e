# run/: the run's contract between fxt-run and the agent.  settings.def is
# the one settings table (options, FXT_* variables), settings.[ch] its rows
# as data and what is made of them.  The rest is what fxt-run and the
# traced processes agree on while the program runs: what can be recorded
# and how sizes, durations, modes and rules are spelled (recording.h), the
# names of a run's files (names.h), the session file shared by a run's
# processes (session.h), fxt-run's control file and drain doorbell
# (control.h), process liveness (proc.h), and what fxt-run -p calls in the
# agent it loads into a running process (attach.h).  The agent and
# libfxt-convert.so compile these sources with the agent's flags
# (agent/local.mk, convert/local.mk); libfxtrun.la, with spool/'s, is the
# one copy fxt-run, the converter library and the tests link.
RUN_SETTINGS_H = run/settings.def run/settings.h
RUN_SETTINGS_SOURCES = $(RUN_SETTINGS_H) run/settings.c
RUN_CONTRACT_SOURCES = run/attach.h \
	run/argspec.c run/argspec.h \
	run/control.c run/control.h \
	run/names.c run/names.h \
	run/proc.c run/proc.h \
	run/recording.c run/recording.h \
	run/session.c run/session.h
RUN_SOURCES = $(RUN_SETTINGS_SOURCES) $(RUN_CONTRACT_SOURCES)

noinst_LTLIBRARIES += libfxtrun.la
libfxtrun_la_SOURCES = $(RUN_SOURCES) $(SPOOL_SOURCES)
