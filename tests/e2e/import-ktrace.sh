#!/bin/sh
# fxt-import on Darwin ktrace V3 files, written by tests/helpers/mkktrace
# from the format's description (there are no public ktrace files): the
# header and its chunks, START/END pairs as nested slices, other events as
# instants with their debugid's parts, thread names from the thread map,
# unknown chunks skipped with their padding; truncated and broken files
# refused in one line with an offset, at every length.
. "$abs_top_srcdir/tests/e2e/import-common.sh"

plan 26
scratch
MK=$HELPERS/mkktrace

"$MK" basic "$TMPD/basic.kt"
"$FXT_IMPORT" "$TMPD/basic.kt" -o "$TMPD/basic.fxt" 2> "$TMPD/err"
is "$?" 0 "basic: imported"
is "$(cat "$TMPD/err")" "fxt-import: $TMPD/basic.kt (ktrace, clock mach_absolute_time): 7 events -> 9 records, 2 threads, 1 provider, 0 events lost, 2 skipped -> $TMPD/basic.fxt" \
  "basic: the summary counts 7 events and the 2 unknown chunks skipped"
ok "basic: fxt-dump --check: ok, no warning" sh -c \
  '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/basic.fxt"
"$FXT_DUMP" "$TMPD/basic.fxt" | grep -E '^ts=|^kobj|^provider' | sed 's/ args={class.*}$//' > "$TMPD/dump"
is "$(cat "$TMPD/dump")" 'provider_info id=1 name="ktrace [clock=mach_absolute_time]"
kobj type=process koid=7 name="worker"
kobj type=thread koid=257 name="worker" args={process:koid=7}
ts=0.000001250 pid=7 tid=257 event instant cat="ktrace" name="ktrace header" args={timebase_numer:u64=125, timebase_denom:u64=3, timestamp:u64=1000, walltime_sec:u64=1700000000, walltime_usec:u64=250000, minutes_west:u64=0, flags:u64=1}
ts=0.000001250 pid=7 tid=257 event begin cat="bsd" name="0x04010004"
ts=0.000002500 pid=7 tid=257 event begin cat="bsd" name="0x04010008"
ts=0.000003750 pid=7 tid=257 event instant cat="mach" name="0x01300000"
ts=0.000005000 pid=7 tid=257 event end cat="bsd" name="0x04010008"
ts=0.000006250 pid=7 tid=257 event end cat="bsd" name="0x04010004"
kobj type=process koid=514 name="thread 0x202"
kobj type=thread koid=514 name="thread 0x202" args={process:koid=514}
ts=0.000007500 pid=514 tid=514 event instant cat="iokit" name="0x05020010"
ts=0.000008750 pid=514 tid=514 event begin cat="iokit" name="0x05020014"
ts=0.000008750 pid=514 tid=514 event end cat="iokit" name="0x05020014"' \
  "basic: nested START/END slices, instants, an END without START an instant, an open START closed at the end; times by the timebase"
is "$("$FXT_DUMP" "$TMPD/basic.fxt" | sed -n 2p | sed 's/index=[0-9]*/index=N/')" \
  'string index=N str="fxtrace.time-ordered.v1"' \
  "basic: marked in time order per thread (readers make no first pass)"
"$FXT_IMPORT" -q "$TMPD/basic.kt" -o - | cat > "$TMPD/piped.fxt"
is "$("$FXT_DUMP" "$TMPD/piped.fxt" | sed -n 2p)" 'provider_info id=1 name="ktrace [clock=mach_absolute_time]"' \
  "basic to a pipe: not marked (it could not be written again)"

# Events out of time order on a thread: the archive, written a second
# time, has no mark; its records are those of the first writing.
"$MK" late "$TMPD/late.kt"
"$FXT_IMPORT" "$TMPD/late.kt" -o "$TMPD/late.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "0/fxt-import: $TMPD/late.kt (ktrace, clock mach_absolute_time): 4 events -> 5 records, 1 threads, 1 provider, 0 events lost, 1 skipped -> $TMPD/late.fxt" \
  "late: imported, counted once"
"$FXT_DUMP" "$TMPD/late.fxt" > "$TMPD/late.dump"
is "$(sed -n 2p "$TMPD/late.dump")" 'provider_info id=1 name="ktrace [clock=mach_absolute_time]"' \
  "late: not marked"
