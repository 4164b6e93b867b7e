#!/bin/sh
# The list forms of exec (execl, execlp, execle), which the agent wraps: the
# new image gets exactly its arguments (and execle's environment), the old
# image's archive is written before the exec, and the new image, traced
# again, writes its own archive OUT.PID.fxt (--keep-parts keeps it apart,
# as fxt-run otherwise merges it into OUT: see launcher-merge.sh).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 15
prog=$PROGS/exec_list

for form in l lp le; do
  case $form in
    l) want="second image: child via-execl env=(unset)" ;;
    lp) want="second image: child via-execlp env=(unset)" ;;
    le) want="second image: child via-execle env=from-execle" ;;
  esac
  trace "$form.fxt" --keep-parts "$prog" "$form"
  is "$rc/$(tail -n 1 "$TMPD/out")" "0/$want" "exec$form: exit status and the new image's arguments"
  is "$(flat "$form.fxt")" "$(printf '%s\n' '1 before' '1 main')" "exec$form: the first image's calls"
  second=$(ls "$form".[0-9]*.fxt 2>/dev/null | head -n 1)
  ok "exec$form: the new image wrote its own archive" test -n "$second"
  is "$(flat "$second")" "$(printf '%s\n' '1 after' '1 main')" "exec$form: the new image's calls"
  ok "exec$form: fxt-dump --check on the new image's archive" "$FXT_DUMP" --check -q "$second"
done
finish
