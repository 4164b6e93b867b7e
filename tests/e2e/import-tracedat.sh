#!/bin/sh
# fxt-import on trace-cmd's trace.dat: the files kept in tests/data/tracecmd
# (v6, v7 plain, v7 zstd: one recording, its README says how it was made)
# against their `trace-cmd report`: the same events of each type in each
# buffer, the same first and last timestamps, the same thread names; a
# valid archive the tools read.  Then a recording made here, when the
# kernel allows it (tracefs, root, trace-cmd), held to the same, and
# truncated and look-alike files: one line naming the file and an offset,
# exit 1, no output file.
. "$abs_top_srcdir/tests/e2e/import-common.sh"

DATA=$abs_top_srcdir/tests/data/tracecmd
plan 59
scratch

have_tracecmd || skip_rest "built without libtracecmd"

# check_file NAME DAT REPORT [loose]: 8 tests.
check_file() {
  f_name=$1 f_dat=$2 f_rep=$3 f_loose=${4:-}
  "$FXT_IMPORT" -q "$f_dat" -o "$TMPD/$f_name.fxt" 2> "$TMPD/err"
  is "$?/$(cat "$TMPD/err")" "0/" "$f_name: imported"
  ok "$f_name: fxt-dump --check: ok, no warning" sh -c \
    '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/$f_name.fxt"
  # Marked, as each CPU's records are in time order; a live recording's
  # CPU could go back in time (then the import writes no mark), so there
  # it is only said.
  f_mark=$("$FXT_DUMP" "$TMPD/$f_name.fxt" | sed -n 2p | sed 's/index=[0-9]*/index=N/')
  if [ -z "$f_loose" ]; then
    is "$f_mark" 'string index=N str="fxtrace.time-ordered.v1"' \
      "$f_name: marked in time order per thread (its CPUs merged by time)"
  else
    ok "$f_name: marked in time order per thread, or not (said: $f_mark)" true
  fi
  is "$(dump_counts "$TMPD/$f_name.fxt")" "$(report_counts "$f_rep")" "$f_name: events per type and buffer = trace-cmd report's"
  span=$(report_span "$f_rep")
  case $span in *.*) raw= ;; *) raw=raw ;; esac
  is "$(dump_span "$TMPD/$f_name.fxt" $raw)" "$span" "$f_name: first and last timestamps = trace-cmd report's${raw:+ (raw ticks: no TSC2NSEC in the file)}"
  # Every thread the report names is in the archive, and the name it has
  # last there is one the report gives it (the report's names come from
  # the comm fields as it reads, ours too; on a busy machine a thread that
  # forks and execs between two events may be caught under either name).
  dump_threads "$TMPD/$f_name.fxt" > "$TMPD/ours"
  report_threads "$f_rep" > "$TMPD/theirs"
  # A live recording on a busy machine (the tests run in parallel) can
  # catch a thread between its fork and its exec under a name the report
  # never prints for its own lines: there, only that every thread is named.
  is "$(awk -v loose="${f_loose:-}" 'NR == FNR { names[$1] = names[$1] "|" $2 "|"; next }
             { seen[$1] = 1; if (!loose && ($1 in names) && index(names[$1], "|" $2 "|") == 0) print "pid " $1 ": ours " $2 ", report" names[$1] }
             END { for (p in names) if (!(p in seen)) print "pid " p ": not in the archive" }' \
        "$TMPD/theirs" "$TMPD/ours" | sort)" "" \
    "$f_name: thread names = trace-cmd report's ($(cut -d' ' -f1 "$TMPD/theirs" | sort -u | wc -l) threads${f_loose:+, names not compared: live})"
  n_print=$(grep -c ': print: ' "$f_rep")
  is "$("$FXT_DUMP" "$TMPD/$f_name.fxt" | grep -c ' log msg=')" "$n_print" "$f_name: a log record per trace_marker line ($n_print)"
  ok "$f_name: fxt-report, fxt-flame and fxt-export read it" sh -c \
    '"$1/fxt-report" "$2" > /dev/null && "$1/fxt-flame" "$2" -o "$2.svg" && "$1/fxt-export" --chrome "$2" -o "$2.json"' \
    - "$abs_top_builddir" "$TMPD/$f_name.fxt"
}

