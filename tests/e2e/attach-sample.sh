#!/bin/sh
# fxt-run -p PID --sample: stack samples of a process already running
# (agent/sample/sample.c, "Attached"; launcher/attach/sample.c).  Each
# thread running at the attach gets a CPU-time timer: the archive has
# samples of each busy thread of tests/progs/attach_target, within the
# window; after the detach no timer is left (/proc/PID/timers), SIGPROF
# is not caught any more (SigCgt, once the agent's restorer thread saw
# fxt-run done) and the program's own handlers are still there, the
# program runs on and exits 0.  With --patch too: the
# exact calls and the samples.  Threads started while attached are sampled
# too (their start goes through the pthread_create() bound in the GOTs).  Refused, in one line, before
# anything is done: a process with a SIGPROF handler of its own (which
# goes on getting its signals), one with a thread that blocks SIGPROF;
# the agent refuses the same by itself (called as fxt-run calls it).  The
# process exiting while sampled.  Threads that end while sampled.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 33
if [ "$(uname -m)" != x86_64 ] || [ ! -x "$HELPERS/fxt_inject" ]; then
  skip_rest "the injector is for x86-64"
fi
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

attached() { grep -q '^fxt-run: attached to ' run.err; }
# sigcgt: the target's caught signals (hexadecimal); prof_caught: whether
# SIGPROF (27) is one of them.
sigcgt() { awk '$1 == "SigCgt:" { print $2 }' "/proc/$target/status"; }
prof_caught() { [ $(((0x$(sigcgt) >> 26) & 1)) = 1 ]; }
prof_free() { ! prof_caught; }
# timers: the target's POSIX timers, one line each.
timers() { grep -c '^ID:' "/proc/$target/timers"; }
# tracks_with ARCHIVE FUNCTION: the sample tracks whose stacks have it.
tracks_with() {
  "$CALLTREE" "$1" | awk -v f="$2" '
    /^thread / { on = / \(samples\)$/; seen = 0; next }
    on && !seen && $1 == f { n++; seen = 1 }
    END { print n + 0 }'
}

# 1. Three busy threads and main spinning, sampled for 1 s.
start --spin --busy 3
before=$(sigcgt)
prof_caught
is "$?" 1 "before: SIGPROF is not caught"
"$FXT_RUN" -p $target --sample --duration 1s -o s.fxt 2>run.err 9>&-
is "$?" 0 "fxt-run -p --sample: exit 0"
numbers() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g'; }
is "$(numbers <run.err)" "$(numbers <<EOF
fxt-run: attached to 1 (attach_target, 4 threads)
fxt-run: detached from 1 after 1.0 s (--duration)
fxt-run: wrote s.fxt (1.0 KiB, 1 events, 4 threads, 0 dropped)
EOF
)" "what fxt-run says: no warning, no patch report"
is "$(tracks_with s.fxt busy):$(tracks_with s.fxt spin)" 3:1 \
  "samples on each of the three busy threads, and on main" ||
  diag "$("$CALLTREE" s.fxt | grep -A3 '^thread ')"
span=$("$FXT_DUMP" --stats s.fxt | awk '$1 == "span_ns" { print $2 }')
ok "the samples are within the 1 s window (span ${span} ns)" test "$span" -lt 2000000000
is "$(timers)" 0 "after the detach: no timer left"
# The agent gives the action back once fxt-run is done with the process.
wait_until prof_free
prof_caught
is "$?" 1 "after the detach: SIGPROF is not caught"
is "$(sigcgt)" "$before" "the program's own handlers (SIGSEGV, SIGTRAP) are still there"
sleep 0.3 # it runs on, unsampled
touch stop
exec 9>&-
wait $target
is "$?:$(tr '\n' ' ' <out)" "0:ready spun: yes busy: 3 " "the program runs on and exits 0"
ok "the archive is valid" sh -c '"$1" --check "$2" >/dev/null' sh "$FXT_DUMP" s.fxt

# 2. With --patch: the exact calls and the samples; threads started while
# attached are sampled too, and fxt-run warns of none.
start --serve --busy 1
calls 100
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' --sample -o ps.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 1000
echo "threads 3" >&9
wait_until grep -q '^joined 3$' out
sleep 0.5 # CPU time for the busy thread's samples, on a loaded machine too
kill -INT $run
wait $run
is "$?" 0 "fxt-run -p --patch --sample: exit 0"
is "$(work_calls ps.fxt)" 1000 "the archive holds the 1000 calls of the window"
is "$(tracks_with ps.fxt busy)" 1 "and the busy thread's samples"
# (Each spins 200 ms, which a loaded machine may give little CPU time: the
# timers are what counts, and fxt-run's warning says when one had none.)
ok "samples of threads started while attached ($(tracks_with ps.fxt spinner) of 3)" \
  test "$(tracks_with ps.fxt spinner)" -ge 1
grep -q 'not sampled' run.err
is "$?" 1 "... and fxt-run warns of no thread not sampled"
is "$(timers)" 0 "no timer left"
exec 9>&-
wait $target
is "$?" 0 "the program exits 0"

