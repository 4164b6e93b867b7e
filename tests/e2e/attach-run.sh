#!/bin/sh
# fxt-run -p PID: a process already running (tests/progs/attach_target
# --serve: "call N" lines make N calls of work(), with threads busy in the
# C library) recorded for a window and left as it was.  The archive holds
# exactly the calls made between attach and detach; the program's text is
# its file's again after the detach, its output and exit status its own;
# nothing of the run is left in the folder.  Detaching at --duration, at
# SIGINT, and the process exiting while attached; fxt-run killed while
# attached (the agent stops by itself and leaves its spool for --recover);
# the refusals, one line and exit 2 each.  --sample: attach-sample.sh.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 29
why=$(patch_unavailable)
[ -n "$why" ] && skip_rest "$why"
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

attached() { grep -q '^fxt-run: attached to ' run.err; }

# 1. --duration (a bare number: seconds): 100 calls before, 1000 while
# attached, 50 after.
start --serve --busy 2
calls 100
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' --duration 2 -o w.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 1000
wait $run
is "$?" 0 "fxt-run -p --duration: exit 0"
ok "after the detach, the program's text is its file's again" text_is_file
calls 50
exec 9>&-
wait $target
is "$?:$(tr '\n' ' ' <out)" "0:ready done 100 done 1000 done 50 served: yes busy: 2 " \
  "the program's output and exit status are its own"
is "$(work_calls w.fxt)" 1000 "the archive holds the 1000 calls made while attached, exactly"
ok "the archive is valid" sh -c '"$1" --check "$2" >/dev/null' sh "$FXT_DUMP" w.fxt
numbers() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g'; }
is "$(numbers <run.err)" "$(numbers <<EOF2
fxt-run: attached to 1 (attach_target, 3 threads)
fxt-run: detached from 1 after 2.0 s (--duration)
fxt-run: wrote w.fxt (1.0 KiB, 1000 events, 1 thread, 0 dropped)
fxt-run: patched 1 of 1 functions of $PROGS/attach_target
EOF2
)" "what fxt-run says"
is "$(ls | grep -v '^\(in\|out\|err\|run\.err\|w\.fxt\|text\.maps\|mem\.bin\|file\.bin\)$')" "" \
  "nothing else left: no spool, control, session or settings file"

# 2. SIGINT (Ctrl-C) ends the window.
start --serve
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' -o i.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 300
kill -INT $run
wait $run
is "$?" 0 "fxt-run -p stopped by SIGINT: exit 0"
grep -q '^fxt-run: detached from [0-9]* after .* s (Interrupt)$' run.err
is "$?" 0 "... it says it detached, at the interrupt"
calls 20
exec 9>&-
wait $target
is "$?" 0 "the program went on and exited 0"
is "$(work_calls i.fxt)" 300 "the archive holds the 300 calls of the window"

# 3. The process exits while attached.
start --serve
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' -o x.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 77
exec 9>&-
wait $target
is "$?" 0 "the program exits 0 while attached"
wait $run
is "$?" 0 "fxt-run: exit 0"
grep -q '^fxt-run: process [0-9]* exited after .* s$' run.err
is "$?" 0 "... saying the process exited"
is "$(work_calls x.fxt)" 77 "its archive holds its 77 calls"

# 4. fxt-run killed with SIGKILL while attached: the agent sees it gone,
# writes its patches back and leaves the spool, which --recover converts.
# (TMPDIR of its own: other tests' fxt-run --patch, running beside this
# one, remove the stale report folders of a shared one.)
start --serve
rm -f run.err
mkdir -p "$TMPD/reports"
TMPDIR=$TMPD/reports "$FXT_RUN" -p $target --patch='^work$' -o k.fxt 2>run.err 9>&- &
run=$!
wait_until attached
calls 100
kill -KILL $run
wait $run 2>/dev/null
wait_until text_is_file
ok "fxt-run killed: the program's text is its file's again" text_is_file
calls 30
exec 9>&-
wait $target
is "$?" 0 "... and the program went on and exited 0"
is "$(ls | grep -c '^k\.fxt\..*spool$')" 1 "its spool is left"
"$FXT_RUN" -q --recover "$TMPD" >/dev/null 2>&1
is "$(work_calls k.fxt)" 100 "fxt-run --recover: the archive holds the 100 calls made before the kill"
# Its folder of patch reports (atexit never ran) is removed by the next
# fxt-run that makes one.
reports=$TMPD/reports/fxt-patch.$run.
is "$(ls -d "$reports"* 2>/dev/null | wc -l)" 1 "the killed fxt-run's patch-report folder is left"
TMPDIR=$TMPD/reports "$FXT_RUN" -q --patch='^work$' -o n.fxt -- "$PROGS/attach_target" </dev/null >/dev/null 2>&1
is "$(ls -d "$reports"* 2>/dev/null | wc -l)" 0 "... and removed by the next fxt-run --patch"

# 5. Refusals: one line, exit 2.
start --serve
refusal() {
  "$FXT_RUN" "$@" >r.out 2>r.err
  echo "$?:$(wc -l <r.err):$(cat r.err)"
}
is "$(refusal -p $target -o z.fxt)" "2:1:fxt-run: -p: say what to record: --patch=REGEX, the functions to record (--patch=. for all of the program's), --libc=GROUPS or --sample: a running process has no hooks of ours" \
  "-p without --patch, --libc or --sample"
is "$(refusal -p $target --patch=. -- true)" "2:1:fxt-run: -p: attach to a process or run a program, not both (true given)" \
  "-p and a program"
is "$(refusal --duration 1s -- true)" "2:1:fxt-run: --duration: only with -p (a program runs until it exits)" \
  "--duration without -p"
( exit 0 ) &
gone=$!
wait $gone
is "$(refusal -p $gone --patch=.)" "2:1:fxt-run: process $gone: no such process" "-p with no such process"
is "$(refusal -p x --patch=.)" "2:1:fxt-run: --pid: not a process id: 'x'" "-p with no number"
is "$(refusal -p $target --patch=. --duration 2min)" "2:1:fxt-run: --duration: invalid duration '2min' (seconds, or a number and ms, us or ns: 10, 2.5s, 500ms)" \
  "--duration with an unknown unit"
calls 5
exec 9>&-
wait $target

# A process none of whose threads can take a call (its only thread blocks
# SIGSEGV): the injector's reason, not another fxt-run's (before, any
# -EBUSY was said as "being recorded by another fxt-run -p").
start --block-segv
is "$(refusal -p $target --patch=. -o z.fxt)" "2:1:fxt-run: cannot attach to process $target: no thread of process $target can take a call: each blocks SIGSEGV" \
  "no thread that can take a call: said so"
exec 9>&-
wait $target

# Without -o: the archive is named after the process (fxt-run crashed).
start --serve
"$FXT_RUN" -q -p $target --patch='^work$' --duration 0.5 >/dev/null 2>r.err 9>&-
is "$?:$(ls attach_target*.fxt 2>/dev/null)" "0:attach_target.fxt" "-p without -o: PROCESS.fxt"
exec 9>&-
wait $target
finish
