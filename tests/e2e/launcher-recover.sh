#!/bin/sh
# Nothing is lost, whatever ends the run: fxt-run converts the spools of
# processes killed at any moment, `fxt-run --recover` turns the spools a
# killed fxt-run left into the archive, a process that outlives fxt-run
# writes its own archive, and bad output paths are refused before the
# program runs.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 64

LOOP=$PROGS/loop

# --- fxt-run and the program killed together (the whole process group):
# the spool stays, and --recover turns it into the archive.
mkdir killed && cd killed || exit 1
rc=0
# (--max-size bounds the spool, so that the checks below stay quick, and
# small enough that the loop passes it well within the second on a loaded
# machine: at 32M a sanitizer build at load 50 stopped at its edge, 1.05 M
# events and nothing dropped yet.)
timeout -s KILL 1 "$FXT_RUN" -o k.fxt --max-size 8M -- "$LOOP" 1000000000 >/dev/null 2>&1 || rc=$?
is "$rc" 137 "killed run: fxt-run and the program were killed"
# The program got its SIGKILL with fxt-run's, but on a loaded machine may
# still be exiting: --recover leaves a spool whose process runs.
n=0
while pgrep -f "^$LOOP 1000000000\$" >/dev/null 2>&1 && [ $n -lt 200 ]; do
  sleep 0.05; n=$((n + 1))
done
ok "killed run: no archive, one spool left" sh -c 'test ! -e k.fxt && ls k.fxt.*.spool >/dev/null'
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "recover: exit status 0"
ok "recover: k.fxt written, nothing else left (spool, control file)" \
  sh -c 'test -s k.fxt && test "$(ls)" = k.fxt'
check_archive "recover" k.fxt
events=$(stat_of k.fxt slices)
ok "recover: the records are there ($events events)" test "${events:-0}" -gt 100000
ok "recover: the summary says so" grep -q '^fxt-run: wrote k\.fxt (.*); recovered from spool$' \
  "$TMPD/err"
# Past --max-size, the loop's calls were dropped: the process never
# sealed its counts, but published them in its spool as it went.
ok "recover: the calls dropped past --max-size are counted" \
  grep -Eq '^fxt-run: wrote k\.fxt \(.*, [1-9][0-9]* dropped: raise --max-size' "$TMPD/err"
ok "recover: ... and the archive says so (fxt-report)" sh -c \
  '"$1" "$2" | grep -Eq "^# [1-9][0-9]* calls dropped"' - "$abs_top_builddir/fxt-report" k.fxt
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 1 "recover: a directory with nothing to recover: exit status 1, as --help says"
is "$(wc -l <"$TMPD/err" | tr -d ' ')" 1 "recover: ... in one line"
cd "$TMPD" || exit 1

# --- fxt-run alone killed (kill -9) while the program runs on: processes
# that end before write nothing yet (fxt-run converted their spools), those
# that end after write their own archives (the root its OUT, the others
# r.PID.fxt); the session (a pipe) and fxt-run's control file stay, with
# whatever a conversion or merge cut short leaves.  --recover DIR makes one
# archive of the whole run of it, says what it merged, and leaves nothing
# else.  The root is bash, which ends with exit(): it writes r.fxt.
# killed_run DIR: the run, in DIR; the program's processes are done.
killed_run() {
  mkdir "$1" && (
    cd "$1" || exit 1
    "$FXT_RUN" -o r.fxt -- bash -c 'echo $$ >"$1/root"; "$0" 200000 >/dev/null
      echo x | cat >/dev/null
      (sleep 1; "$0" 300000 >/dev/null) & (sleep 1; "$0" 100000 | cat >/dev/null) &
      touch "$1/started"; wait; "$0" 1000 >/dev/null' "$LOOP" "$TMPD/$1" >/dev/null 2>&1 &
    f=$!
    n=0
    # Generous limits: a loaded machine running the sanitizer build (CI
    # once took more than the 20 s and 30 s these were).
    while [ ! -e "$TMPD/$1/started" ] && [ $n -lt 2400 ]; do sleep 0.05; n=$((n + 1)); done
    kill -KILL $f
    wait $f
    n=0
    while kill -0 "$(cat "$TMPD/$1/root")" 2>/dev/null && [ $n -lt 2400 ]; do
      sleep 0.05; n=$((n + 1))
    done
    rm -f "$TMPD/$1/root" "$TMPD/$1/started"
    # What a conversion and a merge killed halfway leave (fxt-run's names).
    echo partial >.fxt-partial.r.4194305.fxt
    echo merge >.r.fxt.merge.AbC123
  )
}
killed_run whole
cd whole || exit 1
ok "fxt-run killed: the root wrote r.fxt, others their own, the session and control file stay" \
  sh -c 'test -s r.fxt && ls r.*.fxt r.fxt.*.session r.fxt.*.run >/dev/null 2>&1' ||
  diag "$(ls -la)"
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "recover after fxt-run was killed: exit status 0"
is "$(ls -A | tr '\n' ' ')" "r.fxt " "recover after fxt-run was killed: r.fxt and nothing else"
check_archive "recover after fxt-run was killed" r.fxt
is "$(flat r.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 601000 \
  "recover after fxt-run was killed: every process's calls"
