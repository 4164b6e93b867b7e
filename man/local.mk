# man/: the manual pages of fxt and of every fxt-* program.  Each is written
# by help2man from its program's --help and --version, their one source
# (man/mkman.sh); man/NAME.h2m adds what --help cannot say (SEE ALSO), and
# the NAME line of an fxt-* page is `fxt --help`'s summary of the command.
#
# The pages are built into the build tree, installed in man1, and shipped in
# the dist tarball: a tarball builds and installs them without help2man (the
# shipped page is then used as it is).  A git checkout needs help2man for
# them (scripts/install-deps); configure says when it is missing, and the
# pages are then left out, except from `make dist`, which needs them.

FXT_MANS = man/fxt.1 man/fxt-run.1 man/fxt-dump.1 man/fxt-report.1 \
	man/fxt-diff.1 man/fxt-flame.1 man/fxt-export.1
EXTRA_DIST += $(FXT_MANS) man/mkman.sh \
	man/fxt.h2m man/fxt-run.h2m man/fxt-dump.h2m man/fxt-report.h2m \
	man/fxt-diff.h2m man/fxt-flame.h2m man/fxt-export.h2m
if BUILD_MANS
man1_MANS = $(FXT_MANS)
endif

# $(FXT_MKMAN) PROGRAM FXT [COMMAND] writes the page $@ of PROGRAM.
FXT_FRONT = tools/fxt$(EXEEXT)
FXT_MKMAN = $(AM_V_GEN)$(SHELL) $(srcdir)/man/mkman.sh '$(HELP2MAN)' $@ $(srcdir)
FXT_MAN_DEPS = $(FXT_FRONT) $(srcdir)/man/mkman.sh

man/fxt.1: $(FXT_MAN_DEPS) $(srcdir)/man/fxt.h2m
	$(FXT_MKMAN) $(FXT_FRONT) $(FXT_FRONT)
man/fxt-run.1: fxt-run$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-run.h2m
	$(FXT_MKMAN) ./fxt-run$(EXEEXT) $(FXT_FRONT) run
man/fxt-dump.1: fxt-dump$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-dump.h2m
	$(FXT_MKMAN) ./fxt-dump$(EXEEXT) $(FXT_FRONT) dump
man/fxt-report.1: fxt-report$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-report.h2m
	$(FXT_MKMAN) ./fxt-report$(EXEEXT) $(FXT_FRONT) report
man/fxt-diff.1: fxt-diff$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-diff.h2m
	$(FXT_MKMAN) ./fxt-diff$(EXEEXT) $(FXT_FRONT) diff
man/fxt-flame.1: fxt-flame$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-flame.h2m
	$(FXT_MKMAN) ./fxt-flame$(EXEEXT) $(FXT_FRONT) flame
man/fxt-export.1: fxt-export$(EXEEXT) $(FXT_MAN_DEPS) $(srcdir)/man/fxt-export.h2m
	$(FXT_MKMAN) ./fxt-export$(EXEEXT) $(FXT_FRONT) export

# A build tree's pages go with it; a source tree's are the shipped ones.
distclean-local: distclean-man
distclean-man:
	test "$(srcdir)" = . || rm -f $(FXT_MANS)
.PHONY: distclean-man

# After `make install DESTDIR=...` (of the man pages), each page renders
# with its NAME and OPTIONS sections.
TESTS += tests/e2e/man-pages.sh
EXTRA_DIST += tests/e2e/man-pages.sh
