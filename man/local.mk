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
	man/fxt-diff.1 man/fxt-flame.1 man/fxt-export.1 man/fxt-import.1 man/fxt-merge.1 \
	man/fxt-tree.1 man/fxt-replay.1 man/fxt-waits.1
FXT_MAN_PROGS =
# fxt-view is built only with ncurses, and so is its page.
if HAVE_NCURSES
FXT_MANS += man/fxt-view.1
FXT_MAN_PROGS += fxt-view$(EXEEXT)
endif
FXT_MAN_INCLUDES = $(FXT_MANS:.1=.h2m)
EXTRA_DIST += $(FXT_MANS) $(FXT_MAN_INCLUDES) man/mkman.sh
if BUILD_MANS
man1_MANS = $(FXT_MANS)
endif

# Each page depends on every program: one rule writes them all (a page
# takes help2man a moment).
FXT_FRONT = tools/fxt$(EXEEXT)
$(FXT_MANS): $(FXT_FRONT) fxt-run$(EXEEXT) fxt-dump$(EXEEXT) fxt-report$(EXEEXT) \
		fxt-diff$(EXEEXT) fxt-flame$(EXEEXT) fxt-export$(EXEEXT) \
		fxt-import$(EXEEXT) fxt-merge$(EXEEXT) fxt-tree$(EXEEXT) fxt-replay$(EXEEXT) \
		fxt-waits$(EXEEXT) \
		$(FXT_MAN_PROGS) $(srcdir)/man/mkman.sh $(FXT_MAN_INCLUDES:%=$(srcdir)/%)
	$(AM_V_GEN)$(SHELL) $(srcdir)/man/mkman.sh '$(HELP2MAN)' $@ $(srcdir) $(FXT_FRONT)

# A build tree's pages go with it; a source tree's are the shipped ones.
distclean-local: distclean-man
distclean-man:
	test "$(srcdir)" = . || rm -f $(FXT_MANS)
.PHONY: distclean-man