# 2b. Threads that end while sampled: their timers run on to the detach,
# and a signal of one may come while the thread's buffer is being let go
# of (AGENT_EV_THREAD_END); no sample is taken then.  600 threads of
# patched calls sampled at 10 kHz: before the fix the program died of a
# SIGSEGV in the handler (exit 3) in 3 runs of 4.
start --serve --busy 1
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' --sample=10000 -o pc.fxt 2>run.err 9>&- &
run=$!
wait_until attached
echo "churn 600" >&9
wait_until grep -q -e '^churned 600$' -e '^handler$' out
kill -INT $run
wait $run
is "$?" 0 "threads ending while sampled: fxt-run exits 0"
exec 9>&-
wait $target
is "$?:$(grep -c -e handler -e churned out)" 0:1 "... and the program did not fault, and exits 0"

# 3. A SIGPROF handler of the program's own (and ITIMER_PROF): refused
# before anything is done, and its handler goes on getting its signals.
start --spin --prof
before=$(sigcgt)
refusal() {
  "$FXT_RUN" "$@" >r.out 2>r.err
  echo "$?:$(wc -l <r.err):$(cat r.err)"
}
is "$(refusal -p $target --sample -o r.fxt)" "2:1:fxt-run: --sample: process $target has a SIGPROF handler of its own, which sampling cannot share once the process runs (run the program under fxt-run --sample instead)" \
  "a SIGPROF handler of its own: refused in one line, exit 2"
grep -q libfxt-agent "/proc/$target/maps"
is "$?" 1 "... the agent is not loaded"
is "$(sigcgt)" "$before" "... its handlers are its own"
sleep 0.5 # CPU time for its ITIMER_PROF, on a loaded machine too
touch stop
wait $target
is "$?:$(tr '\n' ' ' <out)" "0:ready spun: yes profs: yes " "... and its SIGPROFs keep coming"

# 4. A thread that blocks SIGPROF: refused by fxt-run; the agent, called
# as fxt-run calls it, refuses to sample by itself and says why.
start --serve --busy 1 --block-prof
blocker=$(for t in /proc/$target/task/*; do
  awk -v t="${t##*/}" '$1 == "SigBlk:" && $2 ~ /[4-7c-f]......$/ { print t }' "$t/status"
done)
is "$(refusal -p $target --sample -o r.fxt | sed "s/thread $blocker /thread T /")" \
  "2:1:fxt-run: --sample: thread T of process $target blocks SIGPROF, which sampling cannot see change once the process runs (run the program under fxt-run --sample instead)" \
  "a thread that blocks SIGPROF: refused in one line, exit 2"
block b1 "FXT_OUTPUT=$TMPD/a.fxt" FXT_SAMPLE=1000 FXT_DEBUG=1
is "$(agent_start fxt_attach_start "$TMPD/b1")" 0 "the agent attached by itself: fxt_attach_start: recording"
calls 10
grep -q "not sampling: thread $blocker blocks SIGPROF" err
is "$?:$(timers)" 0:0 "... it says it does not sample, and starts no timer" ||
  diag "blocker $blocker; the agent said: $(grep -E 'sampl|SIGPROF' err)"
is "$(agent --again fxt_attach_stop)" 0 "fxt_attach_stop: 0"
exec 9>&-
wait $target
is "$?" 0 "the program exits 0"

# 5. The process exits while sampled: its timers go with it.
start --serve --busy 2
rm -f run.err
"$FXT_RUN" -p $target --sample -o x.fxt 2>run.err 9>&- &
run=$!
wait_until attached
sleep 0.5
exec 9>&-
wait $target
is "$?" 0 "the program exits 0 while sampled"
wait $run
is "$?:$(grep -c '^fxt-run: process [0-9]* exited after .* s$' run.err)" 0:1 \
  "fxt-run: exit 0, saying the process exited"
is "$(tracks_with x.fxt busy)" 2 "its archive has both busy threads' samples"
# 6. Threads that call a wrapper as soon as it is bound (--libc=mem: the
# busy threads' malloc) enter the agent while its start still runs, and
# wait for it with every signal blocked by the agent: not the program
# blocking SIGPROF.  Before, the agent took them for it and sampled
# nothing ("no thread of process N was sampled"), 2 attaches in 5 here.
# Five processes, one attach each.
for i in 1 2 3 4 5; do
  start --spin --busy 3
  "$FXT_RUN" -p $target --libc=mem --sample --duration 0.5s -f -o m.fxt 2>run.err 9>&-
  echo "$?:$(grep -c 'was sampled' run.err):$(tracks_with m.fxt busy)"
  cat run.err >>mem.err
  touch stop
  exec 9>&-
  wait $target
done >mem.out
is "$(sort -u mem.out)" "0:0:3" "--libc=mem --sample, 5 attaches: each samples the three busy threads, no warning" ||
  diag "$(cat mem.err)"
# 7. Sampled again after a detach, once the program has SIGPROF's action
# back: the agent's handler is installed again for the new window.
# Before, it was installed once per process, and the second window's
# timers met the program's default action: killed by SIGPROF (155).
start --spin --busy 2
for i in 1 2; do
  "$FXT_RUN" -p $target --sample --duration 0.5s -f -o again$i.fxt 2>run.err 9>&-
  echo "$?:$(tracks_with again$i.fxt busy)"
  kill -0 $target 2>/dev/null || break
  wait_until prof_free
done >again.out 2>&1
touch stop
exec 9>&-
wait $target
is "$?:$(tr '\n' ' ' <again.out)" "0:0:2 0:2 " "sampled twice, SIGPROF given back between: both windows sample both busy threads, the program exits 0"
finish
