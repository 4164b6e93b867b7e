# Shell helpers for TAP end-to-end tests.  Source it, then:
#   plan 3; ok "name" test -s file; is "$(cmd)" "want" "name"; finish
# Environment (from make check): abs_top_builddir, abs_top_srcdir.

: "${abs_top_builddir:?run through make check}"
: "${abs_top_srcdir:?run through make check}"

FXT_RUN=$abs_top_builddir/fxt-run
FXT_DUMP=$abs_top_builddir/fxt-dump
EXAMPLES=$abs_top_builddir/examples
# The traced test programs (tests/progs/) and the programs that write or
# read archives for the tests (tests/helpers/).
PROGS=$abs_top_builddir/tests/progs
HELPERS=$abs_top_builddir/tests/helpers

tap_n=0
tap_fail=0
tap_plan=

plan() { tap_plan=$1; echo "1..$1"; }

# ok NAME COMMAND...: passes when COMMAND succeeds.
ok() {
  name=$1; shift
  tap_n=$((tap_n + 1))
  if "$@"; then echo "ok $tap_n - $name"
  else tap_fail=$((tap_fail + 1)); echo "not ok $tap_n - $name"; echo "#   command: $*"; fi
}

# is GOT WANT NAME: passes when the strings are equal; prints both and
# returns 1 if not.
is() {
  tap_n=$((tap_n + 1))
  if [ "$1" = "$2" ]; then echo "ok $tap_n - $3"
  else
    tap_fail=$((tap_fail + 1)); echo "not ok $tap_n - $3"
    printf '%s\n' "$1" | sed 's/^/#   got:  /' | head -40
    printf '%s\n' "$2" | sed 's/^/#   want: /' | head -40
    return 1
  fi
}

skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }

diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# skip_rest WHY: skips every test of the plan not run yet, for WHY, and
# ends the script (the plan's count is run; no test fails by it).
skip_rest() {
  while [ "$tap_n" -lt "$tap_plan" ]; do skip "$1"; done
  finish; exit $?
}

# patch_unavailable: why fxt-run --patch cannot run here (this build has no
# Capstone, or the machine is not x86-64); nothing when it can.
patch_unavailable() {
  if ! grep -q '^#define HAVE_CAPSTONE 1' "$abs_top_builddir/config.h"; then
    echo "built without Capstone"
  elif [ "$(uname -m)" != x86_64 ]; then
    echo "run-time patching is for x86-64"
  fi
}

# fxt_locs ARCHIVE: "NAME LOC" of each function's location record
# (include/fxt/format.h, FXT_OBJ_FUNCTION), as fxt-dump prints it, in
# archive order; LOC the text of either form: "loc" itself, or "file", "line" and
# "inlined" as FILE:LINE[ (inlined)] (the readers' tool_srcloc_text()).
fxt_locs() {
  "$FXT_DUMP" "$1" |
    sed -n -e 's/^kobj type=function koid=[^ ]* name="\([^"]*\)" args={module:str="[^"]*", loc:str="\([^"]*\)"}$/\1 \2/p' \
      -e 's/^kobj type=function koid=[^ ]* name="\([^"]*\)" args={module:str="[^"]*", file:str="\([^"]*\)", line:u32=\([0-9]*\)}$/\1 \2:\3/p' \
      -e 's/^kobj type=function koid=[^ ]* name="\([^"]*\)" args={module:str="[^"]*", file:str="\([^"]*\)", line:u32=\([0-9]*\), inlined:bool=true}$/\1 \2:\3 (inlined)/p'
}

# A scratch directory, removed at exit.
scratch() {
  TMPD=$(mktemp -d "${TMPDIR:-/tmp}/fxt-test.XXXXXX")
  trap '[ -n "$FXT_KEEP_TMPD" ] || rm -rf "$TMPD"' EXIT
}

finish() {
  if [ -n "$tap_plan" ] && [ "$tap_plan" != "$tap_n" ]; then
    echo "# planned $tap_plan tests but ran $tap_n"; exit 1
  fi
  [ "$tap_fail" -eq 0 ]
}
