#!/bin/sh
# fxt-tree: the call tree with exact numbers on generated archives (text
# with box-drawing or ASCII glyphs, csv, json; complete events in start
# and in end order), --focus, --depth,
# --min-share, --by thread and --tid; recursion folded on a real traced
# program (tests/progs/calls_fib: fib calls itself twice, 177 calls); the
# `fxt tree` subcommand; one recursion 100,000 frames deep, in start and
# end order and as begin/end pairs (each slice's path was compared from
# its root: quadratic there).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
TREE=$abs_top_builddir/fxt-tree
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
scratch
plan 24

"$GEN" --events 40 --order start -o "$TMPD/s40.fxt"
"$GEN" --events 40 --order start --threads 2 -o "$TMPD/t2.fxt"

# The numbers are fxt-flame's for the same archive (flame-basic.sh).
want='# 40 calls, traced time 33.538 us (the top-level calls'"'"')
     calls        total         self   share  call path
         1    33.538 us     1.637 us 100.00%  main
        11    17.727 us     8.820 us  52.86%  ├─ cold
        11     8.907 us     8.907 us  26.56%  │  └─ leaf
        11    11.105 us    11.105 us  33.11%  ├─ hot
         6     3.069 us     3.069 us   9.15%  └─ rec [recursive]'
is "$(LC_ALL=C.UTF-8 "$TREE" "$TMPD/s40.fxt")" "$want" "text, UTF-8 glyphs, recursion folded"
"$GEN" --events 40 -o "$TMPD/e40.fxt"
is "$(LC_ALL=C.UTF-8 "$TREE" "$TMPD/e40.fxt" 2>&1)" "$want" "complete events in end order: the same"
is "$(LC_ALL=C "$TREE" "$TMPD/s40.fxt" | sed -n '4,7p')" \
'        11    17.727 us     8.820 us  52.86%  +- cold
        11     8.907 us     8.907 us  26.56%  |  `- leaf
        11    11.105 us    11.105 us  33.11%  +- hot
         6     3.069 us     3.069 us   9.15%  `- rec [recursive]' "ASCII glyphs outside UTF-8"
is "$("$TREE" -F csv "$TMPD/s40.fxt")" \
'view,depth,calls,total_ns,self_ns,share,recursive,open,category,name,path
tree,1,1,33538,1637,100.0000,0,0,function,main,main
tree,2,11,17727,8820,52.8565,0,0,function,cold,main;cold
tree,3,11,8907,8907,26.5579,0,0,function,leaf,main;cold;leaf
tree,2,11,11105,11105,33.1117,0,0,function,hot,main;hot
tree,2,6,3069,3069,9.1508,1,0,function,rec,main;rec' "csv"
is "$("$TREE" -F json "$TMPD/s40.fxt" | python3 -c '
import json, sys
d = json.load(sys.stdin)
def walk(n, pre):
    for c in n["children"]:
        print(pre + c["name"], c["calls"], c["total_ns"], c["self_ns"], c["recursive"])
        walk(c, pre + "  ")
print(d["slices"], d["total_ns"], d["by"])
walk(d["tree"][0], "")')" \
'40 33538 function
main 1 33538 1637 False
  cold 11 17727 8820 False
    leaf 11 8907 8907 False
  hot 11 11105 11105 False
  rec 6 3069 3069 True' "json"
is "$(LC_ALL=C "$TREE" --focus cold "$TMPD/s40.fxt" | sed 1d)" \
'# callers of cold (below each function: the functions that called it)
     calls        total         self   share  call path
        11    17.727 us     8.820 us  52.86%  cold
        11    17.727 us     8.820 us  52.86%  `- main

# callees of cold
     calls        total         self   share  call path
        11    17.727 us     8.820 us  52.86%  cold
        11     8.907 us     8.907 us  26.56%  `- leaf' "--focus: callers, then callees"
is "$("$TREE" -F csv --depth 1 "$TMPD/s40.fxt" | cut -d, -f2,11)" 'depth,path
1,main' "--depth 1: the top-level calls"
is "$("$TREE" -F csv --min-share 30% "$TMPD/s40.fxt" | cut -d, -f11)" 'path
main
main;cold
main;hot' "--min-share 30%: leaf (26.6%) and rec (9.2%) left out"
is "$("$TREE" -F csv --by thread "$TMPD/t2.fxt" | cut -d, -f2-5,13)" \
'depth,pid,tid,calls,path
1,1000,100001,1,main
2,1000,100001,5,main;cold
3,1000,100001,5,main;cold;leaf
2,1000,100001,5,main;hot
2,1000,100001,3,main;rec
1,1000,100000,1,main
2,1000,100000,5,main;cold
3,1000,100000,5,main;cold;leaf
2,1000,100000,5,main;hot
2,1000,100000,3,main;rec' "--by thread: a tree per thread"
is "$("$TREE" -F csv --tid 100000 "$TMPD/t2.fxt" | sed -n 2p)" \
  "tree,1,1,15330,747,100.0000,0,0,function,main,main" "--tid: one thread, its share of its own time"

