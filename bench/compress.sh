#!/bin/sh
# bench/compress.sh: what writing the archive compressed costs, in one run.
# Not a test.
#
#   make bench-compress            (from the build tree), or
#   abs_top_builddir=BUILD sh bench/compress.sh
#
# Workload: `fxt-run -o OUT bench/fib N T` (fib(33) on 1 thread: 11.4 M
# call pairs) with OUT = out.fxt, out.fxt.gz and out.fxt.zst.  A round runs
# the three once, in that order; each compressed run's wall time (start
# to exit: the archive written) is divided by the plain run's of the same
# round, and the median of those ratios over REPS rounds is printed, with
# the median wall times and archive sizes; so is the CPU time (fxt-run's
# threads and the program's: `perf stat -e task-clock`, or user + system
# from /usr/bin/time without perf): on a machine that others load, the
# wall time says how much CPU the run got as much as what it needed, and
# on 2 CPUs both runs keep the two busy, so the wall ratio follows the
# CPU ratio (bench/README.md, "Compressing on 2 CPUs").
# Goal (issue 29): the faster of .gz and .zst at most 1.5x the plain run;
# each ratio is printed against it, with the archives' sizes.
# Then each archive is read back by fxt-dump --stats (the same counts)
# and, where the programs exist, by gzip -t and zstd -t.
#
# BASE=BUILD runs the same three with the fxt-run and bench/fib of another
# build tree (an earlier revision's: "base") in each round, before ours in
# odd rounds and after them in even ones; each base compressed run is
# timed against base's plain run of the round, and "new/base" is the
# median of the per-round ratios of the two builds' wall times.
#
# As bench/run.sh, run as root where the kernel groups tasks by session,
# the script runs itself again in a session of its own whose group is at
# nice -20 (BENCH_GROUP=0: where it is); and after each run of fxt-run it
# waits (2 s at most) for the child that frees the spool's pages.
#
# Environment: FIB_N (33), THREADS (1: fib's threads; 2 fills both CPUs of
# a 2-CPU machine, e.g. FIB_N=32 THREADS=2), REPS (5 rounds), BASE,
# BENCH_GROUP, BENCH_DIR (the scratch directory is made in it, default
# TMPDIR or /tmp; its filesystem is printed).
set -eu

# shellcheck source=bench/group.sh
. "$(cd "$(dirname "$0")" && pwd)/group.sh"

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
FIB_N=${FIB_N:-33}
REPS=${REPS:-5}
THREADS=${THREADS:-1}
case $THREADS in '' | *[!0-9]* | 0) echo "bench: THREADS must be a positive integer" >&2; exit 2 ;; esac
case $REPS in '' | *[!0-9]* | 0) echo "bench: REPS must be a positive integer" >&2; exit 2 ;; esac
[ -z "${BENCH_DIR:-}" ] || mkdir -p "$BENCH_DIR"
W=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/fxt-bench-z.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/res"
for f in "$B/bench/fib" "$B/fxt-run" "$B/fxt-dump"; do
  [ -e "$f" ] || { echo "bench: $f is missing (run make first)" >&2; exit 1; }
done
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"

now_ns() { date +%s%N; }

# once EXT [BUILD]: one whole run writing out.EXT by BUILD's fxt-run and
# bench/fib (default ours; base-out.EXT by another); appends "wall_ns bytes cpu_s" to
# $W/res/EXT, or to $W/res/base.EXT for another build (line R is round
# R); cpu_s is the task-clock of fxt-run and everything it started (perf
# stat), else user + system time of fxt-run and everything it waited for
# (/usr/bin/time), or - without either.
once() {
  o_b=${2:-$B}
  o_res=$1 o_out=$W/out.$1
  [ "$o_b" = "$B" ] || { o_res=base.$1; o_out=$W/base-out.$1; }
  rm -f "$o_out"
  sync # no write-back of the run before lands on this one
  out=$1
  set -- "$o_b/fxt-run" -q -f --max-size 0 -o "$o_out" "$o_b/bench/fib" "$FIB_N" "$THREADS"
  echo "- -" >"$W/cpu"
  if [ "$CPU_BY" = perf ]; then
    set -- perf stat -x, -e task-clock -o "$W/perf" "$@"
  elif [ "$CPU_BY" = "time" ]; then
    set -- /usr/bin/time -f '%U %S' -o "$W/cpu" "$@"
  fi
  t0=$(now_ns)
  "$@" >/dev/null 2>"$W/stderr" || {
    echo "bench: fxt-run -o out.$out failed:" >&2; cat "$W/stderr" >&2; exit 1; }
  t1=$(now_ns)
  settle
  # task-clock in ms ("123.45,msec,task-clock,..."), as "seconds 0"
  [ "$CPU_BY" != perf ] ||
    awk -F, '$3 ~ /^task-clock/ { printf "%.4f 0\n", $1 / 1000; n++ } END { if (!n) print "- -" }' \
      "$W/perf" >"$W/cpu"
  echo "$((t1 - t0)) $(du -b "$o_out" | cut -f1) $(awk '{ print $1 == "-" ? "-" : $1 + $2 }' "$W/cpu")" >>"$W/res/$o_res"
}

# What measures the CPU time: perf stat's task-clock where perf can count
# it here, else /usr/bin/time.
CPU_BY=none
if command -v perf >/dev/null 2>&1 && perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then
  CPU_BY=perf
elif [ -x /usr/bin/time ]; then
  CPU_BY="time"
fi

cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
fs=$(findmnt -n -o FSTYPE -T "$W" 2>/dev/null || stat -f -c %T "$W")
echo "machine: ${cpu_model:-$(uname -m)}, $(nproc) CPUs, Linux $(uname -r); scratch $W on $fs"
echo "compressed archives: fib($FIB_N) on $THREADS thread(s), whole run under fxt-run," \
  "median of $REPS rounds (each round: .fxt, .fxt.gz, .fxt.zst${BASE:+, by this build and by base})"
