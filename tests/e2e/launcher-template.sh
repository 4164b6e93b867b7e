#!/bin/sh
# Archive names as templates (fxt-run -o, FXT_OUTPUT without fxt-run):
# %p the program's pid, %t the start (UTC), %n the program's name, %h the
# host, %% a '%'.  Every file of a run follows the one name (pipelines,
# --keep-parts, fork children without fxt-run), a bad template is refused
# before anything runs, and a name that exists is not overwritten.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"
HOT=$EXAMPLES/hotspot

plan 24

# only PATTERN: the directory holds exactly the files PATTERN matches
# (a grep -E pattern on ls's lines), at least one.
only() { [ -n "$(ls)" ] && ! ls | grep -Eqv "$1"; }

# --- %p is the program's own pid: sh prints $$ and execs hotspot.
mkdir p && cd p || exit 1
"$FXT_RUN" -q -o 'run-%p.fxt' -- sh -c 'echo $$; exec "$0"' "$HOT" >out 2>err
pid=$(head -n 1 out)
ok "%p: the archive is named after the program's pid ($pid)" test -s "run-$pid.fxt"
ok "... and nothing else is left" only "^(run-$pid\.fxt|out|err)$"
check_archive "%p" "run-$pid.fxt"
is "$("$FXT_DUMP" --stats "run-$pid.fxt" | sed -n 's/^processes //p')" 1 "... one process in it"
ok "... it is that pid" sh -c '"$1" "$2" | grep -q "pid=$3 "' sh "$FXT_DUMP" "run-$pid.fxt" "$pid"
"$FXT_RUN" -q -o 'run-%p.fxt' -- sh -c 'echo $$; exec "$0"' "$HOT" >out2 2>/dev/null
ok "two runs, two archives" test -s "run-$(head -n 1 out2).fxt" -a "$(head -n 1 out2)" != "$pid"
cd .. || exit 1

# --- %t, %n, %h, %%.
mkdir t && cd t || exit 1
"$FXT_RUN" -q -o 'x-%t-%n-%h-%%.fxt' -- "$HOT" >/dev/null 2>&1
host=$(hostname 2>/dev/null || uname -n)
ok "%t %n %h %%: x-YYYYmmdd-HHMMSS-hotspot-$host-%.fxt" \
  only "^x-20[0-9]{2}[01][0-9][0-3][0-9]-[0-2][0-9][0-5][0-9][0-6][0-9]-hotspot-$host-%\.fxt$"
cd .. || exit 1

# --- A pipeline (fork and exec): one archive, the parts merged into it.
mkdir pipe && cd pipe || exit 1
"$FXT_RUN" -q -o 'pipe-%p.fxt' -- sh -c 'echo $$; "$0" | cat >/dev/null; "$0" >/dev/null' "$HOT" \
  >out 2>err
pid=$(head -n 1 out)
ok "pipeline: one archive, pipe-$pid.fxt" only "^(pipe-$pid\.fxt|out|err)$"
check_archive "pipeline" "pipe-$pid.fxt"
ok "... every process in it (>= 3)" \
  test "$("$FXT_DUMP" --stats "pipe-$pid.fxt" | sed -n 's/^processes //p')" -ge 3
cd .. && mkdir keep && cd keep || exit 1
"$FXT_RUN" -q --keep-parts -o 'keep-%p.fxt' -- sh -c 'echo $$; "$0" | cat >/dev/null' "$HOT" \
  >out 2>err
pid=$(head -n 1 out)
ok "--keep-parts: each process's archive named after the run's (keep-$pid.*)" \
  only "^(keep-$pid(\.[0-9]+)*\.fxt|out|err)$"
cd .. || exit 1

# --- Refused before anything runs.
mkdir bad && cd bad || exit 1
rc=0
"$FXT_RUN" -o 'a-%q.fxt' -- sh -c 'touch ran' >out 2>err || rc=$?
is "$rc" 2 "an unknown escape: exit 2"
is "$(cat err)" "fxt-run: -o a-%q.fxt: unknown escape '%q' (%p pid, %t time, %n program, %h host, %% a '%')" \
  "... one line naming it"
ok "... nothing ran, nothing written" only "^(out|err)$"
rc=0
"$FXT_RUN" -o 'a-%' -- sh -c 'touch ran' >out 2>err || rc=$?
is "$rc/$(wc -l <err | tr -d ' ')" "2/1" "a '%' at the end: exit 2, one line"
"$FXT_RUN" -q -o 'same-%n.fxt' -- "$HOT" >/dev/null 2>&1
rc=0
"$FXT_RUN" -o 'same-%n.fxt' -- "$HOT" >out 2>err || rc=$?
is "$rc" 2 "an expanded name that exists: exit 2"
ok "... said once, with the name" grep -q "^fxt-run: same-hotspot.fxt exists; use -f" err
ok "... the program never ran" test ! -s out
cd .. || exit 1

# --- Without fxt-run: the first process expands FXT_OUTPUT, the others
# follow its name.
mkdir alone && cd alone || exit 1
LD_PRELOAD=$AGENT_SO FXT_OUTPUT='a-%p-%n.fxt' "$PROGS/fork_child" >out 2>err
child=$(sed -n 's/^fork_child: child //p' out)
root=$(ls a-*-fork_child.fxt 2>/dev/null | sed 's/^a-\([0-9]*\)-fork_child\.fxt$/\1/')
ok "agent alone: the root's archive a-PID-fork_child.fxt ($root)" test -n "$root" -a -s "a-$root-fork_child.fxt"
ok "... its child's named after it" test -s "a-$root-fork_child.$child.fxt"
LD_PRELOAD=$AGENT_SO FXT_OUTPUT='e-%p.fxt' FXT_LIBC=none sh -c 'echo $$; "$0" >/dev/null; "$0" >/dev/null' \
  "$HOT" >out2 2>err2
sh=$(head -n 1 out2)
ok "... processes it starts too: e-$sh.PID.fxt" only "^(e-$sh(\.[0-9]+)?\.fxt|out2?|err2?|a-.*)$"
is "$(ls e-*.fxt | wc -l | tr -d ' ')" 2 "... one per traced program"
LD_PRELOAD=$AGENT_SO FXT_OUTPUT='pct-%%-%x.fxt' "$HOT" >/dev/null 2>err3
ok "... a bad escape: the name as it is" test -s 'pct-%%-%x.fxt'
ok "... and said" grep -q "FXT_OUTPUT: an unknown %-escape; the name is taken as it is" err3
finish
