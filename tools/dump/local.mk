# tools/dump/: fxt-dump: records as text (fxt-dump.c), --check (dump-check.c,
# with the nesting-depth tracker nesting.c, which tests/unit.mk's
# test_nesting compiles too) and the pair-keyed hash map both use
# (dump-map.c).
FXT_NESTING_SOURCES = tools/dump/nesting.c tools/dump/nesting.h

bin_PROGRAMS += fxt-dump
fxt_dump_SOURCES = tools/dump/fxt-dump.c tools/dump/dump-check.c tools/dump/dump-map.c \
	tools/dump/dump.h $(FXT_NESTING_SOURCES)
fxt_dump_LDADD = libfxttools.la libfxtcodec.la
