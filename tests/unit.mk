# tests/unit.mk: every unit test.  A unit test is one C program,
# tests/unit/test_NAME.c, that prints TAP through tests/lib/tap.h and links
# (or compiles) the code it tests, with the test flags: the sanitizers when
# configured.  Run one with `make check TESTS=tests/unit/test_NAME`.
#
# To add one: write tests/unit/test_NAME.c, list tests/unit/test_NAME in
# UNIT_TESTS below, and give it its LDADD (a library) or its SOURCES (when it
# compiles private sources, as the agent's tests do) in its module's section.
UNIT_TESTS = \
	tests/unit/test_format \
	tests/unit/test_debugpath \
	tests/unit/test_writer \
	tests/unit/test_writer_move \
	tests/unit/test_reader \
	tests/unit/test_reader_clone \
	tests/unit/test_reader_zclone \
	tests/unit/test_zstdenc \
	tests/unit/test_reader_order \
	tests/unit/test_reader_split \
	tests/unit/test_reader_mark \
	tests/unit/test_merge_append \
	tests/unit/test_reader_plain \
	tests/unit/test_malformed \
	tests/unit/test_symbolizer \
	tests/unit/test_linetab \
	tests/unit/test_signature \
	tests/unit/test_spool \
	tests/unit/test_settings \
	tests/unit/test_agent_tbuf \
	tests/unit/test_agent_events \
	tests/unit/test_agent_features \
	tests/unit/test_agent_session \
	tests/unit/test_agent_settings \
	tests/unit/test_recon \
	tests/unit/test_convert_pipeline \
	tests/unit/test_convert_funcs \
	tests/unit/test_convert_early \
	tests/unit/test_convert_tagged \
	tests/unit/test_convert_regs \
	tests/unit/test_convert_once \
	tests/unit/test_convert_pair \
	tests/unit/test_symnames \
	tests/unit/test_emitcall \
	tests/unit/test_stackchart \
	tests/unit/test_nesting \
	tests/unit/test_escape \
	tests/unit/test_srcloc \
	tests/unit/test_profile \
	tests/unit/test_recpipe \
	tests/unit/test_diff_stats \
	tests/unit/test_pctl \
	tests/unit/test_flame \
	tests/unit/test_calls \
	tests/unit/test_waits \
	tests/unit/test_sched
if HAVE_NCURSES
UNIT_TESTS += tests/unit/test_timeline
tests_unit_test_timeline_LDADD = libfxtview.la
endif
if HAVE_CAPSTONE
UNIT_TESTS += tests/unit/test_patch_plan
tests_unit_test_patch_plan_SOURCES = tests/unit/test_patch_plan.c agent/patch/plan.c agent/patch/plan.h
tests_unit_test_patch_plan_CFLAGS = $(AM_CFLAGS) $(CAPSTONE_CFLAGS)
tests_unit_test_patch_plan_LDADD = $(CAPSTONE_LIBS) -lpthread
endif
EXTRA_DIST += tests/unit/test_patch_plan.c
if ARCH_X86_64
UNIT_TESTS += tests/unit/test_patch_live
tests_unit_test_patch_live_SOURCES = tests/unit/test_patch_live.c agent/patch/live.c \
	agent/taskfield.c agent/log.c
tests_unit_test_patch_live_CFLAGS = $(AM_CFLAGS)
tests_unit_test_patch_live_LDADD = -lpthread
UNIT_TESTS += tests/unit/test_sample_walk
tests_unit_test_sample_walk_SOURCES = tests/unit/test_sample_walk.c agent/sample/walk.c \
	agent/patch/tramp.S agent/log.c
