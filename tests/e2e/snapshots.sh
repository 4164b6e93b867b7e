#!/bin/sh
# Snapshots of the flight recorder on slow calls (fxt-run --snapshot-if,
# FXT_SNAPSHOT_IF): which calls set one off, what each holds (exactly the
# window of that moment: examples/hotspot's checksum calls so far;
# tests/progs/numbered's newest numbers, contiguous), their numbering
# across a run's processes up to --max-snapshots, the mark Perfetto shows,
# the agent without fxt-run, a killed process (fxt-run --recover), an
# earlier run's snapshots, and bad rules refused before anything runs.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"
HOT=$EXAMPLES/hotspot
NUM=$PROGS/numbered
READ=$HELPERS/numbers
REPORT=$abs_top_builddir/fxt-report

plan 36

# calls ARCHIVE NAME: NAME's calls in ARCHIVE (0 if none).
calls() { "$REPORT" -F csv "$1" | awk -F, -v n="$2" '$NF == n { c = $1 } END { print c + 0 }'; }
# mark ARCHIVE: its snapshot instant's line (fxt-dump).
mark() { "$FXT_DUMP" "$1" | grep 'event instant cat="fxt" name="fxt: snapshot '; }
valid() { "$FXT_DUMP" --check "$1" >/dev/null 2>&1; }

# --- hotspot: 400 checksum calls of ~10 us each; every one is over 1 us.
# Snapshot k is taken as the k-th ends: it holds k checksum calls.
mkdir hot && cd hot || exit 1
rc=0
"$FXT_RUN" -o h.fxt --snapshot-if 'checksum>1us' --max-snapshots 3 -- "$HOT" >out 2>err || rc=$?
is "$rc" 0 "the program runs as it does untraced (exit 0)"
is "$(ls | grep -c '^h\.snap[0-9]*\.fxt$')" 3 "--max-snapshots 3: three snapshots"
ok "... and no spool left" sh -c '! ls | grep -q spool'
ok "each is a valid archive" sh -c 'for k in 1 2 3; do "$1" --check h.snap$k.fxt >/dev/null || exit 1; done' \
  sh "$FXT_DUMP"
is "$(calls h.snap1.fxt checksum) $(calls h.snap2.fxt checksum) $(calls h.snap3.fxt checksum)" "1 2 3" \
  "snapshot k holds the k checksum calls made so far"
is "$(calls h.fxt checksum)" 400 "the run's own archive keeps every call"
m=$(mark h.snap2.fxt)
ok "the mark: 'fxt: snapshot 2: checksum took ...'" \
  sh -c 'printf "%s\n" "$1" | grep -q "name=\"fxt: snapshot 2: checksum took [0-9.]* [mun]*s\""' sh "$m"
ok "... its arguments: number, function, duration over the limit, rule" \
  sh -c 'printf "%s\n" "$1" | grep -q "snapshot:u64=2, function:str=\"checksum\", duration_ns:u64=[0-9]*, limit_ns:u64=1000, rule:str=\"checksum>1000ns\""' sh "$m"
