#!/bin/sh
# Traces wordfreq (tests/progs/wordfreq/), a small real program (threads, a dlopened
# plug-in, stdin to stdout, exit() from inside a call), as a user would:
# the traced run must behave exactly as the plain one, and the archive must
# hold the exact calls, read with every tool, and meet what Perfetto needs;
# and when the agent cannot write its archive (file size or descriptor
# limits), fxt-run must recover it from the spool.

. "$abs_top_srcdir/tests/lib/test_subr.sh"

WF=$PROGS/wordfreq/wordfreq
PLUG=$PROGS/wordfreq/.libs/wfplug.so
REPORT=$abs_top_builddir/fxt-report
FLAME=$abs_top_builddir/fxt-flame
EXPORT=$abs_top_builddir/fxt-export
RULES=$abs_top_srcdir/tests/helpers/perfetto_rules.py
export LC_ALL=C

scratch
cd "$TMPD" || exit 1
cp "$PLUG" wfplug.so || exit 1

# valid ARCHIVE: fxt-dump --check passes on it.
valid() { "$FXT_DUMP" --check "$1" >/dev/null 2>&1; }

# calls ARCHIVE NAME: how often NAME ran, from fxt-report's CSV (columns:
# calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name).
calls() {
  "$REPORT" --format csv "$1" | awk -F, -v n="$2" 'NR > 1 && $10 == n { c += $1 } END { print c + 0 }'
}

# The input: 3000 words, 10 a line, "word0".."word39", every third one
# capitalised ("Word3").  The plug-in lower-cases, so with it there are 40
# distinct words of 75 each.  Each of the 4 threads gets 750 consecutive
# words, so it sees all 40: wf_table_add runs 3000 times for the words and
# 4 x 40 times for the merges.
awk 'BEGIN { for (i = 0; i < 3000; i++)
  printf "%s%d%s", (i % 3 == 0 ? "Word" : "word"), i % 40, (i % 10 == 9 ? "\n" : " ") }' >in.txt
letters=$(tr -d ' \n' <in.txt | wc -c | tr -d ' ')

plan 32

# ----------------------------------------- plug-in by absolute path: all good
"$WF" -t 4 -p "$TMPD/wfplug.so" <in.txt >plain.out 2>plain.err
prc=$?
is "$prc $(wc -l <plain.out | tr -d ' ') $(head -n 1 plain.out)" "0 40      75 word0" \
  "plain run: exit 0, 40 words of 75 each"

trc=0
"$FXT_RUN" -o wf.fxt -- "$WF" -t 4 -p "$TMPD/wfplug.so" <in.txt >traced.out 2>traced.err || trc=$?
is "$trc" "$prc" "traced run: same exit status"
ok "traced run: stdout byte-identical to the plain run" cmp -s plain.out traced.out
is "$(grep -c '^fxt-run: wrote wf.fxt (' traced.err)" 1 "fxt-run prints its summary"
ok "fxt-dump --check" valid wf.fxt

is "$(calls wf.fxt main) $(calls wf.fxt read_all) $(calls wf.fxt split)" "1 1 1" \
  "main, read_all, split: once each"
is "$(calls wf.fxt count_range) $(calls wf.fxt wf_table_merge)" "4 4" \
  "count_range (the thread body) and wf_table_merge: 4 each"
is "$(calls wf.fxt wf_table_add)" 3160 "wf_table_add: 3000 words + 4 x 40 merged"
is "$(calls wf.fxt wf_plugin_normalize) $(calls wf.fxt lower)" "3000 $letters" \
  "plug-in functions (dlclosed before exit) named: once a word, once a letter"
is "$(calls wf.fxt print_entry) $(calls wf.fxt report_and_exit)" "40 1" \
  "print_entry once a word; report_and_exit (left through exit()) once"
is "$("$REPORT" --format csv wf.fxt | awk -F, '$10 == "wf_plugin_normalize" { print $9 }')" \
  wfplug.so "plug-in functions are in category wfplug.so"
is "$("$FXT_DUMP" --stats wf.fxt | sed -n 's/^threads //p')" 5 "5 threads: main + 4"

if [ -n "$PYTHON3" ]; then
  is "$("$PYTHON3" "$RULES" wf.fxt)" ok "what Perfetto needs (tests/helpers/perfetto_rules.py)"
  "$EXPORT" --chrome wf.fxt -o wf.json
  is "$("$PYTHON3" -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(sum(1 for e in ev if e.get("ph") == "X" and e.get("name") == "wf_table_add"),
      len({e["tid"] for e in ev if e.get("ph") == "X"}))' wf.json)" "3160 5" \
    "fxt-export --chrome: valid JSON, 3160 wf_table_add slices on 5 threads"
  "$FLAME" wf.fxt -o wf.svg
  is "$("$PYTHON3" -c '
