#!/bin/sh
# fxt-run's behaviour as a launcher: shell-like exit statuses, output
# naming and overwrite protection, LD_PRELOAD, the program's stdio, and
# the archives of forked children, merged into one.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none
# providers ARCHIVE: the provider ids (one per process), in archive order.
providers() { "$FXT_DUMP" "$1" | sed -n 's/^provider_info id=\([0-9]*\) .*/\1/p' | tr '\n' ' '; }

plan 47

# --- Errors, like a shell.
rc=0; "$FXT_RUN" no-such-program-here >out 2>err || rc=$?
is "$rc" 127 "missing program: exit 127"
is "$(cat err)" "fxt-run: no-such-program-here: command not found" "missing program: one line"
printf 'data\n' >not-exec
rc=0; "$FXT_RUN" ./not-exec >out 2>err || rc=$?
is "$rc" 126 "not executable: exit 126"
is "$(cat err)" "fxt-run: ./not-exec: Permission denied" "not executable: one line"
rc=0; "$FXT_RUN" --no-such-option true >out 2>err || rc=$?
is "$rc/$(wc -l <err)" "2/1" "bad option: exit 2, one line"
rc=0; "$FXT_RUN" --max-size 12x true >out 2>err || rc=$?
is "$rc/$(cat err)" "2/fxt-run: --max-size: invalid size '12x'" "bad size: exit 2"
rc=0; "$FXT_RUN" -o "$TMPD/no/such/dir/x.fxt" sh -c 'touch ran' >out 2>err || rc=$?
is "$rc/$(wc -l <err)" "2/1" "unwritable output: exit 2, one line"
ok "unwritable output: checked before running" test ! -e ran
rc=0; FXT_AGENT=$TMPD/no-agent.so "$FXT_RUN" true >out 2>err || rc=$?
is "$rc/$(wc -l <err)" "2/1" "agent not found: exit 2, one line"
rc=0; "$FXT_RUN" --help >out 2>err || rc=$?
ok "--help: exit 0, usage on stdout" test "$rc" = 0 -a -s out
rc=0; "$FXT_RUN" --version >out 2>err || rc=$?
ok "--version: exit 0, one line" test "$rc" = 0 -a "$(grep -c '^fxt-run (fxtrace) [0-9]' out)" = 1

# --- Options end at PROGRAM (or at --); sizes reach the agent in bytes.
rc=0; "$FXT_RUN" -q -o opt.fxt -- sh -c 'printf "%s|" "$@"; exit 5' sh -o -f --x >out 2>err ||
  rc=$?
is "$rc/$(cat out)" "5/-o|-f|--x|" "--: PROGRAM's options are its own"
rc=0; "$FXT_RUN" -q -f -o opt.fxt --buffer-size 2M --max-size 0 \
  sh -c 'echo "$FXT_BUFFER_SIZE $FXT_MAX_SIZE"' >out 2>err || rc=$?
is "$rc/$(cat out)" "0/2097152 0" "--buffer-size and --max-size: FXT_* in bytes"

# --- Default name, and no silent overwrite.
mkdir cwd
rc=0; (cd cwd && "$FXT_RUN" "$EXAMPLES/calltree") >out 2>err || rc=$?
ok "default output: calltree.fxt in the current directory" test "$rc" = 0 -a -s cwd/calltree.fxt
printf 'old\n' >old.fxt
rc=0; "$FXT_RUN" -o old.fxt sh -c 'touch ran' >out 2>err || rc=$?
is "$rc/$(wc -l <err)" "2/1" "existing output: refused, exit 2, one line"
ok "existing output: left untouched, program not run" test "$(cat old.fxt)" = old -a ! -e ran
rc=0; "$FXT_RUN" -f -o old.fxt "$EXAMPLES/threads" >out 2>err || rc=$?
is "$rc/$("$CALLTREE" --threads old.fxt | head -n 1)" "0/threads-main" \
  "-f: overwritten with the new trace"

