#!/bin/sh
# fxt-merge: a kernel trace imported by fxt-import next to fxt-run's
# archive, in one file: both kept whole, each provider apart, timestamps
# aligned on CLOCK_MONOTONIC by the providers' clocks (--shift and
# --no-align overriding); bad inputs refused before anything is written.
# Live, when trace-cmd can record here: a program's write(2) to
# trace_marker, traced by fxt-run while trace-cmd records on clock mono,
# lands inside the agent's "write" slice once merged.
. "$abs_top_srcdir/tests/e2e/import-common.sh"

DATA=$abs_top_srcdir/tests/data/tracecmd
plan 22
scratch

"$FXT_RUN" -q -o "$TMPD/app.fxt" -- "$EXAMPLES/calltree" > /dev/null 2>&1
"$HELPERS/mkktrace" basic "$TMPD/k.kt"
"$FXT_IMPORT" -q "$TMPD/k.kt" -o "$TMPD/k.fxt"
records() { "$FXT_DUMP" --stats "$1" | awk '$1 == "records" { print $2 }'; }

# An archive of the agent and one on another clock: refused, with the way out.
"$FXT_MERGE" "$TMPD/k.fxt" "$TMPD/app.fxt" -o "$TMPD/both.fxt" 2> "$TMPD/err"
is "$?" 1 "a ktrace archive (mach_absolute_time) cannot be aligned: exit 1"
is "$(cat "$TMPD/err")" "fxt-merge: $TMPD/k.fxt: provider \"ktrace [clock=mach_absolute_time]\" is on clock mach_absolute_time, which cannot be aligned with CLOCK_MONOTONIC: record with \`trace-cmd record -C mono\`, or give --shift $TMPD/k.fxt=NS or --no-align" \
  "... one line that says why and what to do"
ok "... and no output" test ! -e "$TMPD/both.fxt"

"$FXT_MERGE" -q --shift "$TMPD/k.fxt=-1000" "$TMPD/k.fxt" "$TMPD/app.fxt" -o "$TMPD/both.fxt"
is "$?" 0 "--shift ARCHIVE=NS: merged"
# app.fxt's mark of time order is left out: k.fxt (fxt-import's) has none.
is "$(records "$TMPD/both.fxt")" "$(( $(records "$TMPD/k.fxt") + $(records "$TMPD/app.fxt") - 2 ))" \
  "every record of both, one magic record, no mark of time order"
ok "fxt-dump --check: ok" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, "' - "$FXT_DUMP" "$TMPD/both.fxt"
"$FXT_DUMP" "$TMPD/k.fxt" | grep '^ts=' | sed 's/^ts=[0-9.]* //' > "$TMPD/k.rest"
"$FXT_DUMP" "$TMPD/both.fxt" | grep '^ts=.*pid=\(7\|514\) ' | sed 's/^ts=[0-9.]* //' > "$TMPD/both.rest"
is "$(cat "$TMPD/both.rest")" "$(cat "$TMPD/k.rest")" "the ktrace events, all there, in their order"
is "$("$FXT_DUMP" "$TMPD/both.fxt" | grep -m 1 'name="0x04010004"' | sed 's/ .*//')" "ts=0.000000250" \
  "... moved by -1000 ns (1.250 us -> 0.250 us)"
# A complete event moves whole: its end with its start (its last word).
"$FXT_MERGE" -q --shift "$TMPD/app.fxt=1000000" "$TMPD/app.fxt" -o "$TMPD/later.fxt"
complete() { "$FXT_DUMP" "$1" | grep '^ts=.* event complete ' | sed 's/^ts=[0-9.]* //'; }
is "$(complete "$TMPD/later.fxt" | md5sum)" "$(complete "$TMPD/app.fxt" | md5sum)" \
  "--shift: complete events keep their durations"
ok "... and the archive stays valid" \
  sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/later.fxt"
"$FXT_MERGE" -q --shift "$TMPD/k.fxt=-5000" "$TMPD/k.fxt" -o "$TMPD/neg.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "0/fxt-merge: 4 timestamps moved before 0 were set to 0" "a shift before 0: clamped, and said"
"$FXT_MERGE" -q --no-align "$TMPD/k.fxt" "$TMPD/app.fxt" -o "$TMPD/asis.fxt"
is "$("$FXT_DUMP" "$TMPD/asis.fxt" | grep -m 1 'name="0x04010004"' | sed 's/ .*//')" "ts=0.000001250" "--no-align: as they were"