for f in v6 v7-plain v7-zstd; do
  gzip -dc "$DATA/$f.report.gz" > "$TMPD/$f.report"
  check_file "$f" "$DATA/$f.dat" "$TMPD/$f.report"
done

# What each record becomes.
A=$TMPD/v7-zstd.fxt
"$FXT_DUMP" "$A" > "$TMPD/dump"
ok "two providers: the top buffer and buffer fxtinst, clock mono" sh -c \
  'grep -c "^provider_info id=[12] name=\"trace-cmd \(top\|buffer fxtinst\) \[clock=mono\]\"" "$1" | grep -qx 2' - "$TMPD/dump"
ok "context switches carry cpu, state and priorities" \
  grep -q '^ts=[0-9.]* cswitch cpu=[01] out_pid=[0-9]* out_tid=[0-9]* out_state=[0-9] out_prio=[0-9]* in_pid=' "$TMPD/dump"
ok "a wake-up: an instant with its fields, a runnable slice, a flow to the next running slice" sh -c '
  grep -q "event instant cat=\"sched\" name=\"sched_wakeup\" args={comm:str=\"[^\"]*\", pid:i64=[0-9]*, prio:i64=[0-9]*, target_cpu:i64=[01]}" "$1" &&
  grep -q "event begin cat=\"sched\" name=\"runnable\"" "$1" && grep -q "event flow_begin cat=\"sched\"" "$1" &&
  grep -q "event flow_end cat=\"sched\"" "$1"' - "$TMPD/dump"
ok "trace_marker: a log record and an instant print with the text" sh -c '
  grep -q " log msg=\"fxt-mark\"" "$1" && grep -q "name=\"print\" args={message:str=\"fxt-mark\"}" "$1"' - "$TMPD/dump"
ok "kernel stacks named from the file's kallsyms" \
  grep -q 'name="kernel_stack" args={stack:str="[a-z0-9_]* (0xffffffff[0-9a-f]*)' "$TMPD/dump"
ok "a syscall's fields as typed arguments" \
  grep -q 'name="sys_enter_write" args={__syscall_nr:i64=1, fd:u64=[0-9]*, buf:ptr=0x[0-9a-f]*, count:u64=[0-9]*}' "$TMPD/dump"

# A recording made here, when the kernel allows it.
"$DATA/record.sh" "$TMPD/live.dat" > "$TMPD/rec.err" 2>&1
rc=$?
if [ $rc -eq 0 ] && command -v trace-cmd > /dev/null; then
  trace-cmd report "$TMPD/live.dat" > "$TMPD/live.report" 2> /dev/null
  check_file live "$TMPD/live.dat" "$TMPD/live.report" loose
else
  diag "no live recording: $(tail -n 1 "$TMPD/rec.err")"
  for i in 1 2 3 4 5 6 7 8; do skip "trace-cmd cannot record here (record.sh exit $rc)"; done
fi

# A recording on clock x86-tsc: libtracecmd turns the TSC into ns with the
# file's TSC2NSEC option, and the import keeps what it says, as the report.
if [ "$(uname -m)" = x86_64 ] && grep -qw x86-tsc /sys/kernel/tracing/trace_clock 2>/dev/null &&
   "$DATA/record.sh" "$TMPD/tsc.dat" x86-tsc > "$TMPD/rec.err" 2>&1; then
  trace-cmd report "$TMPD/tsc.dat" > "$TMPD/tsc.report" 2> /dev/null
  check_file tsc "$TMPD/tsc.dat" "$TMPD/tsc.report" loose
else
  diag "no x86-tsc recording: $(tail -n 1 "$TMPD/rec.err" 2>/dev/null)"
  for i in 1 2 3 4 5 6 7 8; do skip "trace-cmd cannot record on x86-tsc here"; done
fi

