#!/bin/sh
# fxt-report on archives written by bench/gen_archive: exact rows for a
# small archive, both orders of complete events, options and formats.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
REPORT=$abs_top_builddir/fxt-report
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
scratch
plan 26

"$GEN" --events 40 -o "$TMPD/end.fxt"
"$GEN" --events 40 --order start -o "$TMPD/start.fxt"

want='calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name
11,11105,11105,1009,924,1096,33.11,0,function,hot
11,8907,8907,809,755,870,26.56,0,function,leaf
11,17727,8820,1611,1525,1679,26.30,0,function,cold
6,3069,3069,1022,500,1551,9.15,0,function,rec
1,33538,1637,33538,33538,33538,4.88,0,function,main'
is "$("$REPORT" -F csv "$TMPD/end.fxt")" "$want" "csv, complete events in end order"
is "$("$REPORT" -F csv "$TMPD/start.fxt")" "$want" "csv, complete events in start order"

# The self times of all rows add up to the root's inclusive time.
sum=$("$REPORT" -F csv "$TMPD/end.fxt" | awk -F, 'NR > 1 { s += $3 } END { print s }')
is "$sum" 33538 "self times add up to main's total"

is "$("$REPORT" -F csv --sort calls --top 2 "$TMPD/end.fxt" | cut -d, -f1,10)" \
  "calls,name
11,cold
11,hot" "--sort calls --top 2 (ties by name)"
is "$("$REPORT" -F csv --sort name "$TMPD/end.fxt" | cut -d, -f10 | tr '\n' ' ')" \
  "name cold hot leaf main rec " "--sort name"
is "$("$REPORT" -F csv --sort total --top 1 "$TMPD/end.fxt" | tail -n 1 | cut -d, -f10)" \
  main "--sort total"
is "$("$REPORT" -F csv --filter '^(hot|rec)$' "$TMPD/end.fxt" | cut -d, -f10 | tr '\n' ' ')" \
  "name hot rec " "--filter"
is "$("$REPORT" -F csv --category '^libc\.' "$TMPD/end.fxt" | wc -l | tr -d ' ')" 1 \
  "--category with no match leaves the header"

# Two processes of two threads: per thread and per process rows.
"$GEN" --events 400 --threads 2 --processes 2 -o "$TMPD/mt.fxt"
is "$("$REPORT" -F csv --by thread --filter '^main$' "$TMPD/mt.fxt" | cut -d, -f1,9,10,12 | sort)" \
  "1,1000,100000,main
1,1000,100001,main
1,1001,100100,main
1,1001,100101,main
calls,pid,tid,name" "--by thread: one main per thread"
is "$("$REPORT" -F csv --by process --filter '^main$' "$TMPD/mt.fxt" | cut -d, -f1,9,11)" \
  "calls,pid,name
2,1000,main
2,1001,main" "--by process"
is "$("$REPORT" -F csv --filter '^main$' "$TMPD/mt.fxt" | cut -d, -f1)" "calls
4" "--by function sums processes and threads"

# Text and JSON.
out=$("$REPORT" --top 1 "$TMPD/end.fxt")
is "$(printf '%s\n' "$out" | tail -n 1 | tr -s ' ')" \
  " 11 11.105 us 11.105 us 1.009 us 924 ns 1.096 us 33.11% hot (function)" "text table row"
if [ -n "$PYTHON3" ]; then
  is "$("$REPORT" -F json "$TMPD/end.fxt" | "$PYTHON3" -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["rows"]), d["rows"][0]["name"], d["rows"][0]["self_ns"], d["end_ns"] - d["start_ns"])')" \
    "5 hot 11105 33538" "json parses, with exact values"
else
  skip "python3 not found"
fi

# A frame left open (no end for main) is counted to the end and flagged.
"$GEN" --events 40 --no-end -o "$TMPD/open.fxt"
is "$("$REPORT" -F csv --filter '^main$' "$TMPD/open.fxt" | tail -n 1 | cut -d, -f1,2,8)" \
  "1,33528,1" "open frame counted to the end of the trace and flagged"
# Times near 2^64 ns on three threads: shares of a total past 2^64, and a
# name with control characters and a byte that is not UTF-8.
"$MK" "$TMPD/mk" >/dev/null
is "$("$REPORT" -F csv "$TMPD/mk/extreme.fxt" | cut -d, -f7 | tr '\n' ' ')" \
  "self_pct 33.33 33.33 33.33 " "shares of a total past 2^64 ns"
is "$("$REPORT" -F json "$TMPD/mk/extreme.fxt" | grep -o '"name":"a[^,]*,')" \
  '"name":"a\u0009b\u001b[1m\ufffd",' "json: control characters escaped, invalid UTF-8 replaced"
is "$("$REPORT" "$TMPD/mk/extreme.fxt" | grep -c 'a\\x09b\\x1b\[1m\\xff (cat)$')" 1 \
  "text: control characters and invalid UTF-8 shown as \\xNN"
# Drops: mkarchives' valid.fxt says "fxt: 12 records dropped" on one thread.
is "$("$REPORT" "$TMPD/mk/valid.fxt" | sed -n 2p)" \
  "# 12 calls dropped: totals are partial (on 1 thread; the trace hit its size limit)" \
  "text: the header says the totals are partial"
is "$("$REPORT" "$TMPD/end.fxt" | grep -c dropped)" 0 "text: nothing said without drops"
is "$("$REPORT" -F json "$TMPD/mk/valid.fxt" | grep -o '"dropped":[0-9]*,"dropped_threads":[0-9]*')" \
  '"dropped":12,"dropped_threads":1' "json: dropped fields"
"$REPORT" -F csv "$TMPD/mk/valid.fxt" >"$TMPD/drop.csv" 2>"$TMPD/drop.err"
is "$(cat "$TMPD/drop.err")" \
  "fxt-report: $TMPD/mk/valid.fxt: 12 calls dropped: totals are partial
fxt-report: $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, totals may be partial" \
  "csv: the warnings on standard error"
# valid.fxt also has another writer's provider event "a buffer filled up,
# records were likely dropped" (nothing said it before).
is "$("$REPORT" "$TMPD/mk/valid.fxt" | grep 'buffer filled')" \
  "# a trace buffer filled up 1 time: records were likely dropped, totals may be partial" \
  "text: a provider's full buffer said"
is "$("$REPORT" -F json "$TMPD/mk/valid.fxt" | grep -o '"buffer_full":[0-9]*')" \
  '"buffer_full":1' "json: buffer_full"
is "$("$REPORT" "$TMPD/end.fxt" | grep -c 'buffer filled')" 0 "text: nothing said without one"
is "$(head -n 1 "$TMPD/drop.csv")" \
  "calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name" \
  "csv: rows unchanged"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$REPORT" -F csv "$TMPD/mk/bad-ref-call.fxt" 2>/dev/null | sed -n 3p)" \
  "1,10,10,10,10,10,10.53,0,cat,(unregistered string)" "unregistered name: a placeholder"
finish
