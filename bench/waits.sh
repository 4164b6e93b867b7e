#!/bin/sh
# fxt-waits against fxt-report, in the same run, on a large archive of
# bench/gen_archive (EVENTS events, default 16000000: about 400 MB; 30000000
# is about 750 MB; start order, TSC-like ticks, as the agent writes; four
# threads, each taking every WAITS-th (50) iteration a lock that waited for
# the previous thread's unlock, a flow): the best of REPS (3) wall and CPU
# times of each, events per second of CPU time, and the bar of issue 28
# (fxt-waits at 20 M events/s or more).  Peak RSS beside each.
#
#   make bench-waits [EVENTS=N] [REPS=3] [WAITS=50]
set -eu
B=${abs_top_builddir:?run through make bench-waits}
reps=${REPS:-3}
events=${EVENTS:-16000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-waits.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$B/bench/gen_archive" --events "$events" --order start --ticks-per-second 2995000000 \
  --threads 4 --waits "${WAITS:-50}" -o "$work/big.fxt"
size=$(wc -c < "$work/big.fxt")
nev=$("$B/fxt-dump" --stats "$work/big.fxt" | sed -n 's/^record\.event //p')

# run NAME CMD...: the best of reps wall and CPU (user + sys) seconds, and
# the largest peak RSS (KiB), as NAME_t, NAME_c, NAME_rss.  The two tools
# take turns, so that a change of the machine's load hits both.
run() {
  name=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  read -r t u s m < "$work/time"
  c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
  eval "best=\${${name}_t:-} cpu=\${${name}_c:-} rss=\${${name}_rss:-0}"
  if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
  if [ "$m" -gt "$rss" ]; then rss=$m; fi
  eval "${name}_t=\$best ${name}_c=\$cpu ${name}_rss=\$rss"
}

i=0
while [ $i -lt "$reps" ]; do
  run report "$B/fxt-report" --top 5 "$work/big.fxt"
  run waits "$B/fxt-waits" --top 5 "$work/big.fxt"
  i=$((i + 1))
done
nwaits=$("$B/fxt-waits" -F json --detail "$work/big.fxt" | grep -o '"pid"' | wc -l)

awk -v size="$size" -v n="$nev" -v nw="$nwaits" -v reps="$reps" \
    -v rt="$report_t" -v rc="$report_c" -v rrss="$report_rss" \
    -v wt="$waits_t" -v wc="$waits_c" -v wrss="$waits_rss" 'BEGIN {
  printf "archive: %.1f MB, %d events, %d waits (gen_archive, start order, 4 threads)\n",
    size / 1e6, n, nw
  printf "%-12s %8s %8s %14s %12s\n", "best of " reps, "wall s", "CPU s", "events/s (CPU)", "peak RSS"
  printf "%-12s %8.2f %8.2f %12.1f M %8d KiB\n", "fxt-report", rt, rc, n / rc / 1e6, rrss
  printf "%-12s %8.2f %8.2f %12.1f M %8d KiB\n", "fxt-waits", wt, wc, n / wc / 1e6, wrss
  printf "fxt-waits / fxt-report: %.2fx CPU; bar >= 20 M events/s: %s\n", wc / rc,
    (n / wc >= 20e6 ? "met" : "NOT met")
}'
