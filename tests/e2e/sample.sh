#!/bin/sh
# Stack sampling (agent/sample/sample.c) end to end: fxt-run --sample on a
# CPU-bound program built -O2 without hooks (tests/progs/sample_hotcold.c:
# hot() does 4 times cold()'s work).  The stack chart on each thread's
# "(samples)" track shows hot as the widest function; the program's output
# and exit status are unchanged; hooks keep their exact counts next to the
# samples; threads and fork children are sampled each on their own track;
# a program that blocks SIGPROF is sampled all the same (its mask still
# blocks SIGPROF as far as it can tell), one that catches it (GNU sort) or
# dies of it is left alone; dlopen/dlclose under sampling; samples taken in the agent's
# buffer work are the agent's.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 36
PROG=$PROGS/sample_hotcold
HOOKS=$PROGS/sample_hotcold_hooks

# total_of ARCHIVE FUNCTION: its sampled total ns in fxt-report (0 if absent).
total_of() {
  "$abs_top_builddir/fxt-report" -F csv --samples=only "$1" |
    awk -F, -v f="$2" 'NR > 1 && $NF == f { t = $1 } END { printf "%.0f\n", t + 0 }'
}

# block ARCHIVE THREAD: the call tree of one thread of fxt_calltree's.
block() {
  "$CALLTREE" "$1" | awk -v t="thread $2" '
    /^thread / { on = ($0 == t) ; if (on) n++ } on && n == 1 && !/^thread / { print }'
}

# --- one thread, no hooks -------------------------------------------------
"$PROG" 12 >plain.out 2>plain.err
plain_rc=$?
trace one.fxt --sample=1000 "$PROG" 12
is "$rc" "$plain_rc" "exit status unchanged"
is "$(cat "$TMPD/out")" "$(cat plain.out)" "stdout unchanged"
check_archive one one.fxt
is "$("$CALLTREE" --threads one.fxt | grep -c '^sample_hotcold (samples)$')" 1 \
  "one samples track, named after the thread"
# The chart's trunk, down to the loop (every sample has it): one frame
# each, nested, but where the thread gave up the CPU (rare in a CPU-bound
# program, but a page fault may wait for I/O): a sample's slices last its
# CPU time, not the wait.
trunk=$(block one.fxt 'sample_hotcold (samples)' | grep -E '^ *(main|work) ' | tr -s ' ')
n=$(echo "$trunk" | sed -n 's/^ main \([0-9]*\)$/\1/p')
is "$trunk" " main $n
 work $n" "main and work: nested, as many of each ($n)"
ok "main and work: one frame each but for a wait or two" test "${n:-0}" -ge 1 -a "${n:-0}" -le 3
main_ns=$(total_of one.fxt main)
hot_ns=$(total_of one.fxt hot)
cold_ns=$(total_of one.fxt cold)
diag "main $main_ns ns, hot $hot_ns ns, cold $cold_ns ns"
# hot is 80% of the work: allow for the sampling's granularity (the kernel
# fires CPU-time timers at its tick, 250 Hz here) on a busy machine.
ok "hot: 60-95% of main's time" test $((hot_ns * 100)) -ge $((main_ns * 60)) -a \
  $((hot_ns * 100)) -le $((main_ns * 95))
ok "cold: 5-40% of main's time" test $((cold_ns * 100)) -ge $((main_ns * 5)) -a \
  $((cold_ns * 100)) -le $((main_ns * 40))
# The widest function below the trunk (everything at least 97% of main's
# width: its callers, work, and mix, which both hot and cold call).
widest=$("$abs_top_builddir/fxt-report" -F csv --samples=only -s total one.fxt |
  awk -F, -v m="$main_ns" 'NR > 1 && $1 * 100 < m * 97 { print $NF; exit }')
is "$widest" hot "hot is the widest function below the trunk"
# The track's slices are samples: each starts where one sample was taken,
# so at most about 1 kHz of the run's time.
nslices=$(stat_of one.fxt slices)
ok "a plausible number of slices ($nslices)" test "$nslices" -ge 20 -a "$nslices" -le 2000
is "$(stat_of one.fxt overlaps)" 0 "no overlapping slices"

# --- without --sample: no samples track -----------------------------------
trace none.fxt "$PROG" 2
is "$("$CALLTREE" --threads none.fxt | grep -c samples)" 0 "no --sample: no samples track"