# A real program: fib's 177 calls are one node under run.
"$FXT_RUN" -q --libc=io -o "$TMPD/fib.fxt" "$PROGS/calls_fib" >/dev/null 2>"$TMPD/run.err" ||
  cat "$TMPD/run.err"
is "$("$TREE" -F csv "$TMPD/fib.fxt" | cut -d, -f2,3,7,11 | sort)" \
'1,1,0,main
2,1,0,main;run
2,1,0,main;write
3,177,1,main;run;fib
depth,calls,recursive,path' "traced recursion: one fib node, marked, 177 calls; write(2) a child"
total=$("$TREE" -F csv "$TMPD/fib.fxt" | awk -F, '$11 == "main;run;fib" { print $4 }')
self=$("$TREE" -F csv "$TMPD/fib.fxt" | awk -F, '$11 == "main;run;fib" { print $5 }')
is "$total" "$self" "a leaf recursion: its total (outermost frames) is its self time"
is "$("$TREE" -F csv --focus fib "$TMPD/fib.fxt" | cut -d, -f1,3,11)" \
'view,calls,path
callers,177,fib
callers,177,fib;run
callers,177,fib;run;main
callees,177,fib' "--focus fib: called by run, by main"
"$TREE" "$TMPD/s40.fxt" >"$TMPD/tool.out"
"$abs_top_builddir/tools/fxt" tree "$TMPD/s40.fxt" >"$TMPD/front.out"
ok "fxt tree runs fxt-tree" cmp -s "$TMPD/tool.out" "$TMPD/front.out"
"$TREE" --help | grep -q '^Usage: fxt-tree'
is "$?" 0 "--help"
# Drops: mkarchives' valid.fxt says "fxt: 12 records dropped" on one thread.
"$MK" "$TMPD/mk" >/dev/null
is "$("$TREE" "$TMPD/mk/valid.fxt" | sed -n 2p)" "# 12 calls dropped: the tree is partial (on 1 thread)" \
  "drops: said under the header"
is "$("$TREE" -F csv "$TMPD/mk/valid.fxt" 2>&1 >/dev/null | grep 'calls dropped')" \
  "fxt-tree: $TMPD/mk/valid.fxt: 12 calls dropped: the tree is partial" "drops: csv says them on standard error"

# 100,000 frames of rec deep, every other one calling hot, every third
# leaf; the same times in every order (fxt-tree's numbers before the walk
# took what the profile says unchanged: main's, minutes at 1 M frames).
for o in start end pairs; do
  "$GEN" --deep 100000 --order "$o" -o "$TMPD/deep.$o.fxt"
done
want='# 183335 calls, traced time 127.510 ms (the top-level calls'"'"')
     calls        total         self   share  call path
         1   127.510 ms        10 ns 100.00%  main
    100000   127.510 ms    50.895 ms 100.00%  └─ rec [recursive]
     50000    49.978 ms    49.978 ms  39.20%     ├─ hot
     33334    26.637 ms    26.637 ms  20.89%     └─ leaf'
is "$(LC_ALL=C.UTF-8 "$TREE" "$TMPD/deep.start.fxt")" "$want" "100,000 deep, start order: one rec node"
is "$(LC_ALL=C.UTF-8 "$TREE" "$TMPD/deep.pairs.fxt")" "$want" "100,000 deep, begin/end pairs: the same"
# End order: the 50,000 hots come before any rec, which the profile
# stacks as top-level calls under main (its self time is the rest).
is "$(LC_ALL=C.UTF-8 "$TREE" "$TMPD/deep.end.fxt")" \
'# 183335 calls, traced time 127.510 ms (the top-level calls'"'"')
     calls        total         self   share  call path
         1   127.510 ms         0 ns 100.00%  main
    100000   127.510 ms   100.873 ms 100.00%  ├─ rec [recursive]
     33334    26.637 ms    26.637 ms  20.89%  │  └─ leaf
     50000    49.978 ms    49.978 ms  39.20%  └─ hot' "100,000 deep, end order"
is "$("$TREE" -F csv --focus rec "$TMPD/deep.pairs.fxt" | cut -d, -f1-5,7,11)" \
'view,depth,calls,total_ns,self_ns,recursive,path
callers,1,100000,127510209,50894734,1,rec
callers,2,100000,127510209,50894734,0,rec;main
callees,1,100000,127510209,50894734,1,rec
callees,2,50000,49978128,49978128,0,rec;hot
callees,2,33334,26637347,26637347,0,rec;leaf' "100,000 deep: --focus rec, csv"
# valid.fxt also has another writer's "buffer full" provider event.
is "$("$TREE" "$TMPD/mk/valid.fxt" | sed -n 3p)" \
  "# a trace buffer filled up 1 time: records were likely dropped, the tree may be partial" "buffer full: said under the header"
is "$("$TREE" -F json "$TMPD/mk/valid.fxt" 2>&1 >/dev/null | grep 'buffer filled')" \
  "fxt-tree: $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, the tree may be partial" \
  "buffer full: json says it on standard error"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$TREE" "$TMPD/mk/bad-ref-call.fxt" 2>/dev/null | sed -n 4p | sed 's/.*- //')" \
  "(unregistered string)" "unregistered name: a placeholder"
finish