ok "recover after fxt-run was killed: says what it merged" grep -Eq \
  '^fxt-run: --recover: merged ([0-9]+ spools? and )?the [0-9]+ archives the run had left: r\.fxt, r\.[0-9]' "$TMPD/err" ||
  diag "$(cat "$TMPD/err")"
# The line names 4 files, then "and N more": a process that was still
# converting itself when fxt-run was killed may leave a fifth (its partial
# archive), which can come first.
removed=$(grep "^fxt-run: --recover: removed what the run left besides: " "$TMPD/err")
named=0
for x in .session .run .fxt-partial.r.4194305.fxt .r.fxt.merge.AbC123; do
  case $removed in *"$x"*) named=$((named + 1)) ;; esac
done
more=$(printf '%s\n' "$removed" | sed -n 's/.* and \([0-9]*\) more$/\1/p')
is "$((named + ${more:-0} >= 4))" 1 "recover after fxt-run was killed: ... and what it removed" ||
  diag "$(cat "$TMPD/err")"
cd "$TMPD" || exit 1
# The same run, whole: as many processes and images.
mkdir clean && "$FXT_RUN" -o clean/r.fxt -- bash -c '"$0" 200000 >/dev/null
  echo x | cat >/dev/null
  (sleep 1; "$0" 300000 >/dev/null) & (sleep 1; "$0" 100000 | cat >/dev/null) &
  touch clean/started; wait; "$0" 1000 >/dev/null' "$LOOP" >/dev/null 2>"$TMPD/clean.err"
# The processes, exactly; the images (the parts merged) at least as many:
# a process that was converting itself when fxt-run was killed can leave
# its events in two parts (CI, twice in many runs: 23 against 22).
procs() { sed -n 's/^fxt-run: wrote .*); \([0-9]*\) processes, \([0-9]*\) images.*/\1 \2/p' "$1"; }
set -- $(procs "$TMPD/err") x x
got_p=$1 got_i=$2
set -- $(procs "$TMPD/clean.err") x x
ok "recover after fxt-run was killed: the processes and images of a whole run" \
  sh -c '[ "$1" = "$3" ] && [ "$2" -ge "$4" ] 2>/dev/null' - "$got_p" "$got_i" "$1" "$2" ||
  diag "recovered: $got_p processes, $got_i images; whole: $1 processes, $2 images"