tests_unit_test_sample_walk_CFLAGS = $(AM_CFLAGS)
tests_unit_test_sample_walk_CCASFLAGS = $(AM_CCASFLAGS)
tests_unit_test_sample_walk_LDADD = -ldl
UNIT_TESTS += tests/unit/test_patch_probe
tests_unit_test_patch_probe_SOURCES = tests/unit/test_patch_probe.c agent/patch/probe.S
tests_unit_test_patch_probe_CFLAGS = $(AM_CFLAGS)
# (an object of its own: the agent builds probe.S with libtool)
tests_unit_test_patch_probe_CCASFLAGS = $(AM_CCASFLAGS)
endif
EXTRA_DIST += tests/unit/test_patch_live.c tests/unit/test_sample_walk.c \
	tests/unit/test_patch_probe.c
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
noinst_HEADERS += tests/lib/tap.h

# ------------------------------------------------ the shared helpers (common/)
# Where debug files are, and their CRC (checked against zlib's).
tests_unit_test_debugpath_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(LIBDEFLATE_CFLAGS)
tests_unit_test_debugpath_LDADD = libfxtcommon.la $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)

# ------------------------------------------------------- the codec (fxt/)
tests_unit_test_format_LDADD = libfxtcodec.la
tests_unit_test_writer_LDADD = libfxtcodec.la
tests_unit_test_writer_move_LDADD = libfxtcodec.la
tests_unit_test_reader_LDADD = libfxtcodec.la
tests_unit_test_reader_clone_LDADD = libfxtcodec.la
tests_unit_test_reader_zclone_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_reader_zclone_LDADD = libfxtcodec.la $(ZLIB_LIBS)
# fxtrace's zstd encoder's frames read back by libzstd's decoder.
tests_unit_test_zstdenc_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_unit_test_zstdenc_LDADD = libfxtcodec.la $(ZSTD_LIBS)
tests_unit_test_reader_order_LDADD = libfxtcodec.la
# The first pass's skim split in two halves, against a whole pass.
tests_unit_test_reader_split_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_reader_split_LDADD = libfxtcodec.la $(ZLIB_LIBS)
tests_unit_test_reader_mark_LDADD = libfxtcodec.la
# Appending a part to an archive (convert/merge.h) against merging it.
tests_unit_test_merge_append_LDADD = libfxtmerge.la libfxtcodec.la
tests_unit_test_reader_plain_LDADD = libfxtcodec.la
tests_unit_test_malformed_LDADD = libfxtcodec.la

# ------------------------------------------------ the symbolizer (symbolizer/)
# Its fixtures (a C++ library, copies of it stripped or with separate
# debuginfo, a plug-in, a non-PIE program) are built in tests/progs/symfix/
# (tests/progs.mk); SYMFIX_DIR is where.
tests_unit_test_symbolizer_SOURCES = tests/unit/test_symbolizer.c tests/progs/symfix/symfix.h
tests_unit_test_symbolizer_CPPFLAGS = $(AM_CPPFLAGS) -DSYMFIX_DIR='"$(SYMFIX_DIR)"'
tests_unit_test_symbolizer_LDADD = libfxtsym.la
tests_unit_test_symbolizer_DEPENDENCIES = libfxtsym.la $(SYMFIX_COPIES) \
	tests/progs/symfix/libsymplug.la tests/progs/symfix/nopie$(EXEEXT)

# Where functions are: symbolizer/linetab.c's rows against libdw's, for
# tests/progs/linetab/ (DWARF 4 and 5), symfix's C++ library and itself.
tests_unit_test_linetab_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_linetab_CPPFLAGS = $(AM_CPPFLAGS) -DLINETAB_DIR='"$(LINETAB_DIR)"' \
	-DSYMFIX_DIR='"$(SYMFIX_DIR)"'
tests_unit_test_linetab_LDADD = libfxtsym.la $(LIBDW_LIBS)
tests_unit_test_linetab_DEPENDENCIES = libfxtsym.la tests/progs/symfix/libsymcxx.la \
	tests/progs/linetab/linetab_dw4$(EXEEXT) tests/progs/linetab/linetab_dw5$(EXEEXT)

# Signatures from DWARF: the C and C++ fixtures of tests/progs/sigfix/, and
# symfix's stripped library and the one with a debuglink.
tests_unit_test_signature_CPPFLAGS = $(AM_CPPFLAGS) -DSIGFIX_DIR='"$(SIGFIX_DIR)"' \
	-DSYMFIX_DIR='"$(SYMFIX_DIR)"'
