#!/bin/sh
# fxt-flame --diff: hot() made 50% slower is red, made faster is blue; the
# functions that did not change are white.  Frames are sized by NEW.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
FLAME=$abs_top_builddir/fxt-flame
GEN=$abs_top_builddir/bench/gen_archive
scratch
plan 5

"$GEN" --events 400 -o "$TMPD/base.fxt"
"$GEN" --events 400 --slow 50 -o "$TMPD/slow.fxt"

"$FLAME" --diff "$TMPD/base.fxt" "$TMPD/slow.fxt" -o "$TMPD/slower.svg"
ok "diff svg written" test -s "$TMPD/slower.svg"
"$FLAME" --diff "$TMPD/slow.fxt" "$TMPD/base.fxt" -o "$TMPD/faster.svg"

if [ -n "$PYTHON3" ]; then
  # Prints each function's color as white, or red/blue and its saturation
  # in percent.
  fills='
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
out = []
for g in ET.parse(sys.argv[1]).getroot().iter(S + "g"):
    name = g.find(S + "title").text.split("\n")[0]
    r, gr, b = map(int, g.find(S + "rect").get("fill")[4:-1].split(","))
    sat = round(100 * (255 - gr) / 255)
    if name in ("hot", "cold", "leaf", "rec"):
        out.append("%s %s" % (name, "white" if (r, gr, b) == (255, 255, 255) else
                              "red %d" % sat if r == 255 and gr == b else
                              "blue %d" % sat if b == 255 and r == gr else "other"))
print("\n".join(sorted(set(out))))
'
  is "$("$PYTHON3" -c "$fills" "$TMPD/slower.svg")" "cold white
hot red 50
leaf white
rec white" "50% slower hot is half red, the rest white"
  is "$("$PYTHON3" -c "$fills" "$TMPD/faster.svg")" "cold white
hot blue 33
leaf white
rec white" "a third faster hot is a third blue"
  is "$("$PYTHON3" -c '
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
for g in ET.parse(sys.argv[1]).getroot().iter(S + "g"):
    lines = g.find(S + "title").text.split("\n")
    if lines[0] == "hot":
        print(lines[2].split(", ")[-1])' "$TMPD/slower.svg")" "+50.0%)" "hover shows the change"
else
  skip "python3 not found"; skip "python3 not found"; skip "python3 not found"
fi
"$FLAME" --diff --normalize "$TMPD/base.fxt" "$TMPD/base.fxt" > "$TMPD/same.svg"
is "$(grep -c 'fill="rgb(255,255,255)"' "$TMPD/same.svg")" \
  "$(grep -c '<g class="f">' "$TMPD/same.svg")" "an archive against itself is all white"
finish
