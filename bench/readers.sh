#!/bin/sh
# The archive readers' speed (issue 29's fxt-report, issue 28's fxt-tree and
# fxt-waits), and another build's beside them in the same rounds.
#
# One archive of bench/gen_archive: EVENTS (30000000: about 720 MB)
# complete events in start order, TSC-like ticks, THREADS (4) threads, a
# lock that waited every 50th iteration (the flows fxt-waits reads), and
# the mark of time order at its start that fxt-run's archives carry
# (MARK=0 leaves it out: the readers then make their first pass).  Each of
# REPS (3) rounds runs fxt-report --top 5, fxt-tree and fxt-waits --top 5,
# each of this build and, with BASE=BUILD, of that build right after it.
# Printed per tool and build: the least and the median wall and CPU seconds
# (user + system), events per second of both medians; with BASE, the
# median over the rounds of each round's new/base CPU ratio; and the
# median wall events per second over the tool's goal (x goal).  Before the
# rounds, each tool's output must be the same, byte for byte, from both
# builds (text, and CSV or JSON).  Goals: fxt-report >= 80 M events/s,
# fxt-tree and fxt-waits >= 20 M on a 700 MB archive.
#
# Then fxt-replay's first line (`fxt-replay ARCHIVE | head -1`: wall and
# CPU ms of the pipeline, median [least] of REPS rounds, each build in
# turn) on three archives: the one above; the same without the mark (a
# foreign archive: the readers first look through it for begins and ends
# out of time order, fxt/order.c); and one as `fxt-run --kernel` makes
# them (kernel-like: that archive merged with the import of
# tests/data/tracecmd/v7-plain.dat, each build's fxt-import and fxt-merge
# making its own, so a build whose import does not mark gives an unmarked
# one; left out when fxt-import was built without libtracecmd).  Goal:
# under 100 ms on any archive (issue 28).  REPLAY=0 leaves this part out.
#
#   make bench-readers [EVENTS=N] [THREADS=N] [REPS=N] [MARK=0] [REPLAY=0] [BASE=BUILD]
set -eu
B=${abs_top_builddir:?run through make bench-readers}
reps=${REPS:-3}
events=${EVENTS:-30000000}
threads=${THREADS:-4}
base=${BASE:-}
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/fxt-bench-readers.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"

if [ -n "$base" ]; then
  for t in fxt-report fxt-tree fxt-waits fxt-replay fxt-import fxt-merge; do
    [ -x "$base/$t" ] || { echo "bench-readers: $base/$t is missing" >&2; exit 2; }
  done
fi
mark=--time-ordered
[ "${MARK:-1}" = 0 ] && mark=
# shellcheck disable=SC2086 # $mark: empty or one word
"$B/bench/gen_archive" --events "$events" --order start --ticks-per-second 2995000000 \
  --threads "$threads" --waits 50 $mark -o "$work/big.fxt"
size=$(wc -c < "$work/big.fxt")
nev=$("$B/fxt-dump" --stats "$work/big.fxt" | sed -n 's/^record\.event //p')

if [ -n "$base" ]; then
  for cmd in "fxt-report" "fxt-report -F json --percentiles" "fxt-tree" "fxt-tree -F csv" \
    "fxt-waits" "fxt-waits -F json --detail"; do
    # shellcheck disable=SC2086 # $cmd: the tool and its options
    "$B"/$cmd "$work/big.fxt" > "$work/new.out"
    # shellcheck disable=SC2086
    "$base"/$cmd "$work/big.fxt" > "$work/base.out"
    # fxt-report's JSON has said "buffer_full" since 2026-11-28: a BASE
    # from before lacks it.
    sed -i 's/,"buffer_full":[0-9]*//' "$work/new.out" "$work/base.out"
    cmp -s "$work/new.out" "$work/base.out" ||
      { echo "bench-readers: '$cmd' prints something else than BASE's" >&2; exit 1; }
  done
  echo "outputs: the same as BASE's, byte for byte (report text/json, tree text/csv, waits text/json)"
fi

# run KEY CMD...: one timed run, "KEY round wall cpu" appended to the log.
run() {
  key=$1; shift
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  read -r t u s < "$work/time"
  echo "$key $i $t $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" >> "$work/log"
}

i=0
while [ $i -lt "$reps" ]; do
  for tool in report tree waits; do
    case $tool in
    report | waits) opt="--top 5" ;;
    tree) opt= ;;
    esac
    # shellcheck disable=SC2086 # $opt: empty or two words
    run "$tool.new" "$B/fxt-$tool" $opt "$work/big.fxt"
    # shellcheck disable=SC2086
    [ -z "$base" ] || run "$tool.base" "$base/fxt-$tool" $opt "$work/big.fxt"
  done
  i=$((i + 1))
done

printf 'archive: %.1f MB, %d events, %d threads, %s\n' "$(echo "$size" | awk '{ print $1 / 1e6 }')" \
  "$nev" "$threads" "$([ -n "$mark" ] && echo "marked time-ordered" || echo "not marked")"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)${base:+; base: $base}"
