#!/bin/sh
# fxt-export --chrome: the JSON parses and holds every event of the
# archive, with names, times and arguments.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
EXPORT=$abs_top_builddir/fxt-export
REPORT=$abs_top_builddir/fxt-report
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
scratch
plan 8

"$MK" "$TMPD" >/dev/null
"$GEN" --events 2000 --threads 2 --processes 2 -o "$TMPD/mt.fxt"

"$EXPORT" --chrome -o "$TMPD/valid.json" --stats "$TMPD/valid.fxt" 2> "$TMPD/stats"
is "$(sed -n 1p "$TMPD/stats")" "slices 6, samples 0, instants 2, counters 1, async 0, flows 2, logs 1, process names 1, thread names 1" \
  "counts per kind"
# valid.fxt: "fxt: 12 records dropped" and another writer's "buffer full"
# provider event, said on standard error.
is "$(sed -n '2,$p' "$TMPD/stats")" \
  "fxt-export: $TMPD/valid.fxt: 12 calls dropped: the export is partial
fxt-export: $TMPD/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, the export may be partial" "drops and full buffers said"
"$EXPORT" --chrome "$TMPD/valid.fxt.gz" > "$TMPD/gz.json"
ok "gzip archive, same JSON" cmp -s "$TMPD/valid.json" "$TMPD/gz.json"

if [ -n "$PYTHON3" ]; then
  is "$("$PYTHON3" -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
by = {}
for e in ev:
    by.setdefault(e["ph"], []).append(e)
print(" ".join("%s:%d" % (k, len(v)) for k, v in sorted(by.items())))
m = by["M"]
print([(e["name"], e["pid"], e["tid"], e["args"]["name"]) for e in m])
print(sorted(set(e["name"] for e in by["X"])))
x = [e for e in by["X"] if e["name"] == "main"][0]
print(x["ts"], x["dur"], x["pid"], x["tid"])
s, f = by["s"][0], by["f"][0]
print(s["id"] == f["id"], f["bp"], s["tid"], f["tid"])
print(by["C"][0]["args"], by["C"][0]["id"])
i = [e for e in by["i"] if e["name"] == "main"][0]
print(sorted(i["args"].items()))
print([e["args"]["message"] for e in by["i"] if e["name"] == "log"])
' "$TMPD/valid.json" 2>&1)" "B:1 C:1 E:1 M:2 X:4 f:1 i:3 s:1
[('process_name', 10, 0, 'demo'), ('thread_name', 10, 11, 'main')]
['inner', 'main', 'work']
0.05 0.45 10 11
True e 11 12
{'bytes': 4096} 0x1
[('b', True), ('d', 0.5), ('n', -3), ('p', '0x1000'), ('s', 'a \"q\"')]
['hello\n']" "valid.fxt: every kind, with names, times and arguments"

  # Slices round-trip: as many X + B events as fxt-report counts calls.
  "$EXPORT" --chrome "$TMPD/mt.fxt" > "$TMPD/mt.json"
  is "$("$PYTHON3" -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n = sum(1 for e in ev if e["ph"] in ("X", "B"))
names = sorted(set(e["name"] for e in ev if e["ph"] in ("X", "B")))
threads = sorted(set((e["pid"], e["tid"]) for e in ev if e["ph"] == "X"))
print(n, names, threads)' "$TMPD/mt.json" 2>&1)" \
    "$("$REPORT" -F csv "$TMPD/mt.fxt" | awk -F, 'NR > 1 { n += $1 } END { printf "%d", n }') ['cold', 'hot', 'leaf', 'main', 'rec'] [(1000, 100000), (1000, 100001), (1001, 100100), (1001, 100101)]" \
    "generated archive: slice count, names and threads round-trip"
  is "$("$EXPORT" --chrome - < "$TMPD/valid.fxt" | "$PYTHON3" -c '
import json, sys; print(len(json.load(sys.stdin)["traceEvents"]))')" 14 "from standard input"
else
  skip "python3 not found"; skip "python3 not found"; skip "python3 not found"
fi
# Exact text of one event: microseconds with the nanoseconds as decimals.
is "$(grep '"name":"inner"' "$TMPD/valid.json")" \
  '{"ph":"X","pid":10,"tid":11,"name":"inner","cat":"cat","ts":0.150,"dur":0.050},' \
  "complete event text"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$EXPORT" --chrome "$TMPD/bad-ref-call.fxt" 2>/dev/null | grep -c '"name":"(unregistered string)"')" 1 \
  "unregistered name: a placeholder"
finish
