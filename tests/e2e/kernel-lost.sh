#!/bin/sh
# fxt-run --kernel with a ring buffer too small for the program's events
# (FXT_KERNEL_BUFFER=8K a CPU, tests/progs/kernel_naps: a nap every
# millisecond, each a few events) while fxt-run's reader cannot run
# (fxt-run stopped for half a second once recording: the reader wakes
# when a buffer is half full, and would keep up): the events the kernel
# lost are counted in the archive
# (an instant "fxt: N kernel events lost", as the agent's drops are) and
# said by the summary line, fxt-dump --stats, fxt-report, fxt waits,
# fxt tree, fxt-diff and fxt view, all the same N (fxt replay and
# fxt-export keep the instant where it was).  A bad FXT_KERNEL_BUFFER: one line, exit 2.
. "$abs_top_srcdir/tests/e2e/import-common.sh"
FXT_REPORT=$abs_top_builddir/fxt-report
FXT_WAITS=$abs_top_builddir/fxt-waits

plan 14
scratch

need_tracefs

FXT_KERNEL_BUFFER=8K FXT_RUN_DEBUG=1 "$FXT_RUN" --kernel=sched,syscalls -o "$TMPD/l.fxt" -- \
  "$PROGS/kernel_naps" 3000 2> "$TMPD/err" 9>&- &
run=$!
recording_on "$run"
kill -STOP "$run"
sleep 0.5
kill -CONT "$run"
wait "$run"
is "$?" 0 "fxt-run --kernel, an 8K buffer, fxt-run stopped for 0.5 s: exit 0"
n=$(sed -n 's/^fxt-run: kernel: [0-9]* events, [0-9]* threads, \([0-9]*\) lost$/\1/p' "$TMPD/err")
ok "... the summary says events were lost ($n)" test "${n:-0}" -gt 0 || diag "$(cat "$TMPD/err")"
ok "... the tgids from the kernel's saved_tgids: a task's creation may be among the events lost (FXT_RUN_DEBUG)" \
  grep -q "^fxt-run: kernel: tgids from saved_tgids" "$TMPD/err"
is "$("$FXT_DUMP" --stats "$TMPD/l.fxt" | awk '$1 == "kernel_lost" { print $2 }')" "$n" \
  "fxt-dump --stats: kernel_lost, as many"
is "$("$FXT_DUMP" "$TMPD/l.fxt" | grep -c "event instant cat=\"fxt\" name=\"fxt: [0-9]* kernel events lost\"" | awk '{ print ($1 > 0) }')" 1 \
  "... an instant \"fxt: N kernel events lost\" in the archive"
ok "fxt-dump --check: ok" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, "' - "$FXT_DUMP" "$TMPD/l.fxt"
ok "fxt-report says it" grep -q "^# $n kernel events lost (the kernel's ring buffer was full): thread states are partial$" \
  -- "$(f=$TMPD/report; "$FXT_REPORT" "$TMPD/l.fxt" > "$f"; echo "$f")"
ok "... and its json" grep -q "\"kernel_lost\":$n," \
  -- "$(f=$TMPD/report.json; "$FXT_REPORT" --format json "$TMPD/l.fxt" > "$f"; echo "$f")"
ok "fxt waits says it" grep -q "^# $n kernel events lost (the kernel's ring buffer was full): " \
  -- "$(f=$TMPD/waits; "$FXT_WAITS" "$TMPD/l.fxt" > "$f"; echo "$f")"
ok "fxt tree says it" grep -q "^# $n kernel events lost (the kernel's ring buffer was full): the calls are whole$" \
  -- "$(f=$TMPD/tree; "$abs_top_builddir/fxt-tree" "$TMPD/l.fxt" > "$f"; echo "$f")"
ok "fxt-diff says it of each side" sh -c \
  '"$1" "$2" "$2" | grep -c ": $3 kernel events lost (the kernel.s ring buffer was full): " | grep -qx 2' - "$abs_top_builddir/fxt-diff" "$TMPD/l.fxt" "$n"
ok "fxt view says it" grep -qx "$n kernel events lost (the kernel's ring buffer was full): the calls are whole" \
  -- "$(f=$TMPD/view; "$abs_top_builddir/fxt-view" --load-only "$TMPD/l.fxt" > "$f"; echo "$f")"
ok "fxt replay and fxt-export have its instant, where it was" sh -c \
  '"$1" "$3" | grep -q "! fxt: [0-9]* kernel events lost" && "$2" --chrome "$3" | grep -q "\"name\":\"fxt: [0-9]* kernel events lost\""' - \
  "$abs_top_builddir/fxt-replay" "$abs_top_builddir/fxt-export" "$TMPD/l.fxt"

FXT_KERNEL_BUFFER=lots "$FXT_RUN" --kernel -o "$TMPD/b.fxt" -- sh -c 'touch "$1"' - "$TMPD/ran" 2> "$TMPD/err" 9>&-
is "$?/$(cat "$TMPD/err")/$(test -e "$TMPD/ran" && echo ran)" \
  "2/fxt-run: --kernel: FXT_KERNEL_BUFFER=lots: not a size of at least 4K/" \
  "a bad FXT_KERNEL_BUFFER: one line, exit 2, nothing run"
finish
