#!/bin/sh
# A process that gives up root, as nginx's workers do with `user nobody`
# (tests/progs/privdrop.c): the agent goes on recording after setuid() to a
# user who may not open the spool (root's, 0600, in a directory only root
# may enter); and when it cannot (the program closed every descriptor),
# the archive and fxt-run's summary say why calls were dropped, not "raise
# --max-size".  Needs root: skipped otherwise.
. "$abs_top_srcdir/tests/e2e/libc-proc-common.sh"

plan 16
prog=$PROGS/privdrop
n=200000

if [ "$(id -u)" != 0 ]; then
  i=0
  while [ $i -lt 16 ]; do skip "not root: cannot change user"; i=$((i + 1)); done
  finish
  exit
fi
chmod 700 "$TMPD"

# count ARCHIVE NAME: the events NAME (any category) in ARCHIVE.
count() { events "$1" | grep -c " name=\"$2\""; }

for mode in fork thread; do
  both "$mode.fxt" -- "$prog" $mode $n
  same "$mode"
  is "$(cat "$TMPD/out")" "privdrop: uid 65534, $n calls" "$mode: what the program saw"
  is "$(count "$mode.fxt" work):$(count "$mode.fxt" close)" "$((n + 1)):$((n + 1))" \
    "$mode: every work() and close() recorded, after the change of user too"
  "$FXT_RUN" -o "$mode-s.fxt" -- "$prog" $mode 1000 >/dev/null 2>"$TMPD/err"
  ok "$mode: nothing dropped, no spool left" \
    sh -c "grep -q ', 0 dropped)' '$TMPD/err' && ! ls '$TMPD' | grep -q spool"
done

# closefds: the held descriptor is closed by the program; the calls after
# that are dropped, and said so.
both cf.fxt -- "$prog" fork $n closefds
is "$rc:$(cat "$TMPD/out")" "0:privdrop: uid 65534, $n calls" "closefds: what the program saw"
"$FXT_RUN" -o cf2.fxt -- "$prog" fork $n closefds >/dev/null 2>"$TMPD/err"
line=$(grep '^fxt-run: wrote ' "$TMPD/err")
case $line in
*" dropped: the spool could not be written (Permission denied))"*) ok "closefds: the summary says why" true ;;
*) ok "closefds: the summary says why" false; diag "$line" ;;
esac
ok "closefds: not \"raise --max-size\"" sh -c "! grep -q 'raise --max-size' '$TMPD/err'"
ok "closefds: the drop instant carries the cause" \
  sh -c "'$FXT_DUMP' cf2.fxt | grep -q 'records dropped\" args={cause:str=\"the spool could not be written (Permission denied)\"}'"

finish
