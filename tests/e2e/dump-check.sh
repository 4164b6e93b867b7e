#!/bin/sh
# fxt-dump --check: accepts valid archives, warns on what recorders do,
# rejects each broken archive naming the offset and the rule.
. "$abs_top_srcdir/tests/e2e/dump-common.sh"

plan 36

for f in valid.fxt valid.fxt.gz two-providers.fxt unknown.fxt; do
  dump --check "$A/$f"
  is "$rc" 0 "--check $f: exit 0"
done
is "$out" "$A/unknown.fxt: offset 168: note: unknown record type 12 (2 words) skipped
$A/unknown.fxt: offset 200: note: unknown argument type 13 skipped
$A/unknown.fxt: ok (11 records, 0 errors, 0 warnings)" "--check: unknown types are notes"

dump --check "$A/warn.fxt"
is "$rc" 0 "warnings only: exit 0"
is "$out" "$A/warn.fxt: offset 168: warning: duration end with no begin on pid 10 tid 11
$A/warn.fxt: offset 184: warning: 1 duration begin(s) never ended on pid 10 tid 12
$A/warn.fxt: offset 200: note: 1 flow(s) begun and never ended (first: id 9): their other end was not traced (a pipe's or socket's reader)
$A/warn.fxt: ok (14 records, 0 errors, 2 warnings)" "warnings listed with offsets, open flows in a note"

dump --check "$A/flow-order.fxt"
is "$rc" 0 "flows in any file order: exit 0"
is "$out" "$A/flow-order.fxt: offset 216: warning: 1 flow(s) stepped or ended and never begun (first: id 7)
$A/flow-order.fxt: offset 192: warning: 1 flow(s) end before they begin (first: id 6)
$A/flow-order.fxt: ok (15 records, 0 errors, 2 warnings)" "flows paired by id, not by file order"

dump --check -q "$A/warn.fxt"
is "$rc/$out" "0/" "-q: nothing to say about warnings"

# check_bad FILE OFFSET RULE: exit 1 and an error line at OFFSET naming RULE.
check_bad() {
  dump --check "$A/$1"
  is "$rc" 1 "$1: exit 1"
  case $out in
  *"$A/$1: offset $2: error: $3"*) ok "$1: offset $2 and rule" true ;;
  *) ok "$1: offset $2 and rule" false; diag "$out" ;;
  esac
}

check_bad bad-truncated.fxt 704 "record runs past the end of the input (header says 2 words, 8 bytes left)"
check_bad bad-zero.fxt 184 "record of size 0"
check_bad bad-overlap.fxt 192 "complete event [150, 350] ns partly overlaps the one at offset 168 [50, 250] ns on pid 10 tid 11"
check_bad bad-ref.fxt 168 "name string ref 9 used before registration"
check_bad bad-utf8.fxt 168 "string 6 is not valid UTF-8"
check_bad bad-reserved.fxt 168 "thread record with reserved bits set"
check_bad bad-endbefore.fxt 168 "complete event ends (100) before it starts (500)"
check_bad bad-nomagic.fxt 0 "no magic record at offset 0"

# Not an archive at all (no record can be read): bad input, as without
# --check: exit 2 and one line on standard error, nothing on standard output.
dump --check "$A/empty.fxt"
is "$rc/$out/$err" "2//fxt-dump: $A/empty.fxt: empty file, not an FXT archive" "empty file: exit 2, one line"
dump --check "$A/garbage.fxt"
is "$rc/$out/$(printf '%s\n' "$err" | wc -l)" "2//1" "garbage: exit 2, one line"

check_bad bad-perfetto.fxt 168 'thread object 11: its "process" argument is u64, not koid (Perfetto rejects the record)'
is "$(printf '%s\n' "$out" | grep ": warning:")" "$A/bad-perfetto.fxt: offset 216: warning: thread object 12 without a \"process\" argument: Perfetto puts it under pid 0
$A/bad-perfetto.fxt: offset 240: warning: counter argument \"v\" is str, not a number (Perfetto refuses it)" "Perfetto warnings"

dump --check "$A/bad-ref.fxt"
is "$(printf '%s\n' "$out" | grep -c 'thread ref 7 used before registration')" 1 "every problem listed"
is "$(printf '%s\n' "$out" | tail -1)" "$A/bad-ref.fxt: invalid (12 records, 2 errors, 0 warnings)" "summary line"

# Deeper than Perfetto's 512 levels: a warning, not an error.
dump --check "$A/deep.fxt"
is "$rc" 0 "too deep for Perfetto: exit 0"
is "$(printf '%s\n' "$out" | grep -c 'warning: 2 slices nest deeper than 512 levels (depth 514 on pid 10 tid 11): Perfetto does not show them')" 1 \
  "too deep for Perfetto: how many slices it will not show"
# A name whose string ref was never registered reads as the placeholder
# every tool shows (an empty name before).
dump "$A/bad-ref-call.fxt"
is "$(printf '%s\n' "$out" | grep -c 'name="(unregistered string)"')" 1 \
  "unregistered string ref: a placeholder name"
finish
