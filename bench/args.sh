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
# Each is the best of REPS (default 5) runs.  A call's cost is the time
# it adds to the program's loop (which the program times itself):
# (loop(traced) - loop(plain)) / N; the conversion fxt-run does after the
# program is apart (its whole-run time per call is shown too).  Goals
# (issue 27): ints <= 1.5x a patched call without them, string <= 2x.
#
#   make bench-args [N=2000000] [REPS=5]
set -eu
B=${abs_top_builddir:?run through make bench-args}
n=${N:-2000000}
reps=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-args.XXXXXX")
trap 'rm -rf "$work"' EXIT
P=$B/bench/args-calls

now() { date +%s%N; }
# best CMD...: "LOOP WALL", the best loop time and the best wall time of
# reps runs, in ns.
best() {
  bl= bw=
  i=0
  while [ $i -lt "$reps" ]; do
    t0=$(now)
    l=$("$@" 2>/dev/null | awk '$1 == "loop_ns" { print $2 }') ||
      { echo "bench-args: failed: $*" >&2; exit 1; }
    w=$(( $(now) - t0 ))
    [ -n "$l" ] || { echo "bench-args: failed: $*" >&2; exit 1; }
    if [ -z "$bl" ] || [ "$l" -lt "$bl" ]; then bl=$l; fi
    if [ -z "$bw" ] || [ "$w" -lt "$bw" ]; then bw=$w; fi
    i=$((i + 1))
  done
  echo "$bl $bw"
}
# cost MODE FN [OPTIONS]: "CALL WHOLE", the ns a call of FN adds to the
# program's loop, and to the whole run (conversion included).
cost() {
  mode=$1 fn=$2
  shift 2
  p=$(best "$P" "$mode" "$n")
  t=$(best "$B/fxt-run" -q -f -o "$work/t.fxt" --patch="^$fn\$" "$@" -- "$P" "$mode" "$n")
  awk -v t="$t" -v p="$p" -v n="$n" 'BEGIN {
    split(t, a, " "); split(p, b, " ")
    printf "%.2f %.2f\n", (a[1] - b[1]) / n, (a[2] - b[2]) / n }'
}
ints0=$(cost ints add2)
ints=$(cost ints add2 --args='^add2$' --retval='^add2$')
str0=$(cost str measure)
str=$(cost str measure --args='^measure$')
awk -v n="$n" -v reps="$reps" -v i0="$ints0" -v i="$ints" -v s0="$str0" -v s="$str" 'BEGIN {
  split(i0, I0, " "); split(i, I, " "); split(s0, S0, " "); split(s, S, " ")
  printf "best of %d runs, %d calls each; ns a call adds to the untraced program\n", reps, n
  printf "%-44s %10s %12s\n", "", "the call", "whole run"
  printf "%-44s %10.1f %12.1f\n", "add2(long, long), patched", I0[1], I0[2]
  printf "%-44s %10.1f %12.1f\n", "... --args --retval (2 integers, the result)", I[1], I[2]
  printf "%-44s %10.1f %12.1f\n", "measure(const char *), patched", S0[1], S0[2]
  printf "%-44s %10.1f %12.1f\n", "... --args (a 40-byte string)", S[1], S[2]
  printf "integers and result / patched, per call: %.2fx (goal <= 1.5x); whole run %.2fx\n", I[1] / I0[1], I[2] / I0[2]
  printf "string / patched, per call: %.2fx (goal <= 2x); whole run %.2fx\n", S[1] / S0[1], S[2] / S0[2]
}'