# --- The environment and stdio reach the program.
# (An ASan build of fxt-run must be told that a preload before its runtime
# is fine: the preload is for the program.)
rc=0
LD_PRELOAD=$NOP_SO ASAN_OPTIONS="verify_asan_link_order=0:${ASAN_OPTIONS:-}" \
  "$FXT_RUN" -q -o sh.fxt sh -c 'printf "%s\n" "$LD_PRELOAD"' >out 2>err || rc=$?
is "$(cat out)" "$AGENT_SO:$NOP_SO" "LD_PRELOAD: agent first, the user's kept"
is "$(printf 'line 1\nline 2\n' | "$FXT_RUN" -q -f -o cat.fxt cat)" "$(printf 'line 1\nline 2')" \
  "stdin reaches the program"
rc=0; "$FXT_RUN" -q -f -o sh.fxt sh -c 'echo out; echo err >&2; exit 3' >out 2>err || rc=$?
is "$rc/$(cat out)/$(cat err)" "3/out/err" "-q: the program's output only, its status"
rc=0; "$FXT_RUN" -q -f -o sh.fxt sh -c 'kill -TERM $$' >out 2>err || rc=$?
is "$rc" 143 "killed by SIGTERM: exit 128+15"

# --- A forked child's archive is merged into OUT, after the root's: one
# provider per process; the summary counts both.
trace fork.fxt "$PROGS/fork_child"
is "$rc" 0 "fork: exit status"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
set -- $(providers fork.fxt)
is "$#/${2:-none}" "2/$child" "fork: two providers in fork.fxt, the child's second"
ok "fork: no child archive fork.$child.fxt left" test ! -e "fork.$child.fxt"
is "$("$CALLTREE" --pid "$child" --flat fork.fxt | grep -v ' main$')" "3 child_work" "fork: child's calls"
is "$("$CALLTREE" --pid "$1" --flat fork.fxt | sort)" "$(printf '%s\n' '1 main' '2 parent_work')" \
  "fork: parent's calls"
ok "fork: the summary counts both processes" grep -q "^fxt-run: wrote fork.fxt (.*); 2 processes\$" \
  "$TMPD/err"

