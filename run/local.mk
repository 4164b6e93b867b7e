# run/: the run's contract between fxt-run and the agent.  settings.def is
# the one settings table (options, FXT_* variables), settings.[ch] its rows
# as data and what is made of them.
RUN_SETTINGS_H = run/settings.def run/settings.h
RUN_SOURCES = $(RUN_SETTINGS_H) run/settings.c
