#!/bin/sh
# fxt-run -p, more than once and with children: each attach to the same
# process is a window of its own (its own settings, its own archive, the
# program as it was after each detach, its own SIGTRAP handler again); a
# child forked while attached is recorded and merged, and stops with its
# parent at the detach; one that runs another program is not followed, and
# fxt-run says so; a process recorded already (preloaded, or by another
# fxt-run -p) is refused in one line.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 36
why=$(patch_unavailable)
[ -n "$why" ] && skip_rest "$why"
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

attached() { grep -q '^fxt-run: attached to ' run.err; }

# attach ARCHIVE ARGS...: fxt-run -p on $target in the background ($run),
# once attached.
attach() {
  out_fxt=$1
  shift
  rm -f run.err
  "$FXT_RUN" -p $target "$@" -o "$out_fxt" 2>run.err 9>&- &
  run=$!
  wait_until attached
}

# detach: SIGINT to fxt-run, and its exit status.
detach() {
  kill -INT $run
  wait $run
}

# trap_is_own: the target's SIGTRAP action is its own handler.
traps() { grep -c '^trap: ' out; }
trap_is_own() {
  n=$(traps)
  echo trap >&9
  wait_until test "$(traps)" -gt "$n"
  [ "$(grep '^trap: ' out | tail -n 1)" = "trap: own" ]
}

# 1. Three windows: work() recorded, then spin() only (no work() call
# recorded), then work() again; calls between windows are not recorded.
start --serve --busy 2
calls 10
attach a1.fxt --patch='^work$'
calls 100
detach
is "$?:$(work_calls a1.fxt)" "0:100" "first window: the 100 calls made in it"
ok "... the program's text is its file's again" text_is_file
ok "... and SIGTRAP goes to its own handler again" trap_is_own
ok "... and it maps nothing of the run's files (spool, control file) any more" \
  sh -c '! grep -q "$2" /proc/$1/maps' sh $target "$TMPD"
calls 50
attach a2.fxt --patch='^spin$'
calls 30
detach
is "$?:$(work_calls a2.fxt)" "0:" "second window, --patch=^spin\$: no call of work() recorded"
calls 70
attach a3.fxt --patch='^work$'
calls 200
detach
is "$?:$(work_calls a3.fxt)" "0:200" "third window: the 200 calls made in it"
ok "... the program's text is its file's again" text_is_file
ok "... and SIGTRAP goes to its own handler again" trap_is_own
ok "the archives are valid" sh -c 'for f in a1.fxt a2.fxt a3.fxt; do "$1" --check "$f" >/dev/null || exit 1; done' sh "$FXT_DUMP"

# 2. Another fxt-run -p while one is attached: refused, the first goes on.
attach b.fxt --patch='^work$'
"$FXT_RUN" -p $target --patch='^work$' -o b2.fxt >/dev/null 2>b2.err
is "$?:$(cat b2.err)" "2:fxt-run: process $target (attach_target) is being recorded by another fxt-run -p: attach again once it has detached" \
  "a second fxt-run -p at once: refused"
calls 5
detach
is "$?:$(work_calls b.fxt)" "0:5" "... the first one's window is whole"
exec 9>&-
wait $target
is "$?:$(grep -c '^done' out)" "0:7" "the program served every line and exited 0"

# 3. A child forked while attached: its calls are in the archive, merged
# (its process next to its parent's); it stops recording at the detach.
start --serve
attach c.fxt --patch='^work$'
calls 20
echo "spawn 40" >&9
wait_until grep -q '^child 40$' out
child=$(for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; done |
  awk -v p=$target '{ pid = $1; sub(/.*\) /, ""); if ($2 == p) print pid }' | head -n 1)
detach
is "$?:$(work_calls c.fxt)" "0:60" "a child forked while attached: its 40 calls and the parent's 20"
is "$("$FXT_DUMP" c.fxt | grep -o "pid=$child" | head -n 1)" "pid=$child" "... its process is in the archive"
saved=$target
target=$child
ok "... its program text is its file's again after the detach" text_is_file
target=$saved
echo reap >&9
wait_until grep -q '^reaped' out
is "$(grep '^reaped' out)" "reaped 0" "... it went on and exited 0"

# 4. A child that runs another program is not followed: fxt-run says so.
attach d.fxt --patch='^work$'
echo "forkexec sleep 3" >&9
wait_until grep -q '^execed' out
sleep 0.3
detach
is "$?" 0 "a child that ran another program: fxt-run exits 0"
grep -q '^fxt-run: process [0-9]* ran another program (exec): not followed' run.err
is "$?:$(work_calls d.fxt)" 0:5 "... says it was not followed, and keeps its 5 calls before the exec"
exec 9>&-
wait $target
is "$?" 0 "the program exited 0"

# 5. A process recorded since its start (under fxt-run): refused.
rm -f out stop
"$FXT_RUN" -q -o "$TMPD/p.fxt" -- "$PROGS/attach_target" --spin >out 2>&1 9>&- &
prun=$!
wait_until ready
target=$(for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; done |
  awk -v p=$prun '{ pid = $1; sub(/.*\) /, ""); if ($2 == p) print pid }' | head -n 1)