# --- fxt-run alone sent SIGTERM or SIGHUP (kill, a terminal closed) while
# the program runs: it passes the signal on to the program, converts what
# was recorded, exits as the program did, and leaves nothing else: no
# spool or mark next to the archive, nor (--patch) the patch reports'
# folder in TMPDIR.  Before, fxt-run died at once and left both.
patch='--patch=^no_such_function$'
[ -z "$(patch_unavailable)" ] || patch=
for sig in TERM:15 HUP:1; do
  num=${sig#*:} sig=${sig%:*}
  mkdir "sig$sig" "sig$sig.tmp" && cd "sig$sig" || exit 1
  TMPDIR="$TMPD/sig$sig.tmp" "$FXT_RUN" -o s.fxt $patch -- sh -c 'echo $$ >"$1"
    "$0" 5000 >/dev/null; exec sleep 30' "$LOOP" "$TMPD/sig$sig.root" >/dev/null 2>&1 &
  f=$!
  n=0
  until [ -s "$TMPD/sig$sig.root" ] &&
    [ "$(cat "/proc/$(cat "$TMPD/sig$sig.root")/comm" 2>/dev/null)" = sleep ]; do
    [ $n -lt 400 ] || break
    sleep 0.05; n=$((n + 1))
  done
  kill -$sig $f
  rc=0
  wait $f || rc=$?
  root=$(cat "$TMPD/sig$sig.root")
  is "$rc/$(kill -0 "$root" 2>/dev/null && echo running)" "$((128 + num))/" \
    "SIG$sig to fxt-run: passed on to the program, whose status it exits with"
  kill -KILL "$root" 2>/dev/null
  is "$(ls -A | tr '\n' ' ')" "s.fxt " "SIG$sig to fxt-run: the archive and nothing else"
  is "$(ls -A "$TMPD/sig$sig.tmp")" "" "SIG$sig to fxt-run: nothing left in TMPDIR"
  is "$(flat s.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 5000 "SIG$sig to fxt-run: every call"
  cd "$TMPD" || exit 1
done

# --- The same, into another archive (-o): the run's r.fxt is merged too.
killed_run other
cd other || exit 1
rc=0
"$FXT_RUN" --recover -o all.fxt . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(ls -A | tr '\n' ' ')" "0/all.fxt " "recover -o: all.fxt and nothing else"
is "$(flat all.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 601000 "recover -o: every process's calls"
cd "$TMPD" || exit 1

# --- The same with a pipeline of short processes, whose archives fxt-run
# had converted but not merged yet: --recover (options after the
# directory) merges them too, and leaves one archive.
mkdir killed2 && cd killed2 || exit 1
timeout -s KILL 1 "$FXT_RUN" -o p.fxt -- sh -c 'while :; do echo x | cat >/dev/null; done' \
  >/dev/null 2>&1
# (The pipeline's last processes may outlive fxt-run a moment, longer on
# a loaded machine, and a forked one makes its spool only at its first
# record: --recover would rightly leave their spools.  Wait for every
# process of the run, FXT_OUTPUT in its environment, to be gone.)
n=0
while grep -qszE '^FXT_OUTPUT=.*/killed2/p\.fxt$' /proc/[0-9]*/environ && [ $n -lt 400 ]; do
  sleep 0.05
  n=$((n + 1))
done
rc=0
"$FXT_RUN" --recover . -o p.fxt >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "recover pipeline: exit status 0"
ok "recover pipeline: one archive left, nothing else" test "$(ls)" = p.fxt
check_archive "recover pipeline" p.fxt
ok "recover pipeline: every process in it" grep -q \
  '^fxt-run: wrote p\.fxt (.*); [1-9][0-9]* processes, ' "$TMPD/err"
cd "$TMPD" || exit 1

# --- A process killed while making its spool leaves its header and first
# chunk written (64 KiB + up to 64 KiB of zeros) without the magic that
# comes last (spool/format.h, "Creation"): no record in it, --recover
# removes it rather than calling it no spool and leaving it.
mkdir unborn && cd unborn || exit 1
head -c $((65536 + 16384)) /dev/zero >u.fxt.999999999.spool
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err"
is "$(ls)/$(grep -c 'not an fxtrace spool' "$TMPD/err")" "/0" \
  "recover: a spool killed while being made, its first chunk written, is removed"
cd "$TMPD" || exit 1

# --- A converter killed after its archive got its name, before it removed
# the spool, leaves both (libkillafter kills it right there, as a SIGKILL
# of the run sometimes does): --recover takes that archive, and does not
# convert the spool again (the process's events twice, 4 ns apart, as
# two clock measurements differ).  fxt-run converting a child's spool (of
# 200000 calls: a file of its own; a small one goes into a batch, see
# launcher-batch.sh), then a process converting its own (no fxt-run).
KILLAFTER=$(cd "$PROGS/.libs" && pwd -P)/libkillafter.so
mkdir twice && cd twice || exit 1
# (An ASan build of fxt-run must be told that a preload before its runtime
# is fine.)
KILLAFTER_PROG=fxt-run KILLAFTER_SUFFIX=.2.fxt LD_PRELOAD=$KILLAFTER \
  ASAN_OPTIONS="verify_asan_link_order=0:${ASAN_OPTIONS:-}" "$FXT_RUN" -o t.fxt -- \
  sh -c 'echo $$ >root.pid; "$0" 200000 >/dev/null; exit 0' "$LOOP" >/dev/null 2>&1
while kill -0 "$(cat root.pid)" 2>/dev/null; do sleep 0.1; done
rm root.pid
ok "killed converter: a child's archive and its spool both left" sh -c \
  'ls t.*.2.fxt >/dev/null && ls t.fxt.*.2.spool >/dev/null'
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(ls -A | tr '\n' ' ')" "0/t.fxt " "killed converter: recovered, one archive left"
check_archive "killed converter" t.fxt
is "$(flat t.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 200000 "killed converter: each call once"
ok "killed converter: the archive counts as one the run left" grep -q \
  '^fxt-run: --recover: merged .*the [0-9]* archives* the run had left: .*t\.[0-9]*\.2\.fxt' \
  "$TMPD/err"
cd "$TMPD" && mkdir twice-self && cd twice-self || exit 1
env LD_PRELOAD="$AGENT_SO:$KILLAFTER" FXT_OUTPUT="$PWD/s.fxt" KILLAFTER_PROG=loop \
  KILLAFTER_SUFFIX=.2.fxt \
  sh -c '"$0" 1000 >/dev/null; exit 0' "$LOOP" >/dev/null 2>&1
ok "killed self-conversion: its archive and its spool both left" sh -c \
  'ls s.*.2.fxt >/dev/null && ls s.fxt.*.2.spool >/dev/null'
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(ls -A | tr '\n' ' ')" "0/s.fxt " "killed self-conversion: recovered, one archive left"
check_archive "killed self-conversion" s.fxt
is "$(flat s.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 1000 "killed self-conversion: each call once"
cd "$TMPD" || exit 1

# --- A process of the run still running at --recover keeps its spool, and
# the run's marks stay; once it has ended (writing its own archive), a
# second --recover merges that too and leaves one archive.  (The child
# goes on when told, after the first --recover: no window to miss on a
# loaded machine.)
mkdir later && cd later || exit 1
"$FXT_RUN" -o l.fxt -- bash -c '(while [ ! -e "$1.go" ]; do sleep 0.05; done
  exec "$0" 5000 >/dev/null) & echo $! >"$1.child"
  echo $$ >"$1.root"; "$0" 1000 >/dev/null' "$LOOP" "$TMPD/later" \
  >/dev/null 2>&1 &
