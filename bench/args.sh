#!/bin/sh
# What --args/--retval add to a patched call, side by side in one run:
#
#   plain        bench/args-calls MODE N, not traced (the baseline)
#   patched      fxt-run --patch=FN: the calls, nothing read
#   ints         ... --args=add2 --retval=add2: two integers and the result
#   string       ... --args=measure: a 40-byte string (copied with plain
#                loads, agent/patch/probe.c; by the kernel when a program
#                starts with SIGSEGV ignored: ~1.5 us)
#
# Each is the best of REPS (default 5) runs, the runs of all six taken in
# turn.  With BASE=BUILD (another build folder: the commit before a
# change), that build's fxt-run runs the four traced ones too, in the same
# rounds, and gets rows and ratios of its own.  A call's cost is the time it adds to the program's loop, which
# the program times itself in its thread's CPU time (args_calls.c):
# (loop(traced) - loop(plain)) / N; the conversion fxt-run does after the
# program is apart (its whole-run time per call, on the wall clock, is
# shown too).  Goals (issue 27): ints <= 1.5x a patched call without
# them, string <= 2x.
#
#   make bench-args [N=2000000] [REPS=5] [BASE=BUILD]
set -eu
B=${abs_top_builddir:?run through make bench-args}
n=${N:-2000000}
reps=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-args.XXXXXX")
trap 'rm -rf "$work"' EXIT
P=$B/bench/args-calls

now() { date +%s%N; }
# run NAME CMD...: runs CMD once; appends "LOOP WALL" (ns) to $work/NAME.
run() {
  name=$1
  shift
  t0=$(now)
  l=$("$@" 2>/dev/null | awk '$1 == "loop_ns" { print $2 }') ||
    { echo "bench-args: failed: $*" >&2; exit 1; }
  w=$(( $(now) - t0 ))
  [ -n "$l" ] || { echo "bench-args: failed: $*" >&2; exit 1; }
  echo "$l $w" >>"$work/$name"
}
# best NAME: "LOOP WALL", the best of each over the runs of NAME.
best() { sort -n -k1,1 "$work/$1" | head -1 | cut -d' ' -f1; sort -n -k2,2 "$work/$1" | head -1 | cut -d' ' -f2; }
# cost NAME PLAIN: "CALL WHOLE", the ns a call adds to the program's loop
# and to the whole run (conversion included), against the plain runs.
cost() {
  set -- $(best "$1") $(best "$2")
  awk -v tl="$1" -v tw="$2" -v pl="$3" -v pw="$4" -v n="$n" \
    'BEGIN { printf "%.2f %.2f\n", (tl - pl) / n, (tw - pw) / n }'
}
# The runs interleaved, a round of each at a time: a machine whose load
# changes meanwhile weighs on them all alike.
base=${BASE:-}
if [ -n "$base" ]; then
  case $base in /*) ;; *) base=$(pwd)/$base ;; esac
  [ -x "$base/fxt-run" ] || { echo "bench-args: no fxt-run in BASE=$base" >&2; exit 2; }
fi
# fxt [-base] ARGS...: this build's fxt-run (BASE's with -base).
fxt() {
  f=$B/fxt-run
  [ "$1" != -base ] || { f=$base/fxt-run; shift; }
  "$f" -q -f -o "$work/t.fxt" "$@"
}
# traced SUFFIX [-base]: the four traced runs of a round.
traced() {
  b=${2:-}
  run ints.patched$1 fxt $b --patch='^add2$' -- "$P" ints "$n"
  run ints.args$1 fxt $b --patch='^add2$' --args='^add2$' --retval='^add2$' -- "$P" ints "$n"
  run str.patched$1 fxt $b --patch='^measure$' -- "$P" str "$n"
  run str.args$1 fxt $b --patch='^measure$' --args='^measure$' -- "$P" str "$n"
}
i=0
while [ $i -lt "$reps" ]; do
  run ints.plain "$P" ints "$n"
  run str.plain "$P" str "$n"
  [ -z "$base" ] || traced .base -base
  traced ""
  i=$((i + 1))
done
# table SUFFIX TITLE: the rows and ratios of one build.
table() {
  awk -v title="$2" -v i0="$(cost ints.patched$1 ints.plain)" -v i="$(cost ints.args$1 ints.plain)" \
    -v s0="$(cost str.patched$1 str.plain)" -v s="$(cost str.args$1 str.plain)" 'BEGIN {
    split(i0, I0, " "); split(i, I, " "); split(s0, S0, " "); split(s, S, " ")
    printf "%s\n", title
    printf "%-44s %10.1f %12.1f\n", "add2(long, long), patched", I0[1], I0[2]
    printf "%-44s %10.1f %12.1f\n", "... --args --retval (2 integers, the result)", I[1], I[2]
    printf "%-44s %10.1f %12.1f\n", "measure(const char *), patched", S0[1], S0[2]
    printf "%-44s %10.1f %12.1f\n", "... --args (a 40-byte string)", S[1], S[2]
    printf "integers and result / patched, per call: %.2fx (goal <= 1.5x); whole run %.2fx\n", I[1] / I0[1], I[2] / I0[2]
    printf "string / patched, per call: %.2fx (goal <= 2x); whole run %.2fx\n", S[1] / S0[1], S[2] / S0[2]
  }'
}
printf "best of %d runs, %d calls each; ns a call adds to the untraced program\n" "$reps" "$n"
printf "%-44s %10s %12s\n" "" "the call" "whole run"
[ -z "$base" ] || table .base "BASE ($base)"
table "" "this build"
