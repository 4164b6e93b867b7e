#!/bin/sh
# fxt-diff on synthetic runs: hot() 20% slower with noise is flagged, the
# unchanged functions are not, with 3 vs 3 runs and with 1 vs 1; exit codes
# of --fail-above; the output formats.  (Noise and the whole run:
# diff-noise.sh.)
. "$abs_top_srcdir/tests/lib/test_subr.sh"
DIFF=$abs_top_builddir/fxt-diff
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
scratch
plan 30

for s in 1 2 3; do
  "$GEN" --events 20000 --seed $s -o "$TMPD/base$s.fxt"
  "$GEN" --events 20000 --seed $((s + 10)) --slow 20 -o "$TMPD/new$s.fxt"
done
B="$TMPD/base1.fxt $TMPD/base2.fxt $TMPD/base3.fxt"
"$MK" "$TMPD/mk" >/dev/null
MK_VALID=$TMPD/mk/valid.fxt
N="$TMPD/new1.fxt $TMPD/new2.fxt $TMPD/new3.fxt"

# verdict,name for each function, sorted by name.
verdicts() { "$DIFF" -F csv "$@" | awk -F, 'NR > 1 { print $1 "," $18 }' | sort -t, -k2; }

# main's inclusive time holds hot's (about a third of it): +7%, flagged too.
# shellcheck disable=SC2086
out=$(verdicts $B -- $N)
is "$out" "~,cold
SLOWER,hot
~,leaf
SLOWER,main
~,rec" "3 vs 3: hot is slower, and main that calls it"
# shellcheck disable=SC2086
is "$("$DIFF" -F csv $B -- $N | awk -F, '$18 == "hot" { print $11 }')" moderated \
  "3 vs 3 uses the moderated t-test"
# shellcheck disable=SC2086
pct=$("$DIFF" -F csv $B -- $N | awk -F, '$18 == "hot" { print int($5) }')
ok "3 vs 3: hot change near +20% ($pct)" test "$pct" -ge 15 -a "$pct" -le 25

out=$(verdicts "$TMPD/base1.fxt" "$TMPD/new1.fxt")
is "$out" "~,cold
SLOWER,hot
~,leaf
~,main
~,rec" "1 vs 1: hot is slower (main, one call a side, cannot be tested)"
is "$("$DIFF" -F csv "$TMPD/base1.fxt" "$TMPD/new1.fxt" | awk -F, '$18 == "hot" { print $11 }')" \
  moderated "1 vs 1 uses the same model, with the calls' spread"

# Base against base: nothing flagged.
# shellcheck disable=SC2086
is "$(verdicts $B -- "$TMPD/base1.fxt" "$TMPD/base2.fxt" | cut -d, -f1 | sort -u)" "~" \
  "runs of the same program: no verdict"

# --fail-above: 1 when a significant slowdown is above it, else 0.
# shellcheck disable=SC2086
"$DIFF" --fail-above 10 $B -- $N >/dev/null 2>"$TMPD/err"
is "$?" 1 "--fail-above 10: exit 1"
is "$(grep -c 'hot is' "$TMPD/err")" 1 "--fail-above names the function"
# shellcheck disable=SC2086
"$DIFF" --fail-above 40 $B -- $N >/dev/null 2>&1
is "$?" 0 "--fail-above 40: exit 0"
# shellcheck disable=SC2086
"$DIFF" --fail-above 10 $N -- $B >/dev/null 2>&1
is "$?" 0 "--fail-above ignores speedups"
# shellcheck disable=SC2086
"$DIFF" --threshold 30 --fail-above 10 $B -- $N >/dev/null 2>&1
is "$?" 0 "--threshold 30: +20% is never flagged"

# Options anywhere, as with GNU tools; --vs (or the first --) parts the
# sides, and a second one is an error.
# shellcheck disable=SC2086
"$DIFF" $B -- $N --fail-above 10 >/dev/null 2>"$TMPD/err"
is "$?/$(grep -c 'hot is' "$TMPD/err")" 1/1 "options after the archives: the same gate"
# shellcheck disable=SC2086
"$DIFF" -F csv $B --vs $N -t 5 >"$TMPD/vs.csv" 2>&1
# shellcheck disable=SC2086
is "$(cat "$TMPD/vs.csv")" "$("$DIFF" -F csv -t 5 $B -- $N 2>&1)" "--vs parts the sides as -- does"
"$DIFF" "$TMPD/base1.fxt" "$TMPD/new1.fxt" --fail-above 10 >/dev/null 2>&1
is "$?" 1 "1 vs 1, options last"
"$DIFF" "$TMPD/base1.fxt" --vs "$TMPD/new1.fxt" -- "$TMPD/new2.fxt" >/dev/null 2>"$TMPD/err"
is "$?/$(cat "$TMPD/err" | head -1)" "2/fxt-diff: --vs (or --) given twice" "--vs and -- together: exit 2"
# Calls as integers; means of repeated runs say so.
is "$("$DIFF" "$TMPD/base1.fxt" "$TMPD/new1.fxt" | awk '$NF == "(function)" && $(NF-1) == "hot" { print $(NF-3) "/" $(NF-2) }')" \
  "5333/5333" "calls as integers"
