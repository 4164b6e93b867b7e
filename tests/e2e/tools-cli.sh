#!/bin/sh
# The command line every archive tool shares (tools/front/common.c): --help on
# standard output with an "Exit status:" paragraph, --version, usage errors
# as "TOOL: message" and "Try 'TOOL --help'." with exit status 2, and a
# help that offers every option the tool takes.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
B=$abs_top_builddir
scratch
TOOLS="fxt-dump fxt-report fxt-diff fxt-flame fxt-tree fxt-replay fxt-export fxt-import fxt-merge fxt-waits"
plan 55

# opts TOOL: the long options of TOOL besides --help and --version.
opts() {
  case $1 in
  fxt-dump) echo check stats normalize quiet ;;
  fxt-report) echo by sort top filter category format ;;
  fxt-diff) echo threshold fail-above alpha top format ;;
  fxt-flame) echo output by diff normalize folded title width max-depth merge-recursion ;;
  fxt-tree) echo by pid tid focus depth min-share format ;;
  fxt-replay) echo pid tid since until depth match ;;
  fxt-export) echo chrome output stats ;;
  fxt-import) echo output quiet ;;
  fxt-merge) echo output shift no-align quiet ;;
  fxt-waits) echo by detail tid pid top format ;;
  esac
}

version=$("$B/tools/fxt" --version | sed 's/.* //')
for t in $TOOLS; do
  out=$("$B/$t" --help 2>"$TMPD/err"); rc=$?
  is "$rc/$(printf '%s\n' "$out" | head -n 1 | cut -d' ' -f1-2)/$(wc -c <"$TMPD/err")" \
    "0/Usage: $t/0" "$t --help: the usage, on standard output, exit 0"
  ok "$t --help: an 'Exit status:' paragraph" sh -c 'printf "%s\n" "$1" | grep -q "^Exit status:$"' - "$out"
  is "$("$B/$t" -V)" "$t (fxtrace) $version" "$t -V: NAME (fxtrace) VERSION"
  err=$("$B/$t" --no-such-option 2>&1 >/dev/null); rc=$?
  is "$rc/$err" "2/$t: unknown option '--no-such-option'
Try '$t --help'." "$t: unknown option, a usage error"
  # Each option of the tool (opts above) is in its --help, and taken.
  hidden=
  for o in $(opts "$t") help version; do
    case $("$B/$t" "--$o" 2>&1 >/dev/null) in
    *"unknown option"*) hidden="$hidden --$o(refused)" ;;
    esac
    printf '%s\n' "$out" | grep -q -- "--$o\\b" || hidden="$hidden --$o"
  done
  is "${hidden:-none}" none "$t: every option is in --help"
done
err=$("$B/fxt-report" --top 2>&1 >/dev/null); rc=$?
is "$rc/$err" "2/fxt-report: option '--top' needs a value
Try 'fxt-report --help'." "a missing value: a usage error"
err=$("$B/fxt-flame" --folded=yes x 2>&1 >/dev/null); rc=$?
is "$rc/$err" "2/fxt-flame: option '--folded' takes no value
Try 'fxt-flame --help'." "a value for an option without one: a usage error"
err=$("$B/fxt-diff" -q a b 2>&1 >/dev/null); rc=$?
is "$rc/$err" "2/fxt-diff: unknown option '-q'
Try 'fxt-diff --help'." "an unknown short option: a usage error"
if test -c /dev/full; then
  "$B/fxt-export" --help >/dev/full 2>"$TMPD/err"; rc=$?
  is "$rc/$(cat "$TMPD/err")" "2/fxt-export: write error: No space left on device" \
    "--help that cannot be written: exit 2"
else
  skip "no /dev/full"
fi
is "$("$B/tools/fxt" -V)" "fxt (fxtrace) $version" "fxt -V"
finish
