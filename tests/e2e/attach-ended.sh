#!/bin/sh
# fxt-run -p PID when the process exits while the agent starts
# (tests/progs/attach_target --exit-on-start exits as soon as the agent's
# starting thread, or the watchdog it starts last, is there): one line and
# exit 2 (whichever step of the
# attach saw it end), or, if the start won
# the race, a window that ends at the exit; either way nothing of the run
# is left next to the archive's name but the archive (the spool the
# process's exit wrote while the agent started included).  A race, run
# five times: on the code before the fix most runs left the spool.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 10
why=$(patch_unavailable)
[ -n "$why" ] && skip_rest "$why"
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

for n in 1 2 3 4 5; do
  rm -f e.fxt*
  start --exit-on-start
  "$FXT_RUN" -p $target --patch=. --duration 5 -o e.fxt >run.out 2>run.err 9>&-
  rc=$?
  exec 9>&-
  wait $target
  status=$?
  case "$rc:$(grep -v '^fxt-run: patched' run.err)" in
  "2:fxt-run: cannot attach to process $target: process $target ended while the agent started" | \
    "2:fxt-run: cannot attach to process $target: process $target ended during the call" | \
    "2:fxt-run: cannot attach to process $target: process $target ended")
    left= ;;
  0:*"process $target exited after"*) left="e.fxt " ;;
  *) left=unexpected; diag "fxt-run exit $rc: $(cat run.err)" ;;
  esac
  is "$status" 5 "run $n: the process exited with its own status"
  is "$(ls | grep '^e\.fxt' | tr '\n' ' ')" "$left" "run $n: one line and exit 2 (or a window to the exit), nothing of the run left"
done
finish