# shellcheck disable=SC2086
ok "repeated runs: the header says calls are means" sh -c '"$1" "$2" "$3" --vs "$4" "$5" | head -1 | grep -q "; calls: mean per run$"' \
  sh "$DIFF" "$TMPD/base1.fxt" "$TMPD/base2.fxt" "$TMPD/new1.fxt" "$TMPD/new2.fxt"

# A function missing from a run of a side (valid.fxt has none of gen's)
# gets Welch's t on the adjusted totals, zero where missing.
# shellcheck disable=SC2086
is "$("$DIFF" -F csv "$TMPD/base1.fxt" "$MK_VALID" --vs "$TMPD/new1.fxt" "$TMPD/new2.fxt" 2>/dev/null |
  awk -F, '$18 == "hot" { print $11 }')" welch "missing from a run: Welch's t-test"

# Functions only on one side.
"$GEN" --events 100 -o "$TMPD/a.fxt"
"$DIFF" -F json "$TMPD/a.fxt" "$TMPD/base1.fxt" >"$TMPD/j" 2>&1
is "$?" 0 "json output"
if [ -n "$PYTHON3" ]; then
  is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["base_runs"], d["new_runs"], len(d["functions"]), d["functions"][0]["name"])' "$TMPD/j")" \
    "1 1 5 main" "json parses; largest change first"
  # shellcheck disable=SC2086
  "$DIFF" -F json $B -- $N >"$TMPD/j3"
  is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["whole_run"]
hot = [f for f in d["functions"] if f["name"] == "hot"][0]
print(w["measured"], w["functions"], len(w["run_factors_pct"]), d["tested"],
      hot["verdict"], hot["q"] < 0.05, type(hot["calls_base"]).__name__)' "$TMPD/j3")" \
    "False 5 6 5 SLOWER True int" "json: the whole run (5 functions: not measured), q, calls whole"
else
  skip "python3 not found"
  skip "python3 not found"
fi
# Names with control characters and bytes that are not UTF-8 (extreme.fxt).
is "$("$DIFF" -F json "$TMPD/mk/extreme.fxt" "$TMPD/mk/extreme.fxt" | grep -o '"name":"a[^,]*,')" \
  '"name":"a\u0009b\u001b[1m\ufffd",' "json: control characters escaped, invalid UTF-8 replaced"
is "$("$DIFF" "$TMPD/mk/extreme.fxt" "$TMPD/mk/extreme.fxt" | grep -c '  a\\x09b\\x1b\[1m\\xff (cat)')" 1 \
  "text: control characters and invalid UTF-8 shown as \\xNN"
# Drops (valid.fxt: 12 on one thread): the side that has them is named.
is "$("$DIFF" "$TMPD/base1.fxt" "$TMPD/mk/valid.fxt" | grep 'calls dropped')" \
  "# new $TMPD/mk/valid.fxt: 12 calls dropped: totals are partial" \
  "text: the new side's drops in the header"
is "$("$DIFF" -F json "$TMPD/mk/valid.fxt" "$TMPD/base1.fxt" | grep -o '"base_dropped":[0-9]*,"new_dropped":[0-9]*')" \
  '"base_dropped":12,"new_dropped":0' "json: drops per side"
is "$("$DIFF" -F csv "$TMPD/mk/valid.fxt" "$TMPD/base1.fxt" 2>&1 >/dev/null | grep 'calls dropped')" \
  "fxt-diff: base $TMPD/mk/valid.fxt: 12 calls dropped: totals are partial" \
  "csv: the base side's drops on standard error"
# valid.fxt also has another writer's "buffer full" provider event.
is "$("$DIFF" "$TMPD/base1.fxt" "$TMPD/mk/valid.fxt" | grep 'buffer filled')" \
  "# new $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, totals may be partial" \
  "text: the new side's full buffer in the header"
is "$("$DIFF" -F json "$TMPD/mk/valid.fxt" "$TMPD/base1.fxt" | grep -o '"base_buffer_full":[0-9]*,"new_buffer_full":[0-9]*')" \
  '"base_buffer_full":1,"new_buffer_full":0' "json: full buffers per side"
is "$("$DIFF" -F csv "$TMPD/mk/valid.fxt" "$TMPD/base1.fxt" 2>&1 >/dev/null | grep 'buffer filled')" \
  "fxt-diff: base $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, totals may be partial" \
  "csv: the base side's full buffer on standard error"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$DIFF" -F csv "$TMPD/mk/bad-ref-call.fxt" "$TMPD/mk/bad-ref-call.fxt" 2>/dev/null | grep -c ',(unregistered string)$')" 1 \
  "unregistered name: a placeholder"
finish
