#!/bin/sh
# Traces wordfreq (tests/progs/wordfreq/) as a daemon-like program would run: it closes
# every inherited fd (fxt-run's status fd among them), changes directory,
# and runs a shell hook with system() that starts a second traced
# wordfreq.  The archive must land where -o said, one section (provider)
# per traced process, with no spool or per-process part left behind, and
# the program's files must stay its own;
# fxt-run's own errors (-o into a missing directory, an existing archive)
# must not run the program at all.

. "$abs_top_srcdir/tests/lib/test_subr.sh"

WF=$PROGS/wordfreq/wordfreq
REPORT=$abs_top_builddir/fxt-report
RULES=$abs_top_srcdir/tests/helpers/perfetto_rules.py
export LC_ALL=C

scratch
cd "$TMPD" || exit 1
mkdir out

valid() { "$FXT_DUMP" --check "$1" >/dev/null 2>&1; }
# calls ARCHIVE FUNCTION PID: the calls of FUNCTION in process PID.
calls() {
  "$REPORT" --by process --format csv "$1" |
    awk -F, -v n="$2" -v p="$3" 'NR > 1 && $11 == n && $9 == p { c += $1 } END { print c + 0 }'
}
providers() { "$FXT_DUMP" "$1" | sed -n 's/^provider_info id=\([0-9]*\) .*/\1/p' | tr '\n' ' '; }
process_koids() {
  "$FXT_DUMP" "$1" | sed -n 's/^kobj type=process koid=\([0-9]*\) .*/\1/p' | tr '\n' ' '
}
# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

# 3000 words, 80 distinct (no plug-in: "Word3" and "word3" differ); each of
# the 2 threads sees all 80, so wf_table_add runs 3000 + 2 x 80 times.
awk 'BEGIN { for (i = 0; i < 3000; i++)
  printf "%s%d%s", (i % 3 == 0 ? "Word" : "word"), i % 40, (i % 10 == 9 ? "\n" : " ") }' >in.txt
printf 'a b a\nc a b\n' >small.txt
# The hook: a shell (not traced: not instrumented) running wordfreq on
# small.txt with one thread (6 words, 3 distinct: 6 + 3 adds), exit 3.
cat >hook.sh <<EOS
#!/bin/sh
"$WF" -t 1 <"$TMPD/small.txt"
exit 3
EOS
chmod +x hook.sh

plan 21

"$WF" -t 2 -C -d / -s "$TMPD/hook.sh" <in.txt >plain.out 2>plain.err
prc=$?
is "$prc $(grep -c . plain.out) $(grep '^hook' plain.out)" "0 84 hook: 3" \
  "plain run: exit 0, 3 + 80 report lines and the hook's status"

trc=0
"$FXT_RUN" -o out/run.fxt -- "$WF" -t 2 -C -d / -s "$TMPD/hook.sh" <in.txt >traced.out 2>traced.err ||
  trc=$?
is "$trc" "$prc" "traced: same exit status"
ok "traced: stdout byte-identical (the hook's output included)" cmp -s plain.out traced.out
ok "the archive is where -o said, despite chdir(\"/\") and closed fds" valid out/run.fxt
set -- $(providers out/run.fxt)
ppid=${1:-none} cpid=${2:-none}
is "$(calls out/run.fxt wf_table_add "$ppid") $(calls out/run.fxt print_entry "$ppid") $(calls out/run.fxt count_range "$ppid")" \
  "3160 80 2" "parent: wf_table_add, print_entry, count_range counts, in its section"
is "$(ls out | tr '\n' ' ')" "run.fxt " "one archive: the child's part merged into it and removed"
ok "no spool left behind" sh -c '! ls out | grep -q spool'
is "$#" 2 "two sections: the program's and the traced wordfreq's (the hook's shell records nothing)"
is "$(calls out/run.fxt wf_table_add "$cpid") $(calls out/run.fxt print_entry "$cpid") $(calls out/run.fxt count_range "$cpid")" \
  "9 3 1" "child: 6 words + 3 merged, 3 report lines, 1 thread body"
is "$(process_koids out/run.fxt)" "$ppid $cpid " "each section names its process by the provider's pid"
is "$(grep -c '^fxt-run: wrote out/run\.fxt (' traced.err)" 1 \
  "fxt-run summarises the archive by the name it was given"
# Processes report their archive on FXT_STATUS_FD, a descriptor of
# fxt-run's they open through /proc (the program closing its own, -C,
# changes nothing); an archive not reported, fxt-run finds out/run.PID.fxt
# in the output directory, and merges it.
ok "the summary counts both processes" grep -q '^fxt-run: wrote out/run\.fxt (.*); 2 processes$' \
  traced.err
is "$(grep -c '^fxt-run: ' traced.err)" 1 "fxt-run says it in one line"
if [ -n "$PYTHON3" ]; then
  is "$("$PYTHON3" "$RULES" out/run.fxt)" "ok" "what Perfetto needs, in the merged archive"
else
  skip "python3 not found: Perfetto rules"
fi

# ------------------------- a file of the program's own on the status fd
# With -C then -o, the report file is opened on fd 3, the number fxt-run
# gave its status file in FXT_STATUS_FD; the hook inherits it.  The hook's
# wordfreq loads the agent, which must leave the report alone rather than
# append "fxtrace pid=... output=..." to it: FXT_STATUS_FD is fxt-run's
# fd 3, not the program's.
"$WF" -t 2 -C -o plain.rep -s "$TMPD/hook.sh" <in.txt >plain.out 2>plain.err
# fxt-run runs with fds 3-9 closed, so its status file is fd 3 as it is
# from a terminal (make check's own fds would push it higher); without -q,
# as -q opens no status file.
sh -c 'for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done; exec "$@"' sh \
  "$FXT_RUN" -o out/rep.fxt -- "$WF" -t 2 -C -o traced.rep -s "$TMPD/hook.sh" \
  <in.txt >traced.out 2>traced.err
ok "report file on fd 3: stdout byte-identical" cmp -s plain.out traced.out
ok "report file on fd 3: byte-identical (no agent status line in it)" \
  cmp -s plain.rep traced.rep

# ------------------------------------------------- fxt-run's own errors
trc=0
"$FXT_RUN" -o nodir/x.fxt -- "$WF" <small.txt >nodir.out 2>nodir.err || trc=$?
is "$trc $(wc -c <nodir.out | tr -d ' ')" "2 0" "-o into a missing directory: exit 2, program not run"
ok "-o into a missing directory: the message names the path" grep -q 'nodir/x.fxt' nodir.err

echo keep >exists.fxt
trc=0
"$FXT_RUN" -o exists.fxt -- "$WF" <small.txt >exists.out 2>exists.err || trc=$?
is "$trc $(wc -c <exists.out | tr -d ' ') $(cat exists.fxt)" "2 0 keep" \
  "existing archive without -f: exit 2, program not run, file untouched"
trc=0
"$FXT_RUN" -q -f -o exists.fxt -- "$WF" <small.txt >exists.out 2>exists.err || trc=$?
is "$trc $(head -n 1 exists.out)" "0       3 a" "-f: the program runs"
ok "-f: the archive is replaced by a valid one" valid exists.fxt

finish
