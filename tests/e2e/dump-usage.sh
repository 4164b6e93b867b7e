#!/bin/sh
# fxt-dump's command line: help, version, bad options and unreadable files.
. "$abs_top_srcdir/tests/e2e/dump-common.sh"

plan 24

dump --help
is "$rc" 0 "--help: exit 0"
ok "--help documents the line format" sh -c 'echo "$1" | grep -q "event TYPE cat="' - "$out"
dump --version
is "$rc/$out" "0/fxt-dump (fxtrace) $(printf '%s\n' "$out" | sed 's/.* //')" "--version"

dump "$A/does-not-exist.fxt"
is "$rc" 2 "missing file: exit 2"
is "$err" "fxt-dump: $A/does-not-exist.fxt: No such file or directory" "missing file: one line"
dump "$A"
is "$rc" 2 "directory: exit 2"
is "$err" "fxt-dump: $A: Is a directory" "directory: one line"
dump --bogus "$A/valid.fxt"
is "$rc" 2 "bad option: exit 2"
is "$err" "fxt-dump: unknown option '--bogus'
Try 'fxt-dump --help'." "bad option: one line, and where to look"
dump -x "$A/valid.fxt"
is "$rc/$err" "2/fxt-dump: unknown option '-x'
Try 'fxt-dump --help'." "bad short option"
dump
is "$rc/$err" "2/fxt-dump: missing FILE
Try 'fxt-dump --help'." "no file"
dump "$A/valid.fxt" "$A/valid.fxt"
is "$rc" 2 "two files: exit 2"

# Damage without --check: records before it, then one line, exit 1.
dump "$A/bad-zero.fxt"
is "$rc" 1 "damaged archive: exit 1"
is "$err" "fxt-dump: $A/bad-zero.fxt: offset 184: record of size 0" "damaged archive: the offset and rule"

# No record at all: not an archive, which is bad input (2), in one line.
dump "$A/empty.fxt"
is "$rc/$err" "2/fxt-dump: $A/empty.fxt: empty file, not an FXT archive" "empty file: exit 2, one line"
dump "$A/garbage.fxt"
is "$rc" 2 "garbage: exit 2"
case "$err" in
"fxt-dump: $A/garbage.fxt: not an FXT archive (record runs past the end of the input"*) r=$(printf '%s\n' "$err" | wc -l) ;;
*) r="$err" ;;
esac
is "$r" 1 "garbage: one line saying it is not an archive"
# A problem found before the first record still shows when records follow.
dump "$A/bad-nomagic.fxt"
is "$(printf '%s\n' "$err" | head -n 1)" \
  "fxt-dump: $A/bad-nomagic.fxt: offset 0: error: no magic record at offset 0: not an FXT archive" \
  "missing magic before records: still reported"
is "$rc" 1 "missing magic: exit 1 (an invalid archive), records printed or not"

# A spool file (agent/spool.h: "FXTSPOOL", version, header size, pid at 16,
# program at 48) is named as one, with how to turn it into an archive, by
# every tool that opens archives.
printf 'FXTSPOOL\001\000\000\000\000\020\000\000\222\020\000\000\000\000\000\000' >"$TMPD/app.spool"
head -c 24 /dev/zero >>"$TMPD/app.spool"
printf 'myprog\033x' >>"$TMPD/app.spool"
head -c 300 /dev/zero >>"$TMPD/app.spool"
S="$TMPD/app.spool"
why="is an fxtrace spool (raw records of process 4242, myprog?x), not an archive; turn it into one with: fxt-run --recover $S"
dump --check "$S"
is "$rc/$out/$err" "2//fxt-dump: $S: $why" "fxt-dump: a spool is named as one, exit 2"
B=$abs_top_builddir
for cmd in "fxt-report $S" "fxt-flame --folded $S" "fxt-export --chrome $S" "fxt-diff $S $S"; do
  set -- $cmd
  tool=$1; shift
  got=$("$B/$tool" "$@" 2>&1 >/dev/null); rc=$?
  is "$rc/$got" "2/$tool: $S: $why" "$tool: a spool is named as one, exit 2"
done
finish
