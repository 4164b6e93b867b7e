#!/bin/sh
# Children forked inside a signal handler (tests/progs/fork_in_handler.c),
# as PostgreSQL's postmaster starts its workers: the child records its own
# libc calls and functions, whether the handler interrupted a libc call
# (select) or, as most of the time in an instrumented loop, a hook; and
# whether the child exits inside the handler or returns from it first.
. "$abs_top_srcdir/tests/e2e/libc-proc-common.sh"

plan 19
prog=$PROGS/fork_in_handler
file=$TMPD/in.txt
printf 'one line\n' >"$file"
bytes=9

# pids ARCHIVE NAME: the pids with at least one event NAME, one a line.
pids() {
  events "$1" | sed -n "s/^ts=[^ ]* pid=\([0-9]*\) tid=[0-9]* event [a-z]* cat=\"[^\"]*\" name=\"$2\".*/\1/p" |
    sort -u
}

# select: the handler interrupted select(); the child reads the file and
# exits inside the handler.  The parent's fork, inside select()'s call, is
# recorded too, with its flow into the child.
both sel.fxt -- "$prog" select "$file"
same select
is "$(cat "$TMPD/out")" "$(printf 'child read %s bytes\nparent: child exit 0' "$bytes")" \
  "select: what the program saw"
check_archive select sel.fxt
parent=$(pids sel.fxt run_select)
child=$(pids sel.fxt read_file)
ok "select: the child is a process of its own" test -n "$child" -a "$child" != "$parent"
is "$(events sel.fxt | grep "pid=$child " | grep 'cat="libc.io" name="open"' |
  sed 's/.*path:str="\([^"]*\)".*/\1/')" "$file" "select: the child's open() of the file"
is "$(events sel.fxt | grep "pid=$child " |
  sed -n 's/.* cat="libc\.[a-z]*" name="\([a-z_]*\)".*/\1/p' | tr '\n' ' ')" \
  "open read read close exit " "select: the child's libc calls, in order"
is "$(events sel.fxt | grep "pid=$child " | grep -c "cat=\"log\" name=\"child read $bytes bytes\"")" 1 \
  "select: the child's output, logged"
is "$(slice_args sel.fxt fork)" "pid=$parent caller:str=\"on_alarm_select\", result:i64=$child" \
  "select: the parent's fork, in the handler"
is "$(slice_args sel.fxt "fork (child)")" \
  "pid=$child caller:str=\"on_alarm_select\", parent_pid:i64=$parent" \
  "select: the child's \"fork (child)\" slice"

# hooks N [exit]: a timer interrupts a loop of instrumented calls, mostly
# inside a hook; each of N children has its own archive with its open()
# and child_work().
hooks_case() {
  hc=$1; shift
  both "$hc.fxt" -- "$prog" hooks "$file" 30 "$@"
  is "$rc:$(cat "$TMPD/out")" "0:hooks: 30 children, 30 exited 0" "$hc: every child exited 0"
  check_archive "$hc" "$hc.fxt"
  is "$(pids "$hc.fxt" open | wc -l | tr -d ' ')" 30 "$hc: 30 children recorded their open()"
  is "$(pids "$hc.fxt" child_work | wc -l | tr -d ' ')" 30 \
    "$hc: 30 children recorded their child_work()"
}
hooks_case hooks
hooks_case hooks-exit exit

finish
