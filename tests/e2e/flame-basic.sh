#!/bin/sh
# fxt-flame: folded stacks with exact values (both orders of complete
# events, begin/end, gzip, stdin, --by), and SVGs that are well-formed XML
# with frame widths proportional to time.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
FLAME=$abs_top_builddir/fxt-flame
REPORT=$abs_top_builddir/fxt-report
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
scratch
plan 15

"$GEN" --events 40 -o "$TMPD/end.fxt"
"$GEN" --events 40 --order start -o "$TMPD/start.fxt"
"$MK" "$TMPD" >/dev/null

want='main 1637
main;cold 8820
main;cold;leaf 8907
main;hot 11105
main;rec 1037
main;rec;rec 999
main;rec;rec;rec 1033'
is "$("$FLAME" --folded "$TMPD/end.fxt")" "$want" "folded, complete events in end order"
is "$("$FLAME" --folded "$TMPD/start.fxt")" "$want" "folded, complete events in start order"
is "$("$FLAME" --folded - < "$TMPD/end.fxt")" "$want" "folded from standard input"

# Self times per function agree with fxt-report's.
is "$("$FLAME" --folded "$TMPD/end.fxt" | awk '{ n = split($1, f, ";"); s[f[n]] += $2 }
  END { for (k in s) print k, s[k] }' | sort)" \
  "$("$REPORT" -F csv "$TMPD/end.fxt" | awk -F, 'NR > 1 { print $10, $3 }' | sort)" \
  "folded self times add up to fxt-report's"

# mkarchives' valid.fxt: thread 11 end-ordered complete events at 2 GHz,
# thread 12 a begin/end pair; named process and thread.
is "$("$FLAME" --folded "$TMPD/valid.fxt.gz")" 'main 150
main;work 250
main;work;inner 50
work 50' "folded, gzip archive, two threads merged"
is "$("$FLAME" --folded --by thread "$TMPD/valid.fxt")" 'demo [10];main [11];main 150
demo [10];main [11];main;work 250
demo [10];main [11];main;work;inner 50
demo [10];tid 12;work 50' "folded --by thread"
is "$("$FLAME" --folded -b process "$TMPD/valid.fxt" | head -n 1)" 'demo [10];main 150' \
  "folded --by process"

"$FLAME" "$TMPD/end.fxt" -o "$TMPD/end.svg"
ok "svg written" test -s "$TMPD/end.svg"
"$FLAME" "$TMPD/start.fxt" > "$TMPD/start.svg"
"$FLAME" "$TMPD/end.fxt" > "$TMPD/end2.svg"
ok "svg deterministic" cmp -s "$TMPD/end.svg" "$TMPD/end2.svg"
is "$(sed 1,5d "$TMPD/end.svg" | grep -c '<g class="f">')" 8 "one frame per path, plus the root"

if [ -n "$PYTHON3" ]; then
  # Frames by path: widths proportional to inclusive times (33538 ns for
  # main, 11105 for hot, 17727 for cold, 8907 for leaf).
  check='
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
w = {}
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    title = g.find("s:title", ns).text.split("\n")[0]
    rect = g.find("s:rect", ns)
    w.setdefault(title, []).append(float(rect.get("width")))
def ratio(a, b, want):
    got = w[a][0] / w[b][0]
    return "%s/%s %s" % (a, b, "ok" if abs(got - want) < 0.0005 else "got %.5f want %.5f" % (got, want))
print(sorted(w))
print(w["all"][0], w["main"][0])
print(ratio("hot", "main", 11105 / 33538))
print(ratio("cold", "main", 17727 / 33538))
print(ratio("leaf", "cold", 8907 / 17727))
print(len(w["rec"]))
'
  want="['all', 'cold', 'hot', 'leaf', 'main', 'rec']
1180.0 1180.0
hot/main ok
cold/main ok
leaf/cold ok
3"
  is "$("$PYTHON3" -c "$check" "$TMPD/end.svg" 2>&1)" "$want" "end order: XML parses, widths proportional"
  is "$("$PYTHON3" -c "$check" "$TMPD/start.svg" 2>&1)" "$want" "start order: the same graph"
  is "$("$FLAME" --by thread --title 'a <b> & "c"' "$TMPD/valid.fxt" | "$PYTHON3" -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.stdin).getroot()
t = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text")]
titles = [g.text.split("\n")[0] for g in root.iter("{http://www.w3.org/2000/svg}title")]
print(t[0]); print(";".join(titles))' 2>&1)" 'a <b> & "c"
all;demo [10];main [11];main;work;inner;tid 12;work' "--by thread svg, escaped title"
else
  skip "python3 not found"
  skip "python3 not found"
  skip "python3 not found"
fi
# valid.fxt: "fxt: 12 records dropped" and another writer's "buffer full"
# provider event, said on standard error.
"$FLAME" --folded "$TMPD/valid.fxt" >/dev/null 2>"$TMPD/drops.err"
is "$(cat "$TMPD/drops.err")" \
  "fxt-flame: $TMPD/valid.fxt: 12 calls dropped: the flame graph is partial
fxt-flame: $TMPD/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, the flame graph may be partial" "drops and full buffers said"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$FLAME" --folded "$TMPD/bad-ref-call.fxt" 2>/dev/null)" "main 85
main;(unregistered string) 10" "unregistered name: a placeholder"
finish
