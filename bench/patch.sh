#!/bin/sh
# Run-time patching's cost (fxt-run --patch), side by side in one run with
# the -finstrument-functions hook and with uftrace's own patching:
#
#   plain      bench/fib-plain N + 6, not traced (the patched side's baseline)
#   patched    fxt-run --patch=. bench/fib-plain N + 6
#   hplain     bench/fib N, the hooked build not traced (its hooks are the C
#              library's empty ones)
#   nplain     bench/fib-plain N, not traced (the hooked side's baseline)
#   hooks      fxt-run bench/fib N (the same source with -finstrument-functions)
#   uftrace    uftrace record -P. bench/fib-plain N + 6 (when installed; the
#              first UREPS rounds only, default 3: its 2 s a run)
#
# gcc -O2 turns part of plain fib's recursion into loops: fib-plain makes
# about 20 times fewer calls than the hooked build, so it runs fib(N + 6)
# to make about as many (the calls are counted in each run's archive).
# The cost of a call is what tracing adds, less each tool's fixed cost
# (the same run of fib(1)):
#   ((traced(N) - traced(1)) - (untraced(N) - untraced(1))) / calls
# on the wall clock, the conversion after the program included; and, in
# the program (the CPU time of fib's work, which fib prints: the
# trampolines or hooks alone), (work(traced) - work(untraced)) / calls.
# Each side's untraced program is the uninstrumented build, fib-plain, of
# the same N: the patched side pays all of its plumbing (the jump to the
# stub, the trampolines' calls and returns), and so does the hooked side
# (the calls of the hooks through the PLT and the calls the instrumented
# code makes; against the hooked build run untraced, as before, those
# were left out of the hook's cost: the "vs untraced hooks" figure, still
# printed).
#
# The runs go in REPS (default 15) rounds, each round one run of each, so
# that a machine whose load changes meanwhile weighs on all alike.  A run
# on a loaded 2-core machine lands in one of two clusters (a core to
# itself, or shared: some 20 against 45-50 ns a call in the program), so
# a median of a few rounds lands in either; each side's figure is the
# PCT-th percentile (default 25) of its rounds' per-call costs (the median
# beside it), and the ratio is that of the two percentiles.  With
# BASE=BUILD (another build folder: the commit before a change), that
# build's fxt-run runs the traced ones too, in the same rounds, with rows
# and ratios of its own.  Goals (issue 29): patched within 1.15x of the
# hook per call, and a faster whole run than uftrace's.
#
#   make bench-patch [N=32] [REPS=15] [PCT=25] [UREPS=3] [BASE=BUILD]
set -eu
B=${abs_top_builddir:?run through make bench-patch}
# shellcheck source=bench/group.sh
. "$(cd "$(dirname "$0")" && pwd)/group.sh"
n=${N:-32}
reps=${REPS:-15}
pct=${PCT:-25}
ureps=${UREPS:-3}
case $reps$pct$ureps in *[!0-9]*) echo "bench-patch: REPS, PCT and UREPS are numbers" >&2; exit 2 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-patch.XXXXXX")
trap 'rm -rf "$work"' EXIT
base=${BASE:-}
if [ -n "$base" ]; then
  case $base in /*) ;; *) base=$(pwd)/$base ;; esac
  [ -x "$base/fxt-run" ] || { echo "bench-patch: no fxt-run in BASE=$base" >&2; exit 2; }
fi

now() { date +%s%N; }
# run NAME CMD...: runs CMD once; appends "WALL WORK" (ns; WORK the
# cpu_ns fib prints) to $work/NAME.
run() {
  name=$1
  shift
  t0=$(now)
  w=$("$@" 2>/dev/null | sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p') ||
    { echo "bench-patch: failed: $*" >&2; exit 1; }
  t=$(( $(now) - t0 ))
  [ -n "$w" ] || { echo "bench-patch: failed: $*" >&2; exit 1; }
  echo "$t $w" >>"$work/$name"
  settle
}
slices() { "$B/fxt-dump" --stats "$1" | awk '$1 == "event.begin" { b = $2 } $1 == "event.complete" { c = $2 } END { print b + c }'; }
# traced SUFFIX FXT-RUN: the traced runs of a round with that fxt-run.
traced() {
  f=$2
  run "patched$1" "$f" -q -f -o "$work/p$1.fxt" --patch=. -- "$B/bench/fib-plain" "$pn"
  run "patched1$1" "$f" -q -f -o "$work/p1$1.fxt" --patch=. -- "$B/bench/fib-plain" 1
  run "hooks$1" "$f" -q -f -o "$work/h$1.fxt" -- "$B/bench/fib" "$n"
  run "hooks1$1" "$f" -q -f -o "$work/h1$1.fxt" -- "$B/bench/fib" 1
}

pn=$((n + 6))
U=
if command -v "${UFTRACE:-uftrace}" > /dev/null 2>&1; then
  U=${UFTRACE:-uftrace}
fi
load0=$(cut -d' ' -f1 /proc/loadavg)
i=0
while [ $i -lt "$reps" ]; do
  run plain "$B/bench/fib-plain" "$pn"
  run plain1 "$B/bench/fib-plain" 1
  run hplain "$B/bench/fib" "$n"
  run hplain1 "$B/bench/fib" 1
  run nplain "$B/bench/fib-plain" "$n"
  [ -z "$base" ] || traced .base "$base/fxt-run"
  traced "" "$B/fxt-run"
  if [ -n "$U" ] && [ $i -lt "$ureps" ]; then
    # uftrace prints the program's output too: its line is fib's.
    run uft "$U" record -P. -d "$work/uft.d" "$B/bench/fib-plain" "$pn"
    run uft1 "$U" record -P. -d "$work/uft1.d" "$B/bench/fib-plain" 1
  fi
  i=$((i + 1))
done
load1=$(cut -d' ' -f1 /proc/loadavg)
pcalls=$(slices "$work/p.fxt")
hcalls=$(slices "$work/h.fxt")
ucalls=
[ -z "$U" ] || ucalls=$("$U" report -d "$work/uft.d" -f call 2>/dev/null | awk 'NR > 2 { s += $1 } END { print s }')

# rounds NAME...: one line a round, the "WALL WORK" of each NAME in turn.
rounds() {
  files=
  for f in "$@"; do files="$files $work/$f"; done
  # shellcheck disable=SC2086
  paste -d' ' $files
}
# AWK_PCT: med(a, k) and pct(a, k, p) (the nearest-rank p-th percentile)
# of a[1..k], each sorting a in place.
AWK_PCT='
function srt(a, k,   i, j, t) {
  for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
}
function med(a, k) { srt(a, k); return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
function pct(a, k, p,   r) { srt(a, k); r = int((p * k + 99) / 100); return a[r < 1 ? 1 : r] }
'
# costs TRACED TRACED1 UNTRACED UNTRACED1 CALLS: one tool's per-call
# figures over the rounds (its traced run, its fixed cost, the untraced
# program and its fixed cost; rounds it did not run are left out):
# "MS FIXED_MS NS_CALL_PCT NS_CALL_MEDIAN IN_PROGRAM_PCT IN_PROGRAM_MEDIAN".
costs() {
  rounds "$1" "$2" "$3" "$4" | awk -v c="$5" -v p="$pct" "$AWK_PCT"'
    NF == 8 { k++; ms[k] = $1 / 1e6; fx[k] = $3 / 1e6
      call[k] = (($1 - $3) - ($5 - $7)) / c; prog[k] = ($2 - $6) / c
      call2[k] = call[k]; prog2[k] = prog[k] }
    END { printf "%.1f %.1f %.1f %.1f %.1f %.1f\n", med(ms, k), med(fx, k),
      pct(call, k, p), med(call2, k), pct(prog, k, p), med(prog2, k) }'
}
# med1 NAME: the median wall time of NAME's runs, in ms.
med1() { sort -n "$work/$1" | awk '{ v[NR] = $1 / 1e6 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

printf "%d interleaved rounds; fib-plain(%d) and fib(%d) (hooks); per call: the %dth percentile of the rounds (median); load %s -> %s\n" \
  "$reps" "$pn" "$n" "$pct" "$load0" "$load1"
printf "%-38s %9s %9s %10s %15s %15s\n" "" "ms" "fixed ms" "calls" "ns/call" "in program"
printf "%-38s %9.1f %9.1f\n" "fib-plain(N + 6), not traced" "$(med1 plain)" "$(med1 plain1)"
printf "%-38s %9.1f %9.1f\n" "fib-plain(N), not traced" "$(med1 nplain)" "$(med1 plain1)"
printf "%-38s %9.1f %9.1f\n" "fib (hooks), not traced" "$(med1 hplain)" "$(med1 hplain1)"
# table SUFFIX TITLE
table() {
  # shellcheck disable=SC2046
  set -- "$1" "$2" $(costs "patched$1" "patched1$1" plain plain1 "$pcalls") \
    $(costs "hooks$1" "hooks1$1" nplain plain1 "$hcalls") \
    $(costs "hooks$1" "hooks1$1" hplain hplain1 "$hcalls")
  printf "%s\n" "$2"
  printf "%-38s %9.1f %9.1f %10d %6.1f (%6.1f) %6.1f (%6.1f)\n" "fxt-run --patch=. fib-plain" \
    "$3" "$4" "$pcalls" "$5" "$6" "$7" "$8"
  printf "%-38s %9.1f %9.1f %10d %6.1f (%6.1f) %6.1f (%6.1f)\n" "fxt-run fib (-finstrument-functions)" \
    "$9" "${10}" "$hcalls" "${11}" "${12}" "${13}" "${14}"
  printf "%-38s %9s %9s %10s %6.1f (%6.1f) %6.1f (%6.1f)\n" "  the same, vs untraced hooks" \
    "" "" "" "${17}" "${18}" "${19}" "${20}"
  awk -v pw="$5" -v pp="$7" -v hw="${11}" -v hp="${13}" -v ow="${17}" -v op="${19}" 'BEGIN {
    printf "patched / hook, per call: %.2fx (goal <= 1.15x); in the program %.2fx", pw / hw, pp / hp
    printf " (vs untraced hooks: %.2fx, %.2fx)\n", pw / ow, pp / op }'
}
[ -z "$base" ] || table .base "BASE ($base)"
table "" "this build"
if [ -n "$U" ]; then
  # shellcheck disable=SC2046
  set -- $(costs uft uft1 plain plain1 "$ucalls")
  printf "%-38s %9.1f %9.1f %10d %6.1f (%6.1f)   (%d rounds)\n" "uftrace record -P. fib-plain" \
    "$1" "$2" "$ucalls" "$3" "$4" "$(wc -l <"$work/uft")"
  awk -v u="$1" -v p="$(costs patched patched1 plain plain1 "$pcalls" | cut -d' ' -f1)" \
    'BEGIN { printf "uftrace / fxt-run --patch, whole run: %.2fx (goal > 1x)\n", u / p }'
fi
