#!/bin/sh
# bench/modes.sh: the flight recorder over a long run (`make bench-modes`).
#
# tests/progs/numbered (calls that say their own number) runs in THREADS
# threads (default 2) for about SECONDS (default 60) under
# `fxt-run --mode=circular --buffer-size=BUF --libc=none` (default 16M; the
# calls are the program's own), and once
# plainly for the same work.  It prints:
#   - the calls per second made while traced, and the traced run's wall
#     time against the plain run's (a ratio from the same run);
#   - the traced process's peak RSS against the bound the mode promises,
#     BUF x threads + 16 MiB (the main thread's small ring is in the 16);
#   - whether the archive holds exactly the newest window: per thread the
#     numbers end at the last one, without gaps, and kept + overwritten
#     calls = the calls made (tests/helpers/numbers).
# Not a test: the figures are for reading (bench/README.md).
set -u
B=${abs_top_builddir:?run through make bench-modes}
SECONDS_WANTED=${SECONDS:-60}
THREADS=${THREADS:-2}
BUF=${BUF:-16M}
NUM=$B/tests/progs/numbered
READ=$B/tests/helpers/numbers
W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-modes.XXXXXX")
trap 'rm -rf "$W"' EXIT

for p in "$NUM" "$READ" "$B/fxt-run"; do
  [ -x "$p" ] || { echo "bench-modes: $p is missing (make check builds it)"; exit 2; }
done
now() { date +%s.%N; }

# Calibrate N: numbers per thread for about SECONDS of traced work.
N=2000000
t0=$(now)
"$B/fxt-run" -q -f --libc=none --mode=circular --buffer-size="$BUF" -o "$W/cal.fxt" -- "$NUM" $N "$THREADS" >/dev/null
t1=$(now)
N=$(awk -v n=$N -v a="$t0" -v b="$t1" -v s="$SECONDS_WANTED" 'BEGIN { printf "%d", n * s / (b - a) }')
# The calls a thread makes: count(), N num() and the digits of 0 .. N-1.
per_thread=$(awk -v n="$N" 'BEGIN {
  c = 1 + n; lo = 0
  for (d = 1; lo < n; d++) { hi = (d == 1 ? 10 : lo * 10); if (hi > n) hi = n; c += (hi - lo) * d; lo = hi }
  printf "%.0f", c }')
# Hooks only (--libc=none): main adds one call.
total=$(awk -v t="$THREADS" -v p="$per_thread" 'BEGIN { printf "%.0f", t * p + 1 }')

echo "bench-modes: $(uname -m), $(nproc) CPUs; numbered $N numbers x $THREADS threads ($total calls), --mode=circular --buffer-size=$BUF --libc=none"
t0=$(now)
"$NUM" "$N" "$THREADS" >/dev/null
t1=$(now)
NUMBERED_RSS=1 "$B/fxt-run" -f --libc=none --mode=circular --buffer-size="$BUF" -o "$W/run.fxt" -- \
  "$NUM" "$N" "$THREADS" >/dev/null 2>"$W/err"
t2=$(now)
"$READ" "$W/run.fxt" >"$W/n"
hwm=$(awk '/^VmHWM:/ { print $2 }' "$W/err")
bound=$(awk -v b="$BUF" -v t="$THREADS" 'BEGIN {
  m = 1; u = toupper(substr(b, length(b))); if (u == "K") m = 1; else if (u == "M") m = 1024; else if (u == "G") m = 1048576; else m = 1 / 1024
  printf "%d", (b + 0) * m * t + 16384 }')
awk -v a="$t0" -v b="$t1" -v c="$t2" -v calls="$total" 'BEGIN {
  printf "plain %.2f s; traced %.2f s (%.2fx), %.1f M calls/s traced\n", b - a, c - b, (c - b) / (b - a), calls / (c - b) / 1e6 }'
echo "peak RSS of the traced process: ${hwm:-?} KiB; bound ${bound} KiB: $( [ "${hwm:-999999999}" -le "$bound" ] && echo within || echo EXCEEDED)"
grep -v '^calls' "$W/n" | while read -r count first last gaps; do
  echo "thread window: numbers $first .. $last ($count), gaps $gaps: $( [ "$last" = $((N - 1)) ] && [ "$gaps" = 0 ] && echo newest, whole || echo NOT the newest window)"
done
set -- $(sed -n 's/^calls //p' "$W/n")
echo "calls kept $1 (+ $2 open at the window's start), overwritten $3, dropped $4: kept + overwritten = $(($1 + $3)) of $total: $( [ "$(($1 + $3))" = "$total" ] && echo exact || echo MISMATCH)"
grep '^fxt-run: wrote' "$W/err"
