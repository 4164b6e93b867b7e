#!/bin/sh
# bench/sample.sh: the cost of stack sampling, side by side in one run.
# Not a test.
#
#   make bench-sample               (from the build tree), or
#   abs_top_builddir=BUILD sh bench/sample.sh
#
# Workload: bench/sample_hotcold -t ROUNDS (tests/progs/sample_hotcold.c, -O2,
# no hooks: a CPU-bound loop), which reports the CPU and wall time of its
# work alone.  Variants, interleaved REPS times:
#   plain        no agent
#   agent        the agent preloaded, FXT_SAMPLE=0 (libc wrappers default)
#   sample=HZ    the agent with FXT_SAMPLE=HZ (1000, then 10000)
# Columns: the median (STAT) over the runs of the work's CPU time and wall time,
# the CPU overhead against plain, and the whole process's wall time (start
# to exit, the archive's flush included).
#
# Linux fires CPU-time timers from its scheduler tick, so the samples
# actually taken are at most CONFIG_HZ per second per thread (often 250),
# whatever FXT_SAMPLE asks; each sample then costs one signal and one
# stack walk.
#
# Environment: ROUNDS (40, about 1 s of CPU), REPS (5), STAT (median, or
# best: the least of the runs), BENCH_DIR.
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
ROUNDS=${ROUNDS:-40}
REPS=${REPS:-5}
STAT=${STAT:-median}
W=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-sample.XXXXXX")}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT

PROG=$B/bench/sample_hotcold
AGENT=$B/.libs/libfxt-agent.so
for f in "$PROG" "$AGENT"; do
  [ -e "$f" ] || { echo "bench: $f is missing (run make first)" >&2; exit 1; }
done

now_ns() { date +%s%N; }

# run VARIANT: one run; appends "cpu_ns work_wall_ns total_wall_ns" to
# $W/VARIANT.
run() {
  v=$1
  t0=$(now_ns)
  case $v in
  plain) "$PROG" -t "$ROUNDS" >/dev/null 2>"$W/err" ;;
  agent) FXT_OUTPUT=$W/out.fxt FXT_SAMPLE=0 LD_PRELOAD=$AGENT \
    "$PROG" -t "$ROUNDS" >/dev/null 2>"$W/err" ;;
  sample=*) FXT_OUTPUT=$W/out.fxt FXT_SAMPLE=${v#sample=} LD_PRELOAD=$AGENT \
    "$PROG" -t "$ROUNDS" >/dev/null 2>"$W/err" ;;
  esac
  t1=$(now_ns)
  rm -f "$W"/out.fxt*
  awk -v total=$((t1 - t0)) '$1 == "work" { print $2, $3, total }' "$W/err" >>"$W/$v"
}

# pick FILE COLUMN: the median of the column (STAT=median) or its least
# value (STAT=best: the least disturbed run, on a shared machine).
pick() {
  sort -n -k "$2" "$1" | awk -v c="$2" -v s="$STAT" '{ v[NR] = $c }
    END { print s == "best" ? v[1] : v[int((NR + 1) / 2)] }'
}

VARIANTS="plain agent sample=1000 sample=10000"
for v in $VARIANTS; do : >"$W/$v"; done
i=0
while [ $i -lt "$REPS" ]; do
  for v in $VARIANTS; do run "$v"; done
  i=$((i + 1))
done

base=$(pick "$W/plain" 1)
printf '%-14s %10s %10s %9s %12s\n' variant "cpu ms" "wall ms" "cpu +%" "process ms"
for v in $VARIANTS; do
  cpu=$(pick "$W/$v" 1)
  wall=$(pick "$W/$v" 2)
  total=$(pick "$W/$v" 3)
  awk -v n="$v" -v c="$cpu" -v w="$wall" -v t="$total" -v b="$base" 'BEGIN {
    printf "%-14s %10.1f %10.1f %+8.2f%% %12.1f\n", n, c / 1e6, w / 1e6, (c - b) * 100 / b, t / 1e6 }'
done
echo "($STAT of $REPS runs, $ROUNDS rounds; CONFIG_HZ caps the samples actually taken)"
