#!/bin/sh
# fxt-run --kernel on a run longer than the kernel's ring buffer holds:
# fxt-run moves the events out of the buffer while the program runs (a
# thread of its own, every 100 ms, into files next to the archive, deleted
# already), so that nothing is lost.  tests/progs/kernel_naps naps 1 ms
# 3000 times (a switch-out and a switch-in each, ~12000 events), with a
# buffer of 64K a CPU (FXT_KERNEL_BUFFER), which holds a few hundred naps:
# read at the end only, the archive would have a fraction of them (and,
# the buffer dropping the newest, not the program's exit).
. "$abs_top_srcdir/tests/e2e/import-common.sh"

plan 5
scratch

need_tracefs

mkdir "$TMPD/out"
FXT_KERNEL_BUFFER=64K "$FXT_RUN" --kernel -o "$TMPD/out/n.fxt" -- \
  "$PROGS/kernel_naps" 3000 2> "$TMPD/err" 9>&-
is "$?" 0 "fxt-run --kernel, a 64K buffer, 3000 naps: exit 0"
"$FXT_DUMP" "$TMPD/out/n.fxt" > "$TMPD/dump"
pid=$(grep -m 1 'name="sched_process_exec"' "$TMPD/dump" | sed 's/.* pid=\([0-9]*\) .*/\1/')
# Its switch-outs asleep (out_state 3, blocked): one a nap, while the
# reader kept up (a loaded machine may starve it a moment: 2/3 are asked).
n=$(grep " cswitch " "$TMPD/dump" | grep -c "out_pid=$pid out_tid=$pid .*out_state=3")
ok "the naps' switch-outs are in the archive: $n of 3000 (>= 2000)" test "$n" -ge 2000 ||
  diag "$(cat "$TMPD/err")"
ok "... and the program's exit, its last event" grep -q "pid=$pid tid=$pid .*name=\"sched_process_exit\"" "$TMPD/dump"
ok "fxt-dump --check: ok" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, "' - "$FXT_DUMP" "$TMPD/out/n.fxt"
is "$(ls "$TMPD/out")" "n.fxt" "no file of the kernel's events left next to the archive"
finish
