#!/bin/sh
# Stress: 256 short threads, a 1,000,000-deep recursion, a signal handler
# running instrumented code thousands of times (also as 2000 threads end),
# and drops under a tiny --max-size, each counted exactly.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 23

# --- 4 rounds of 64 threads, created and joined.
trace threads.fxt "$PROGS/stress_threads"
is "$rc" 0 "threads: exit status"
check_archive threads threads.fxt
is "$(flat threads.fxt)" "$(sort <<'EOT'
1 main
4 round_of_threads
2560 step
256 work
256 worker
EOT
)" "threads: calls per function"
want=$( (echo stress_threads; r=0; while [ $r -lt 4 ]; do i=0; while [ $i -lt 64 ]; do
  echo "r$r-$i"; i=$((i + 1)); done; r=$((r + 1)); done) | sort)
is "$("$CALLTREE" --threads threads.fxt)" "$want" "threads: 257 tracks, each named"
is "$(stat_of threads.fxt overlaps)/$(stat_of threads.fxt open)/$(stat_of threads.fxt unmatched)" \
  0/0/0 "threads: exact nesting"

# --- A recursion 1,000,000 calls deep (in a thread with a 1 GiB stack).
trace deep.fxt "$PROGS/deep_recursion" 1000000
is "$rc" 0 "deep recursion: exit status"
check_archive deep deep.fxt
is "$(flat deep.fxt)" "$(sort <<'EOT'
1000001 dive
1 diver
1 main
EOT
)" "deep recursion: calls per function"
is "$(stat_of deep.fxt maxdepth)/$(stat_of deep.fxt overlaps)/$(stat_of deep.fxt open)" \
  1000002/0/0 "deep recursion: nested 1,000,002 deep"
ok "deep recursion: fxt-run warns that Perfetto shows 513 levels of 1,000,002" grep -q \
  '^fxt-run: warning: 999489 slices nest deeper than 512 levels (depth 1000001 on pid [0-9]* tid [0-9]*): Perfetto does not show them' \
  "$TMPD/err"

# --- SIGUSR1 handled 3000 times while the thread runs instrumented code.
# Each handler makes 3 calls (on_signal, then handler_work twice).  A handler
# that interrupts the thread's buffer refill writes into the reserve the
# agent keeps at the end of each chunk, so every call is recorded.
trace signals.fxt "$PROGS/signals" 3000
is "$rc/$(cat "$TMPD/out")" "0/signals: handled 3000" "signals: all 3000 handled"
check_archive signals signals.fxt
on=$(flat signals.fxt | sed -n 's/^\([0-9]*\) on_signal$/\1/p')
hw=$(flat signals.fxt | sed -n 's/^\([0-9]*\) handler_work$/\1/p')
dropped=$(stat_of signals.fxt dropped)
diag "signals: $on on_signal and $hw handler_work recorded, $dropped calls dropped"
# The main thread spins the while, for as long as the machine takes to
# deliver the signals: on a machine too loaded to write that out in time,
# calls are dropped (and counted), some of the handler's among them.
if [ "${dropped:-0}" = 0 ]; then
  is "${on:-0}/${hw:-0}" 3000/6000 \
    "signals: every handler call recorded (the chunk's reserve takes them)"
else
  diag "$(cat "$TMPD/err")"
  skip "signals: $dropped calls dropped, the machine could not keep up: handler calls not counted"
fi
is "$(flat signals.fxt | grep -v -e ' spin$' -e ' on_signal$' -e ' handler_work$')" \
  "$(printf '%s\n' '1 main' '1 sender')" "signals: the other calls"
is "$(stat_of signals.fxt overlaps)/$(stat_of signals.fxt open)/$(stat_of signals.fxt unmatched)" \
  0/0/0 "signals: exact nesting"

# --- 2000 threads end while a SIGPROF handler runs instrumented code:
# a signal that lands as an ending thread's buffer is released must not
# write into it (it did: SIGSEGV, 5 runs of 5).  Its calls then are
# dropped, and said with their cause; so are, now and then, those of a
# signal that interrupts a thread's first traced call, before the thread
# has a buffer.
trace tend.fxt "$PROGS/thread_end_signals" 2000
is "$rc/$(cat "$TMPD/out")" "0/ok" "threads ending under a signal handler: the program's output and status"
check_archive "threads ending under a signal handler" tend.fxt
dropped=$(stat_of tend.fxt dropped)
ok "... drops ($dropped) said with their cause" sh -c 'test "$1" = 0 ||
  grep -Eq "dropped: ([0-9]+ because )?(a signal handler made them while its thread was ending|they were made before their thread had a buffer)" "$2"' - "${dropped:-0}" "$TMPD/err"

# --- Drops: 200,000 calls into 4 KiB chunks under a 64 KiB bound.  The
# agent counts each call it could not record, so that recorded slices +
# dropped records = calls made (main + 200,000 leaf), and fxt-run's summary
# says the same number.  The number itself is predictable from the spool
# layout (spool/format.h): 64 KiB = 16 chunks of (4096 - 80) / 16 = 251
# slots of 16 bytes, 4016 slots: main's enter, then a slot a leaf call (a
# PAIR, spool/records.h), but for the leaf whose enter took the next chunk
# (15 of them), whose exit is a slot of its own when the chunk's taking
# made the call too long for a PAIR.  4001 to 4016 slices recorded
# (main's closed when the thread starts dropping), the rest dropped.
calls=200001
FXT_CHUNK_SIZE=4096 trace drops.fxt --max-size 64k "$PROGS/loop" 200000
is "$rc" 0 "drops: exit status"
check_archive drops drops.fxt
slices=$(stat_of drops.fxt slices)
dropped=$(stat_of drops.fxt dropped)
is "$((slices + dropped))" "$calls" "drops: recorded + dropped = calls ($slices + $dropped)"
ok "drops: the predicted number dropped ($dropped)" test "$slices" -ge 4001 -a "$slices" -le 4016
case $(summary) in
*", $dropped dropped: raise --max-size to keep them)") ok "drops: summary says $dropped dropped" true ;;
*) ok "drops: summary says $dropped dropped" false; diag "got: $(summary)" ;;
esac
finish
