#!/bin/sh
# fxt-replay: the calls in time order on generated archives (exact lines,
# one line a call, ENTER/EXIT around children), its filters (--depth,
# --match, --tid, --pid, --since/--until relative and absolute), a real
# traced program's libc call with its arguments and result, and a closed
# pipe on a large archive: `| head -1` ends it at once, exit 0, nothing
# said.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
REPLAY=$abs_top_builddir/fxt-replay
GEN=$abs_top_builddir/bench/gen_archive
scratch
plan 24

"$GEN" --events 40 --order start -o "$TMPD/s40.fxt"
"$GEN" --events 40 --order start --threads 2 -o "$TMPD/t2.fxt"

is "$("$REPLAY" "$TMPD/s40.fxt" | head -5)" \
'     0.000000000               100000 | main() {
     0.000000090     1.050 us  100000 |   hot()
     0.000001189     1.538 us  100000 |   cold() {
     0.000001592       755 ns  100000 |     leaf()
     0.000002727     1.538 us  100000 |   } /* cold */' \
  "time since the start, duration, tid, nesting; a leaf is one line"
# 40 calls: main, 11 cold (with a child), 11 leaf, 11 hot, 2 chains of 3 rec.
is "$("$REPLAY" "$TMPD/s40.fxt" | wc -l)" 56 "every call: 2 lines with children, 1 without"
is "$("$REPLAY" --depth 1 "$TMPD/s40.fxt")" \
'     0.000000000               100000 | main() {
     0.000033538    33.538 us  100000 | } /* main */' "--depth 1: the top-level call, its exit"
is "$("$REPLAY" --match '^hot$' "$TMPD/s40.fxt" | sed 's/.*| *//' | sort | uniq -c | sed 's/^ *//')" \
  "11 hot()" "--match: hot's 11 calls only"
"$REPLAY" --since 10us --until 12us "$TMPD/s40.fxt" >"$TMPD/rel.out"
is "$(awk '$1 < 0.000010 || $1 > 0.000012 { bad++ } END { print (NR > 0), bad + 0 }' "$TMPD/rel.out")" \
  "1 0" "--since/--until relative: lines, all in the window"
# The first event is at 1000 ns (fxt-dump's ts=0.000001000).
"$REPLAY" --since 11000 --until 13000 "$TMPD/s40.fxt" >"$TMPD/abs.out"
ok "--since/--until absolute ns: the same window" cmp -s "$TMPD/rel.out" "$TMPD/abs.out"
tids() { awk -F'|' '{ n = split($1, f, " "); print f[n] }' | sort -u | tr '\n' ' '; }
is "$("$REPLAY" "$TMPD/t2.fxt" | tids)" "100000 100001 " "two threads"
is "$("$REPLAY" --tid 100001 "$TMPD/t2.fxt" | tids)" "100001 " "--tid: that thread only"
is "$("$REPLAY" --pid 1000 "$TMPD/t2.fxt" | wc -l)" "$("$REPLAY" "$TMPD/t2.fxt" | wc -l)" \
  "--pid: the process's threads"
is "$("$REPLAY" --pid 7 "$TMPD/t2.fxt" | wc -l)" 0 "--pid of no process: nothing"

# --time-order: the threads' lines merged by time, each thread's the same.
"$REPLAY" -T "$TMPD/t2.fxt" >"$TMPD/t2.time"
is "$(sort "$TMPD/t2.time" | md5sum)" "$("$REPLAY" "$TMPD/t2.fxt" | sort | md5sum)" \
  "--time-order: the same lines"
is "$(awk '{ if ($1 < last) bad++; last = $1 } END { print NR, bad + 0 }' "$TMPD/t2.time")" "54 0" \
  "--time-order: time never goes back"
