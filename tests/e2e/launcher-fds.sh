#!/bin/sh
# The program's descriptors are its own: fxt-run opens its status file
# (where a process that converts its own spool reports its archive,
# FXT_STATUS_FD) close-on-exec, and such a process reaches it as
# /proc/LAUNCHER/fd/N.  Before, the program inherited it: `ls /proc/self/fd`
# listed one more descriptor under fxt-run than without it, and the
# program's first open() got another number (a sweep of real programs:
# lua's io.popen, ruby's system, php's shell_exec counting their fds).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
AGENT_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent.so
scratch
cd "$TMPD" || exit 1
plan 8

# The descriptors a traced program has: those it was given, no more.
ls /proc/self/fd >plain.out
"$FXT_RUN" -o ls.fxt -- ls /proc/self/fd >traced.out 2>traced.err
is "$(cat traced.out)" "$(cat plain.out)" "fxt-run: the program has the descriptors it has without fxt-run"
"$FXT_RUN" -q -f -o ls.fxt -- ls /proc/self/fd >traced.out 2>traced.err
is "$(cat traced.out)" "$(cat plain.out)" "fxt-run -q: the same"
sh -c 'ls /proc/self/fd' >plain.out
"$FXT_RUN" -f -o ls.fxt -- sh -c 'ls /proc/self/fd' >traced.out 2>traced.err
is "$(cat traced.out)" "$(cat plain.out)" "and so has a child it starts"

# A process that converts its own spool still reports it, on a file it
# does not have open: a stand-in for fxt-run holds it on fd 7 (the
# agent's FXT_LAUNCHER names it; no control file, so the process converts
# its own spool).
: >status
sh -c 'exec 7>>status; exec sleep 60' &
holder=$!
n=0
while [ "$(readlink "/proc/$holder/fd/7" 2>/dev/null)" != "$TMPD/status" ] && [ $n -lt 200 ]; do
  sleep 0.05; n=$((n + 1))
done
start=$(cut -d' ' -f22 "/proc/$holder/stat")
id=$(stat -c '%d:%i' status)
self() { # FXT_STATUS_FD's value, archive
  env FXT_LAUNCHER="$holder:$start" FXT_STATUS_FD="$1" FXT_OUTPUT="$TMPD/$2" \
    LD_PRELOAD="$AGENT_SO" "$PROGS/calls_fib" 5 >/dev/null 2>self.err
}
self "7:$id" self.fxt
ok "the process converted its own spool" test -s self.fxt
is "$(sed -n 's/^fxtrace pid=[0-9]* events=[0-9]* threads=1 dropped=0 bytes=[0-9]* output=//p' status)" \
  "$TMPD/self.fxt" "and reported it on the launcher's fd 7, which it did not inherit"
: >status
self "7:$id" self2.fxt 7>other
is "$(cat other)" "" "a file of its own on fd 7 is left alone"
ok "and the line is the launcher's" grep -q "output=$TMPD/self2.fxt\$" status
: >status
self "7:1:1" self3.fxt
is "$(cat status)" "" "a file that is not the one named (device and inode): nothing written"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
finish
