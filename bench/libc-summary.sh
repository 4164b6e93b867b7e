#!/bin/sh
# bench/libc-summary.sh: what the libc wrappers cost, side by side in one
# run.  Not a test.
#
#   make bench-libc                  (from the build tree), or
#   abs_top_builddir=BUILD sh bench/libc-summary.sh
#
# 1. Per call: runs each libc bench program the build tree has, each of
#    which times its loops without the agent, with the agent and the
#    group off, and with the group recording, in one run, and prints its
#    own table:
#      bench/libc_mem AGENT_SO    malloc+free, lock+unlock (mem, sync)
#      bench/libc_io AGENT_SO     read and write of 1 byte, a pipe round
#                                 trip (io)
#    then one table of every row of theirs of the form
#      NAME PLAIN OFF RECORDING ...   (ns per iteration)
#    with what the agent adds per iteration and per wrapped call (a NAME
#    "a+b" is an iteration of two wrapped calls; a NAME starting with a
#    digit, e.g. 4-timestamps, is a reference, not a call), against the
#    issue's target for the mem and sync groups: under 25 ns added per
#    wrapped call.  Then bench/sample.sh: sampling at 1 and 10 kHz on a
#    CPU-bound program (the target: under 3% at 1 kHz).
# 2. Whole programs: unmodified Debian programs (sort, gzip, find) timed
#    plainly and under fxt-run with --libc=none (the agent loaded, nothing
#    recorded), the default groups and --libc=all: wall time, best of REPS
#    runs, and the slowdown over the plain run.
#
# Environment: REPS (3), BENCH_DIR (scratch directory, default under
# TMPDIR, removed at the end unless given).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
AGENT=$B/.libs/libfxt-agent.so
REPS=${REPS:-3}
if [ -n "${BENCH_DIR:-}" ]; then
  W=$BENCH_DIR
  mkdir -p "$W"
else
  W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-libc.XXXXXX")
  trap 'rm -rf "$W"' EXIT
fi
export LC_ALL=C

echo "== libc wrappers: cost per call ($(nproc) CPUs, $(uname -r))"
: >"$W/rows"
ran=0
for spec in "libc_mem $AGENT" "libc_io $AGENT"; do
  # shellcheck disable=SC2086
  set -- $spec
  prog=$B/bench/$1
  shift
  [ -x "$prog" ] || continue
  ran=$((ran + 1))
  echo
  echo "-- bench/${prog##*/} $*"
  if ! TMPDIR=$W "$prog" "$@" >"$W/out" 2>&1; then
    sed 's/^/   /' "$W/out"
    echo "   (failed)"
    continue
  fi
  sed 's/^/   /' "$W/out"
  # Rows "NAME PLAIN OFF RECORDING ...": a name, then numbers.
  awk -v src="${prog##*/}" '
    NF >= 4 && $1 !~ /^[0-9.+-]+$/ && $2 ~ /^[0-9.]+$/ && $3 ~ /^[0-9.]+$/ &&
      $4 ~ /^[0-9.]+$/ { print src, $1, $2, $3, $4 }' "$W/out" >>"$W/rows"
done
if [ "$ran" -eq 0 ]; then
  echo "no libc bench program built (bench/libc_mem, bench/libc_io)"
fi

if [ -s "$W/rows" ]; then
  echo
  echo "-- side by side: ns per iteration; added = over the plain run"
  awk '
    BEGIN {
      printf "%-10s %-14s %8s %8s %10s %12s %12s %10s\n", "program", "iteration", "plain",
        "off", "recording", "added (off)", "added (rec)", "per call"
    }
    {
      added = $5 - $3
      if ($2 ~ /^[0-9]/) {
        per = "-"
        verdict = ""
      } else {
        per = sprintf("%.1f", added / split($2, parts, "+"))
        # The target holds for the mem and sync groups (libc_mem).
        verdict = $1 != "libc_mem" ? "" : per + 0 < 25 ? "ok" : "over 25"
      }
      printf "%-10s %-14s %8.1f %8.1f %10.1f %12.1f %12.1f %10s  %s\n", $1, $2, $3, $4, $5,
        $4 - $3, added, per, verdict
    }' "$W/rows"
fi

if [ -f "$(dirname "$0")/sample.sh" ] && [ -x "$B/bench/sample_hotcold" ]; then
  echo
  echo "-- bench/sample.sh (sampling)"
  BENCH_DIR=$W/sample sh "$(dirname "$0")/sample.sh" 2>&1 | sed 's/^/   /' || echo "   (failed)"
fi

# ---------------------------------------------------------------- programs
echo
echo "== unmodified programs: wall time, best of $REPS (ms), and x the plain run"

now_ns() { date +%s%N; }

# best CMD...: the best wall time of REPS runs of CMD, in ms (stdout and
# stderr dropped; any archive is written to $W/t.fxt, replaced each run).
best() {
  b_best=
  b_i=0
  while [ "$b_i" -lt "$REPS" ]; do
    rm -f "$W"/t*.fxt
    b_t0=$(now_ns)
    "$@" >/dev/null 2>&1 || true
    b_t1=$(now_ns)
    b_ms=$(((b_t1 - b_t0) / 1000))
    if [ -z "$b_best" ] || [ "$b_ms" -lt "$b_best" ]; then b_best=$b_ms; fi
    b_i=$((b_i + 1))
  done
  rm -f "$W"/t*.fxt
  awk -v us="$b_best" 'BEGIN { printf "%.1f", us / 1000 }'
}

awk 'BEGIN { srand(1); for (i = 0; i < 300000; i++) printf "%d\n", int(rand() * 1e9) }' \
  >"$W/numbers.txt"
printf '%-34s %9s %17s %17s %17s\n' program plain "--libc=none" default "--libc=all"
row() {
  r_name=$1
  shift
  r_plain=$(best "$@")
  r_none=$(best "$B/fxt-run" -q -f --libc=none -o "$W/t.fxt" -- "$@")
  r_def=$(best "$B/fxt-run" -q -f -o "$W/t.fxt" -- "$@")
  r_all=$(best "$B/fxt-run" -q -f --libc=all -o "$W/t.fxt" -- "$@")
  awk -v n="$r_name" -v p="$r_plain" -v a="$r_none" -v d="$r_def" -v l="$r_all" 'BEGIN {
    printf "%-34s %9.1f %9.1f (x%4.2f) %9.1f (x%4.2f) %9.1f (x%4.2f)\n", n, p, a, a / p, d, d / p,
      l, l / p }'
}
row "sort -n (300000 lines, 2 threads)" sort -n --parallel=2 "$W/numbers.txt"
row "gzip -c (the same 2.9 MB)" gzip -c "$W/numbers.txt"
[ -d /usr/include ] && row "find /usr/include -name '*.h'" find /usr/include -name '*.h'
exit 0