is "$(sed -n '1,2p' "$TMPD/t2.time" | sed 's/.* \([0-9]*\) | /\1 /')" '100000 main() {
100001 main() {' "--time-order: both threads' main first, then their calls"
gzip -c "$TMPD/t2.fxt" >"$TMPD/t2.fxt.gz"
is "$("$REPLAY" -T "$TMPD/t2.fxt.gz" | md5sum)" "$(md5sum <"$TMPD/t2.time")" \
  "--time-order on gzip: the same lines"
err2=$("$REPLAY" -T - <"$TMPD/t2.fxt" 2>&1 >/dev/null); rc2=$?
is "$rc2 $err2" "2 fxt-replay: -: time order reads an archive file again: not standard input" \
  "--time-order: standard input refused, one line"

# A real program: its write(2) with the arguments the libc wrapper records.
"$FXT_RUN" -q --libc=io -o "$TMPD/fib.fxt" "$PROGS/calls_fib" >/dev/null 2>"$TMPD/run.err" ||
  cat "$TMPD/run.err"
is "$("$REPLAY" --match '^write$' "$TMPD/fib.fxt" | sed 's/.*| *//')" \
  'write(caller="main", fd=1, count=3) = 3' "a libc call: its arguments, its result"
is "$("$REPLAY" --match '^fib$' "$TMPD/fib.fxt" | grep -vc '} /\*')" 177 "fib: 177 calls"

# Streaming and a closed pipe: the archive comes through a FIFO whose
# writer sends its first MiB and then holds it open without ending it, so
# fxt-replay can only print before the end of its input, and only end by
# the closed pipe `head -1` leaves (exit 0, nothing said).
"$GEN" --events 200000 --order start -o "$TMPD/big.fxt"
mkfifo "$TMPD/in.fifo"
(head -c 1048576 "$TMPD/big.fxt"; exec sleep 120) >"$TMPD/in.fifo" 9>&- &
feeder=$!
first=$( { timeout 60 "$REPLAY" - <"$TMPD/in.fifo" 2>"$TMPD/pipe.err"; echo $? >"$TMPD/pipe.rc"; } |
  head -1)
kill $feeder 2>/dev/null
is "$(cat "$TMPD/pipe.rc")/$(wc -c <"$TMPD/pipe.err")/$first" \
  "0/0/     0.000000000               100000 | main() {" \
  "streams: first line before the input ends; | head -1: exit 0, no message"
# mkarchives' valid.fxt: "fxt: 12 records dropped" and another writer's
# "buffer full" provider event, said on standard error (either order).
"$HELPERS/mkarchives" "$TMPD/mk" >/dev/null
for order in "" --time-order; do
  "$REPLAY" $order "$TMPD/mk/valid.fxt" >/dev/null 2>"$TMPD/mk.err"
  is "$(cat "$TMPD/mk.err")" \
    "fxt-replay: $TMPD/mk/valid.fxt: 12 calls dropped: the replay is partial
fxt-replay: $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, the replay may be partial" "drops said ${order:-in the archive's order}"
done
# mkarchives' deep.fxt: 515 calls nested.  Up to 64 levels, two blanks a
# level (as before); deeper, 64 levels' blanks and the level said ("[d=N]"),
# not 2 a level (a 100,000-deep recursion printed ~20 GB).
"$REPLAY" "$TMPD/mk/deep.fxt" >"$TMPD/deep.out"
is "$(sed -n 64p "$TMPD/deep.out" | sed 's/.* | //; s/ /./g' | sed 's/^\(\.*\).*/\1/' | wc -c)/$(sed -n 64p "$TMPD/deep.out" | sed 's/.* | *//')/$(grep -c '\[d=' "$TMPD/deep.out")" \
  "127/work() {/901" "deep: level 64 indented 126 blanks, 901 lines past it say their level"
is "$(sed -n 515p "$TMPD/deep.out" | sed 's/.* | //')" \
  "$(printf '%128s' '')[d=515] work()" "deep: level 515 indented as 64, its level said"
is "$(sed 's/.* | //; s/^\( *\).*/\1/' "$TMPD/deep.out" | awk '{ if (length($0) > m) m = length($0) } END { print m }')/$(wc -l <"$TMPD/deep.out")" \
  "128/1029" "deep: never more than 128 blanks, every line there"
# mkarchives' bad-ref-call.fxt: a call named by a string ref never
# registered (fxt-dump --check says so): named FXT_UNREGISTERED_STRING,
# not "" (an empty name before).
is "$("$REPLAY" "$TMPD/mk/bad-ref-call.fxt" 2>/dev/null | sed -n 3p | sed 's/.* | //')" \
  "} /* (unregistered string) */" "unregistered name: a placeholder"
finish