# Truncated files: an error line with the file and an offset, exit 1, no
# output.  libtracecmd crashes on some (v6 cut in its CPU data): the
# import runs it in a child, which costs an error line, not a crash.
for f in v6 v7-plain v7-zstd; do
  size=$(wc -c < "$DATA/$f.dat")
  bad=0 said=
  for cut in 16 300 $((size / 3)) $((size / 2)) $((size - 5000)); do
    head -c "$cut" "$DATA/$f.dat" > "$TMPD/cut.dat"
    rm -f "$TMPD/cut.fxt"
    "$FXT_IMPORT" "$TMPD/cut.dat" -o "$TMPD/cut.fxt" > /dev/null 2> "$TMPD/err"
    rc=$?
    # Either it reads what is there (v7 compresses CPU data by pages), or
    # it says why it cannot; never a crash, never a partial file.
    if [ $rc -eq 0 ]; then "$FXT_DUMP" --check "$TMPD/cut.fxt" > /dev/null || bad=$((bad + 1))
    elif [ $rc -ne 1 ] || [ -e "$TMPD/cut.fxt" ] || [ "$(wc -l < "$TMPD/err")" -ne 1 ] ||
         ! grep -q "^fxt-import: $TMPD/cut.dat: offset [0-9]*: " "$TMPD/err"; then
      bad=$((bad + 1)); said="$said cut $cut: rc $rc $(cat "$TMPD/err")"
    fi
  done
  is "$bad" 0 "$f cut at 5 places: a valid archive or one error line, exit 1, no file$said"
done

# Look-alikes.
printf '\027\010Dtracing6\0garbage' > "$TMPD/fake.dat"
"$FXT_IMPORT" "$TMPD/fake.dat" -o "$TMPD/fake.fxt" 2> "$TMPD/err"
is "$?" 1 "trace.dat magic, then garbage: exit 1"
ok "... one line naming the file and an offset" grep -qx "fxt-import: $TMPD/fake.dat: offset [0-9]*: libtracecmd cannot read this trace.dat.*" "$TMPD/err"
ok "... no output file" test ! -e "$TMPD/fake.fxt"
printf 'hello, world\n' > "$TMPD/text.dat"
"$FXT_IMPORT" "$TMPD/text.dat" -o "$TMPD/text.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "1/fxt-import: $TMPD/text.dat: offset 0: not a trace.dat or ktrace file (unknown magic number)" \
  "a text file named .dat: exit 1, one line"
: > "$TMPD/empty.dat"
"$FXT_IMPORT" "$TMPD/empty.dat" -o "$TMPD/empty.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "1/fxt-import: $TMPD/empty.dat: offset 0: an empty file" "an empty file"
"$FXT_IMPORT" "$A" -o "$TMPD/again.fxt" 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "1/fxt-import: $A: offset 0: already an FXT archive (fxt-merge combines archives)" \
  "an FXT archive: said so"
# The format comes from the magic, not the name.
cp "$DATA/v7-zstd.dat" "$TMPD/named.ktrace"
"$FXT_IMPORT" -q "$TMPD/named.ktrace" -o "$TMPD/named.fxt"
is "$?" 0 "a trace.dat named .ktrace is read as trace.dat"
# An old output is kept when an import fails.
echo old > "$TMPD/keep.fxt"
"$FXT_IMPORT" "$TMPD/text.dat" -o "$TMPD/keep.fxt" 2> /dev/null
is "$(cat "$TMPD/keep.fxt")" "old" "a failed import leaves an existing OUT as it was"
# The summary line, and the default output name.
cp "$DATA/v7-plain.dat" "$TMPD/t.dat"
(cd "$TMPD" && "$FXT_IMPORT" t.dat 2> err)
ok "without -o: FILE.fxt, and a summary line" sh -c \
  'test -s "$1/t.dat.fxt" && grep -q "^fxt-import: t.dat (trace-cmd trace.dat, clock mono): [0-9]* events -> [0-9]* records, [0-9]* threads, 2 providers, 0 events lost, 0 skipped -> t.dat.fxt$" "$1/err"' - "$TMPD"
"$FXT_IMPORT" 2> "$TMPD/err"
is "$?/$(head -n 1 "$TMPD/err")" "2/fxt-import: missing FILE" "no FILE: usage error"
finish
