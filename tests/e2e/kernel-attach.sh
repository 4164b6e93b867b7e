#!/bin/sh
# fxt-run --kernel -p PID: the kernel's events of a process attached to,
# merged into the window's archive.  tests/progs/attach_target --serve
# --reader has a second thread already (blocked in a read that main's
# first line releases); while attached it starts two more ("threads 2"):
# the pid filter has the process's threads at the attach and follows
# those it starts, so each of the four has its context switches on the
# process, and no other process's event is in the archive.  Without the
# permission to trace, one line, exit 2, and nothing done to the process.
. "$abs_top_srcdir/tests/e2e/import-common.sh"

plan 9
[ "$(uname -m)" = x86_64 ] || skip_rest "attaching is for x86-64"
need_tracefs
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"
attached() { grep -q '^fxt-run: attached to ' run.err; }

start --serve --reader
reader=$(ls "/proc/$target/task" | grep -vx "$target" | head -n 1)
"$FXT_RUN" --kernel -p $target --libc=io -o k.fxt 2>run.err 9>&- &
run=$!
wait_until attached
echo "threads 2" >&9
wait_until grep -q "^joined 2\$" out
exec 9>&-
wait $run
is "$?" 0 "fxt-run --kernel -p: exit 0 (the process exited)"
wait $target
ok "... a summary line for the kernel's events" \
  grep -q '^fxt-run: kernel: [1-9][0-9]* events, [0-9]* threads, [0-9]* lost$' run.err ||
  diag "$(cat run.err)"
ok "no instance of its own left (within 5 s)" instance_gone $run
"$FXT_DUMP" k.fxt > dump
# The tids with a switch-out on the process.
grep " cswitch " dump | sed -n "s/.* out_pid=$target out_tid=\([0-9]*\) .*/\1/p" | sort -u > tids
ok "main's context switches are in the archive" grep -qx "$target" tids
# The thread it had already (woken by main at the end, it exits): its own
# events are recorded only when it is in the pid filter.
ok "... and the thread it had already: its exit (tid $reader)" \
  grep -q "pid=$target tid=$reader .*name=\"sched_process_exit\"" dump
# (The agent's own threads, started at the attach, are the process's too.)
n=$(grep -cvx -e "$target" -e "$reader" tids)
ok "... and of the 2 it started while attached ($n threads started since)" test "$n" -ge 2 ||
  diag "$(cat tids)"
is "$(grep ' event instant cat="sched"' dump | grep -vc " pid=$target ")" 0 \
  "no sched event of another process"

# Not root: a process of its user's, which it may attach to, but not the
# kernel's tracing.
if command -v setpriv > /dev/null; then
  D=$(mktemp -d) && chmod 1777 "$D"
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    env ATTACH_TARGET_STOP="$D/stop" "$PROGS/attach_target" --spin > "$D/out" 2>&1 9>&- &
  nobody=$!
  wait_until grep -q ready "$D/out"
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$FXT_RUN" --kernel -p $nobody --libc=io -o "$D/u.fxt" 2> run.err 9>&-
  rc=$?
  is "$rc/$(wc -l < run.err)/$(grep -c libfxt-agent "/proc/$nobody/maps")" "2/1/0" \
    "not root: one line, exit 2, no agent loaded into the process" || diag "$(cat run.err)"
  ok "... which says what is missing" grep -q "^fxt-run: --kernel: no permission to trace the kernel" run.err
  touch "$D/stop"
  wait $nobody
  rm -rf "$D"
else
  skip "no setpriv"; skip "no setpriv"
fi
finish