"$FXT_RUN" -p $target --patch=. -o q.fxt >/dev/null 2>q.err
is "$?:$(cat q.err)" "2:fxt-run: process $target (attach_target) is recorded already: it was started under fxt-run or with LD_PRELOAD, and its trace is written when it exits" \
  "a process started under fxt-run: refused"
touch stop
wait $prun
is "$?" 0 "... which ended as it would have"

# 6. Root attaching to another user's process (a server's worker): the
# archive is written (the process reads fxt-run's control file as itself).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 711 "$TMPD"
  mkdir -m 777 u
  cd u || exit 1
  rm -f in out
  mkfifo -m 666 in
  setpriv --reuid=65534 --regid=65534 --clear-groups "$PROGS/attach_target" --serve <in >out 2>err &
  target=$!
  exec 9>in
  wait_until ready
  attach u.fxt --patch='^work$'
  calls 30
  detach
  is "$?:$(work_calls u.fxt)" "0:30" "another user's process, attached to by root: its 30 calls"
  exec 9>&-
  wait $target
  is "$?" 0 "... and it exited 0"
  cd .. || exit 1
else
  skip "not root, or no setpriv: no other user to attach to"
  skip "not root, or no setpriv: no other user to attach to"
fi

# 7. A signal to fxt-run at any moment of an attach, even while it is inside
# a call in the process: it is held until the detach (SIGTERM: a
# background job of sh ignores SIGINT, which would be lost before fxt-run
# takes it); the program serves on.
start --serve --busy 2
for d in 0 0.002 0.005 0.01 0.02 0.03 0.05 0.08 0.12 0.2; do
  "$FXT_RUN" -q -f -p $target --patch='^work$' -o c7.fxt 2>/dev/null 9>&- &
  run=$!
  sleep $d
  kill -TERM $run
  wait $run
  calls 3
done
ok "SIGTERM to fxt-run at 10 moments of an attach: the program's text is its file's" text_is_file
exec 9>&-
wait $target
is "$?:$(grep -c '^done 3$' out)" "0:10" "... it served every line and exited 0"

# 8. The process itself runs another program (cat, on its input) while
# attached: fxt-run ends the window and says so; the calls before are kept.
start --serve
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' -o e.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 25
echo "exec $(command -v cat)" >&9
wait $run
is "$?:$(work_calls e.fxt)" "0:25" "the process ran cat while attached: fxt-run exits 0, the 25 calls kept"
grep -q "^fxt-run: process $target ran another program (exec) after .* s: not followed; its records until then are kept\$" run.err
is "$?" 0 "... and says it ran another program"
echo "cat says this" >&9
exec 9>&-
wait $target
is "$?:$(tail -n 1 out)" "0:cat says this" "cat ran on, and exited 0"

# 9. 64 threads calling work() while it is patched and written back,
# three windows in a row: every call's result right, the text its file's.
start --serve --workers 64
for w in 1 2 3; do
  attach w$w.fxt --patch='^work$'
  sleep 0.3
  detach
done
ok "64 threads in work(), 3 windows: the program's text is its file's" text_is_file
exec 9>&-
wait $target
is "$?:$(tail -n 1 out)" "0:workers: 64" "... every worker's results were right, and it exited 0"
# (Read once its 64 busy threads are gone: beside them, on 2 cores, the
# readers got a share of a core in 30 and took most of the test's time.)
ok "... each window recorded calls, and its archive is valid" sh -c '
  for w in 1 2 3; do
    [ "$("$1" --flat w$w.fxt | awk "\$2 == \"work\" { print \$1 }")" -gt 0 ] || exit 1
    "$2" --check w$w.fxt >/dev/null || exit 1
  done' sh "$CALLTREE" "$FXT_DUMP"

# 10. The options users know, one window each on one process: a setting of
# an earlier window never carries over to the next one.
start --serve
attach o1.fxt --patch='^(work|spin)$' --exclude='^work$'
calls 40
detach
is "$?:$(work_calls o1.fxt)" "0:" "--exclude=^work\$: no call of work() recorded"
attach o2.fxt --patch='^work$'
calls 40
detach
is "$?:$(work_calls o2.fxt)" "0:40" "the next window, without --exclude: its 40 calls"
attach o3.fxt --patch='^work$' --snapshot-if='work>1ns'
calls 3
detach
is "$?:$(ls o3.snap*.fxt 2>/dev/null | wc -l):$(grep -c '^fxt-run: wrote snapshot o3\.snap' run.err)" \
  "0:3:3" "--snapshot-if: a snapshot of each of the 3 calls, each said"
attach o4.fxt --patch='^work$' --mode=circular --depth=1
calls 40
detach
is "$?:$(work_calls o4.fxt)" "0:40" "--mode=circular --depth=1: the 40 calls"
exec 9>&-
wait $target
is "$?" 0 "... and the program exited 0"
