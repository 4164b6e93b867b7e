#!/bin/sh
# fxt-tree against fxt-report on the same large archive of
# bench/gen_archive, in the same run (EVENTS complete events, default
# 16000000: about 380 MB; start order, TSC-like ticks, as the agent
# writes): the best of REPS (3) wall and CPU times of each, events per
# second of each, and their ratio (issue 28's goal: fxt-tree at 20 M
# events/s or more, fxt-report at about 40 M).  Then fxt-replay's time to
# its first line on that archive, `fxt-replay big.fxt | head -1`, from the
# start of the process to the end of head (goal: under 100 ms), best and
# worst of REPS, and with --time-order (which reads the archive once
# before its first line).  Peak RSS beside each.  Then, when fxt-view was built,
# its time to open the archive (`fxt-view --load-only`: the call tree and
# the timeline in one pass; goal: a 700 MB archive in under 5 s, EVENTS=
# 30000000), its peak RSS, and what it says drawing the busiest thread's
# timeline whole costs (a key's redraw; goal: under 100 ms).
#
#   make bench-calls [EVENTS=N] [REPS=3]
set -eu
B=${abs_top_builddir:?run through make bench-calls}
reps=${REPS:-3}
events=${EVENTS:-16000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-calls.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$B/bench/gen_archive" --events "$events" --order start --ticks-per-second 2995000000 \
  -o "$work/big.fxt"
size=$(wc -c < "$work/big.fxt")
slices=$("$B/fxt-report" -F json --top 1 "$work/big.fxt" | sed -n 's/.*"slices":\([0-9]*\),.*/\1/p')

# run NAME CMD...: the best of reps wall and CPU (user + sys) seconds, and
# the largest peak RSS (KiB), as NAME_t, NAME_c, NAME_rss.  Rounds
# alternate the tools (the caller runs them in turn).
run() {
  name=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  read -r t u s m < "$work/time"
  c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
  eval "bt=\${${name}_t:-} bc=\${${name}_c:-} br=\${${name}_rss:-0}"
  if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then bt=$t; fi
  if [ -z "$bc" ] || awk -v a="$c" -v b="$bc" 'BEGIN { exit !(a < b) }'; then bc=$c; fi
  if [ "$m" -gt "$br" ]; then br=$m; fi
  eval "${name}_t=\$bt ${name}_c=\$bc ${name}_rss=\$br"
}

# first [OPT]: ms from the start of fxt-replay to the end of `head -1`.
first() {
  t0=$(date +%s%N)
  "$B/fxt-replay" "$@" "$work/big.fxt" | head -1 > /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}

i=0 fbest= fworst= tbest=
while [ $i -lt "$reps" ]; do
  run report "$B/fxt-report" --top 5 "$work/big.fxt"
  run tree "$B/fxt-tree" "$work/big.fxt"
  if [ -x "$B/fxt-view" ]; then
    run view "$B/fxt-view" --load-only "$work/big.fxt"
  fi
  f=$(first)
  if [ -z "$fbest" ] || [ "$f" -lt "$fbest" ]; then fbest=$f; fi
  if [ -z "$fworst" ] || [ "$f" -gt "$fworst" ]; then fworst=$f; fi
  f=$(first --time-order)
  if [ -z "$tbest" ] || [ "$f" -lt "$tbest" ]; then tbest=$f; fi
  i=$((i + 1))
done

awk -v size="$size" -v ev="$slices" -v reps="$reps" -v rt="$report_t" -v rc="$report_c" \
    -v rrss="$report_rss" -v tt="$tree_t" -v tc="$tree_c" -v trss="$tree_rss" \
    -v fb="$fbest" -v fw="$fworst" -v tb="$tbest" 'BEGIN {
  printf "archive: %.1f MB, %d events (gen_archive, start order)\n", size / 1e6, ev
  printf "%-12s %8s %8s %14s %14s %12s\n", "best of " reps, "wall s", "CPU s", "M events/s", "(CPU)", "peak RSS"
  printf "%-12s %8.2f %8.2f %14.1f %14.1f %8d KiB\n", "fxt-report", rt, rc, ev / rt / 1e6, ev / rc / 1e6, rrss
  printf "%-12s %8.2f %8.2f %14.1f %14.1f %8d KiB\n", "fxt-tree", tt, tc, ev / tt / 1e6, ev / tc / 1e6, trss
  printf "fxt-tree / fxt-report: %.2fx wall, %.2fx CPU; goal >= 20 M events/s (wall): %s\n",
    tt / rt, tc / rc, (ev / tt >= 20e6 ? "met" : "NOT met")
  printf "fxt-replay | head -1: %d ms best, %d ms worst of %d; goal < 100 ms: %s\n", fb, fw, reps,
    (fw < 100 ? "met" : (fb < 100 ? "met at best" : "NOT met"))
  printf "fxt-replay --time-order | head -1: %d ms best (one pass over the archive first)\n", tb
}'
if [ -x "$B/fxt-view" ]; then
  "$B/fxt-view" --load-only "$work/big.fxt" | sed 's/^/fxt-view --load-only: /'
  awk -v size="$size" -v vt="$view_t" -v vc="$view_c" -v vrss="$view_rss" -v reps="$reps" 'BEGIN {
    printf "fxt-view open: %.2f s wall, %.2f s CPU (best of %d), peak RSS %d KiB, %.0f MB/s; goal < 5 s for 700 MB: %s\n",
      vt, vc, reps, vrss, size / vt / 1e6, (vt * 700e6 / size < 5 ? "met (scaled)" : "NOT met")
  }'
fi
