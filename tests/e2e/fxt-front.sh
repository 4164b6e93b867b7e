#!/bin/sh
# fxt, the front command: `fxt CMD ARGS` is `fxt-CMD ARGS` (same output,
# same exit status), its help, version and usage errors, and where it
# looks for fxt-CMD (next to itself first, then PATH).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
B=$abs_top_builddir
FXT=$B/tools/fxt
MK=$HELPERS/mkarchives
scratch
plan 17

"$MK" "$TMPD" >/dev/null || { echo "Bail out! mkarchives failed"; exit 1; }
A=$TMPD/valid.fxt

# run NAME CMD...: stdout in $TMPD/NAME.out, stderr in .err, status in .rc.
run() {
  n=$1; shift
  "$@" >"$TMPD/$n.out" 2>"$TMPD/$n.err"
  echo $? >"$TMPD/$n.rc"
}
same() { cmp -s "$TMPD/$1.$3" "$TMPD/$2.$3"; }

run front "$FXT" report "$A"
run tool "$B/fxt-report" "$A"
ok "fxt report FILE: the output of fxt-report FILE" same front tool out
is "$(cat "$TMPD/front.rc")" 0 "fxt report FILE: exit 0"
run front "$FXT" dump --check "$TMPD/bad-zero.fxt"
run tool "$B/fxt-dump" --check "$TMPD/bad-zero.fxt"
ok "fxt dump --check: its output" same front tool out
is "$(cat "$TMPD/front.rc")" "$(cat "$TMPD/tool.rc")" "fxt dump --check: its exit status (1)"
run front "$FXT" report "$TMPD/empty.fxt"
run tool "$B/fxt-report" "$TMPD/empty.fxt"
is "$(cat "$TMPD/front.rc") $(cat "$TMPD/front.err")" "2 $(cat "$TMPD/tool.err")" \
  "fxt report on bad input: its message and status"
run front "$FXT" report - <"$A"
run tool "$B/fxt-report" - <"$A"
ok "fxt report -: standard input is the command's" same front tool out

run help "$FXT" --help
is "$(cat "$TMPD/help.rc")" 0 "--help: exit 0"
for c in run dump report diff flame tree replay export; do
  grep -q "^  $c  " "$TMPD/help.out" || missing="$missing $c"
done
is "${missing:-none}" none "--help lists every command, one line each"
run front "$FXT" help report
run tool "$B/fxt-report" --help
ok "fxt help report: fxt-report --help" same front tool out
is "$("$FXT" --version)" "fxt (fxtrace) $("$B/fxt-report" --version | sed 's/.* //')" "--version"

run none "$FXT"
is "$(cat "$TMPD/none.rc")/$(wc -c <"$TMPD/none.out")" "2/0" "no command: exit 2, nothing on standard output"
ok "no command: the usage on standard error" grep -q '^Usage: fxt ' "$TMPD/none.err"
run bad "$FXT" frobnicate x
is "$(cat "$TMPD/bad.rc")/$(cat "$TMPD/bad.err")" \
  "2/fxt: 'frobnicate' is not an fxt command (see 'fxt --help')" "unknown command: one line, exit 2"
run bad "$FXT" --frobnicate report
is "$(cat "$TMPD/bad.rc")/$(cat "$TMPD/bad.err")" "2/fxt: unknown option '--frobnicate'
Try 'fxt --help'." "unknown option: a usage error"

# Where fxt-CMD comes from: next to fxt first, else PATH, else 127.
mkdir "$TMPD/bin" "$TMPD/other"
cp "$FXT" "$TMPD/bin/fxt"
printf '#!/bin/sh\necho "next to fxt: $*"\n' >"$TMPD/bin/fxt-report"
printf '#!/bin/sh\necho "in PATH: $*"\n' >"$TMPD/other/fxt-report"
chmod +x "$TMPD/bin/fxt-report" "$TMPD/other/fxt-report"
is "$(PATH="$TMPD/other:$PATH" "$TMPD/bin/fxt" report a b)" "next to fxt: a b" "next to fxt comes first"
rm "$TMPD/bin/fxt-report"
is "$(PATH="$TMPD/other:$PATH" "$TMPD/bin/fxt" report a b)" "in PATH: a b" "then PATH"
run lost env PATH="$TMPD/nowhere" "$TMPD/bin/fxt" report "$A"
is "$(cat "$TMPD/lost.rc")/$(cat "$TMPD/lost.err")" \
  "127/fxt: fxt-report: not found next to fxt nor in PATH" "found nowhere: exit 127, one line"
finish
