# Shared by tests/e2e/libc-proc.sh and libc-log.sh (sourced, not run):
# running an uninstrumented program plainly and under fxt-run, and reading
# the archive's events back with fxt-dump.

. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# both ARCHIVE [FXT-RUN OPTIONS] -- PROGRAM [ARGS...]: runs PROGRAM plainly
# (stdout, stderr, status in $TMPD/plain.out, plain.err, $prc) and under
# fxt-run with the options ($TMPD/out, err, $rc; fxt-run's own summary
# line taken out of err).
both() {
  b_archive=$1; shift
  b_opts=
  while [ "$1" != "--" ]; do b_opts="$b_opts $1"; shift; done
  shift
  prc=0
  "$@" >"$TMPD/plain.out" 2>"$TMPD/plain.err" || prc=$?
  rc=0
  # shellcheck disable=SC2086 # the options are words
  "$FXT_RUN" -q -o "$b_archive" $b_opts -- "$@" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
}

# same NAME: the traced run printed exactly what the plain one did, byte
# for byte, and exited the same way (three tests).
same() {
  is "$rc" "$prc" "$1: exit status unchanged"
  ok "$1: stdout unchanged" cmp -s "$TMPD/plain.out" "$TMPD/out"
  ok "$1: stderr unchanged" cmp -s "$TMPD/plain.err" "$TMPD/err"
}

# events ARCHIVE: the archive's events and log records, one a line.
events() { "$FXT_DUMP" "$1" | grep -E '^ts=[^ ]* pid=[^ ]* tid=[^ ]* (event|log) '; }

# slice_args ARCHIVE NAME: "pid=P args" of every complete event NAME of
# category libc.proc (args without the braces), in order.
slice_args() {
  events "$1" |
    sed -n "s/^ts=[^ ]* \(pid=[0-9]*\) tid=[0-9]* event complete cat=\"libc\.proc\" name=\"$2\" dur=[0-9]*ns args={\(.*\)}\$/\1 \2/p"
}

# flow_ids ARCHIVE PHASE NAME: "pid=P ID" of every flow event of that
# phase (flow_begin, flow_end) bound to a slice named NAME.
flow_ids() {
  events "$1" |
    sed -n "s/^ts=[^ ]* \(pid=[0-9]*\) tid=[0-9]* event $2 cat=\"flow\" name=\"$3\" id=\([0-9]*\)\$/\1 \2/p"
}

# log_lines ARCHIVE STREAM: the line of every "log" instant of that
# stream (stdout, stderr, syslog), in order, as fxt-dump escapes it: its
# message argument (a line over 200 bytes, which the name cuts), else its
# name.
log_lines() {
  events "$1" | sed -n \
    -e "s/^.* event instant cat=\"log\" name=\".*\" args={message:str=\"\(.*\)\", stream:str=\"$2\"[,}].*\$/\1/p" \
    -e t \
    -e "s/^.* event instant cat=\"log\" name=\"\(.*\)\" args={stream:str=\"$2\"[,}].*\$/\1/p"
}

# log_records ARCHIVE: the text of every FXT log record, in order.
log_records() { events "$1" | sed -n 's/^ts=[^ ]* pid=[^ ]* tid=[^ ]* log msg="\(.*\)"$/\1/p'; }
