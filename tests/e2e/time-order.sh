#!/bin/sh
# Every tool pairs a thread's begins and ends in time order, as Perfetto
# does (it sorts each thread's events by time, equal times in file order,
# then pairs), not in file order.  late-begins.fxt has magic-trace's shape:
# the begins of the frames open at the start, at time 0, at the end of the
# file.  Perfetto's slices (2 ticks a ns): main [0, 500 ns]; work [0, 300]
# and [350, 400]; inner [0, 50] and [150, 200].  In file order the ends
# came first without begins and the three begins were never ended: each
# function got about the trace's span too much.
. "$abs_top_srcdir/tests/e2e/dump-common.sh"

plan 14
L=$A/late-begins.fxt
FXT_REPORT=$abs_top_builddir/fxt-report

dump --check "$L"
is "$rc" 0 "--check: exit 0"
is "$out" "$L: offset 0: note: 3 duration begin(s)/end(s) out of time order on their thread: paired in time order, as Perfetto sorts them
$L: ok (20 records, 0 errors, 0 warnings)" \
  "--check: every begin ended, no end without a begin; a note that the file is out of time order"

report='calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name
2,350,250,175,50,300,50.00,0,cat,work
1,500,150,500,500,500,30.00,0,cat,main
2,100,100,50,50,50,20.00,0,cat,inner'
is "$("$FXT_REPORT" -F csv "$L")" "$report" "fxt-report: Perfetto's slices"
is "$(cat "$L" | "$FXT_REPORT" -F csv -)" "$report" "fxt-report from a pipe: the same"

is "$("$abs_top_builddir/fxt-flame" --folded "$L")" "main 150
main;work 250
main;work;inner 100" "fxt-flame --folded: the same stacks"

is "$("$abs_top_builddir/fxt-tree" "$L" | tail -n 3 | awk '{ print $1, $2, $3, $NF }')" \
  "1 500 ns main
2 350 ns work
2 100 ns inner" "fxt-tree: the same tree"

replay='     0.000000000                   11 | main() {
     0.000000000                   11 |   work() {
     0.000000000        50 ns      11 |     inner()
     0.000000150        50 ns      11 |     inner()
     0.000000300       300 ns      11 |   } /* work */
     0.000000350        50 ns      11 |   work()
     0.000000500       500 ns      11 | } /* main */'
is "$("$abs_top_builddir/fxt-replay" "$L")" "$replay" "fxt-replay: the calls as Perfetto pairs them"
is "$("$abs_top_builddir/fxt-replay" --time-order "$L")" "$replay" "fxt-replay --time-order: the same"

json=$("$abs_top_builddir/fxt-export" --chrome "$L")
is "$(printf '%s\n' "$json" | sed -n 's/.*"ph":"\([BE]\)".*"name":"\([a-z]*\)".*"ts":\([0-9.]*\).*/\1 \2 \3/p' | tr '\n' ' ')" \
  "B main 0.000 B work 0.000 B inner 0.000 E inner 0.050 B inner 0.150 E inner 0.200 E work 0.300 B work 0.350 E work 0.400 E main 0.500 " \
  "fxt-export --chrome: begins and ends in time order"

rc=0; "$abs_top_builddir/fxt-waits" "$L" > "$TMPD/waits" 2>&1 || rc=$?
is "$rc" 0 "fxt-waits reads it"

# Complete events written children first (valid.fxt, deep.fxt) are not
# moved: they carry both their times, and the tools nest them by their
# intervals, as before.
is "$("$FXT_REPORT" -F csv "$A/valid.fxt" 2>/dev/null | cut -d, -f1-3,10 | tr '\n' ' ')" \
  "calls,total_ns,self_ns,name 3,350,300,work 1,450,150,main 1,50,50,inner " \
  "complete events children first: the profile as before"
dump --check "$A/valid.fxt"
is "$(printf '%s\n' "$out" | grep -c 'out of time order')" 0 \
  "complete events children first: no note"
dump --check "$A/deep.fxt"
is "$(printf '%s\n' "$out" | grep -c 'out of time order')" 0 "deep.fxt: no note"
dump --check "$A/flow-order.fxt"
is "$(printf '%s\n' "$out" | grep -c 'out of time order')" 0 "flows in any order: no note"
