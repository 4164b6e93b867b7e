# spool/: what a run leaves on disk between recording and conversion (the
# contract of the running run, settings and names included, is run/): the
# spool layout (format.h), its records (records.h) and the ids of the libc
# functions they name (libc_table.h), the tick rate (clock.h), and the
# staging of chunks (stage.h).  Compiled into the agent (with its flags)
# and into the converter library.
SPOOL_SOURCES = \
	spool/format.h spool/records.h \
	spool/clock.c spool/clock.h \
	spool/libc_table.c spool/libc_table.h \
	spool/stage.c spool/stage.h
