#!/bin/sh
# bench/view.sh (make bench-view): fxt-view in tmux (80x24) on one
# generated archive (EVENTS, default 30000000: ~720 MB; THREADS, default
# 2; as .fxt, .fxt.gz and .fxt.zst, written by fxtrace's writer), timed
# from outside by polling `tmux capture-pane` every 20 ms (what a user
# sees, the polling's own cost included): the first screen, the tree
# complete, keys in the tree and the timeline from the first screen on
# (while the archive is read, where the view shows it meanwhile), then in
# the replay list once its index is complete (End, Home, ':' a time, a
# search); the view's peak RSS (VmHWM: the archive's mapped pages too)
# and its anonymous memory (RssAnon) before q; where the view writes
# FXT_VIEW_KEYLOG, its own times too (from the key read to the screen
# drawn after it, in the process: without tmux's and the polling's cost).  BASE=BUILD times that
# build's fxt-view too, in the same rounds (REPS, default 1; the order
# alternating).  FORMATS (default "fxt fxt.gz fxt.zst") picks archives.
# Then (EARLY=0: not; EARLY=only: only that) End pressed right after
# the first screen, before the list's pass and index are done: the key
# to the last item shown, and the view's CPU then (all its threads).
# Issue 28's goals: the first screen of a 700 MB archive in < 5 s, each
# key < 100 ms, bounded memory.  Needs tmux; skipped (exit 77) without.
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
. "$S/bench/stats.sh"
B=${abs_top_builddir:-$S/build}
VIEW=$B/fxt-view
GEN=$B/bench/gen_archive
EVENTS=${EVENTS:-30000000}
THREADS=${THREADS:-2}
REPS=${REPS:-1}
FORMATS=${FORMATS:-fxt fxt.gz fxt.zst}
bench_built bench-view "$VIEW" "$GEN"
bench_counts bench-view "EVENTS, THREADS and REPS" "$EVENTS" "$THREADS" "$REPS"
[ -z "${BASE:-}" ] || bench_built bench-view "$BASE/fxt-view"
command -v tmux >/dev/null 2>&1 || { echo "bench-view: tmux is not installed"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-view.XXXXXX")
T="tmux -S $W/tmux.sock"
trap '$T kill-server 2>/dev/null || true; sleep 0.3; rm -rf "$W"' EXIT
# KEEP=DIR: the archives written there, and taken from there when they are
A=${KEEP:-$W}

for f in $FORMATS; do
  if [ -z "${KEEP:-}" ] || [ ! -s "$A/a.$f" ]; then
    "$GEN" --events "$EVENTS" --threads "$THREADS" --order start --time-ordered -o "$A/a.$f"
  fi
done
echo "archive: $EVENTS events, $THREADS threads; sizes: $(for f in $FORMATS; do printf 'a.%s %s MB  ' "$f" $(($(wc -c <"$A/a.$f") / 1000000)); done)"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

now_ms() { date +%s%3N; }
shot() { $T capture-pane -p -t v; }
# wait_for ERE [SECONDS]: polls until ERE matches the screen; prints the
# ms since $t0, or "-" after SECONDS (default 120)
wait_for() {
  _end=$(($(now_ms) + ${2:-120} * 1000))
  while :; do
    if shot | grep -qE -- "$1"; then echo $(($(now_ms) - t0)); return 0; fi
    [ "$(now_ms)" -lt "$_end" ] || { echo -; return 0; }
    sleep 0.02
  done
}
# key NAME ERE KEY...: sends the keys, prints "NAME ms" once ERE matches
key() {
  _n=$1 _x=$2
  shift 2
  t0=$(now_ms)
  $T send-keys -t v "$@"
  printf ' %s %s' "$_n" "$(wait_for "$_x" 60)"
}

# once LABEL VIEW ARCHIVE: one run, one line of figures
once() {
  $T kill-server 2>/dev/null || true
  start=$(now_ms)
  t0=$start
  rm -f "$W/keys.log"
  $T new-session -d -s v -x 80 -y 24 "exec env FXT_VIEW_KEYLOG=$W/keys.log $2 $3" 9>&-
  pid=$($T display -p -t v '#{pane_pid}')
  printf '%-5s %-8s first-screen %s' "$1" "${3##*.}" "$(wait_for '^ fxt view ')"
  key tree-Down "line 2/" Down
  key timeline "thread " 2
  key tree "share +(call|\\(reading)" 1
  t0=$start
  printf ' tree-complete %s' "$(wait_for 'records \| line' 300)"
  # the list: its index complete, then its keys
  $T send-keys -t v 4
  printf ' index %s' "$(wait_for ' of ' 300)"
  n=$(shot | sed -n 24p | sed -n 's/.*item [0-9]* of \([0-9]*\).*/\1/p')
  key End "item $n of $n" End
  key Home "item 1 of $n" Home
  key ':60ms' "item ([2-9]|[1-9][0-9]+) of" : 6 0 m s Enter
  key Home "item 1 of $n" Home
  key '/main' "item ([2-9]|[1-9][0-9]+) of" / m a i n Enter
  printf ' peak-RSS %s\n' "$(awk '/VmHWM/ { h = $2 } /RssAnon/ { a = $2 }
    END { printf "%d MiB (anon. now %d)", h / 1024, a / 1024 }' "/proc/$pid/status")"
  $T send-keys -t v q
  sleep 0.5
  # the view's own times (FXT_VIEW_KEYLOG), where it writes them
  [ ! -s "$W/keys.log" ] || awk '
    /^screen/ { s = $2 } /^pass/ { p = $2 }
    /^key/ { n++; all = all sprintf(" %s %.1f", $2, $3); if ($3 > m) { m = $3; k = $2 } }
    END { printf "      (its own log: first screen %s ms, pass %s ms, %d keys, the slowest %s %.1f ms;\n       each, ms:%s)\n", s, p, n, k, m, all }' "$W/keys.log"
}

# early LABEL VIEW ARCHIVE: End pressed right after the first screen (4,
# then End: the list opened, its pass and index not done), timed from the
# key to the screen showing the last item ("item N of N"); "dropped" when
# the index was complete and the list still at its first item (the key
# lost), '-' when neither came within the wait, with the view's CPU
# (user + system, every thread) then.  Goal: < 100 ms.
early() {
  $T kill-server 2>/dev/null || true
  start=$(now_ms)
  t0=$start
  rm -f "$W/keys.log"
  $T new-session -d -s v -x 80 -y 24 "exec env FXT_VIEW_KEYLOG=$W/keys.log $2 $3" 9>&-
  pid=$($T display -p -t v '#{pane_pid}')
  printf '%-5s %-8s first-screen %s' "$1" "${3##*.}" "$(wait_for '^ fxt view ')"
  t0=$(now_ms)
  $T send-keys -t v 4 End
  at=$(wait_for ' of ' 300)
  if shot | grep -qE 'item ([0-9]+) of \1( |$)'; then
    e=$at
  elif [ "$at" = - ]; then
    e=-
  else
    e=$(wait_for 'item ([0-9]+) of \1( |$)' 3)
    [ "$e" != - ] || e=dropped
  fi
  # the view's CPU so far (all its threads: the tree's pass, the list's)
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$pid/stat")
  printf ' early-End %s ms, CPU %s s (goal < 100 ms: %s)' "$e" "$cpu" \
    "$(case $e in -|dropped) echo "not met" ;; *) [ "$e" -lt 100 ] && echo met || echo "not met" ;; esac)"
  awk '/VmHWM/ { printf " peak-RSS %d MiB", $2 / 1024 }' "/proc/$pid/status"
  $T send-keys -t v q
  sleep 0.5
  # the view's own: the key (kept), and the End done later (its "end" line)
  [ ! -s "$W/keys.log" ] || awk '
    /^screen/ { s = $2 } /^end/ { e = $2 } /^key KEY_END/ { k = $3 }
    END { printf "  (own log: first screen %s ms, End key %s ms, End shown %s ms after it)", s, k, e == "" ? "-" : e }' "$W/keys.log"
  echo
}

# rounds FN: FN for each archive, with BASE's in the same round too (the
# order alternating), REPS rounds
rounds() {
  r=1
  while [ "$r" -le "$REPS" ]; do
    for f in $FORMATS; do
      if [ -n "${BASE:-}" ] && [ $((r % 2)) -eq 1 ]; then
        $1 base "$BASE/fxt-view" "$A/a.$f"
        $1 new "$VIEW" "$A/a.$f"
      elif [ -n "${BASE:-}" ]; then
        $1 new "$VIEW" "$A/a.$f"
        $1 base "$BASE/fxt-view" "$A/a.$f"
      else
        $1 new "$VIEW" "$A/a.$f"
      fi
    done
    r=$((r + 1))
  done
}

[ "${EARLY:-1}" = only ] || rounds once
[ "${EARLY:-1}" = only ] || echo "ms from the start (first-screen, tree-complete, index: the list's index complete, 4 pressed"
[ "${EARLY:-1}" = only ] || echo "once the tree is) or from the key to the screen showing it; '-': not within the wait"
# End pressed at once (EARLY=0: not timed)
if [ "${EARLY:-1}" != 0 ]; then
  echo "End right after the first screen (4 End; load $(cut -d' ' -f1-3 /proc/loadavg)):"
  rounds early
fi