f=$!
n=0
while [ ! -s "$TMPD/later.root" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
kill -KILL $f
wait $f
n=0
while kill -0 "$(cat "$TMPD/later.root")" 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
failed=$tap_fail
ok "recover, a process still running: exit 0, its spool and the run's marks stay, and it says so" \
  sh -c 'test "$1" = 0 && test -e "l.fxt.$3.spool" && ls l.fxt.*.run >/dev/null 2>&1 &&
    grep -q "stay: run fxt-run --recover again once they have exited" "$2"' sh "$rc" "$TMPD/err" \
  "$(cat "$TMPD/later.child")"
[ "$tap_fail" = "$failed" ] ||
  diag "$(echo "exit status $rc"; cat "$TMPD/out" "$TMPD/err"; ls -A
    ps -o pid,stat,args -p "$(cat "$TMPD/later.child")")"
: >"$TMPD/later.go"
n=0
while kill -0 "$(cat "$TMPD/later.child")" 2>/dev/null && [ $n -lt 1200 ]; do sleep 0.05; n=$((n + 1)); done
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(ls -A | tr '\n' ' ')" "0/l.fxt " "recover again once it has ended: l.fxt and nothing else"
is "$(flat l.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 6000 "recover again: every process's calls"
cd "$TMPD" || exit 1

