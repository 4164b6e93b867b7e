#!/bin/sh
# Writes one manual page with help2man, from the program's --help and
# --version (man/local.mk runs it; the pages have no other source):
#
#   mkman.sh HELP2MAN OUT SRCDIR FXT
#
# OUT is man/NAME.1, the page of the program NAME of the build tree (FXT,
# the front command, for man/fxt.1).  The page's NAME line is `FXT --help`'s
# summary of the command (fxt-report: report), or for fxt itself the first
# line of its description.  SRCDIR/man/NAME.h2m adds what --help cannot say
# (SEE ALSO).
#
# Two touches on help2man's output: an "Exit status:" paragraph, which it
# makes a subsection, becomes the EXIT STATUS section, and a --help with no
# "Options:" line gets the OPTIONS heading before its first option all the
# same.  Without help2man (HELP2MAN empty: a dist tarball built where it is
# not installed) the page shipped in SRCDIR is used as it is.
set -e
help2man=$1 out=$2 srcdir=$3 fxt=$4
name=$(basename "$out" .1)
if [ "$name" = fxt ]; then
  prog=$fxt cmd=
else
  prog=./$name cmd=${name#fxt-}
fi

if [ -z "$help2man" ]; then
  if [ -f "$srcdir/$out" ]; then
    [ "$srcdir/$out" -ef "$out" ] || cp "$srcdir/$out" "$out"
    touch "$out"
    exit 0
  fi
  echo "$out: help2man is needed to write it (scripts/install-deps installs it)" >&2
  exit 1
fi

if [ -n "$cmd" ]; then
  summary=$("$fxt" --help | sed -n "s/^  $cmd  *//p")
else
  # "Run an fxtrace command: ..." becomes "run an fxtrace command: ...".
  summary=$("$fxt" --help | sed -n '/^Usage:/d; /^ /d; s/\.$//; p; q' |
    awk '{ print tolower(substr($0, 1, 1)) substr($0, 2) }')
fi
if [ -z "$summary" ]; then
  echo "$out: '$fxt --help' has no summary for $name" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")"
"$help2man" --no-info --name="$summary" --include="$srcdir/man/$name.h2m" \
  --output="$out.tmp" "$prog"
awk '
  held {
    if (!options && /^\\fB\\-/) { print ".SH OPTIONS"; options = 1 }
    print ".TP"; held = 0
  }
  $0 == ".TP" { held = 1; next }
  /^\.SH OPTIONS/ { options = 1 }
  $0 == ".SS \"Exit status:\"" { print ".SH \"EXIT STATUS\""; next }
  { print }
  END { if (held) print ".TP" }
' "$out.tmp" >"$out"
rm -f "$out.tmp"