import sys, xml.etree.ElementTree as ET
t = ET.tostring(ET.parse(sys.argv[1]).getroot(), encoding="unicode")
print("count_range" in t and "wf_plugin_normalize" in t)' wf.svg)" True \
    "fxt-flame: valid SVG naming the thread body and the plug-in"
else
  skip "python3 not found: Perfetto rules"
  skip "python3 not found: Chrome JSON"
  skip "python3 not found: SVG"
fi

# ------------------------------- .fxt.gz output, read by every tool as is
"$FXT_RUN" -q -o wf.fxt.gz -- "$WF" -t 4 -p "$TMPD/wfplug.so" <in.txt >gz.out 2>gz.err
ok ".fxt.gz: fxt-dump --check" valid wf.fxt.gz
is "$(calls wf.fxt.gz wf_table_add)" 3160 ".fxt.gz: same calls"

# ----------------------- empty input: exit(1) from report_and_exit, archived
trc=0
"$FXT_RUN" -q -o empty.fxt -- "$WF" -t 2 </dev/null >empty.out 2>empty.err || trc=$?
is "$trc $(wc -c <empty.out | tr -d ' ')" "1 0" "empty input: exit 1, no output"
is "$(calls empty.fxt report_and_exit) $(calls empty.fxt count_range) $(calls empty.fxt wf_table_add)" \
  "1 2 0" "empty input: report_and_exit once, 2 threads, no word"

# ------------------------------- plug-in by relative path, dlclosed at exit
# dl_iterate_phdr names a module dlopened as "./wfplug.so" just so; the
# agent (and the symbolizer) must record it by its absolute path, or once
# dlclosed its functions stay raw addresses.
"$FXT_RUN" -q -o rel.fxt -- "$WF" -t 4 -p ./wfplug.so <in.txt >rel.out 2>rel.err
ok "relative plug-in: stdout byte-identical" cmp -s plain.out rel.out
is "$(calls rel.fxt wf_plugin_normalize)" 3000 "relative plug-in: its functions are named"
# The same, and the program changes directory before it dlcloses: the path
# must not be resolved against the new working directory.
"$FXT_RUN" -q -o relcd.fxt -- "$WF" -t 4 -p ./wfplug.so -d / <in.txt >relcd.out 2>relcd.err
is "$(calls relcd.fxt wf_plugin_normalize)" 3000 \
  "relative plug-in, chdir before dlclose: its functions are named"

# --------------------- RLIMIT_FSIZE 0 (-F): the agent cannot write its archive
# The program's own behaviour must not change; fxt-run must not claim an
# archive it does not have.  The agent removes the archive it could not
# write and keeps its spool, which fxt-run (not bound by the program's
# limits) turns into the archive.  The worker threads cannot extend the
# spool under the limit either: the main thread's 2 x 80 merges are there
# for sure, the workers' adds may not be.
trc=0
"$FXT_RUN" -o f.fxt -- "$WF" -t 2 -F <in.txt >/dev/null 2>f.err || trc=$?
is "$trc" 0 "RLIMIT_FSIZE 0: the program's exit status"
f_claim_true() {
  ! grep -q '^fxt-run: wrote f.fxt ' f.err || valid f.fxt
}
ok "RLIMIT_FSIZE 0: fxt-run claims only an archive that is valid" f_claim_true
ok "RLIMIT_FSIZE 0: no empty archive is left behind" \
  sh -c '! test -e f.fxt || test -s f.fxt'
ok "RLIMIT_FSIZE 0: recovered from the spool the agent kept" \
  grep -q '^fxt-run: wrote f\.fxt (.*; exited with status 0 but did not seal its spool: converted from it$' f.err
f_adds=$(calls f.fxt wf_table_add)
ok "RLIMIT_FSIZE 0: the main thread's merges are in it ($f_adds adds)" \
  test "$f_adds" -ge 160 -a "$f_adds" -le 3160
is "$(ls | grep -c '\.spool$')" 0 "RLIMIT_FSIZE 0: no spool left"

# ------------------ RLIMIT_NOFILE 3 (-N): the agent cannot re-open its spool
"$WF" -t 2 <in.txt >plain-np.out
trc=0
"$FXT_RUN" -o n.fxt -- "$WF" -t 2 -N <in.txt >n.out 2>n.err || trc=$?
is "$trc" 0 "RLIMIT_NOFILE 3: the program's exit status"
ok "RLIMIT_NOFILE 3: stdout byte-identical" cmp -s plain-np.out n.out
ok "RLIMIT_NOFILE 3: recovered from the spool the agent kept, a valid archive" \
  sh -c 'grep -q "^fxt-run: wrote n\.fxt (.*; exited with status 0 but did not seal its spool: converted from it$" n.err && "$1" --check n.fxt >/dev/null' \
  sh "$FXT_DUMP"
n_adds=$(calls n.fxt wf_table_add)
ok "RLIMIT_NOFILE 3: the main thread's merges are in it ($n_adds adds)" \
  test "$n_adds" -ge 160 -a "$n_adds" -le 3160

finish