is "$(grep -c '^ts=' "$TMPD/late.dump")" 5 "late: its 5 events, once"
ok "late: fxt-dump --check notes 2 out of time order, no warning" sh -c \
  '"$1" --check "$2" > "$2.check" && grep -q "note: 2 duration begin(s)/end(s) out of time order" "$2.check" &&
   tail -n 1 "$2.check" | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/late.fxt"
ok "basic: an event's arguments are its debugid's parts, args and cpu" \
  grep -q 'name="0x01300000" args={class:u64=1, subclass:u64=48, code:u64=0, arg1:u64=13, arg2:u64=2, arg3:u64=3, arg4:u64=4, cpu:u64=1}' \
  "$("$FXT_DUMP" "$TMPD/basic.fxt" > "$TMPD/full"; echo "$TMPD/full")"
ok "basic: fxt-report counts the slices" sh -c \
  '"$1/fxt-report" "$2" | grep -q "^ *1 .* 0x04010004 (bsd)$"' - "$abs_top_builddir" "$TMPD/basic.fxt"
ok "basic: fxt-flame and fxt-export read it" sh -c \
  '"$1/fxt-flame" "$2" -o "$2.svg" && "$1/fxt-export" --chrome "$2" -o "$2.json"' - "$abs_top_builddir" "$TMPD/basic.fxt"

# Broken files: exit 1, one line with the file and the offset, no output.
# broken KIND WANT-MESSAGE
broken() {
  "$MK" "$1" "$TMPD/$1.kt"
  rm -f "$TMPD/$1.fxt"
  "$FXT_IMPORT" "$TMPD/$1.kt" -o "$TMPD/$1.fxt" 2> "$TMPD/err"
  is "$?/$(cat "$TMPD/err")" "1/fxt-import: $TMPD/$1.kt: $2" "$1: exit 1, one line"
  ok "$1: no output file" test ! -e "$TMPD/$1.fxt"
}
broken truncated "offset 496: truncated: a chunk (tag 0x1e00) of 128 bytes runs past the file's end at 583"
broken bigchunk "offset 56: truncated: a chunk (tag 0x1e00) of 1048576 bytes runs past the file's end at 136"
broken badsize "offset 72: an events chunk of 100 bytes: not a whole number of 64-byte records"
broken badtime "offset 16: a timebase of 125/0"
broken v2 "offset 0: a ktrace file of version 2: only V3 is read"

# Every prefix of the basic file: one error line, or a valid archive when
# it ends between chunks (as a complete file may); never a crash or a
# partial file.
size=$(wc -c < "$TMPD/basic.kt")
bad=0 said= ends=0
for cut in $(seq 0 "$size"); do
  head -c "$cut" "$TMPD/basic.kt" > "$TMPD/cut.kt"
  rm -f "$TMPD/cut.fxt"
  "$FXT_IMPORT" -q "$TMPD/cut.kt" -o "$TMPD/cut.fxt" 2> "$TMPD/err"
  rc=$?
  if [ $rc -eq 0 ] && "$FXT_DUMP" --check "$TMPD/cut.fxt" > /dev/null; then ends=$((ends + 1)); continue; fi
  if [ $rc -ne 1 ] || [ -e "$TMPD/cut.fxt" ] || [ "$(wc -l < "$TMPD/err")" -ne 1 ] ||
     ! grep -q "^fxt-import: $TMPD/cut.kt: offset [0-9]*: " "$TMPD/err"; then
    bad=$((bad + 1)); [ $bad -le 3 ] && said="$said; $cut: rc $rc $(cat "$TMPD/err")"
  fi
done
is "$bad" 0 "each of the $size shorter files: exit 1 and one line with an offset and no output, or valid ($ends end between chunks)$said"

# Many events: streamed, all there.
"$MK" many 200000 "$TMPD/many.kt"
"$FXT_IMPORT" -q "$TMPD/many.kt" -o "$TMPD/many.fxt"
is "$?" 0 "200,000 events: imported"
ok "200,000 events: 100,000 slices on 4 threads" sh -c \
  '"$1/fxt-report" "$2" | grep -q "^ *100000 .* 0x04010004 (bsd)$"' - "$abs_top_builddir" "$TMPD/many.fxt"
finish