# fxt-run's archive next to an import on clock mono: neither moves.
# (This and the live recordings below read trace.dat: skipped, as
# import-tracedat.sh is, when this build has no libtracecmd.)
if have_tracecmd; then
  "$FXT_IMPORT" -q "$DATA/v7-zstd.dat" -o "$TMPD/kern.fxt"
  "$FXT_MERGE" -q "$TMPD/kern.fxt" "$TMPD/app.fxt" -o "$TMPD/mono.fxt"
  is "$?" 0 "clock mono next to fxt-run's archive: merged"
  is "$("$FXT_DUMP" "$TMPD/mono.fxt" | grep '^ts=' | sort | md5sum)" \
     "$( ("$FXT_DUMP" "$TMPD/kern.fxt"; "$FXT_DUMP" "$TMPD/app.fxt") | grep '^ts=' | sort | md5sum)" \
     "... every timed record as it was"

  if [ -n "${PYTHON3:-}" ]; then
    is "$("$PYTHON3" "$abs_top_srcdir/tests/helpers/perfetto_rules.py" "$TMPD/mono.fxt")" ok \
      "the kernel's trace and the program's, merged: what Perfetto needs (perfetto_rules.py)"
  else
    skip "no python3"
  fi
else
  for i in 1 2 3; do skip "built without libtracecmd"; done
fi

# Bad input: refused before anything is written.
printf 'not an archive' > "$TMPD/junk.fxt"
"$FXT_MERGE" "$TMPD/app.fxt" "$TMPD/junk.fxt" -o "$TMPD/bad.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "1/fxt-merge: $TMPD/junk.fxt: offset 0: not an FXT archive (no magic record)" "a non-archive: exit 1, one line"
ok "... no output" test ! -e "$TMPD/bad.fxt"
"$FXT_MERGE" --shift "$TMPD/other.fxt=5" "$TMPD/app.fxt" -o "$TMPD/bad.fxt" 2> "$TMPD/err"
is "$?/$(head -n 1 "$TMPD/err")" "2/fxt-merge: --shift names $TMPD/other.fxt, which is not an ARCHIVE" "--shift of no ARCHIVE: usage error"

# Live: one clock for the kernel and the program.  live_record NAME CLOCK:
# trace-cmd records on CLOCK while fxt-run traces a shell whose write(2)
# marks the kernel's trace (NAME.dat, NAME-app.fxt); 0 when both exist.
mark=/sys/kernel/tracing/trace_marker
live_record() {
  FXT_RECORD_CMD="'$FXT_RUN' -q -o '$TMPD/$1-app.fxt' -- sh -c 'sleep 0.05; echo fxt-align > $mark; sleep 0.05'" \
    "$DATA/record.sh" "$TMPD/$1.dat" "$2" > "$TMPD/rec.err" 2>&1 && [ -s "$TMPD/$1-app.fxt" ]
}
# marker_where ARCHIVE: "inside" when the kernel saw the marker inside the
# write(2) the agent timed, else both times.
marker_where() {
  "$FXT_DUMP" "$1" | awk '
    function ns(t,  s, f) { s = t; sub(/\..*/, "", s); f = t; sub(/.*\./, "", f); return s * 1e9 + f }
    / name="print" args=\{message:str="fxt-align"\}/ { p = ns(substr($1, 4)) }
    / name="write" dur=/ && /fd:i64=1, count:u64=10/ { b = ns(substr($1, 4)); d = $0; sub(/.* dur=/, "", d); sub(/ns.*/, "", d); wb = b; we = b + d }
    END { if (p && wb && p >= wb && p <= we) print "inside"; else printf "print %.0f write %.0f..%.0f\n", p, wb, we }'
}

have_tracecmd || skip_rest "built without libtracecmd"
if live_record live mono; then
  "$FXT_IMPORT" -q "$TMPD/live.dat" -o "$TMPD/live.fxt" &&
    "$FXT_MERGE" -q "$TMPD/live.fxt" "$TMPD/live-app.fxt" -o "$TMPD/live-both.fxt"
  is "$?" 0 "live: the kernel's trace and the program's, merged"
  is "$(marker_where "$TMPD/live-both.fxt")" "inside" "live: the kernel's print event lies inside the agent's write slice"
else
  diag "no live recording: $(tail -n 1 "$TMPD/rec.err")"
  skip "trace-cmd cannot record here"; skip "trace-cmd cannot record here"
fi

# Live on clock boot: fxt-merge moves it by CLOCK_MONOTONIC - CLOCK_BOOTTIME
# (0 on a machine that never slept, so the check is that it says so and
# that the marker still lands in the write).
if live_record boot boot; then
  "$FXT_IMPORT" -q "$TMPD/boot.dat" -o "$TMPD/boot.fxt" &&
    "$FXT_MERGE" -q "$TMPD/boot.fxt" "$TMPD/boot-app.fxt" -o "$TMPD/boot-both.fxt" 2> "$TMPD/err"
  ok "live, clock boot: merged, with a note of the shift" \
    grep -q "^fxt-merge: note: $TMPD/boot.fxt is on CLOCK_BOOTTIME: moved by -\?[0-9]* ns" "$TMPD/err"
  is "$(marker_where "$TMPD/boot-both.fxt")" "inside" "live, clock boot: the print event lies inside the agent's write slice"
else
  diag "no live recording on clock boot: $(tail -n 1 "$TMPD/rec.err")"
  skip "trace-cmd cannot record here"; skip "trace-cmd cannot record here"
fi
finish
