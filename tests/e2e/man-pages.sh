#!/bin/sh
# The man pages (man/local.mk): `make install-man DESTDIR=...` installs one
# for fxt and each fxt-* program in man1, and each renders with its NAME and
# OPTIONS sections; fxt-run(1) also has its exit statuses.  Skipped when the
# pages are not built (no help2man, and no shipped pages).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
PAGES="fxt fxt-run fxt-dump fxt-report fxt-diff fxt-flame fxt-tree fxt-replay fxt-export fxt-import fxt-merge fxt-waits"
# fxt-view is built with ncurses only, and its page with it.
VIEWPAGE=
test -x "$abs_top_builddir/fxt-view" && VIEWPAGE=fxt-view
PAGES="$PAGES $VIEWPAGE"

if ! test -f "$abs_top_builddir/man/fxt.1"; then
  echo "1..0 # SKIP the man pages are not built (configure found no help2man)"
  exit 0
fi
scratch
plan 11

${MAKE:-make} -s -C "$abs_top_builddir" install-man DESTDIR="$TMPD/inst" >"$TMPD/make.log" 2>&1
ok "make install-man DESTDIR=..." test $? -eq 0 || sed 's/^/# /' "$TMPD/make.log"
man1=$(find "$TMPD/inst" -type d -name man1 | head -n 1)
missing=
for p in $PAGES; do test -s "$man1/$p.1" || missing="$missing $p.1"; done
is "${missing:-none}" none "every page installed in man1"

# render PAGE: the page as text, with man if there is one, else groff.
render() {
  if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man -l "$man1/$1.1" 2>/dev/null | col -b 2>/dev/null
  else
    groff -man -Tutf8 "$man1/$1.1" 2>/dev/null | sed 's/.\x08//g'
  fi
}
render fxt-run >"$TMPD/fxt-run.txt"
ok "fxt-run(1) renders" test -s "$TMPD/fxt-run.txt"
ok "fxt-run(1): NAME, with its summary" grep -q "fxt-run - trace a program" "$TMPD/fxt-run.txt"
ok "fxt-run(1): OPTIONS" grep -q '^OPTIONS' "$TMPD/fxt-run.txt"
ok "fxt-run(1): --max-size among them" grep -q -- '--max-size' "$TMPD/fxt-run.txt"
ok "fxt-run(1): its exit statuses" grep -qi 'exit status' "$TMPD/fxt-run.txt"
ok "fxt-run(1): SEE ALSO" grep -q '^SEE ALSO' "$TMPD/fxt-run.txt"
bad=
for p in $PAGES; do
  render "$p" >"$TMPD/$p.txt"
  grep -q '^NAME' "$TMPD/$p.txt" && grep -q '^OPTIONS' "$TMPD/$p.txt" || bad="$bad $p"
done
is "${bad:-none}" none "every page has NAME and OPTIONS"
bad=
for p in fxt fxt-dump fxt-report fxt-diff fxt-flame fxt-tree fxt-replay fxt-export fxt-import fxt-merge fxt-waits $VIEWPAGE; do
  grep -q '^EXIT STATUS' "$TMPD/$p.txt" || bad="$bad $p"
done
is "${bad:-none}" none "the pages of fxt and the archive tools have an EXIT STATUS section"
ok "fxt(1) lists the commands" grep -q '^ *report  *where the time went' "$TMPD/fxt.txt"
finish
