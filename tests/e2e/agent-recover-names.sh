#!/bin/sh
# A process killed before it sealed its spool keeps its names in the
# archive fxt-run recovers from the spool, as a sealed one does: every
# thread named as the program named it (pthread_setname_np on itself or on
# another thread, prctl(PR_SET_NAME), renamed twice: tests/progs/
# named_threads.c), the main thread and the process after the program;
# and so when fxt-run itself was killed and `fxt-run --recover` writes
# the archive later.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 15
prog=$PROGS/named_threads

# names ARCHIVE: its kernel objects as fxt-dump shows them, "TYPE NAME",
# sorted.
names() {
  "$FXT_DUMP" "$1" | sed -n 's/^kobj type=\([a-z]*\) koid=[0-9]* name="\([^"]*\)".*/\1 \2/p' |
    sort
}
want=$(printf '%s\n' 'process named_threads' 'thread creator-named' 'thread named_threads' \
  'thread prctl-named' 'thread self-named')

# The sealed archive: what a recovered one must show too.
trace sealed.fxt "$prog" return
is "$rc" 0 "sealed: exit status 0"
is "$(names sealed.fxt)" "$want" "sealed: the process and every thread named"

# Killed with its threads running: recovered from the spool, with or
# without the libc wrappers' groups (renames are followed whatever they
# are).
for libc in default none; do
  export FXT_LIBC=$libc
  trace "kill-$libc.fxt" "$prog" kill
  unset FXT_LIBC
  is "$rc" 137 "killed, FXT_LIBC=$libc: fxt-run exits 137"
  ok "killed, FXT_LIBC=$libc: recovered from spool" grep -q \
    "^fxt-run: wrote kill-$libc\\.fxt (.*); killed by SIGKILL: recovered from spool\$" "$TMPD/err"
  check_archive "killed, FXT_LIBC=$libc" "kill-$libc.fxt"
  is "$(names "kill-$libc.fxt")" "$want" \
    "killed, FXT_LIBC=$libc: named as sealed, the newest names, none by tid"
done

# fxt-run and the program killed together: the spool stays, and
# `fxt-run --recover` writes the archive with the same names.
mkdir gone && cd gone || exit 1
"$FXT_RUN" -o h.fxt "$prog" hang >out 2>err &
run=$!
n=0
while ! grep -q ready out 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
pid=$(ls h.fxt.*.spool 2>/dev/null | sed -n 's/^h\.fxt\.\([0-9]*\)\.spool$/\1/p' | head -n 1)
kill -KILL "$run" ${pid:+"$pid"} 2>/dev/null
wait "$run" 2>/dev/null
ok "fxt-run killed: no archive, the program's spool left" \
  sh -c 'test -n "$1" && test ! -e h.fxt && test -s "h.fxt.$1.spool"' sh "$pid"
n=0
while kill -0 "${pid:-0}" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "--recover: exit status 0"
ok "--recover: recovered from spool" grep -q '^fxt-run: wrote h\.fxt (.*); recovered from spool$' \
  "$TMPD/err"
check_archive "--recover" h.fxt
is "$(names h.fxt)" "$want" "--recover: named as sealed"
cd "$TMPD" || exit 1
finish
