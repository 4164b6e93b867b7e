#!/bin/sh
# fxt-run --kernel: the tgids of another process's tasks, created and
# ended while recording, when there are more of them than perf's task
# buffer holds (some 8,000 a CPU: it was read only at the end, and the
# tasks past it were each taken for a process of its own).  The traced
# program (a shell's loop: no calls of its own to record) spins on CPU 0;
# beside it, on CPU 0 too, tests/progs/many_tasks
# (not traced) creates 20,000 threads one after the other.  Each context
# switch of the traced thread with one of them must be on many_tasks'
# process, the last ones' too.
. "$abs_top_srcdir/tests/e2e/import-common.sh"

plan 4
scratch

need_tracefs
command -v taskset > /dev/null 2>&1 || skip_rest "no taskset"

M=$PROGS/many_tasks
# shellcheck disable=SC2016 # $1: the inner shell's
FXT_RUN_DEBUG=1 "$FXT_RUN" --kernel=sched -o "$TMPD/k.fxt" -- \
  taskset -c 0 sh -c 'while [ ! -e "$1" ]; do :; done' - "$TMPD/stop" > /dev/null 2> "$TMPD/err" 9>&- &
run=$!
recording_on "$run"
taskset -c 0 "$M" 20000 > "$TMPD/tasks"
is "$?" 0 "many_tasks: 20,000 threads on CPU 0 beside the traced spinner"
touch "$TMPD/stop"
wait $run
is "$?" 0 "fxt-run --kernel=sched: exit 0"
other=$(awk '$1 == "main" { print $2 }' "$TMPD/tasks")
"$FXT_DUMP" "$TMPD/k.fxt" > "$TMPD/dump"
# The switches naming one of many_tasks' threads: "tid pid" of each.
awk 'NR == FNR { if ($1 == "thread") { tid[$2] = NR - 1 }; next }
  / cswitch / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    if (f["out_tid"] in tid) print tid[f["out_tid"]], f["out_tid"], f["out_pid"]
    if (f["in_tid"] in tid) print tid[f["in_tid"]], f["in_tid"], f["in_pid"] }' \
  "$TMPD/tasks" "$TMPD/dump" > "$TMPD/sw"
n=$(wc -l < "$TMPD/sw")
late=$(awk '$1 > 10000' "$TMPD/sw" | wc -l)
# The scheduler decides how often they take the CPU from the spinner.
ok "the traced thread switched with many_tasks' threads ($n switches, $late with threads past the 10,000th)" \
  test "$late" -gt 0 || diag "$(grep '^fxt-run: kernel: ' "$TMPD/err")"
is "$(awk -v p="$other" '$3 != p { print $2 ":" $3 }' "$TMPD/sw" | sort -u | head -n 5 | tr '\n' ' ')" "" \
  "... each on many_tasks' process ($other)" || diag "$(grep '^fxt-run: kernel: ' "$TMPD/err")"
finish