# --- A spool given by name, and junk.
printf 'not a spool at all, but long enough to be read as one maybe\n' >junk.fxt.1.spool
rc=0
"$FXT_RUN" --recover junk.fxt.1.spool >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 1 "recover junk: exit status 1"
ok "recover junk: one line, naming it as no spool" sh -c \
  'test "$(wc -l <"$1")" -eq 1 && grep -q "junk.fxt.1.spool: not an fxtrace spool" "$1"' sh "$TMPD/err"
ok "recover junk: no archive written" test ! -e junk.fxt

# --- A child SIGKILLed just as the program exits is gone, not running:
# its spool is converted and merged.
trace k1.fxt --max-size 32M timeout -s KILL 1 "$LOOP" 1000000000
is "$rc" 137 "child killed at exit: the program's status"
check_archive "child killed at exit" k1.fxt
ok "child killed at exit: nothing left apart" sh -c '! ls k1.fxt.*.spool k1.*.fxt 2>/dev/null'
ok "child killed at exit: merged, and said so" grep -q \
  '^fxt-run: wrote k1\.fxt (.*); 2 processes, .*recovered from spool$' "$TMPD/err"
n=$("$CALLTREE" --flat k1.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')
ok "child killed at exit: its calls are kept ($n leaf calls)" test "${n:-0}" -gt 100000

# --- A process that outlives fxt-run converts its own spool at its exit
# (it sleeps past fxt-run's grace for exiting processes, then execs loop).
trace d.fxt sh -c '(sleep 1; exec "$0" 300000) >/dev/null 2>&1 & echo "pid $!"' "$LOOP"
pid=$(sed -n 's/^pid //p' "$TMPD/out")
n=0
while kill -0 "$pid" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
n=0
while ls d.fxt.*.spool >/dev/null 2>&1 && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
parts=$(ls d.$pid.*fxt 2>/dev/null | tr '\n' ' ')
ok "daemon: wrote its own archives ($parts)" test -n "$parts"
ok "daemon: its spools are gone" sh -c '! ls d.fxt.*.spool 2>/dev/null'
is "$(for f in $parts; do flat "$f"; done | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 300000 \
  "daemon: every call"

# --- One symbol cache for the run: the second and third processes of one
# program are named from it, alike.
rc=0
FXT_RUN_DEBUG=1 "$FXT_RUN" -o cache.fxt -- sh -c '"$0" 5; "$0" 5; "$0" 5' "$LOOP" \
  >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "symbol cache: exit status"
is "$(flat cache.fxt | grep -e ' leaf$' -e ' main$')" "$(printf '%s\n' '15 leaf' '3 main')" \
  "symbol cache: every process's calls named"
hits=$(sed -n "s/^fxt-run: symbols: \([0-9]*\) from the run's cache.*/\1/p" "$TMPD/err")
ok "symbol cache: answered lookups ($hits)" test "${hits:-0}" -gt 0

# --- Output paths where nothing can be created: refused before running.
rc=0
"$FXT_RUN" -o /proc/a.fxt -- sh -c 'echo ran' >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 2 "-o /proc/a.fxt: exit status 2"
ok "-o /proc/a.fxt: one line, the program did not run" sh -c \
  'test "$(wc -l <"$1")" -eq 1 && grep -q "^fxt-run: cannot write /proc/a.fxt" "$1" && ! test -s "$2"' \
  sh "$TMPD/err" "$TMPD/out"

# --- --max-size below one chunk keeps the first bytes, and counts drops.
trace small.fxt --max-size 64k "$LOOP" 100000
n=$("$CALLTREE" --flat small.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')
ok "--max-size 64k: the first calls are kept ($n)" test "${n:-0}" -gt 1000
ok "--max-size 64k: the rest are counted as drops" grep -q \
  '^fxt-run: wrote small\.fxt (.*[1-9][0-9]* dropped' "$TMPD/err"
finish
