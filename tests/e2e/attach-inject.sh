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
# static program, a library that cannot be loaded, another user's process.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 18
if [ "$(uname -m)" != x86_64 ] || [ ! -x "$HELPERS/fxt_inject" ]; then
  skip_rest "the injector is for x86-64"
fi
scratch
cd "$TMPD" || exit 1
INJECT=$HELPERS/fxt_inject
PROBE=$PROGS/.libs/libinject_probe.so
export ATTACH_TARGET_STOP=$TMPD/stop

# start ARGS...: attach_target ARGS in the background, its standard input a
# FIFO held open on fd 9, once it said "ready"; $target is its pid.
start() {
  rm -f in out stop
  mkfifo in
  "$PROGS/attach_target" "$@" <in >out 2>&1 &
  target=$!
  exec 9>in
  i=0
  while [ $i -lt 100 ] && ! grep -q ready out; do sleep 0.05; i=$((i + 1)); done
}

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

if [ -x "$PROGS/attach_static" ]; then
  rm -f stop out
  "$PROGS/attach_static" --spin >out 2>&1 &
  target=$!
  i=0
  while [ $i -lt 100 ] && ! grep -q ready out; do sleep 0.05; i=$((i + 1)); done
  "$INJECT" $target >inj.out 2>inj.err
  is "$?:$(cat inj.err)" "1:fxt_inject: process $target has no libc.so.6 with dlopen (a static program, or a C library older than glibc 2.34): fxtrace cannot load into it" \
    "a static program"
  : >stop
  wait $target
  is "$?" 0 "the static program went on"
else
  skip "no static C library to build attach_static"
  skip "no static C library to build attach_static"
fi

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  start --timer
  setpriv --reuid=65534 --regid=65534 --clear-groups "$INJECT" $target >inj.out 2>inj.err
  is "$?:$(cat inj.err)" "1:fxt_inject: process $target: not permitted to read its memory map (it must run as your user, or fxt-run needs CAP_SYS_PTRACE)" \
    "another user's process"
  finish_target
  is "$out" "ready
read: go
alarms: yes
exit 0" "the program did not notice"
else
  skip "not root: no other user to try as"
  skip "not root: no other user to try as"
fi
finish
