#!/bin/sh
# fxt-diff against noise: does the gate cry wolf, and does it catch what
# it should?  Runs of one program of 100 functions (tests/helpers/mkruns),
# each run's durations all multiplied by a machine factor (5% sd) and each
# call's by its own noise (20% sd, and a few calls preempted):
#   - 10 pairs of runs of the same program, one run a side: the gate
#     (--fail-above 10) fires at most once;
#   - 10 comparisons of the same program, three runs a side: never;
#   - one function of 300 calls made 20% slower: caught with three runs a
#     side, and with one (it has >= 200 calls), and nothing else flagged
#     but its callers;
#   - the whole program 40% slower: with three runs a side the "whole run"
#     line says so and the gate fires; with one run a side it is not
#     tested, and no function is taken for slower because of it.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
DIFF=$abs_top_builddir/fxt-diff
MK=$HELPERS/mkruns
scratch
plan 14

# run NAME SEED [OPTION...]: one run of the program.
run() { run_name=$1 run_seed=$2; shift 2; "$MK" --seed "$run_seed" "$@" -o "$TMPD/$run_name.fxt"; }

for s in $(seq 1 80); do run "s$s" "$s"; done
for s in 1 2 3; do
  run "slow$s" $((100 + s)) --slow fn_043:20
  run "whole$s" $((200 + s)) --scale 40
done
is "$("$MK" --list | awk '$1 == "fn_043" { print $2 }')" 300 "fn_043 has 300 calls"

# gate ARGS...: 1 when the gate fired (exit 1), 0 when not, else the status.
gate() {
  "$DIFF" --fail-above 10 "$@" >"$TMPD/out" 2>"$TMPD/err"
  rc=$?
  [ $rc -le 1 ] && echo $rc || echo "status $rc"
}

one=0 three=0 flagged=0
for i in $(seq 0 9); do
  a=$((2 * i + 1)) b=$((2 * i + 2)) x=$((20 + 6 * i))
  one=$((one + $(gate "$TMPD/s$a.fxt" "$TMPD/s$b.fxt")))
  three=$((three + $(gate "$TMPD/s$((x + 1)).fxt" "$TMPD/s$((x + 2)).fxt" "$TMPD/s$((x + 3)).fxt" \
    --vs "$TMPD/s$((x + 4)).fxt" "$TMPD/s$((x + 5)).fxt" "$TMPD/s$((x + 6)).fxt")))
  flagged=$((flagged + $(grep -cE '^(SLOWER|FASTER)' "$TMPD/out")))
done
ok "one run a side, same program: the gate fired $one times in 10 (at most 1)" test "$one" -le 1
is "$three" 0 "three runs a side, same program: the gate never fired"
is "$flagged" 0 "three runs a side, same program: no function flagged"

B3="$TMPD/s1.fxt $TMPD/s2.fxt $TMPD/s3.fxt"
S3="$TMPD/slow1.fxt $TMPD/slow2.fxt $TMPD/slow3.fxt"
W3="$TMPD/whole1.fxt $TMPD/whole2.fxt $TMPD/whole3.fxt"
# flagged: the flagged functions, one line, by name.
flagged() { grep -E '^(SLOWER|FASTER)' "$TMPD/out" | grep -oE '[a-z_0-9]+ \(prog\)' | sort | tr '\n' ' '; }

# shellcheck disable=SC2086
is "$(gate $B3 --vs $S3)" 1 "fn_043 +20%, three runs a side: the gate fires"
is "$(grep -c '^fxt-diff: fn_043 is' "$TMPD/err")" 1 "three runs a side: it names fn_043"
ok "three runs a side: only fn_043 and its callers flagged ($(flagged))" \
  sh -c "! grep -E '^(SLOWER|FASTER)' '$TMPD/out' | grep -v -E ' (fn_043|phase_[0-9]+|main) \\(prog\\)'"
is "$(gate "$TMPD/s4.fxt" "$TMPD/slow1.fxt")" 1 "fn_043 +20%, one run a side: the gate fires"
is "$(grep -c '^fxt-diff: fn_043 is' "$TMPD/err")" 1 "one run a side: it names fn_043"

# The whole program slower: a line of its own; tested with repeated runs.
# shellcheck disable=SC2086
is "$(gate $B3 --vs $W3)" 1 "whole program +40%, three runs a side: the gate fires"
is "$(grep -c '^fxt-diff: the whole run is' "$TMPD/err")/$(grep -cE '^(SLOWER|FASTER)' "$TMPD/out")" \
  1/0 "... on the whole run, and no function is flagged for it"
ok "the whole run's line: its change and verdict" \
  grep -qE '^# whole run: \+(3[0-9]|4[0-9])\.[0-9]%, p [0-9.e-]+: SLOWER \(100 functions in every run' "$TMPD/out"
is "$(gate "$TMPD/s5.fxt" "$TMPD/whole1.fxt")" 0 "one run a side: the whole run does not gate"
ok "... and the line says why" grep -q '^# whole run: +[0-9.]*%, not tested: with one run a side' "$TMPD/out"
finish
