# launcher/: fxt-run, which runs a program under the agent.
bin_PROGRAMS += fxt-run
# It converts every spool of the run with the converter (convert/), and
# merges the archives with convert/merge.h (libfxtmerge).
fxt_run_SOURCES = launcher/fxt-run.c launcher/launcher.h \
	launcher/options.c launcher/setup.c launcher/supervise.c \
	launcher/spools.c launcher/spares.c launcher/status.c launcher/parts.c \
	launcher/summary.c launcher/recover.c launcher/patchrep.c launcher/args.c launcher/chain.c \
	launcher/drain.c launcher/drain.h launcher/early.c launcher/early.h launcher/kernel.c \
	launcher/kpages.c launcher/kpages.h launcher/ktables.c launcher/ktables.h launcher/removed.c
fxt_run_CPPFLAGS = $(AM_CPPFLAGS) -DFXT_PKGLIBDIR='"$(pkglibdir)"'
fxt_run_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(LIBTRACECMD_CFLAGS)
# --kernel (kernel.c) reads the kernel's events with libtracefs into the
# importer's mapping (libfxtimport).
fxt_run_LDADD = libfxtimport.la libfxtattach.la libfxtmerge.la libfxtconvert.la libfxtrun.la libfxtsym.la libfxtcodec.la \
	libfxtcommon.la $(LIBDW_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(LIBDEFLATE_LIBS) \
	$(LIBTRACECMD_LIBS) -lpthread

# launcher/attach/: fxt-run -p, recording a process already running:
# preflight.c says whether we may (sample.c, with --sample), inject.c calls
# functions inside it with ptrace (x86-64) on a thread borrow.c chooses,
# each call returning by the way back wayback.c makes, attach.c runs the
# attach (libfxtattach.la, which the injector's test helper links too).
noinst_LTLIBRARIES += libfxtattach.la
libfxtattach_la_SOURCES = launcher/attach/inject.c launcher/attach/inject.h \
	launcher/attach/inject_int.h launcher/attach/wayback.c launcher/attach/borrow.c \
	launcher/attach/preflight.c launcher/attach/preflight.h \
	launcher/attach/sample.c launcher/attach/sample.h launcher/attach/why.h
libfxtattach_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
fxt_run_SOURCES += launcher/attach/attach.c
