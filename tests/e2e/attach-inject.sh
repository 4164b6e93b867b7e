#!/bin/sh
# The injector fxt-run -p builds on (launcher/attach/inject.c), through
# tests/helpers/fxt_inject: it borrows a thread of a running process
# (tests/progs/attach_target), loads a library into it and calls a function
# of it (tests/progs/libinject_probe), and gives the thread back as it was.
# The program must not notice: its read(2)s return their data (no EINTR),
# its SIGALRMs keep coming, its own SIGSEGV/SIGTRAP handlers never run, its
# output and exit status are its own; also while 8 or 64 threads take the C
# library's locks all the time, and when the thread borrowed is spinning in
# the program's own code.  Refusals are one line: no such process, a
# static program, a library that cannot be loaded; and the checks fxt-run
# -p makes first: a zombie, a kernel thread, a process already traced, one
# that has the agent, another user's, a set-user-ID or file-capability
# program, a library another user could replace.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 32
if [ "$(uname -m)" != x86_64 ] || [ ! -x "$HELPERS/fxt_inject" ]; then
  skip_rest "the injector is for x86-64"
fi
scratch
cd "$TMPD" || exit 1
PROBE=$PROGS/.libs/libinject_probe.so
. "$abs_top_srcdir/tests/e2e/attach-common.sh"
# A target that died must fail a check, not kill the script at its next line.
trap '' PIPE

# finish_target: lets it end (a line on its input, the stop file), then
# $out is what it printed and its exit status.
finish_target() {
  echo go >&9
  exec 9>&-
  : >stop
  wait $target
  out="$(cat out)
exit $?"
}

# inject N: N injections of probe(); "N ok" when each returned the pid and
# the probe ran in the process with the library's constructor run.
inject() {
  k=0 good=0
  while [ $k -lt "$1" ]; do
    rm -f probe.out
    if "$INJECT" $target "$PROBE" probe "$TMPD/probe.out" >inj.out 2>inj.err &&
      grep -q "^returned $target\$" inj.out &&
      grep -q "^probed $target [0-9]* loaded\$" probe.out; then
      good=$((good + 1))
    else
      sed 's/^/# /' inj.out inj.err
    fi
    k=$((k + 1))
  done
  echo "$good ok"
}

# 1. Blocked in read(2), a second thread blocked in read(2), SIGALRM each
# millisecond.
start --reader --timer
is "$(inject 1)" "1 ok" "blocked in read: the library loaded, the call returned"
tid=$(sed -n 's/^thread //p' inj.out)
ok "the thread borrowed is one of the process's" test -d "/proc/$target/task/$tid"
is "$(inject 20)" "20 ok" "20 times more"
finish_target
is "$out" "ready
read: go
reader: data
alarms: yes
exit 0" "the program read its lines, took its alarms, exited 0: no EINTR, no handler"

# 2. Only borrowing: the thread given back untouched.
start --timer
"$INJECT" $target >inj.out 2>inj.err
is "$?:$(cat inj.err)" "0:" "borrowing a thread and giving it back"
finish_target
is "$out" "ready
read: go
alarms: yes
exit 0" "the program did not notice"

# 3. Spinning in its own code, 8 threads in malloc/free/snprintf.
start --spin --busy 8
is "$(inject 10)" "10 ok" "spinning, 8 threads busy in the C library: 10 calls"
finish_target
is "$out" "ready
spun: yes
busy: 8
exit 0" "the program went on as before"

# 4. 64 busy threads, a timer, a blocked reader.
start --busy 64 --timer --reader
is "$(inject 3)" "3 ok" "64 threads busy in the C library: 3 calls"
finish_target
is "$out" "ready
read: go
reader: data
busy: 64
alarms: yes
exit 0" "the program went on as before"

# 4b. The injector killed (SIGKILL) inside a call: the thread puts itself
# back (its read(2) restarted, its signal mask and vector registers as
# they were) and the program goes on; and the same with a thread busy in
# its own code when borrowed.
for mode in "--reader --timer" "--spin --busy 2"; do
  start $mode
  rm -f inj.out
  "$INJECT" $target "$PROBE" probe_sleep 400 >inj.out 2>inj.err 9>&- &
  inj=$!
  wait_until grep -q '^thread ' inj.out
  sleep 0.15
  kill -KILL $inj
  wait $inj 2>/dev/null
  sleep 1.5 # the call (400 ms), then the wait for the injector (1 s)
  finish_target
  case $mode in
  --reader*) want="ready
read: go
reader: data
alarms: yes
exit 0" ;;
  *) want="ready
spun: yes
busy: 2
exit 0" ;;
  esac
  is "$out" "$want" "the injector killed inside a call ($mode): the program went on as before"
done

# 5. Refusals: one line, exit 1, the process untouched.
start --timer
"$INJECT" $target "$TMPD/missing.so" probe x >inj.out 2>inj.err
is "$?" 1 "a library that cannot be loaded: exit 1"
is "$(cat inj.err)" "fxt_inject: dlopen in process $target: $TMPD/missing.so: cannot open shared object file: No such file or directory" \
  "dlerror()'s text, read from the process"
finish_target
is "$out" "ready
read: go
alarms: yes
exit 0" "the program did not notice"

( exit 0 ) &
gone=$!
wait $gone
"$INJECT" $gone >inj.out 2>inj.err
is "$?:$(cat inj.err)" "1:fxt_inject: process $gone: no such process" "no such process"

