#!/bin/sh
# fxt-flame and fxt-export on bad input and bad options: one line naming
# the file and the reason, exit status 2, no output file left behind.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
FLAME=$abs_top_builddir/fxt-flame
EXPORT=$abs_top_builddir/fxt-export
MK=$HELPERS/mkarchives
scratch
plan 24

"$MK" "$TMPD" >/dev/null
mkdir "$TMPD/dir"

# check NAME WANT-STDERR CMD...: exit 2 and exactly that one line.
check() {
  name=$1; want=$2; shift 2
  err=$("$@" 2>&1 >/dev/null); rc=$?
  is "$rc $err" "2 $want" "$name"
}

check "missing file" "fxt-flame: $TMPD/nope.fxt: No such file or directory" \
  "$FLAME" "$TMPD/nope.fxt"
check "a directory" "fxt-flame: $TMPD/dir: Is a directory" "$FLAME" "$TMPD/dir"
check "empty file" "fxt-flame: $TMPD/empty.fxt: empty file, not an FXT archive" \
  "$FLAME" --folded "$TMPD/empty.fxt"
check "not FXT" "fxt-flame: $TMPD/bad-nomagic.fxt: not an FXT archive (no magic record at offset 0)" \
  "$FLAME" "$TMPD/bad-nomagic.fxt"
err=$("$FLAME" "$TMPD/bad-truncated.fxt" 2>&1 >/dev/null); rc=$?
case "$err" in
  "fxt-flame: $TMPD/bad-truncated.fxt: "*" at byte "[0-9]*) is "$rc" 2 "truncated archive: $err" ;;
  *) is "$rc $err" "2 fxt-flame: $TMPD/bad-truncated.fxt: ... at byte N" "truncated archive" ;;
esac
check "bad NEW of a diff" "fxt-flame: $TMPD/garbage.fxt: not an FXT archive (record runs past the end of the input (header says 1671 words, 31 bytes left))" \
  "$FLAME" --diff "$TMPD/valid.fxt" "$TMPD/garbage.fxt"
"$FLAME" -o "$TMPD/out.svg" "$TMPD/empty.fxt" 2>/dev/null
ok "no output file after a bad archive" test ! -e "$TMPD/out.svg"

check "unknown --by" "fxt-flame: --by: unknown key 'cpu'
Try 'fxt-flame --help'." "$FLAME" --by cpu "$TMPD/valid.fxt"
check "--diff with one archive" "fxt-flame: --diff needs BASE and NEW
Try 'fxt-flame --help'." "$FLAME" --diff "$TMPD/valid.fxt"
check "--diff and --folded" "fxt-flame: --diff and --folded do not go together
Try 'fxt-flame --help'." \
  "$FLAME" --diff --folded "$TMPD/valid.fxt" "$TMPD/valid.fxt"
check "bad --width" "fxt-flame: --width: not a width in 100 .. 100000: 'wide'
Try 'fxt-flame --help'." \
  "$FLAME" --width wide "$TMPD/valid.fxt"
"$FLAME" --bogus "$TMPD/valid.fxt" >/dev/null 2>&1
is "$?" 2 "unknown option"
"$FLAME" --help | grep -q '^Usage: fxt-flame'
is "$?" 0 "--help"

check "export: missing file" "fxt-export: $TMPD/nope.fxt: No such file or directory" \
  "$EXPORT" --chrome "$TMPD/nope.fxt"
check "export: not FXT" "fxt-export: $TMPD/bad-nomagic.fxt: not an FXT archive (no magic record at offset 0)" \
  "$EXPORT" --chrome "$TMPD/bad-nomagic.fxt"
"$EXPORT" --chrome -o "$TMPD/out.json" "$TMPD/bad-truncated.fxt" 2>/dev/null
is "$? $(test -e "$TMPD/out.json" && echo kept || echo removed)" "2 removed" \
  "export: truncated archive, partial output removed"
# An existing output file is only replaced by a complete one: a failed run
# leaves it as it was, a good one replaces it keeping its permissions, and
# no temporary file is left either way.
printf 'old contents\n' >"$TMPD/keep.json"
chmod 640 "$TMPD/keep.json"
"$EXPORT" --chrome -o "$TMPD/keep.json" "$TMPD/bad-truncated.fxt" 2>/dev/null
is "$? $(cat "$TMPD/keep.json")" "2 old contents" \
  "export: a failed run leaves an existing output file as it was"
"$EXPORT" --chrome -o "$TMPD/keep.json" "$TMPD/valid.fxt"
is "$? $(stat -c %a "$TMPD/keep.json") $(head -c 1 "$TMPD/keep.json")" "0 640 {" \
  "export: a good run replaces it and keeps its permissions"
is "$(ls "$TMPD" | grep -c '\.tmp\.')" 0 "export: no temporary file left behind"
check "export: no format" "fxt-export: say which format: --chrome
Try 'fxt-export --help'." "$EXPORT" "$TMPD/valid.fxt"
check "export: a directory" "fxt-export: $TMPD/dir: Is a directory" "$EXPORT" --chrome "$TMPD/dir"

# Only a regular file is removed after a failure: never a FIFO or a device
# named with -o.  fd 3 holds the FIFO open so that opening it does not block.
mkfifo "$TMPD/fifo"
exec 3<>"$TMPD/fifo"
"$EXPORT" --chrome -o "$TMPD/fifo" "$TMPD/bad-truncated.fxt" 2>/dev/null
is "$? $(test -p "$TMPD/fifo" && echo kept || echo removed)" "2 kept" \
  "export: a FIFO given as output is not removed"
exec 3<&-
check "unwritable -o" "fxt-flame: $TMPD/dir: Is a directory" \
  "$FLAME" -o "$TMPD/dir" "$TMPD/valid.fxt"
if test -c /dev/full; then
  err=$("$FLAME" --folded "$TMPD/valid.fxt" 2>&1 >/dev/full); rc=$?
  is "$rc $err" "2 fxt-flame: standard output: No space left on device" "full standard output"
else
  skip "no /dev/full"
fi
finish
