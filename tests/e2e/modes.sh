#!/bin/sh
# The recording modes (fxt-run --mode, FXT_MODE) on tests/progs/numbered,
# whose calls say their own number (tests/helpers/numbers reads them back):
# exactly which calls each mode keeps, and that every call is kept,
# dropped or overwritten, counted once:
#   stream    every number;
#   oneshot   the first ones, contiguous from 0; the rest dropped;
#   circular  the newest ones, contiguous up to the last; the rest
#             overwritten, with the instant Perfetto shows and the frames
#             open where the window begins; threads, a killed process
#             (recovered from its spool), the agent without fxt-run;
#             memory bounded by --buffer-size per thread.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
NUM=$PROGS/numbered
READ=$HELPERS/numbers
AGENT_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent.so
scratch
cd "$TMPD" || exit 1
plan 42

N=100000
# The calls a thread of numbered makes: count(), N num() and their digits.
per_thread=$(awk -v n=$N 'BEGIN { c = 1 + n; for (i = 0; i < n; i++) c += length(i ""); print c }')
# numbered's threads (T > 1) add main and, per thread, pthread_create,
# pthread_join and the thread's own frame (the default libc groups).
total() { if [ "$1" = 1 ]; then echo $((per_thread + 1)); else echo $(($1 * (per_thread + 3) + 1)); fi; }

# run NAME [FXT-RUN OPTION...] -- PROGRAM ARGS: the archive NAME.fxt, its
# numbers (NAME.n) and the summary (NAME.err).
run() {
  name=$1; shift
  "$FXT_RUN" -f -o "$name.fxt" "$@" >"$name.out" 2>"$name.err"
  rc=$?
  "$READ" "$name.fxt" >"$name.n"
  return $rc
}
# calls FILE.n: "KEPT OPEN OVERWRITTEN DROPPED".
calls() { sed -n 's/^calls //p' "$1"; }
kept() { calls "$1" | cut -d' ' -f1; }
over() { calls "$1" | cut -d' ' -f3; }
drop() { calls "$1" | cut -d' ' -f4; }
checks() { "$FXT_DUMP" --check "$1" >/dev/null 2>&1; }
quiet() { "$@" >/dev/null 2>&1; }
# windows FILE.n: each thread's "LAST GAPS", one line per distinct pair.
windows() { grep -v '^calls' "$1" | cut -d' ' -f3,4 | sort -u; }

# ---------------------------------------------------------------- stream
run stream -- "$NUM" $N
is "$(head -1 stream.n)" "$N 0 $((N - 1)) 0" "stream: every number, 0 .. N-1"
is "$(calls stream.n)" "$(total 1) 0 0 0" "stream: every call kept, none overwritten or dropped"
run stream2 --mode=stream -- "$NUM" $N
is "$(calls stream2.n)" "$(calls stream.n)" "--mode=stream is the default"

# ---------------------------------------------------------------- oneshot
run oneshot --mode=oneshot --buffer-size=256K -- "$NUM" $N
set -- $(head -1 oneshot.n)
is "$2/$4" "0/0" "oneshot: the numbers begin at 0, without gaps"
ok "oneshot: the first ones only ($1 of $N)" test "$1" -gt 1000 -a "$1" -lt $N
is "$(($(kept oneshot.n) + $(drop oneshot.n)))/$(over oneshot.n)" "$(total 1)/0" \
  "oneshot: kept + dropped = the calls made"
# 16 bytes per record, two per call but one per leaf (a PAIR,
# spool/records.h): the buffer holds at least 7/8 of 256K / 32 calls,
# at most 256K / 16.
ok "oneshot: at most --buffer-size of records ($(kept oneshot.n) calls)" \
  test "$(kept oneshot.n)" -le 16384 -a "$(kept oneshot.n)" -ge 7000
ok "oneshot: the summary says which limit to raise" \
  grep -q "$(drop oneshot.n) dropped: raise --buffer-size to keep them" oneshot.err
ok "oneshot: valid archive" checks oneshot.fxt

# ---------------------------------------------------------------- circular
run circ --mode=circular --buffer-size=256K -- "$NUM" $N
set -- $(head -1 circ.n)
is "$3/$4" "$((N - 1))/0" "circular: the numbers end at the last, without gaps"
ok "circular: the newest ones only (from $2)" test "$2" -gt 0
is "$(($(kept circ.n) + $(over circ.n)))/$(drop circ.n)" "$(total 1)/0" \
  "circular: kept + overwritten = the calls made"
# A full ring holds at least three quarters of the buffer (chunks of at
# most a quarter), at most all of it (a leaf's call in one record).
ok "circular: between 3/4 of --buffer-size and all of it ($(kept circ.n) calls)" \
  test "$(kept circ.n)" -le 16384 -a "$(kept circ.n)" -ge 6000
ok "circular: the summary counts the overwritten" \
  grep -q "0 dropped, $(over circ.n) overwritten)" circ.err
is "$("$FXT_DUMP" --stats circ.fxt | sed -n 's/^overwritten //p')" "$(over circ.n)" \
  "circular: fxt-dump --stats counts them too"
is "$("$FXT_DUMP" circ.fxt | grep -c "event instant cat=\"fxt\" name=\"fxt: $(over circ.n) records overwritten\"")" 1 \
  "circular: one instant where the window begins, as Perfetto shows it"