tests_unit_test_signature_LDADD = libfxtsym.la
tests_unit_test_signature_DEPENDENCIES = libfxtsym.la $(SYMFIX_COPIES) \
	tests/progs/sigfix/sigc_O0$(EXEEXT) tests/progs/sigfix/sigc_O2$(EXEEXT) \
	tests/progs/sigfix/sigcxx$(EXEEXT)

# ---------------------------------------------------------- the spool (spool/)
# What fxt-run and the agent share: sizes, names; and the session file's
# tables, mapped by two processes.
tests_unit_test_spool_LDADD = libfxtrun.la
# The settings table and fxt-run's side of it (run/settings.def).
tests_unit_test_settings_LDADD = libfxtrun.la
# The session file's tables, from the agent's modules (run/session.c).
tests_unit_test_agent_session_SOURCES = tests/unit/test_agent_session.c
tests_unit_test_agent_session_LDADD = $(AGENT_TEST_LDADD)

# ------------------------------------------------------- the agent (agent/)
# They link the agent's modules, compiled once with the test flags
# (sanitizers included when configured) into libfxtagenttest.la, and
# provide the few life-cycle symbols themselves
# (tests/unit/agent_test_stubs.h).  They cover the buffers and spool
# (reserve, refill, drops, recycling, signals, naming) and the tagged
# records' writers.
AGENT_TEST_CFLAGS = $(AM_CFLAGS)
AGENT_TEST_LDADD = libfxtagenttest.la -lpthread -ldl
check_LTLIBRARIES += libfxtagenttest.la
libfxtagenttest_la_SOURCES = $(AGENT_RECORD_SOURCES)
libfxtagenttest_la_CFLAGS = $(AGENT_TEST_CFLAGS)
tests_unit_test_agent_tbuf_SOURCES = tests/unit/test_agent_tbuf.c \
	tests/unit/agent_test_stubs.h launcher/drain.c launcher/drain.h
tests_unit_test_agent_tbuf_CFLAGS = $(AGENT_TEST_CFLAGS)
tests_unit_test_agent_tbuf_LDADD = $(AGENT_TEST_LDADD)
tests_unit_test_agent_events_SOURCES = tests/unit/test_agent_events.c \
	tests/unit/agent_test_stubs.h agent/libc/libc.c
tests_unit_test_agent_events_CFLAGS = $(AGENT_TEST_CFLAGS)
tests_unit_test_agent_events_LDADD = $(AGENT_TEST_LDADD)
# Their one reader of the spool's chunks and slots.
EXTRA_DIST += tests/unit/spool_test_walk.h
# The settings from the environment and from a block: the same agent_cfg.
tests_unit_test_agent_settings_SOURCES = tests/unit/test_agent_settings.c \
	tests/unit/agent_test_stubs.h
tests_unit_test_agent_settings_CFLAGS = $(AGENT_TEST_CFLAGS)
tests_unit_test_agent_settings_LDADD = $(AGENT_TEST_LDADD)
# The feature table's walker, with rows of its own.
tests_unit_test_agent_features_SOURCES = tests/unit/test_agent_features.c \
	agent/feature.h agent/features.c
tests_unit_test_agent_features_CFLAGS = $(AGENT_TEST_CFLAGS)

# ------------------------------------------------- the converter (convert/)
# The stack reconstruction alone; the conversion pipeline on spools written by
# the tests' own writer (tests/unit/spool_test_writer.h), read back through the
# reader (tests/unit/convert_test_archive.h), hook records and tagged records
# apart; the stack chart against a real recon with a recording sink.
tests_unit_test_recon_SOURCES = tests/unit/test_recon.c \
	tests/unit/agent_test_nest.h convert/recon.c convert/recon.h