echo "load at the start: $(uptime | sed 's/.*load average: *//')"
[ -z "${BASE:-}" ] || for f in "$BASE/bench/fib" "$BASE/fxt-run"; do
  [ -e "$f" ] || { echo "bench: $f is missing (BASE is a build tree)" >&2; exit 1; }
done
r=0
while [ $r -lt "$REPS" ]; do
  [ -z "${BASE:-}" ] || [ $((r % 2)) = 0 ] || for e in fxt fxt.gz fxt.zst; do once "$e" "$BASE"; done
  for e in fxt fxt.gz fxt.zst; do once "$e"; done
  [ -z "${BASE:-}" ] || [ $((r % 2)) = 1 ] || for e in fxt fxt.gz fxt.zst; do once "$e" "$BASE"; done
  r=$((r + 1))
done
echo "load at the end: $(uptime | sed 's/.*load average: *//')"
# table PREFIX: the rows of one build's runs ($W/res/PREFIXEXT).
table() {
  for e in fxt fxt.gz fxt.zst; do
    awk -v label="$1$e" "$AWK_ORDER"'
      FNR == 1 { f++ }
      f == 1 { pw[FNR] = $1; pb[FNR] = $2; pc[FNR] = $3; next }
      {
        k = FNR; w[k] = $1 / 1e9; q[k] = $1 / pw[k]; b[k] = $2; c[k] = pb[k] / $2
        if ($3 != "-" && pc[k] > 0) { cpu[++n] = $3; cq[n] = $3 / pc[k] }
      }
      END {
        printf "%-12s %8.2f %8.2fx %8s %9s %8.1f %6.1fx\n", label, median(w, k), median(q, k),
          n ? sprintf("%.2f", median(cpu, n)) : "-", n ? sprintf("%.2fx", median(cq, n)) : "-",
          median(b, k) / 1048576, median(c, k)
        # for goal(): wall x plain, cpu x plain, MiB, plain / size
        printf "%.4f %s %.1f %.1f\n", median(q, k), n ? sprintf("%.4f", median(cq, n)) : "-",
          median(b, k) / 1048576, median(c, k) >"/dev/stderr"
      }' "$W/res/${1}fxt" "$W/res/$1$e" 2>"$W/res/med.$1$e"
  done
}
# goal PREFIX: each compressed archive's wall ratio against the goal, its
# CPU ratio and size beside it, then the faster of the two.
goal() {
  for e in fxt.gz fxt.zst; do
    awk -v label="$1$e" -v g="$GOAL" '{
      printf "%-12s %.2fx the plain run (goal %.1fx: %s); cpu %s; %.1f MiB, %.1fx smaller\n", label, $1, g,
        $1 <= g ? "met" : sprintf("%.0f%% over", ($1 / g - 1) * 100),
        $2 == "-" ? "-" : sprintf("%.2fx", $2), $3, $4 }' "$W/res/med.$1$e"
  done
  sort -n "$W/res/med.${1}fxt.gz" "$W/res/med.${1}fxt.zst" | head -n 1 >"$W/res/best"
  for e in fxt.gz fxt.zst; do cmp -s "$W/res/best" "$W/res/med.$1$e" && best=$e && break; done
  awk -v label="$1" -v best="$best" -v g="$GOAL" '{
    printf "%sgoal, the faster (.%s): %.2fx against %.1fx: %s\n", label == "" ? "" : "base: ", best, $1, g,
      $1 <= g ? "MET" : "NOT MET" }' "$W/res/best"
}
GOAL=1.5
printf "%-12s %8s %9s %8s %9s %8s %7s\n" output "wall s" "x plain" "cpu s" "x plain" "MiB" "ratio"
table ""
if [ -n "${BASE:-}" ]; then
  table base.
  for e in fxt fxt.gz fxt.zst; do
    awk -v label="$e" "$AWK_ORDER"'
      FNR == 1 { f++ }
      f == 1 { bw[FNR] = $1; next }
      { q[FNR] = $1 / bw[FNR]; k = FNR }
      END { printf "%-12s new/base wall %.2fx\n", label, median(q, k) }' "$W/res/base.$e" "$W/res/$e"
  done
fi
echo "(\"ratio\": plain size / size; cpu: $CPU_BY)"
echo "goal (issue 29): the faster of .fxt.gz and .fxt.zst <= ${GOAL}x the plain run's wall time"
goal ""
if [ -n "${BASE:-}" ]; then
  goal base.
  echo "base.*: written by $BASE/fxt-run"
fi

# The three say the same: fxt-dump --stats's counts, line for line (but
# the times, which are the run's own, and the bytes: a plain archive
# whose first thread's early file became the archive has padding records
# in front of its events, 64 KiB, where a compressed one has skippable
# frames or empty members, which decompress to nothing).
"$B/fxt-dump" --stats "$W/out.fxt" | grep -v '_ns \|^bytes ' >"$W/stats.plain"
for e in fxt.gz fxt.zst; do
  "$B/fxt-dump" --stats "$W/out.$e" | grep -v '_ns \|^bytes ' >"$W/stats.$e"
  cmp -s "$W/stats.plain" "$W/stats.$e" && echo "$e: fxt-dump --stats same as .fxt" ||
    echo "$e: fxt-dump --stats DIFFERS from .fxt"
done
if command -v gzip >/dev/null; then
  gzip -t "$W/out.fxt.gz" && echo "fxt.gz: gzip -t ok"
fi
if command -v zstd >/dev/null; then
  zstd -q -t "$W/out.fxt.zst" && echo "fxt.zst: zstd -t ok"
fi
