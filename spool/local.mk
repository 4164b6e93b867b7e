# spool/: what fxt-run and the traced processes share (the settings are
# run/settings.def): what can be recorded and how sizes are spelled
# (recording.h), the names of a run's files (names.h), and what a run
# leaves on disk between recording and conversion: the spool layout
# (format.h), its records (records.h) and the ids of the libc functions
# they name (libc_table.h), the tick rate (clock.h), the session file
# shared by a run's processes, and process liveness.  Compiled into the
# agent (with its flags) and into the converter library.
SPOOL_SOURCES = \
	spool/format.h spool/records.h \
	spool/clock.c spool/clock.h \
	spool/libc_table.c spool/libc_table.h \
	spool/launcher.c spool/launcher.h \
	spool/names.c spool/names.h \
	spool/proc.c spool/proc.h \
	spool/recording.c spool/recording.h \
	spool/session.c spool/session.h \
	spool/stage.c spool/stage.h