awk -v n="$nev" -v reps="$reps" "$AWK_ORDER"'
{ k = $1; w[k, ++c[k]] = $3; u[k, c[k]] = $4; cpu[k, $2] = $4 }
END {
  printf "%-18s %16s %16s %12s %12s %10s %8s\n", "median [least] of " reps, "wall s", "CPU s",
    "M ev/s wall", "M ev/s CPU", "CPU x base", "x goal"
  split("report tree waits", tools, " ")
  goal["report"] = 80; goal["tree"] = 20; goal["waits"] = 20
  for (ti = 1; ti <= 3; ti++) for (b = 1; b <= 2; b++) {
    k = "fxt-" tools[ti]; key = tools[ti] (b == 1 ? ".base" : ".new")
    if (!c[key]) continue
    for (j = 1; j <= c[key]; j++) { a[j] = w[key, j]; bb[j] = u[key, j] }
    mw = median(a, c[key]); lw = least(a, c[key]); mc = median(bb, c[key]); lc = least(bb, c[key])
    ratio = ""
    if (b == 2 && c[tools[ti] ".base"]) {
      for (j = 0; j < reps; j++) r[j + 1] = cpu[key, j] / cpu[tools[ti] ".base", j]
      ratio = sprintf("%.2fx", median(r, reps))
    }
    printf "%-18s %7.2f [%5.2f] %7.2f [%5.2f] %12.1f %12.1f %10s %7.2fx\n", k (b == 1 ? " base" : ""),
      mw, lw, mc, lc, n / mw / 1e6, n / mc / 1e6, ratio, n / mw / 1e6 / goal[tools[ti]]
  }
}' "$work/log"

[ "${REPLAY:-1}" = 0 ] && exit 0

# The replay's archives: marked (MARK's big.fxt), unmarked, kernel-like.
"$B/bench/gen_archive" --events "$events" --order start --ticks-per-second 2995000000 \
  --threads "$threads" --waits 50 -o "$work/unmarked.fxt"
[ -n "$mark" ] || cp "$work/unmarked.fxt" "$work/big.fxt"
dat=$(cd "$(dirname "$0")/.." && pwd)/tests/data/tracecmd/v7-plain.dat
kernel=
# kernel_like BUILD KEY: BUILD's import of $dat merged with big.fxt.
kernel_like() {
  "$1/fxt-import" -q "$dat" -o "$work/k.$2.part.fxt" 2> /dev/null || return 1
  "$1/fxt-merge" -o "$work/kernel.$2.fxt" "$work/big.fxt" "$work/k.$2.part.fxt" > /dev/null 2>&1
}
if kernel_like "$B" new && { [ -z "$base" ] || kernel_like "$base" base; }; then
  kernel=kernel
else
  echo "bench-readers: no kernel-like archive (fxt-import without libtracecmd?)" >&2
fi
# marked: the build's own says so
marked() { "$B/fxt-dump" "$1" | sed -n 2p | grep -q 'str="fxtrace.time-ordered.v1"' && echo marked || echo "not marked"; }

# first KEY BUILD ARCHIVE: one timed `fxt-replay ARCHIVE | head -1`, its
# wall time from date and its CPU time from the shell's `times` (this
# shell's children: the pipeline, and date's own ~1 ms, both builds alike).
first() {
  times > "$work/t0"
  t0=$(date +%s%N)
  "$2/fxt-replay" "$3" | head -1 > /dev/null
  t1=$(date +%s%N)
  times > "$work/t1"
  echo "$1 $i $(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }') \
$(awk -v a="$(cpu_s "$work/t0")" -v b="$(cpu_s "$work/t1")" 'BEGIN { print b - a }')" >> "$work/rlog"
}
: > "$work/rlog"
i=0
while [ $i -lt "$reps" ]; do
  for a in big unmarked $kernel; do
    case $a in kernel) fn=kernel.new.fxt fb=kernel.base.fxt ;; *) fn=$a.fxt fb=$a.fxt ;; esac
    first "$a.new" "$B" "$work/$fn"
    [ -z "$base" ] || first "$a.base" "$base" "$work/$fb"
  done
  i=$((i + 1))
done
echo "fxt-replay ARCHIVE | head -1 (ms; load $(cut -d' ' -f1-3 /proc/loadavg)):"
for a in big unmarked $kernel; do
  case $a in
  big) d="this archive, $([ -n "$mark" ] && echo "marked" || echo "not marked")" ;;
  unmarked) d="the same, not marked (a foreign archive)" ;;
  kernel)
    d="kernel-like: merged with an import; this build: $(marked "$work/kernel.new.fxt")"
    [ -z "$base" ] || d="$d, base: $(marked "$work/kernel.base.fxt")" ;;
  esac
  echo "  $a: $d"
done
awk -v reps="$reps" "$AWK_ORDER"'
{ k = $1; w[k, ++c[k]] = $3; u[k, c[k]] = $4; cpu[k, $2] = $4; wall[k, $2] = $3 }
END {
  printf "%-18s %16s %16s %10s %8s\n", "median [least] of " reps, "wall ms", "CPU ms", "CPU x base", "< 100 ms"
  split("big unmarked kernel", as, " ")
  for (ai = 1; ai <= 3; ai++) for (b = 1; b <= 2; b++) {
    key = as[ai] (b == 1 ? ".base" : ".new")
    if (!c[key]) continue
    for (j = 1; j <= c[key]; j++) { a[j] = w[key, j]; bb[j] = u[key, j] }
    mw = median(a, c[key]); lw = least(a, c[key]); mc = median(bb, c[key]); lc = least(bb, c[key])
    ratio = ""
    if (b == 2 && c[as[ai] ".base"]) {
      for (j = 0; j < reps; j++) r[j + 1] = cpu[key, j] / (cpu[as[ai] ".base", j] > 0 ? cpu[as[ai] ".base", j] : 0.001)
      ratio = sprintf("%.2fx", median(r, reps))
    }
    printf "%-18s %7.0f [%5.0f] %7.0f [%5.0f] %10s %8s\n", as[ai] (b == 1 ? " base" : ""),
      mw * 1000, lw * 1000, mc * 1000, lc * 1000, ratio, (mw < 0.1 ? "met" : "not met")
  }
}' "$work/rlog"