# --- hooks and samples together -------------------------------------------
trace hooks.fxt --sample=1000 "$HOOKS" 8
is "$rc/$(cat "$TMPD/out")" "0/$("$HOOKS" 8)" "hooks: output and exit status unchanged"
check_archive hooks hooks.fxt
# The thread's name is the program's, cut to 15 bytes (comm).
is "$(block hooks.fxt sample_hotcold_)" "  main 1
    ns 2
    work 1
      hot 8
        mix 8
      cold 8
        mix 8" "hooks: exact call counts with sampling on"
ok "hooks: the samples track has hot" \
  sh -c "'$CALLTREE' '$TMPD/hooks.fxt' | grep -A20 '^thread sample_hotcold_ (samples)' | grep -q ' hot '"

# --- threads --------------------------------------------------------------
trace threads.fxt --sample=1000 "$PROG" 6 2
is "$rc/$(cat "$TMPD/out")" "0/$("$PROG" 6 2)" "threads: output and exit status unchanged"
check_archive threads threads.fxt
for w in worker1 worker2; do
  is "$(block threads.fxt "$w (samples)" | grep -cE '^ +(hot|cold) ')" 2 \
    "$w: hot and cold on its own samples track"
done
# The main thread only waits: whatever it was sampled in, not the work.
is "$(block threads.fxt 'sample_hotcold (samples)' | grep -c ' hot ')" 0 \
  "main thread: no hot samples"

# --- fork: the child starts its own timer -----------------------------------
trace fork.fxt --sample=1000 "$PROG" 6 0 fork
is "$rc/$(cat "$TMPD/out")" "0/$("$PROG" 6 0 fork)" "fork: output and exit status unchanged"
check_archive fork fork.fxt
is "$("$CALLTREE" --threads fork.fxt | grep -c '^sample_hotcold (samples)$')" 2 \
  "fork: parent and child each have a samples track"

# --- SIGPROF blocked: the program runs as usual ------------------------------
trace block.fxt --sample=1000 "$PROG" 6 0 block
is "$rc/$(cat "$TMPD/out")" "0/$("$PROG" 6 0 block)" \
  "SIGPROF blocked: output and exit status unchanged"
ok "SIGPROF blocked: the work is sampled all the same" \
  sh -c "'$CALLTREE' '$TMPD/block.fxt' | grep -q ' hot '"

# --- dlopen/dlclose while sampling at the highest rate ------------------------
"$EXAMPLES/plugin" >plain.out 2>/dev/null
plain_rc=$?
trace plugin.fxt --sample=10000 "$EXAMPLES/plugin"
is "$rc/$(cat "$TMPD/out")" "$plain_rc/$(cat plain.out)" "dlopen/dlclose: output and exit status unchanged"
check_archive plugin plugin.fxt

# --- the agent's own buffer work ---------------------------------------------
# Tiny chunks: a refill every few hundred calls.  A refill blocks signals,
# so a sample that came meanwhile is taken as its pthread_sigmask returns:
# the agent's time, not the C library's.
FXT_CHUNK_SIZE=4096 trace refill.fxt --sample=1000 "$PROGS/loop" 2000000
is "$rc/$(cat "$TMPD/out")" "0/loop: 2000000 calls" "refills: output and exit status unchanged"
is "$(total_of refill.fxt pthread_sigmask)" 0 "refills: no sample in the C library's pthread_sigmask"
ok "refills: the agent's time is the agent's" test "$(total_of refill.fxt fxtrace)" -gt 0

# --- SIGPROF of the program's: its own handler, or the default action --------
trace own.fxt --sample=1000 "$PROG" 6 0 own
is "$rc/$(cat "$TMPD/out")" "0/main 32fac3c90a0f2552
own handler: 1" "own SIGPROF handler: sees its own signal only, installed as set"
check_archive own own.fxt
"$PROG" 2 0 raise >plain.out 2>/dev/null
plain_rc=$?
trace raise.fxt --sample=1000 "$PROG" 2 0 raise
is "$rc/$(cat "$TMPD/out")" "$plain_rc/$(cat plain.out)" \
  "raise(SIGPROF): the program dies of it as without the agent"
# GNU sort catches SIGPROF (to remove its temporary files, then die of it).
if command -v sort >/dev/null && command -v seq >/dev/null; then
  trace sort.fxt --sample=1000 sh -c 'seq 1 100000 | sort -r | cksum'
  is "$rc/$(cat "$TMPD/out")" "0/$(seq 1 100000 | sort -r | cksum)" \
    "sort, which catches SIGPROF: output and exit status unchanged"
  check_archive sort sort.fxt
else
  skip "sort or seq not installed"
  skip "sort or seq not installed"
fi
finish
