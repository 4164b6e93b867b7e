#!/bin/sh
# fxt-report --percentiles against plain fxt-report, in the same run, on
# a large archive of bench/gen_archive (EVENTS complete events, default
# 16000000: about 380 MB; start order, TSC-like ticks, as the agent
# writes): the best of REPS (3) wall and CPU times of each, and the ratio
# (issue 27's bar: at most 1.5x).  Then the same with --exact-limit set
# to a quarter of the slices (SKETCH=0 skips it), so that the sketches
# are timed too.  Peak RSS beside each.
#
#   make bench-percentiles [EVENTS=N] [REPS=3] [SKETCH=0]
set -eu
B=${abs_top_builddir:?run through make bench-percentiles}
reps=${REPS:-3}
events=${EVENTS:-16000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-pct.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$B/bench/gen_archive" --events "$events" --order start --ticks-per-second 2995000000 \
  -o "$work/big.fxt"
size=$(wc -c < "$work/big.fxt")

# run NAME CMD...: the best of reps wall and CPU (user + sys) seconds, and
# the largest peak RSS (KiB), as NAME_t, NAME_c, NAME_rss.
run() {
  name=$1; shift
  best= cpu= rss=
  i=0
  while [ $i -lt "$reps" ]; do
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    read -r t u s m < "$work/time"
    c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
    if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
    if [ -z "$rss" ] || [ "$m" -gt "$rss" ]; then rss=$m; fi
    i=$((i + 1))
  done
  eval "${name}_t=\$best ${name}_c=\$cpu ${name}_rss=\$rss"
}

run plain "$B/fxt-report" --top 5 "$work/big.fxt"
run pct "$B/fxt-report" --percentiles --top 5 "$work/big.fxt"
slices=$("$B/fxt-report" -F json --top 1 "$work/big.fxt" | sed -n 's/.*"slices":\([0-9]*\),.*/\1/p')
sk_t=0 sk_c=0 sk_rss=0
if [ "${SKETCH:-1}" != 0 ]; then
  run sk "$B/fxt-report" --percentiles --exact-limit $((slices / 4)) --top 5 "$work/big.fxt"
fi

awk -v size="$size" -v sl="$slices" -v reps="$reps" -v pt="$plain_t" -v pc="$plain_c" \
    -v prss="$plain_rss" -v qt="$pct_t" -v qc="$pct_c" -v qrss="$pct_rss" \
    -v st="$sk_t" -v sc="$sk_c" -v srss="$sk_rss" 'BEGIN {
  printf "archive: %.1f MB, %d slices (gen_archive, start order)\n", size / 1e6, sl
  printf "%-44s %8s %8s %12s %8s\n", "best of " reps, "wall s", "CPU s", "peak RSS", "CPU x"
  printf "%-44s %8.2f %8.2f %8d KiB %8s\n", "fxt-report", pt, pc, prss, "1.00"
  printf "%-44s %8.2f %8.2f %8d KiB %8.2f\n", "fxt-report --percentiles (exact)", qt, qc, qrss, qc / pc
  if (st > 0)
    printf "%-44s %8.2f %8.2f %8d KiB %8.2f\n", "--percentiles --exact-limit slices/4 (sketch)", st, sc, srss, sc / pc
  printf "--percentiles / plain: %.2fx wall, %.2fx CPU; bar <= 1.5x: %s\n", qt / pt, qc / pc,
    (qc / pc <= 1.5 ? "met" : "NOT met")
}'