tests_unit_test_recon_LDADD = libfxtcommon.la
tests_unit_test_convert_pipeline_SOURCES = tests/unit/test_convert_pipeline.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_pipeline_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_pipeline_LDADD = libfxtconvert.la libfxtsym.la libfxtprofile.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# Its function records (FXT_OBJ_FUNCTION), apart.
tests_unit_test_convert_funcs_SOURCES = tests/unit/test_convert_funcs.c \
	tests/unit/convert_test_archive.h tests/unit/spool_test_writer.h
tests_unit_test_convert_funcs_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_funcs_LDADD = libfxtconvert.la libfxtsym.la libfxtprofile.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# The conversion's name table: entries that stay put while it grows.
tests_unit_test_symnames_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la $(LIBDW_LIBS)
# A libc call's slice written straight: the general encoder's bytes.
tests_unit_test_emitcall_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la $(LIBDW_LIBS) \
	$(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# The early conversion writes what the archive's conversion writes alone.
tests_unit_test_convert_early_SOURCES = tests/unit/test_convert_early.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_early_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_early_LDADD = libfxtconvert.la libfxtsym.la libfxtprofile.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
tests_unit_test_convert_tagged_SOURCES = tests/unit/test_convert_tagged.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_tagged_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_tagged_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# The records of --args/--retval: REG, HOOKV and their RAW slots.
tests_unit_test_convert_regs_SOURCES = tests/unit/test_convert_regs.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_regs_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_regs_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# The ONCE record converts as its full form does.
tests_unit_test_convert_once_SOURCES = tests/unit/test_convert_once.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_once_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_once_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
# The PAIR record converts as an enter and its exit do.
tests_unit_test_convert_pair_SOURCES = tests/unit/test_convert_pair.c \
	tests/unit/convert_test_archive.h tests/unit/agent_test_nest.h tests/unit/spool_test_writer.h
tests_unit_test_convert_pair_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_convert_pair_LDADD = libfxtconvert.la libfxtsym.la libfxtcodec.la \
	$(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS)
tests_unit_test_stackchart_SOURCES = tests/unit/test_stackchart.c \
	tests/unit/agent_test_nest.h convert/stackchart.c convert/stackchart.h \
	convert/recon.c convert/recon.h
tests_unit_test_stackchart_CFLAGS = $(AM_CFLAGS)
tests_unit_test_stackchart_LDADD = libfxtcommon.la

# ------------------------------------------------------------ the tools
# The nesting-depth tracker, the JSON, CSV and text escapers, the
# functions' source locations an archive carries, the profile engine of
# fxt-report and fxt-diff, fxt-diff's statistics, the percentiles of call
# durations (test_pctl), and fxt-flame's and fxt-export's library.
tests_unit_test_nesting_SOURCES = tests/unit/test_nesting.c $(FXT_NESTING_SOURCES)
tests_unit_test_nesting_LDADD = libfxttools.la libfxtcodec.la
tests_unit_test_escape_LDADD = libfxttools.la libfxtcodec.la
tests_unit_test_srcloc_LDADD = libfxtexport.la libfxttools.la libfxtcodec.la
tests_unit_test_profile_SOURCES = tests/unit/test_profile.c tests/unit/raw_test_string.h
tests_unit_test_profile_LDADD = libfxtprofile.la
# The records read on a second thread, and the reader's kept strings.
tests_unit_test_recpipe_SOURCES = tests/unit/test_recpipe.c tests/unit/raw_test_string.h
tests_unit_test_recpipe_LDADD = libfxtprofile.la
tests_unit_test_diff_stats_LDADD = libfxtprofile.la
tests_unit_test_pctl_LDADD = libfxtprofile.la -lm
tests_unit_test_flame_LDADD = libfxtflame.la libfxtexport.la
tests_unit_test_calls_LDADD = libfxtcalls.la
# fxt-waits' engine, on an archive of known waits.
tests_unit_test_waits_LDADD = libfxtwaits.la
# The threads' states from context switches (tools/front/sched.c), with
# switches the kernel did not record.
tests_unit_test_sched_LDADD = libfxttools.la libfxtcodec.la
