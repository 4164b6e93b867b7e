# Shared by tests/e2e/libc-{mem,sync,thread}.sh (sourced, not run).

. "$abs_top_srcdir/tests/e2e/agent-common.sh"

SLICES=$HELPERS/libc_slices

# ltrace GROUPS ARCHIVE PROGRAM [ARGS...]: trace() with FXT_LIBC=GROUPS.
ltrace() {
  l_groups=$1; shift
  FXT_LIBC=$l_groups; export FXT_LIBC
  trace "$@"
  unset FXT_LIBC
}

# plain PROGRAM [ARGS...]: the program without the agent; stdout to
# $TMPD/plain.out, stderr to $TMPD/plain.err, the status to $prc.
plain() {
  prc=0
  "$@" >"$TMPD/plain.out" 2>"$TMPD/plain.err" || prc=$?
}

# slices CATEGORY ARCHIVE: "T NAME key=value..." per slice (libc_slices).
slices() { "$SLICES" --slices "$1" "$2"; }

# count_of PATTERN: lines of stdin matching the extended regex.
count_of() { grep -Ec -- "$1" || true; }

# arg KEY: the value of KEY=... on each line of stdin.
arg() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }

# has_libc ARCHIVE: whether the flusher wrote any libc slice (it learns
# the wrappers' records in stages; until it does, content checks skip).
has_libc() { "$FXT_DUMP" "$1" 2>/dev/null | grep -q 'cat="libc\.'; }

# same_run NAME: the traced run's status and output equal the plain run's.
same_run() {
  is "$rc" "$prc" "$1: exit status unchanged"
  is "$(cat "$TMPD/out")" "$(cat "$TMPD/plain.out")" "$1: stdout unchanged"
}
