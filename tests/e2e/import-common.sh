# Shared by the import tests: what `trace-cmd report` says of a trace.dat
# and what fxt-dump says of its import, in the same shape, to compare.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
FXT_IMPORT=$abs_top_builddir/fxt-import
FXT_MERGE=$abs_top_builddir/fxt-merge

# have_tracecmd: true when this build reads trace.dat (configure found libtracecmd).
have_tracecmd() { grep -q '^#define HAVE_LIBTRACECMD 1' "$abs_top_builddir/config.h"; }

# report_counts REPORT: "BUFFER EVENT COUNT" lines, sorted (BUFFER "top").
report_counts() {
  awk '
    { buf = "top"; line = $0
      if (match(line, /^[A-Za-z0-9_]+:[ \t]/) && line !~ /^[ \t]/) { buf = substr(line, 1, RLENGTH - 2); line = substr(line, RLENGTH) }
      if (!match(line, /\] *[0-9]+(\.[0-9]+)?: +[^ :]+:/)) next
      m = substr(line, RSTART, RLENGTH); sub(/:$/, "", m); n = split(m, f, / +/)
      c[buf " " f[n]]++ }
    END { for (k in c) print k, c[k] }' "$1" | sort
}

# report_span REPORT: the first and last timestamps, in microseconds (or
# raw ticks, without a point, when the file's clock has no ns conversion:
# x86-tsc without TSC2NSEC).
report_span() {
  awk 'match($0, /\] *[0-9]+(\.[0-9]+)?:/) { m = substr($0, RSTART, RLENGTH); sub(/^\] */, "", m); sub(/:$/, "", m)
         if (first == "") first = m; last = m }
       END { print first, last }' "$1"
}

# report_threads REPORT: "PID COMM" for each name the report gives a
# thread (a thread renamed by an exec has two).
report_threads() {
  awk '{ line = $0
         if (match(line, /^[A-Za-z0-9_]+:[ \t]/)) line = substr(line, RLENGTH)
         if (!match(line, / +\[[0-9]+\] *[0-9]+(\.[0-9]+)?:/)) next
         who = substr(line, 1, RSTART - 1); sub(/^[ \t]+/, "", who)
         p = who; sub(/.*-/, "", p); comm = who; sub(/-[0-9]+$/, "", comm)
         if (p != 0 && comm != "<...>") print p, comm }' "$1" | sort -u
}

# dump_counts ARCHIVE: the same "BUFFER EVENT COUNT" from the import: an
# instant per event, a context switch per sched_switch; not the slices and
# flows the import adds.
dump_counts() {
  "$FXT_DUMP" "$1" | awk '
    /^provider_info/ { buf = $0; sub(/.*name="trace-cmd /, "", buf); sub(/ \[clock=.*/, "", buf); sub(/^buffer /, "", buf); next }
    / cswitch / { c[buf " sched_switch"]++; next }
    / event instant cat="fxt" / { next }   # lost-event markers: the report prints no line for them
    / event instant / { n = $0; sub(/.* name="/, "", n); sub(/".*/, "", n); c[buf " " n]++ }
    END { for (k in c) print k, c[k] }' | sort
}

# dump_span ARCHIVE [raw]: first and last timestamps of the events, in
# microseconds rounded as trace-cmd prints them; with raw, the whole ticks.
dump_span() {
  "$FXT_DUMP" "$1" | awk -v raw="${2:-}" '
    function us(t,   s, f) { s = t; sub(/\..*/, "", s); f = t; sub(/.*\./, "", f)
                            f = int((f + 500) / 1000); if (f >= 1000000) { s++; f -= 1000000 }
                            return sprintf("%d.%06d", s, f) }
    /^ts=/ { t = substr($1, 4); if (first == "" || t + 0 < first + 0) first = t; if (last == "" || t + 0 > last + 0) last = t }
    function whole(t) { sub(/\./, "", t); sub(/^0+/, "", t); return t }
    END { if (raw) print whole(first), whole(last); else print us(first), us(last) }'
}

# dump_threads ARCHIVE: "TID NAME" of the thread objects, by their last name.
dump_threads() {
  "$FXT_DUMP" "$1" | awk '/^kobj type=thread/ { k = $3; sub(/koid=/, "", k); n = $0; sub(/.* name="/, "", n); sub(/".*/, "", n); last[k] = n }
                         END { for (k in last) print k, last[k] }' | sort -k 1,1
}

# need_tracefs: skips the rest of a test of fxt-run --kernel, with the
# reason, without libtracefs in this build, without root, or without
# tracefs instances to write; sets INST to their folder.
# instance_gone PID: fxt-run PID's tracing instance is gone, or goes
# within 5 s (fxt-run leaves its removal, 60-160 ms of the kernel's
# waiting, to a process that may outlive it).
instance_gone() {
  _i=0
  while [ -d "$INST/fxtrace-$1" ] && [ $_i -lt 100 ]; do sleep 0.05; _i=$((_i + 1)); done
  [ ! -d "$INST/fxtrace-$1" ]
}

# recording_on PID: waits (up to 20 s) until fxt-run PID's instance
# records: its pid filter set (a new instance's tracing_on is 1 until
# fxt-run turns it off), then tracing on.
recording_on() {
  _i=0
  while { [ -z "$(cat "$INST/fxtrace-$1/set_event_pid" 2>/dev/null)" ] ||
    [ "$(cat "$INST/fxtrace-$1/tracing_on" 2>/dev/null)" != 1 ]; } && [ $_i -lt 400 ]; do
    sleep 0.05; _i=$((_i + 1))
  done
}

need_tracefs() {
  have_tracecmd || skip_rest "built without libtracecmd/libtracefs"
  [ "$(id -u)" = 0 ] || skip_rest "not root: cannot trace the kernel"
  INST=/sys/kernel/tracing/instances
  [ -d "$INST" ] && [ -w "$INST" ] || skip_rest "no writable tracefs instances ($INST)"
}
