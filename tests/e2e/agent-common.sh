# Shared by the tests/e2e/agent-*.sh tests (sourced, not run): tracing a
# program with fxt-run and reading the archive back.

. "$abs_top_srcdir/tests/lib/test_subr.sh"

CALLTREE=$HELPERS/fxt_calltree
AGENT_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent.so
NOP_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent-nop.so
export LC_ALL=C

scratch
cd "$TMPD" || exit 1

# trace ARCHIVE PROGRAM [ARGS...]: runs PROGRAM under fxt-run, writing
# ARCHIVE; its stdout goes to $TMPD/out, stderr to $TMPD/err, and the exit
# status to $rc.
trace() {
  t_archive=$1; shift
  rc=0
  "$FXT_RUN" -o "$t_archive" "$@" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
}

# The summary line fxt-run printed for the last trace.
summary() { grep '^fxt-run: wrote ' "$TMPD/err" | head -n 1; }

# kill_when_ready ARCHIVE COMMAND...: fxt-run -o ARCHIVE COMMAND in a session of
# its own (output in ./out and ./err), killed with all its processes
# (SIGKILL) once the program says "ready" (and, with $kill_also set, once
# the shell command it holds succeeds too, 10 s at most); returns when they
# are gone.
kill_when_ready() {
  k_archive=$1
  shift
  setsid "$FXT_RUN" -o "$k_archive" "$@" >out 2>err &
  run=$!
  n=0
  while ! grep -q ready out 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
  n=0
  while [ -n "${kill_also:-}" ] && ! eval "$kill_also" && [ $n -lt 200 ]; do
    sleep 0.05
    n=$((n + 1))
  done
  kill -9 "-$run" 2>/dev/null
  wait "$run" 2>/dev/null
  n=0
  while pgrep -g "$run" >/dev/null 2>&1 && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
}

# check_archive NAME ARCHIVE: fxt-dump --check passes on it.
check_archive() {
  if "$FXT_DUMP" --check "$2" >"$TMPD/check.out" 2>&1; then
    ok "$1: fxt-dump --check" true
  else
    ok "$1: fxt-dump --check" false
    head -20 "$TMPD/check.out" | sed 's/^/#   /'
  fi
}

# stat_of ARCHIVE KEY: one line of fxt_calltree --stats.
stat_of() { "$CALLTREE" --stats "$1" | sed -n "s/^$2 //p"; }

# flat ARCHIVE: "COUNT NAME" per function, sorted.
flat() { "$CALLTREE" --flat "$1" | sort; }

# uftrace_flat PROGRAM [ARGS...]: the same from uftrace on the same binary
# (only the program's own functions: no library calls, no kernel events).
# C++ needs UFTRACE_DEMANGLE=full for whole signatures; C must keep the
# default, as full demangling reads a function named "c" as "char".
uftrace_flat() {
  rm -rf "$TMPD/uftrace.data"
  "$UFTRACE" record --no-libcall -d "$TMPD/uftrace.data" "$@" >/dev/null 2>&1 || return 1
  "$UFTRACE" report -d "$TMPD/uftrace.data" -f call --demangle="${UFTRACE_DEMANGLE:-simple}" 2>/dev/null |
    awk 'NR > 2 && NF >= 2 { c = $1; sub(/^ *[0-9]+ +/, ""); print c " " $0 }' |
    grep -v ' linux:' | sort
}

# cross_check NAME ARCHIVE PROGRAM [ARGS...]: per-function call counts
# equal uftrace's, when uftrace is installed.
cross_check() {
  c_name=$1 c_archive=$2; shift 2
  if [ -z "${UFTRACE:-}" ]; then
    skip "$c_name: uftrace not installed"
    return
  fi
  is "$(uftrace_flat "$@")" "$(flat "$c_archive")" "$c_name: call counts equal uftrace's"
}
