#!/bin/sh
# bench/compress.sh: what writing the archive compressed costs, in one run.
# Not a test.
#
#   make bench-compress            (from the build tree), or
#   abs_top_builddir=BUILD sh bench/compress.sh
#
# Workload: `fxt-run -o OUT bench/fib N` (fib(33): 11.4 M call pairs) with
# OUT = out.fxt, out.fxt.gz and out.fxt.zst.  A round runs the three once,
# in that order; each compressed run's wall time (start to exit: the
# archive written) is divided by the plain run's of the same round, and the
# median of those ratios over REPS rounds is printed, with the median wall
# times and archive sizes; so is the CPU time (user + system, fxt-run and
# the program): on a machine that others load, the wall time says how much
# CPU the run got as much as what it needed.  Goal (issue 29): the faster of .gz and .zst at
# most 1.5x the plain run.  Then each archive is read back by fxt-dump
# --stats (the same counts) and, where the programs exist, by gzip -t and
# zstd -t.
#
# BASE=BUILD adds a fourth run to each round, .fxt.gz written by the
# fxt-run of another build tree (an earlier revision's: "before"), timed
# against the same plain run.
#
# Environment: FIB_N (33), REPS (5 rounds), BASE, BENCH_DIR (the scratch
# directory is made in it, default TMPDIR or /tmp; its filesystem is
# printed).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
FIB_N=${FIB_N:-33}
REPS=${REPS:-5}
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

# once EXT [RUN]: one whole run writing out.EXT (by RUN, default our
# fxt-run); appends "wall_ns bytes cpu_s" to $W/res/EXT (line R is round
# R); cpu_s is user + system time of fxt-run and everything it waited for
# (/usr/bin/time), or - without /usr/bin/time.
once() {
  rm -f "$W/out.$1"
  sync # no write-back of the run before lands on this one
  out=$1
  set -- "${2:-$B/fxt-run}" -q -f --max-size 0 -o "$W/out.$out" "$B/bench/fib" "$FIB_N" 1
  [ ! -x /usr/bin/time ] || set -- /usr/bin/time -f '%U %S' -o "$W/cpu" "$@"
  echo "- -" >"$W/cpu"
  t0=$(now_ns)
  "$@" >/dev/null 2>"$W/stderr" || {
    echo "bench: fxt-run -o out.$out failed:" >&2; cat "$W/stderr" >&2; exit 1; }
  t1=$(now_ns)
  echo "$((t1 - t0)) $(du -b "$W/out.$out" | cut -f1) $(awk '{ print $1 == "-" ? "-" : $1 + $2 }' "$W/cpu")" >>"$W/res/$out"
}

cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
fs=$(findmnt -n -o FSTYPE -T "$W" 2>/dev/null || stat -f -c %T "$W")
echo "machine: ${cpu_model:-$(uname -m)}, $(nproc) CPUs, Linux $(uname -r); scratch $W on $fs"
echo "compressed archives: fib($FIB_N) whole run under fxt-run, median of $REPS rounds" \
  "(each round: .fxt, .fxt.gz, .fxt.zst)"
outs="fxt fxt.gz fxt.zst"
[ -z "${BASE:-}" ] || outs="$outs base.fxt.gz"
r=0
while [ $r -lt "$REPS" ]; do
  for e in fxt fxt.gz fxt.zst; do once "$e"; done
  [ -z "${BASE:-}" ] || once base.fxt.gz "$BASE/fxt-run"
  r=$((r + 1))
done
printf "%-12s %8s %9s %8s %9s %8s %7s\n" output "wall s" "x plain" "cpu s" "x plain" "MiB" "ratio"
for e in $outs; do
  awk -v label="$e" "$AWK_ORDER"'
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
    }' "$W/res/fxt" "$W/res/$e"
done
echo "goal: the faster of .fxt.gz and .fxt.zst <= 1.5x the plain run (\"ratio\": plain size / size)"
[ -z "${BASE:-}" ] || echo "base.fxt.gz: written by $BASE/fxt-run"

# The three say the same: fxt-dump --stats's counts, line for line (but
# the times, which are the run's own).
"$B/fxt-dump" --stats "$W/out.fxt" | grep -v '_ns ' >"$W/stats.plain"
for e in fxt.gz fxt.zst; do
  "$B/fxt-dump" --stats "$W/out.$e" | grep -v '_ns ' >"$W/stats.$e"
  cmp -s "$W/stats.plain" "$W/stats.$e" && echo "$e: fxt-dump --stats same as .fxt" ||
    echo "$e: fxt-dump --stats DIFFERS from .fxt"
done
if command -v gzip >/dev/null; then
  gzip -t "$W/out.fxt.gz" && echo "fxt.gz: gzip -t ok"
fi
if command -v zstd >/dev/null; then
  zstd -q -t "$W/out.fxt.zst" && echo "fxt.zst: zstd -t ok"
fi
