#!/bin/sh
# The hooks' cost the agent measures at exit (the instant "fxt: hook
# cost") and fxt-report / fxt-diff --subtract-overhead, on
# tests/progs/numbered, whose calls are known in number: one measure per
# process that recorded more than a chunk, none for a short one; each
# call's time loses its own "inside" and one pair per hooked call under it
# (checked to the rounding of the printed figures), on every thread of the
# process; libc calls keep their times; the headers say what was taken,
# or that the archive had no measure.  Whether the corrected times match
# an untraced run is measured, not tested: bench/overhead.sh.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
NUM=$PROGS/numbered
REPORT=$abs_top_builddir/fxt-report
DIFF=$abs_top_builddir/fxt-diff
scratch
cd "$TMPD" || exit 1
plan 18

N=100000
# The hooked calls under main (single thread) and under a thread's count().
under_count=$(awk -v n=$N 'BEGIN { c = n; for (i = 0; i < n; i++) c += length(i ""); print c }')
under_main=$((under_count + 1))

# json KEY FILE: the number fxt-report's json gives KEY.
json() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2" | head -1; }
# row CSV FIELD NAME [TID]: FIELD (2 total, 3 self) of NAME's row.
row() {
  awk -F, -v f="$2" -v n="$3" -v t="${4:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["name"] == n && (t == "" || $col["tid"] == t) { print $f; exit }' "$1"
}
# near GOT WANT SLACK: |GOT - WANT| <= SLACK.
near() { awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; exit !(d <= s && -d <= s) }'; }

"$FXT_RUN" -q -f --libc=none -o one.fxt -- "$NUM" $N >/dev/null 2>one.err
ok "numbered runs" test -s one.fxt
ok "the archive checks" sh -c '"$1" --check one.fxt >/dev/null 2>&1' sh "$FXT_DUMP"
is "$("$FXT_DUMP" one.fxt | grep -c 'name="fxt: hook cost"')" 1 "one measure of the hooks' cost"
"$REPORT" -O -F json one.fxt >one.json
pair=$(json hook_pair_ns one.json)
inside=$(json hook_inside_ns one.json)
ok "the measure: a pair costs more than 0 and less than 1 us ($pair ns)" \
  awk -v p="$pair" 'BEGIN { exit !(p > 0 && p < 1000) }'
ok "what is inside a call is below a pair ($inside ns)" \
  awk -v p="$pair" -v i="$inside" 'BEGIN { exit !(i < p && i > -p) }'

"$REPORT" -F csv one.fxt >raw.csv
"$REPORT" -O -F csv one.fxt >sub.csv
raw=$(row raw.csv 2 main)
sub=$(row sub.csv 2 main)
# (On a loaded machine the measure may exceed what the calls cost: a call
# estimated below 0 counts as 0.)
want=$(awk -v r="$raw" -v n=$under_main -v p="$pair" -v i="$inside" \
  'BEGIN { w = r - n * p - i; printf "%.0f", w < 0 ? 0 : w }')
# pair is printed to 0.001 ns: the slack is that over the calls.
ok "main loses a pair per call under it and its inside ($sub, want $want)" \
  near "$sub" "$want" $((under_main / 1000 + 2))
# A leaf loses its inside a call; its self time is the exact sum (its
# total counts a call estimated below 0 as 0).
raw_d=$(row raw.csv 3 d7)
sub_d=$(row sub.csv 3 d7)
calls_d=$(row raw.csv 1 d7)
want=$(awk -v r="$raw_d" -v n="$calls_d" -v i="$inside" 'BEGIN { printf "%.0f", r - n * i }')
ok "a leaf's self loses its inside a call ($sub_d, want $want)" \
  near "$sub_d" "$want" $((calls_d / 1000 + 2))
is "$(cut -d, -f1,10 sub.csv | sort)" "$(cut -d, -f1,10 raw.csv | sort)" \
  "the same rows and calls"
ok "the header says what was taken" \
  sh -c '"$1" -O one.fxt | grep -q "^# the hooks.* cost taken out: .* ns a call .*measured in 1 process$"' \
  sh "$REPORT"

# Threads: each thread of the process loses the same.
"$FXT_RUN" -q -f --libc=none -o thr.fxt -- "$NUM" $N 2 >/dev/null 2>&1
"$REPORT" -b thread -F csv thr.fxt >thr-raw.csv
"$REPORT" -b thread -O -F csv thr.fxt >thr-sub.csv
pair=$(json hook_pair_ns "$("$REPORT" -O -F json thr.fxt >thr.json; echo thr.json)")
inside=$(json hook_inside_ns thr.json)
good=0
for tid in $(awk -F, '$12 == "count" { print $10 }' thr-raw.csv); do
  raw=$(row thr-raw.csv 2 count "$tid")
  sub=$(row thr-sub.csv 2 count "$tid")
  want=$(awk -v r="$raw" -v n=$under_count -v p="$pair" -v i="$inside" \
    'BEGIN { w = r - n * p - i; printf "%.0f", w < 0 ? 0 : w }')
  near "$sub" "$want" $((under_count / 1000 + 2)) && good=$((good + 1))
done
is "$good" 2 "both threads' count() lose their hooks"

# libc calls keep their times.
"$FXT_RUN" -q -f --libc=mem -o mem.fxt -- "$NUM" $N >/dev/null 2>&1
is "$("$REPORT" -O -c '^libc\.' -F csv mem.fxt)" "$("$REPORT" -c '^libc\.' -F csv mem.fxt)" \
  "libc calls keep their times"

# A short process measures nothing (its exit does not wait for it); two
# long ones, one measure each.
"$FXT_RUN" -q -f --libc=none -o short.fxt -- "$NUM" 10 >/dev/null 2>&1
is "$("$FXT_DUMP" short.fxt | grep -c 'fxt: hook cost')" 0 "a short process: no measure"
ok "fxt-report -O says so" \
  sh -c '"$1" -O short.fxt | grep -q "says nothing of the hooks.* cost; times as measured"' \
  sh "$REPORT"
is "$("$REPORT" -O -F json short.fxt | json hook_pair_ns /dev/stdin)" "" "json: null"
"$FXT_RUN" -q -f --libc=none -o two.fxt -- sh -c '"$1" 50000 && "$1" 50000' sh "$NUM" \
  >/dev/null 2>&1
ok "two processes, two measures" \
  sh -c '"$1" -O two.fxt | grep -q "measured in 2 processes$"' sh "$REPORT"

# fxt-diff -O: each run its own measure; a run without one is named.
"$FXT_RUN" -q -f --libc=none -o one2.fxt -- "$NUM" $N >/dev/null 2>&1
"$DIFF" -O one.fxt one2.fxt >d.txt
ok "fxt-diff -O: the header gives both sides' cost" \
  grep -q "^# the hooks' cost taken out, a call: base [0-9.]* ns, new [0-9.]* ns$" d.txt
"$DIFF" -O short.fxt one2.fxt >d2.txt
ok "fxt-diff -O: a run without a measure is named" \
  grep -q "^# base short.fxt: no measure of the hooks' cost: times as measured$" d2.txt
is "$("$DIFF" -O -F json short.fxt one2.fxt | sed -n 's/.*"hook_pair_ns":\[\(null\),[0-9.]*\].*/\1/p')" \
  null "fxt-diff json: each run's measure, null for none"
finish
