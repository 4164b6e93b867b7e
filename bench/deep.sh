#!/bin/sh
# fxt-tree on one recursion DEEP (1000000) frames deep, and another
# build's beside it (BASE=BUILD): the tree's cost must grow with the
# events, not with their depth times their number (a slice's path was
# compared from its root: 40,000 frames took 0.58 s, 1 M minutes).
#
# Three archives of bench/gen_archive --deep DEEP: complete events in
# start order (the agent's), in end order (an exit-time flusher's), and
# begin/end pairs.  Each of REPS (3) rounds runs fxt-tree on each, this
# build's, then BASE's under `timeout LIMIT` (60 s: BASE may be the
# quadratic one; a run cut short is printed as "> LIMIT").  Before the
# rounds, both builds' outputs (text, and csv with --focus rec) must be
# the same, byte for byte, on the same archives DEEP / 25 frames deep.
# Printed per archive and build: the median [least] wall and CPU seconds
# and the median wall over the goal (under 5 s for 1 M frames).
#
#   make bench-deep [DEEP=N] [REPS=N] [LIMIT=S] [BASE=BUILD]
set -eu
B=${abs_top_builddir:?run through make bench-deep}
reps=${REPS:-3}
deep=${DEEP:-1000000}
limit=${LIMIT:-60}
base=${BASE:-}
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/fxt-bench-deep.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"

[ -z "$base" ] || [ -x "$base/fxt-tree" ] ||
  { echo "bench-deep: $base/fxt-tree is missing" >&2; exit 2; }
for o in start end pairs; do
  "$B/bench/gen_archive" --deep "$deep" --order "$o" -o "$work/$o.fxt"
  "$B/bench/gen_archive" --deep $((deep / 25)) --order "$o" -o "$work/small.$o.fxt"
done

if [ -n "$base" ]; then
  for o in start end pairs; do
    for opt in "" "-F csv -f rec"; do
      # shellcheck disable=SC2086 # $opt: empty or words
      "$B/fxt-tree" $opt "$work/small.$o.fxt" > "$work/new.out"
      # shellcheck disable=SC2086
      "$base/fxt-tree" $opt "$work/small.$o.fxt" > "$work/base.out"
      cmp -s "$work/new.out" "$work/base.out" ||
        { echo "bench-deep: 'fxt-tree $opt' on $o prints something else than BASE's" >&2; exit 1; }
    done
  done
  echo "outputs: the same as BASE's, byte for byte, $((deep / 25)) frames deep (text; csv --focus rec)"
fi

# run KEY BUILD ARCHIVE: one timed fxt-tree, "KEY round wall cpu" appended
# to the log; a run cut short by the limit is logged as -1.
run() {
  if /usr/bin/time -f '%e %U %S' -o "$work/time" timeout "$limit" "$2/fxt-tree" "$3" \
    > /dev/null 2> "$work/err"; then
    read -r t u s < "$work/time"
    echo "$1 $i $t $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" >> "$work/log"
  elif grep -q 'exited with non-zero status 124' "$work/time"; then
    echo "$1 $i -1 -1" >> "$work/log"
  else
    cat "$work/err" >&2
    exit 1
  fi
}
: > "$work/log"
i=0
while [ $i -lt "$reps" ]; do
  for o in start end pairs; do
    run "$o.new" "$B" "$work/$o.fxt"
    [ -z "$base" ] || run "$o.base" "$base" "$work/$o.fxt"
  done
  i=$((i + 1))
done

echo "fxt-tree, one recursion $deep frames deep ($(wc -c < "$work/start.fxt" | awk '{ printf "%.1f MB", $1 / 1e6 }') in start order)"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)${base:+; base: $base}"
awk -v reps="$reps" -v limit="$limit" -v goal="$(awk -v d="$deep" 'BEGIN { print 5 * d / 1e6 }')" "$AWK_ORDER"'
{ k = $1; w[k, ++c[k]] = ($3 < 0 ? 1e9 : $3); u[k, c[k]] = ($4 < 0 ? 1e9 : $4) }
function fmt(x) { return x >= 1e9 ? sprintf("> %4d", limit) : sprintf("%6.2f", x) }
END {
  printf "%-26s %17s %17s %8s\n", "median [least] of " reps, "wall s", "CPU s", "x goal"
  split("start end pairs", os, " ")
  for (oi = 1; oi <= 3; oi++) for (b = 1; b <= 2; b++) {
    key = os[oi] (b == 1 ? ".base" : ".new")
    if (!c[key]) continue
    for (j = 1; j <= c[key]; j++) { a[j] = w[key, j]; bb[j] = u[key, j] }
    mw = median(a, c[key]); lw = least(a, c[key]); mc = median(bb, c[key]); lc = least(bb, c[key])
    printf "%-26s %s [%s] %s [%s] %7.2fx\n", os[oi] (b == 1 ? " base" : ""),
      fmt(mw), fmt(lw), fmt(mc), fmt(lc), (mw >= 1e9 ? 0 : goal / mw)
  }
}' "$work/log"
echo "goal: under $(awk -v d="$deep" 'BEGIN { print 5 * d / 1e6 }') s (5 s a million frames); x goal: goal / median wall"