# The frames open at the window's start (main, count, the number there
# unless the window starts with one, maybe a digit) start there, marked,
# before the instant.
open=$(calls circ.n | cut -d' ' -f2)
ok "circular: the frames open at the window's start are kept ($open)" test "$open" -ge 2 -a "$open" -le 4
is "$("$FXT_DUMP" circ.fxt | grep 'start_overwritten' | grep -o 'name="[a-z0-9_]*"' | head -2 | tr '\n' ' ')" \
  'name="main" name="count" ' "circular: main, then count, open from the start"
ok "circular: valid archive" checks circ.fxt
is "$("$abs_top_builddir/fxt-report" circ.fxt | sed -n 2p)" \
  "# $(over circ.n) calls overwritten: totals are those of each thread's newest calls (a flight recorder's window)" \
  "circular: fxt-report says its totals are the window's"
ok "circular: fxt-diff names the run that overwrote" \
  sh -c '"$1" "$2" "$2" | grep -q "^# base circ.fxt: $3 calls overwritten"' sh "$abs_top_builddir/fxt-diff" circ.fxt "$(over circ.n)"
if [ -n "$PYTHON3" ]; then
  ok "circular: what Perfetto needs" quiet "$PYTHON3" "$abs_top_srcdir/tests/helpers/perfetto_rules.py" circ.fxt
else
  skip "python3 not found"
fi

# A window smaller than a chunk, and one the size of a single page.
run small --mode=circular --buffer-size=16K -- "$NUM" $N
set -- $(head -1 small.n)
is "$3/$4/$(($(kept small.n) + $(over small.n)))" "$((N - 1))/0/$(total 1)" \
  "circular, 16K: the newest numbers, every call counted"

# Threads: each keeps its own newest.
run thr --mode=circular --buffer-size=256K -- "$NUM" $N 4
is "$(windows thr.n)" "$((N - 1)) 0" \
  "circular, 4 threads: each ends at the last number, without gaps"
is "$(grep -vc '^calls' thr.n)" 4 "circular, 4 threads: four windows"
is "$(($(kept thr.n) + $(over thr.n)))" "$(total 4)" "circular, 4 threads: every call counted"
ok "circular, 4 threads: valid archive" checks thr.fxt

# Killed before it could seal: recovered from the spool, counts included.
run killed --mode=circular --buffer-size=256K -- "$NUM" $N 3 kill
is "$?" 137 "killed: fxt-run exits as the program did"
is "$(windows killed.n)" "$((N - 1)) 0" \
  "killed: each thread's window ends at the last number"
is "$(($(kept killed.n) + $(over killed.n)))" "$(total 3)" "killed: every call counted"
ok "killed: recovered from spool" grep -q "recovered from spool" killed.err
ok "killed: valid archive" checks killed.fxt

# The agent alone: FXT_MODE, the process converts its own spool.
env LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$TMPD/self.fxt" \
  FXT_MODE=circular FXT_BUFFER_SIZE=256K "$NUM" $N >/dev/null 2>&1
"$READ" self.fxt >self.n
set -- $(head -1 self.n)
is "$3/$4/$(($(kept self.n) + $(over self.n)))" "$((N - 1))/0/$(total 1)" \
  "FXT_MODE=circular without fxt-run: the same window"

# Memory: each thread maps its ring, no more.
NUMBERED_RSS=1 "$FXT_RUN" -q -f -o rss.fxt --mode=circular --buffer-size=4M -- "$NUM" 3000000 4 \
  >/dev/null 2>rss.err
hwm=$(awk '/^VmHWM:/ { print $2 }' rss.err)
ok "circular: peak RSS $hwm KiB <= 4 threads x 4M + 16M" test "${hwm:-999999}" -le $((4 * 4096 + 16384))
"$READ" rss.fxt >rss.n
is "$(windows rss.n)" "2999999 0" \
  "circular, 3M numbers a thread: each window ends at the last"

# Modes and sizes, refused before the program runs.
"$FXT_RUN" --mode=ring -- true >/dev/null 2>bad.err
is "$?:$(cat bad.err)" "2:fxt-run: --mode: unknown mode 'ring' (modes: stream, oneshot, circular)" \
  "--mode=ring: a usage error naming the modes"
"$FXT_RUN" --mode -- true >/dev/null 2>&1
is "$?" 2 "--mode without a value: a usage error"
# The agent takes an unknown FXT_MODE for stream (and says so with FXT_DEBUG).
env LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$TMPD/bogus.fxt" \
  FXT_MODE=bogus FXT_DEBUG=1 "$NUM" 1000 >/dev/null 2>bogus.err
ok "FXT_MODE=bogus: the agent says it records in stream mode" grep -q "FXT_MODE=bogus: not a mode" bogus.err
"$READ" bogus.fxt >bogus.n
is "$(head -1 bogus.n)" "1000 0 999 0" "FXT_MODE=bogus: every number"

# --help and the man page's source name the modes.
"$FXT_RUN" --help >help.txt
ok "--help: --mode and its three modes" sh -c 'grep -q -- "--mode=MODE" help.txt && grep -q "oneshot" help.txt && grep -q "circular" help.txt'
ok "--help: FXT_MODE" grep -q "FXT_MODE" help.txt
ok "--help: --buffer-size per thread in oneshot and circular" grep -q "thread's buffer" help.txt
finish