# 6. The checks before an attach (launcher/attach/preflight.c).
check() { "$INJECT" --check "$@" 2>&1; }
rm -f stop out
"$PROGS/attach_static" --spin >out 2>&1 &
target=$!
wait_until ready
is "$(check $target)" "fxt_inject: process $target (attach_static) is statically linked: it has no loader to load fxtrace into it" \
  "a static program"
: >stop
wait $target
is "$?" 0 "the static program went on"

start --zombie
zpid=$(sed -n 's/^zombie //p' out)
zombie() { grep -q '^[0-9]* (attach_target) Z' "/proc/$zpid/stat"; }
wait_until zombie
is "$(check "$zpid")" "fxt_inject: process $zpid (attach_target) has exited (a zombie): nothing to attach to" \
  "a zombie"
finish_target

if grep -q '^2 (kthreadd)' /proc/2/stat 2>/dev/null; then
  is "$(check 2)" "fxt_inject: process 2 (kthreadd) is a kernel thread: nothing to load into" \
    "a kernel thread"
else
  skip "no kernel thread visible in this pid namespace"
fi

rm -f stop
if command -v strace >/dev/null; then
  start --timer
  strace -o /dev/null -p $target 2>strace.err &
  tracer=$!
  traced() { ! grep -q '^TracerPid:[[:space:]]*0$' /proc/$target/status; }
  wait_until traced
  is "$(check $target)" "fxt_inject: process $target (attach_target) is already traced by process $tracer (strace): a process has one tracer; end that one first" \
    "a process already traced: the tracer named"
  kill $tracer
  wait $tracer 2>/dev/null
  finish_target
else
  skip "no strace to trace with"
fi

rm -f stop out
"$FXT_RUN" -q -o "$TMPD/a.fxt" -- "$PROGS/attach_target" --spin >out 2>&1 &
run=$!
wait_until ready
# fxt-run's child, by the parent pid in /proc/PID/stat.
target=$(for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; done |
  awk -v p=$run '{ pid = $1; sub(/.*\) /, ""); if ($2 == p) print pid }' | head -n 1)
mapped=$(awk '/\/libfxt-agent\.so$/ { print $6; exit }' /proc/$target/maps)
mkdir -p other
cp "$mapped" other/libfxt-agent.so
is "$(check $target "$TMPD/other/libfxt-agent.so")" "fxt_inject: process $target (attach_target) has another fxtrace agent loaded ($mapped): attach with the fxt-run that goes with it" \
  "a process that has another agent than ours"
is "$(check $target "$mapped")" ok "... the same agent: accepted (the agent itself says whether it records)"
: >stop
wait $run
is "$?" 0 "... which ended as it would have"

# ... and one whose agent file was removed since it was loaded (fxtrace
# upgraded or rebuilt): said so.
rm -f stop out
mkdir -p old
cp "$mapped" old/libfxt-agent.so
LD_PRELOAD="$TMPD/old/libfxt-agent.so" FXT_OUTPUT="$TMPD/old.fxt" \
  "$PROGS/attach_target" --spin >out 2>&1 9>&- &
run=$!
wait_until ready
rm old/libfxt-agent.so
is "$(check $run "$mapped")" "fxt_inject: process $run (attach_target) has an fxtrace agent whose file was replaced or removed since it was loaded ($TMPD/old/libfxt-agent.so, fxtrace upgraded or rebuilt): it can be attached to again once it restarts" \
  "a process whose agent's file was removed since"
: >stop
wait $run
is "$?" 0 "... which ended as it would have"

start --timer
libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' /proc/$target/maps)
is "$(check $target "$libc")" ok "a library only root may replace: accepted"
mkdir w && chmod 777 w && cp "$PROBE" w/
is "$(check $target "$TMPD/w/libinject_probe.so")" "fxt_inject: the directory $(cd w && pwd -P) is writable by others: fxt-run loads into a process only a library no other user could have replaced (install fxtrace where only root may write)" \
  "a library in a directory anyone may write: refused"
finish_target

# 7. Other users' and privileged processes (as root).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
  start --timer
  $nobody "$INJECT" $target >inj.out 2>inj.err
  is "$?:$(cat inj.err)" "1:fxt_inject: process $target (attach_target) runs as user 0: attach to your own processes, or run fxt-run as root (CAP_SYS_PTRACE)" \
    "another user's process"
  finish_target
  is "$out" "ready
read: go
alarms: yes
exit 0" "the program did not notice"

  chmod 711 "$TMPD"
  cp "$PROGS/attach_target" w/suid
  chmod 4755 w/suid
  rm -f stop out
  $nobody w/suid --spin >out 2>&1 &
  target=$!
  wait_until ready
  if grep -q '^Uid:[[:space:]]*65534[[:space:]]*0' /proc/$target/status; then
    is "$(check $target)" "fxt_inject: process $target (suid) runs a set-user-ID program: fxtrace does not load into programs that gained privileges" \
      "a set-user-ID program"
  else
    skip "set-user-ID has no effect here (a nosuid file system)"
  fi
  : >stop
  wait $target
  if command -v setcap >/dev/null; then
    cp "$PROGS/attach_target" w/fcap
    setcap cap_net_bind_service+ep w/fcap
    rm -f stop out
    $nobody w/fcap --spin >out 2>&1 &
    target=$!
    wait_until ready
    is "$(check $target)" "fxt_inject: process $target (fcap) runs a file-capability program: fxtrace does not load into programs that gained privileges" \
      "a program with file capabilities"
    : >stop
    wait $target
  else
    skip "no setcap"
  fi
else
  i=0
  while [ $i -lt 4 ]; do skip "not root: no other user to try as"; i=$((i + 1)); done
fi
finish