# --- A traced child killed before it could flush: fxt-run turns the spool
# it left into the archive it would have written, then merges it.
trace killed.fxt sh -c '"$0" 1000000000 & p=$! n=0
  while [ ! -s "killed.fxt.$p.2.spool" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
  sleep 0.2; kill -KILL $p; echo "pid $p"; wait' "$PROGS/loop"
pid=$(sed -n 's/^pid //p' "$TMPD/out")
ok "killed: its spool killed.fxt.$pid.spool is removed" test ! -e "killed.fxt.$pid.spool"
ok "killed: its archive recovered, merged into killed.fxt" sh -c \
  '"$1" --check -q killed.fxt && test ! -e "killed.$2.fxt" && "$1" killed.fxt | grep -q "^provider_info id=$2 "' \
  sh "$FXT_DUMP" "$pid"
ok "killed: the summary says it was recovered" grep -q \
  "^fxt-run: wrote killed.fxt (.*); .*1 recovered from spool\$" "$TMPD/err"

# --- A child still running when the program exits owns its spool: fxt-run
# leaves it alone (the child writes its archive when it exits).  The
# child is the second image of its pid (sh forks, then execs loop).
trace live.fxt sh -c '"$0" 1000000000 >/dev/null 2>&1 & p=$! n=0
  while [ ! -s "live.fxt.$p.2.spool" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
  echo "pid $p"' "$PROGS/loop"
pid=$(sed -n 's/^pid //p' "$TMPD/out")
ok "running: its spool live.fxt.$pid.2.spool is left in place" test -s "live.fxt.$pid.2.spool"
ok "running: the summary says it is still running" grep -q \
  "^fxt-run: process $pid is still running; it writes its archive when it exits" "$TMPD/err"
[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null

# --- Programs the agent cannot trace run all the same, with a warning.
printf 'int main(void) { return 4; }\n' >static.c
if ${CC:-cc} -static -o static static.c 2>/dev/null; then
  trace static.fxt ./static
  is "$rc" 4 "static: runs, its exit status"
  ok "static: warned before it runs" grep -q \
    '^fxt-run: warning: \./static is statically linked: LD_PRELOAD cannot load the agent' "$TMPD/err"
else
  skip "no static linking here"; skip "no static linking here"
fi
if [ "$(id -u)" = 0 ] && cp "$PROGS/loop" suid && chown nobody suid 2>/dev/null && chmod u+s suid; then
  trace suid.fxt ./suid 1
  is "$rc" 0 "set-user-ID: runs, its exit status"
  ok "set-user-ID: warned before it runs" grep -q \
    '^fxt-run: warning: \./suid is set-user-ID: the loader ignores LD_PRELOAD' "$TMPD/err"
else
  skip "set-user-ID needs root"; skip "set-user-ID needs root"
fi
# File capabilities (ping's cap_net_raw=ep) put a program run by another
# user than root in secure mode too: run as nobody, in a directory nobody
# may write.  Skipped where setcap or setpriv is missing, nobody cannot
# run fxt-run from here, or the filesystem keeps no capabilities.
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setcap >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 &&
  chmod 711 "$TMPD" && mkdir caps && chmod 777 caps && cp "$PROGS/loop" caps/capped &&
  nobody test -x "$FXT_RUN" && setcap cap_net_raw+ep caps/capped 2>/dev/null &&
  getcap caps/capped | grep -q cap_net_raw; then
  rc=0
  (cd caps && nobody "$FXT_RUN" -o capped.fxt ./capped 1 >"$TMPD/out" 2>"$TMPD/err") || rc=$?
  is "$rc" 0 "file capabilities: runs, its exit status"
  ok "file capabilities: warned before it runs" grep -q \
    '^fxt-run: warning: \./capped has file capabilities: the loader ignores LD_PRELOAD' "$TMPD/err"
else
  skip "file capabilities need root, setcap, setpriv and xattrs"
  skip "file capabilities need root, setcap, setpriv and xattrs"
fi
trace dyn.fxt "$PROGS/loop" 1
ok "instrumented program: no warning, no hint" sh -c '! grep -q "warning\|no instrumented" "$1"' sh "$TMPD/err"

# --- A busy thread's full chunks are copied by fxt-run's drain thread
# while it runs (spool/format.h, "Staged chunks"): ~90 chunks of 1 MiB.
rc=0
FXT_RUN_DEBUG=1 "$FXT_RUN" -o busy.fxt "$PROGS/loop" 3000000 >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "busy: exit 0"
check_archive "busy" busy.fxt
is "$(flat busy.fxt)" "$(printf '%s\n' '1 main' '3000000 leaf')" "busy: every call once"
copied=$(sed -n 's/^fxt-run: drain: \([0-9]*\) chunks copied$/\1/p' "$TMPD/err")
ok "busy: the drain thread copied chunks (${copied:-none})" test "${copied:-0}" -gt 0

# --- A program with no instrumented calls: the summary hints why.
trace none.fxt true
ok "no calls: the summary hints at -finstrument-functions" grep -q \
  '^fxt-run: no instrumented calls (.*): was true built with -finstrument-functions?$' "$TMPD/err"

# --- -o -: refused (an archive is a file), the program not run.
rc=0; "$FXT_RUN" -o - sh -c 'echo ran' >out 2>err || rc=$?
is "$rc/$(cat out)" "2/" "-o -: exit 2, the program not run"
ok "-o -: says why" grep -q '^fxt-run: -o -: cannot write the archive to standard output' err
ok "-o -: no file named -" test ! -e ./-
finish
