#!/bin/sh
# Bad input to fxt-report and fxt-diff: one clear line on stderr, exit 2.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
REPORT=$abs_top_builddir/fxt-report
DIFF=$abs_top_builddir/fxt-diff
GEN=$abs_top_builddir/bench/gen_archive
scratch
plan 32

"$GEN" --events 100 -o "$TMPD/good.fxt"
: >"$TMPD/empty.fxt"
echo "this is not a trace" >"$TMPD/text.fxt"
size=$(wc -c <"$TMPD/good.fxt")
head -c $((size - 4)) "$TMPD/good.fxt" >"$TMPD/cut.fxt"
# A zero word among the events: fxt_reader_next_plain()'s run stops at it
# (it once took it for the event before, of the same header: a loop).
half=$((size / 16 * 8))
{ head -c $half "$TMPD/good.fxt"; head -c 8 /dev/zero; tail -c +$((half + 1)) "$TMPD/good.fxt"; } >"$TMPD/zero.fxt"

# expect_fail NAME WANT-IN-MESSAGE COMMAND...: exit 2, one line naming WANT.
expect_fail() {
  name=$1 want=$2; shift 2
  "$@" >"$TMPD/out" 2>"$TMPD/err"
  rc=$?
  is "$rc:$(wc -l <"$TMPD/err" | tr -d ' ')" "2:1" "$name: exit 2, one line"
  ok "$name: message says '$want'" grep -q -- "$want" "$TMPD/err"
}

# expect_usage NAME WANT-IN-MESSAGE COMMAND...: a usage error: exit 2, one
# line naming WANT, then "Try 'TOOL --help'.".
expect_usage() {
  name=$1 want=$2; shift 2
  "$@" >"$TMPD/out" 2>"$TMPD/err"
  rc=$?
  is "$rc:$(wc -l <"$TMPD/err" | tr -d ' '):$(sed -n 2p "$TMPD/err")" \
    "2:2:Try '$(basename "$1") --help'." "$name: exit 2, one line and where to look"
  ok "$name: message says '$want'" sh -c 'head -n 1 "$1" | grep -q -- "$2"' - "$TMPD/err" "$want"
}

expect_fail "report missing" "No such file" "$REPORT" "$TMPD/missing.fxt"
expect_fail "report directory" "Is a directory" "$REPORT" "$TMPD"
expect_fail "report empty" "empty" "$REPORT" "$TMPD/empty.fxt"
expect_fail "report text" "not an FXT archive" "$REPORT" "$TMPD/text.fxt"
expect_fail "report truncated" "cut.fxt: .*byte" "$REPORT" "$TMPD/cut.fxt"
expect_fail "report zero word" "record of size 0 at byte" timeout 60 "$REPORT" "$TMPD/zero.fxt"
# The same right where a run of plain events starts (mkarchives'
# bad-zero.fxt): the run once took it for an event already checked.
mkdir "$TMPD/mk" && "$abs_top_builddir/tests/helpers/mkarchives" "$TMPD/mk" >/dev/null
expect_fail "report bad-zero" "record of size 0 at byte 184" timeout 60 "$REPORT" "$TMPD/mk/bad-zero.fxt"
expect_usage "report bad --sort" "unknown key" "$REPORT" --sort bogus "$TMPD/good.fxt"
expect_usage "report bad regex" "--filter" "$REPORT" --filter '(' "$TMPD/good.fxt"
expect_fail "diff missing" "missing.fxt" "$DIFF" "$TMPD/good.fxt" "$TMPD/missing.fxt"
expect_fail "diff truncated" "cut.fxt" "$DIFF" "$TMPD/good.fxt" -- "$TMPD/cut.fxt"
expect_usage "diff empty side" "at least one" "$DIFF" "$TMPD/good.fxt" --
# Counts: digits only, and range-checked (2^64 + 1 is not 1).
expect_usage "diff --top 2^64+1" "--top: not a count: '18446744073709551617'" \
  "$DIFF" --top 18446744073709551617 "$TMPD/good.fxt" "$TMPD/good.fxt"
expect_usage "diff empty --top" "--top: not a count: ''" \
  "$DIFF" --top '' "$TMPD/good.fxt" "$TMPD/good.fxt"
expect_usage "report negative --top" "--top: not a count: '-1'" \
  "$REPORT" --top=-1 "$TMPD/good.fxt"
# Standard input can only be read once.
expect_usage "diff stdin twice" "only one archive can be standard input" \
  "$DIFF" - - <"$TMPD/good.fxt"
finish
