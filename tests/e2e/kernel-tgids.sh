#!/bin/sh
# fxt-run --kernel: each task's process (tgid) without the kernel's
# saved_tgids at the end (the whole system's table: 26-110 ms of the
# end's wait).  A task created while recording has it from its
# task:task_newtask event (CLONE_THREAD: its creator's process), one from
# before from /proc.  A shell runs tests/progs/kernel_states twice: two
# processes created while recording, each with three threads that end
# before it does (gone from /proc at the end); each thread's context
# switches are on its own process, and the events that said the tgids
# are not in the archive.  Another process's (not traced) thread, created
# and ended while recording, on the traced one's CPU: its switches with
# the traced thread are on its own process too (perf's task events; it
# is in no table of the kernel's at the end but saved_tgids).
. "$abs_top_srcdir/tests/e2e/import-common.sh"

plan 9
scratch

need_tracefs

P=$PROGS/kernel_states
FXT_RUN_DEBUG=1 "$FXT_RUN" --kernel -o "$TMPD/k.fxt" -- \
  sh -c '"$1" > "$2/t1" && "$1" > "$2/t2"' - "$P" "$TMPD" 2> "$TMPD/err" 9>&-
is "$?" 0 "fxt-run --kernel, two processes of four threads each: exit 0"
ok "... the tgids from the events and /proc: saved_tgids not read (FXT_RUN_DEBUG)" \
  grep -q "^fxt-run: kernel: tgids: .*; saved_tgids not read$" "$TMPD/err" ||
  diag "$(grep '^fxt-run: kernel: ' "$TMPD/err")"
"$FXT_DUMP" "$TMPD/k.fxt" > "$TMPD/dump"
# wrong FILE: "tid:pid" of each context switch naming a thread of FILE's
# process (kernel_states' "NAME TID" lines) on another pid; n FILE: how
# many name one.
wrong() {
  awk 'NR == FNR { tid[$2] = 1; if ($1 == "main") main = $2; next }
    / cswitch / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["out_tid"] in tid && f["out_pid"] != main) print f["out_tid"] ":" f["out_pid"]
      if (f["in_tid"] in tid && f["in_pid"] != main) print f["in_tid"] ":" f["in_pid"] }' "$1" "$TMPD/dump"
}
n() {
  awk 'NR == FNR { tid[$2] = 1; next }
    / cswitch / { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ /_tid$/ && kv[2] in tid) { n++; break } } }
    END { print n + 0 }' "$1" "$TMPD/dump"
}
ok "the first process's threads have context switches ($(n "$TMPD/t1"))" test "$(n "$TMPD/t1")" -gt 0
is "$(wrong "$TMPD/t1" | sort -u | tr '\n' ' ')" "" "... all of them on its process ($(awk '$1 == "main" { print $2 }' "$TMPD/t1"))"
is "$(wrong "$TMPD/t2" | sort -u | tr '\n' ' ')" "" "the second's too ($(n "$TMPD/t2") switches, process $(awk '$1 == "main" { print $2 }' "$TMPD/t2"))"
is "$(grep -c 'name="task_newtask"' "$TMPD/dump")" 0 "no task_newtask event in the archive (they only said the tgids)"

# One CPU for both: the traced main thread spins until stop1; the other
# process (main and a thread) spins until stop2, which comes first.
command -v taskset > /dev/null 2>&1 || skip_rest "no taskset"
B=$PROGS/busy_threads
FXT_RUN_DEBUG=1 taskset -c 0 "$FXT_RUN" --kernel -o "$TMPD/o.fxt" -- \
  "$B" 1 "$TMPD/stop1" > /dev/null 2> "$TMPD/err2" 9>&- &
run=$!
recording_on "$run"
taskset -c 0 "$B" 4 "$TMPD/stop2" > "$TMPD/ready2" &
other=$!
i=0
while ! grep -q ready "$TMPD/ready2" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
thr=$(ls "/proc/$other/task" | grep -vx "$other" | tr '\n' '|' | sed 's/|$//')
sleep 1
touch "$TMPD/stop2"
wait $other
sleep 0.1
touch "$TMPD/stop1"
wait $run
is "$?" 0 "fxt-run --kernel, a spinner on CPU 0 next to another process's (pid $other, threads $thr)"
"$FXT_DUMP" "$TMPD/o.fxt" | grep " cswitch " | grep -E "_tid=($thr) " > "$TMPD/sw2"
n=$(wc -l < "$TMPD/sw2")
# The scheduler decides whether the other's threads (not its main)
# take the CPU from the traced thread (1-20 times a second here).
if [ "$n" -gt 0 ]; then
  ok "... the other's threads are in the traced thread's switches ($n)" true
  is "$(grep -vE "out_pid=$other out_tid=($thr) |in_pid=$other in_tid=($thr) " "$TMPD/sw2" | head -n 3)" "" \
    "... on its own process (pid $other), the threads gone from /proc at the end"
else
  skip "the other's threads never took the CPU from the traced thread"
  skip "the other's threads never took the CPU from the traced thread"
fi
finish
