#!/bin/sh
# fxt-run recovers the archive of a program that died without flushing
# (_exit, exit_group, SIGKILL, abort): from the spool it left, with the
# agent's own flusher; the spool is removed and the summary says how the
# process ended: an exit without exit() is not a crash.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 45
prog=$PROGS/crash

# The expected calls: a worker thread's 200 work() calls, and main's
# frames open when it died.
want_flat=$(sort <<'EOT'
1 inner
1 main
1 outer
200 work
1 worker
EOT
)

# recovered NAME ARCHIVE RC: the checks common to every way of dying.
recovered() {
  r_name=$1 r_archive=$2
  is "$rc" "$3" "$r_name: fxt-run exits $3"
  is "$(cat "$TMPD/out")" "crash: $r_name" "$r_name: program output"
  check_archive "$r_name" "$r_archive"
  is "$(flat "$r_archive")" "$want_flat" "$r_name: every call, open frames included"
  is "$(stat_of "$r_archive" threads)/$(stat_of "$r_archive" overlaps)/$(stat_of "$r_archive" unmatched)/$(stat_of "$r_archive" open)" \
    "2/0/0/0" "$r_name: two threads, exact nesting, frames closed"
  is "$("$CALLTREE" --threads "$r_archive" | tr '\n' ' ')" "crash crash " \
    "$r_name: threads named after their comm (the worker's is main's), not by tid"
  is "$(ls | grep -c '\.spool$')" 0 "$r_name: spool removed"
}

trace exit.fxt "$prog" exit 200
recovered exit exit.fxt 3
ok "exit: summary says it ended by _exit(3)" grep -q \
  '^fxt-run: wrote exit.fxt ([0-9.]* KiB, 204 events, 2 threads, 0 dropped); ended by _exit(3), not exit(): converted from its spool$' \
  "$TMPD/err"

# As Go's os.Exit: the system call, no libc function the agent sees; fxt-run
# has the status it waited for.
trace exit_group.fxt "$prog" exit_group 200
is "$rc" 4 "exit_group: fxt-run exits 4"
check_archive "exit_group" exit_group.fxt
is "$(flat exit_group.fxt)" "$want_flat" "exit_group: every call, open frames included"
ok "exit_group: summary says it exited, with its status" grep -q \
  '^fxt-run: wrote exit_group.fxt (.*); exited with status 4 but did not seal its spool: converted from it$' \
  "$TMPD/err"

trace kill.fxt "$prog" kill 200
recovered kill kill.fxt 137
ok "kill: summary says it was killed" grep -q \
  '^fxt-run: wrote kill.fxt (.*); killed by SIGKILL: recovered from spool$' "$TMPD/err"

trace abort.fxt "$prog" abort 200
recovered abort abort.fxt 134

# Killed after writing many chunks on both threads (each recycled in
# place, its copies appended): every call once, in order.
trace busy.fxt "$prog" kill 300000 250001
is "$rc" 137 "killed busy: fxt-run exits 137"
check_archive "killed busy" busy.fxt
is "$(flat busy.fxt)" "$(printf '%s\n' '1 inner' '1 main' '1 outer' '550001 work' '1 worker' | sort)" \
  "killed busy: every call once"
is "$(stat_of busy.fxt overlaps)/$(stat_of busy.fxt unmatched)/$(stat_of busy.fxt open)" \
  "0/0/0" "killed busy: exact nesting, frames closed"

# A fork child that leaves through _exit(): no flush, its spool stays, and
# fxt-run turns it into the archive it would have written, then merges it
# into fork.fxt after the parent's (--keep-parts: left as fork.PID.fxt).
trace fork.fxt "$PROGS/fork_child" _exit
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
is "$rc/$child" "0/${child:-none}" "fork+_exit: exit 0, child pid printed"
check_archive "fork+_exit: merged" fork.fxt
is "$("$CALLTREE" --pid "$child" --flat fork.fxt)" "3 child_work" "fork+_exit: the child's calls"
parent=$("$FXT_DUMP" fork.fxt | sed -n 's/^provider_info id=\([0-9]*\) .*/\1/p' | head -n 1)
is "$("$CALLTREE" --pid "$parent" --flat fork.fxt | sort)" "$(printf '%s\n' '1 main' '2 parent_work')" \
  "fork+_exit: the parent's calls, first"
ok "fork+_exit: summary says the child exited" grep -q \
  "^fxt-run: wrote fork.fxt (.*, 6 events, 2 threads, 0 dropped); 2 processes, 1 exited without sealing their spool (converted from it)\$" \
  "$TMPD/err"
is "$(ls | grep -c '\.spool$')/$(ls | grep -c '^fork\..*\.fxt$')" 0/0 "fork+_exit: spool and part removed"
trace keep.fxt --keep-parts "$PROGS/fork_child" _exit
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
check_archive "fork+_exit, --keep-parts: child" "keep.$child.fxt"
is "$(flat "keep.$child.fxt")" "3 child_work" "fork+_exit, --keep-parts: the child's calls"
ok "fork+_exit, --keep-parts: summary says the child ended by _exit(0)" grep -q \
  "^fxt-run: wrote child archive keep.$child.fxt (.*, 3 events, 1 thread, 0 dropped); ended by _exit(0), not exit(): converted from its spool\$" \
  "$TMPD/err"

# dash ends `sh -c` with _exit(): the shell exited, it did not crash.
if DASH=$(command -v dash); then
  trace dash.fxt --libc=default "$DASH" -c '"$0" 10; "$0" 10' "$PROGS/loop"
  is "$rc" 0 "dash -c: exit status 0"
  ok "dash -c: summary says a process exited, none was recovered" sh -c \
    'grep -q "^fxt-run: wrote dash\.fxt (.*); 3 processes, 5 images, 1 exited without sealing their spool (converted from it)\$" "$1"' \
    sh "$TMPD/err"
else
  skip "dash -c: dash not installed"
  skip "dash -c: dash not installed"
fi

# Compressed output, and --quiet: recovered all the same, silently.
rc=0
"$FXT_RUN" -q -o quiet.fxt.gz "$prog" kill 200 >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(cat "$TMPD/err")" "137/" "quiet: exit 137, nothing on stderr"
check_archive "quiet, gzip" quiet.fxt.gz
is "$(flat quiet.fxt.gz)" "$want_flat" "quiet, gzip: every call"
finish
