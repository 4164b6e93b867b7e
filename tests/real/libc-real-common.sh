# Shared by the tests/real/libc-real-*.sh tests (sourced, not run): real,
# unmodified programs of the Debian system (no -finstrument-functions,
# nothing rebuilt) run once plainly and once under fxt-run with every libc
# group on; what the program shows must not change, and the archive must
# say what it did in libc.

. "$abs_top_srcdir/tests/lib/test_subr.sh"

FLOWS=$abs_top_srcdir/tests/helpers/libc-real-flows.py
export LC_ALL=C

scratch
cd "$TMPD" || exit 1

# prog NAME...: the first NAME found as an executable (an absolute path, or
# looked up in PATH), or nothing.
prog() {
  for p_name; do
    case $p_name in
    /*) [ -x "$p_name" ] && { echo "$p_name"; return; } ;;
    *) p_path=$(command -v "$p_name" 2>/dev/null) && [ -n "$p_path" ] &&
      { echo "$p_path"; return; } ;;
    esac
  done
}

# compare NAME [--sample] -- COMMAND [ARGS...]: runs COMMAND plainly, then
# under fxt-run with every libc group on (and sampling at 1 kHz with
# --sample), from the same directory, with stdin from /dev/null; fxt-run
# writes NAME/out.fxt, with every process of the run.  Asserts (3 tests)
# the same exit status, stdout and stderr byte for byte.
compare() {
  c_name=$1; shift
  c_opts="--libc=all"
  if [ "$1" = --sample ]; then
    c_opts="$c_opts --sample"
    shift
  fi
  [ "$1" = -- ] && shift
  mkdir -p "$c_name"
  c_prc=0
  "$@" </dev/null >"$c_name.plain.out" 2>"$c_name.plain.err" || c_prc=$?
  c_trc=0
  # shellcheck disable=SC2086
  "$FXT_RUN" -q $c_opts -o "$c_name/out.fxt" -- "$@" </dev/null \
    >"$c_name.out" 2>"$c_name.err" || c_trc=$?
  is "$c_trc" "$c_prc" "$c_name: same exit status as a plain run ($c_prc)"
  ok "$c_name: same stdout" cmp "$c_name.plain.out" "$c_name.out"
  if cmp -s "$c_name.plain.err" "$c_name.err"; then
    ok "$c_name: same stderr" true
  else
    ok "$c_name: same stderr" false
    diff "$c_name.plain.err" "$c_name.err" | head -10 | sed 's/^/#   /'
  fi
}

# archives NAME: NAME's archives: NAME/out.fxt, into which fxt-run merges
# every process, and NAME/out.PID.fxt of a process that outlived the
# program, if any.
archives() {
  for a_f in "$1"/out.fxt "$1"/out.*.fxt; do
    [ -f "$a_f" ] && echo "$a_f"
  done
}

# check NAME: (1 test) there is an archive and each passes fxt-dump
# --check; dumps them all into NAME.dump (the processes one after the
# other) for the queries below.
check() {
  c_ok=true c_n=0
  : >"$1.dump"
  for c_a in $(archives "$1"); do
    c_n=$((c_n + 1))
    if ! "$FXT_DUMP" --check "$c_a" >"$1.check" 2>&1; then
      c_ok=false
      head -5 "$1.check" | sed "s|^|#   $c_a: |"
    fi
    "$FXT_DUMP" "$c_a" >>"$1.dump" 2>/dev/null
  done
  [ "$c_n" -gt 0 ] || c_ok=false
  ok "$1: $c_n archive(s), each passes fxt-dump --check" $c_ok
}

# slices NAME FUNCTION: how many slices of the libc function (any libc.*
# category) NAME's archives hold, as complete events or begin events.
slices() {
  awk -v n="name=\"$2\"" '
    / event (complete|begin) cat="libc\.[a-z]*" / && index($0, n) { c++ }
    END { print c + 0 }' "$1.dump"
}

# slice_with NAME FUNCTION TEXT: the first slice of FUNCTION whose line
# (its arguments) contains TEXT, e.g. 'path:str="in.txt"'.
slice_with() {
  awk -v n="name=\"$2\"" -v t="$3" '
    / event (complete|begin|end) cat="libc\.[a-z]*" / && index($0, n) && index($0, t) {
      print; exit }' "$1.dump"
}

# logged NAME TEXT: whether a log record's message is exactly TEXT (one
# line of the program's output, as the log group records it).
logged() {
  sed -n 's/^ts=[0-9.]* pid=[0-9]* tid=[0-9]* log msg=//p' "$1.dump" | grep -qxF "\"$2\""
}

# flows NAME: NAME's flows as "BEGIN -> END  same|cross" lines, each end
# named by the slice it binds to (libc-real-flows.py), in NAME.flows.
# Returns 1 without python3 (the callers skip).
flows() {
  [ -n "${PYTHON3:-}" ] || return 1
  "$PYTHON3" "$FLOWS" "$1.dump" >"$1.flows"
}

# nflows NAME PATTERN: how many of NAME's flows match the ERE PATTERN.
nflows() { grep -cE "$2" "$1.flows"; }

# sampled NAME PROGRAM: (1 test) NAME's archive has a "PROGRAM (samples)"
# track with slices on it (the stack chart of fxt-run --sample).
sampled() {
  s_koid=$(sed -n "s/^kobj type=thread koid=\([0-9]*\) name=\"$2 (samples)\".*/\1/p" "$1.dump" |
    head -n 1)
  s_n=0
  [ -n "$s_koid" ] && s_n=$(grep -c " tid=$s_koid event complete " "$1.dump")
  ok "$1: a samples track with slices ($s_n)" test "$s_n" -gt 0
}

# nothing_left NAME: (1 test) NAME/ holds one archive and nothing else
# (no per-process part, spool or session file).
nothing_left() {
  n_left=
  for n_f in "$1"/* "$1"/.[!.]*; do
    [ -e "$n_f" ] && [ "$n_f" != "$1/out.fxt" ] && n_left="$n_left ${n_f##*/}"
  done
  is "$n_left" "" "$1: one archive, nothing else left next to it"
}

# skip_n N REASON: N skipped tests.
skip_n() {
  s_i=0
  while [ "$s_i" -lt "$1" ]; do
    skip "$2"
    s_i=$((s_i + 1))
  done
}