tid=$(printf '%s\n' "$m" | sed -n 's/.* tid=\([0-9]*\) .*/\1/p')
pid=$(printf '%s\n' "$m" | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')
is "$tid" "$pid" "... on the thread whose call set it off (main)"
ok "the summary names each snapshot" \
  sh -c 'test "$(grep -c "^fxt-run: wrote snapshot h\.snap[123]\.fxt (" err)" = 3'
is "$(calls h.snap3.fxt main)" 1 "main, still running, closes at the snapshot"

# An earlier run's snapshots: refused without -f, removed with it.
rc=0
"$FXT_RUN" -o h2.fxt --snapshot-if 'checksum>1us' -- "$HOT" >out2 2>/dev/null || rc=$?
mv h.fxt h.keep
rc=0
"$FXT_RUN" -o h.fxt --snapshot-if 'checksum>1us' -- "$HOT" >out 2>err || rc=$?
is "$rc/$(wc -l <err | tr -d ' ')" "2/1" "an earlier run's snapshot without -f: exit 2, one line"
ok "... naming it" grep -q "^fxt-run: h\.snap[123]\.fxt exists (an earlier run's snapshot); use -f" err
ok "... the program did not run" test ! -s out
"$FXT_RUN" -q -f -o h.fxt --snapshot-if 'checksum>1us' --max-snapshots 1 -- "$HOT" >/dev/null 2>&1
is "$(ls h.snap*.fxt | tr '\n' ' ')" "h.snap1.fxt " "with -f they go: one snapshot left"
cd .. || exit 1

# --- The window: numbered's newest numbers, up to the call that set it
# off (count(), which makes them all), contiguous, the rest overwritten.
mkdir num && cd num || exit 1
"$FXT_RUN" -q -o n.fxt --buffer-size=256K --snapshot-if 'count>1us' -- "$NUM" 300000 >/dev/null 2>&1
set -- $(head -n 1 "$("$READ" n.snap1.fxt >n.snap1.n; echo n.snap1.n)")
is "$3/$4" "299999/0" "numbered: the snapshot's numbers end at the last, without gaps"
ok "... a window: the oldest overwritten ($2 is the first kept)" test "$2" -gt 0
set -- $(sed -n 's/^calls //p' n.snap1.n)
ok "... and the overwritten calls counted ($3)" test "$3" -gt 0
ok "... a valid archive" valid n.snap1.fxt
cd .. || exit 1

# --- A libc group: sleep's nanosleep over 100 ms, in a child process (a
# 1 ms sleep took over 5 ms on a loaded machine: the bound is far).
mkdir libc && cd libc || exit 1
"$FXT_RUN" -q -o s.fxt --snapshot-if 'libc.sleep>100ms' -- sh -c 'sleep 0.2; sleep 0.001' >/dev/null 2>&1
is "$(ls | grep -c '^s\.snap[0-9]*\.fxt$')" 1 "libc.sleep>100ms: one snapshot (the 200 ms sleep, not the 1 ms one)"
ok "... marked with the libc function" \
  sh -c '"$1" s.snap1.fxt | grep -Eq "name=\"fxt: snapshot 1: (clock_)?nanosleep took [0-9.]* ms\""' sh "$FXT_DUMP"
cd .. || exit 1

# --- Several processes: one count for the run.
mkdir procs && cd procs || exit 1
"$FXT_RUN" -q -o p.fxt --snapshot-if 'checksum>1us' --max-snapshots 4 -- sh -c '"$0"; "$0"' "$HOT" \
  >/dev/null 2>&1
is "$(ls p.snap*.fxt | sed 's/^p\.snap\([0-9]*\)\.fxt$/\1/' | sort -n | tr '\n' ' ')" "1 2 3 4 " \
  "two processes, --max-snapshots 4: snapshots 1 to 4, no more"
cd .. || exit 1

# --- Without fxt-run: the process converts its snapshots at its exit.
mkdir alone && cd alone || exit 1
LD_PRELOAD=$AGENT_SO FXT_OUTPUT=a.fxt FXT_SNAPSHOT_IF='checksum>1us' FXT_MAX_SNAPSHOTS=2 "$HOT" \
  >/dev/null 2>err
is "$(ls | tr '\n' ' ')" "a.fxt a.snap1.fxt a.snap2.fxt err " "agent alone: two snapshots, converted at exit"
is "$(calls a.snap2.fxt checksum)" 2 "... holding what they should"
cd .. || exit 1

# --- A killed process: its snapshots are left as spools; --recover.
mkdir killed && cd killed || exit 1
LD_PRELOAD=$AGENT_SO FXT_OUTPUT=k.fxt FXT_SNAPSHOT_IF='count>1us' "$NUM" 20000 1 kill >/dev/null 2>&1
ok "killed: the snapshot's spool is left" test -f k.fxt.snap1.spool
"$FXT_RUN" --recover . >out 2>err
ok "fxt-run --recover converts it too" test -s k.snap1.fxt -a -s k.fxt
ok "... into a valid archive" valid k.snap1.fxt
ok "... with its mark" sh -c '"$1" k.snap1.fxt | grep -q "fxt: snapshot 1: count took"' sh "$FXT_DUMP"
ok "... and no spool left" sh -c '! ls | grep -q spool'
cd .. || exit 1

# --- Refused before anything runs, in one line each.
mkdir bad && cd bad || exit 1
refused() {
  rc=0
  "$FXT_RUN" -o b.fxt "$@" -- sh -c ': >ran' >out 2>err || rc=$?
  test "$rc" = 2 -a "$(wc -l <err | tr -d ' ')" = 1 -a ! -e ran -a ! -e b.fxt
}
ok "a rule without '>'" refused --snapshot-if 'parse10ms'
ok "a rule without a name" refused --snapshot-if '>10ms'
ok "a rule with a bad duration" refused --snapshot-if 'parse>10 parsecs'
ok "an unknown libc group" refused --snapshot-if 'libc.disk>1ms'
ok "a libc group not recorded" refused --snapshot-if 'libc.mem>1ms'
ok "another mode" refused --mode=stream --snapshot-if 'parse>1ms'
ok "--max-snapshots without a rule, or 0" sh -c '
  "$1" -o b.fxt --max-snapshots 3 -- true 2>/dev/null; a=$?
  "$1" -o b.fxt --snapshot-if "f>1ms" --max-snapshots 0 -- true 2>/dev/null; b=$?
  test "$a$b" = 22' sh "$FXT_RUN"
cd .. || exit 1
finish
