#!/bin/sh
# A shell pipeline of unmodified programs, `sh -c 'tar -cf - dir | tar -tf
# -'`, run plainly and under `fxt-run --libc=all`: the same output and exit
# status; the shell's pipe and forks, each child's side of its fork and its
# exec of tar; a flow from each fork into the child, and from tar -c's
# writes into the pipe to tar -t's reads that consumed them (across
# processes); and nothing left next to the archive (no per-process part,
# spool or session file).

. "$abs_top_srcdir/tests/real/libc-real-common.sh"

SH=$(prog sh) TAR=$(prog tar)

plan 15

if [ -z "$SH" ] || [ -z "$TAR" ]; then
  skip_n 15 "sh or tar not installed"
  finish
  exit
fi

# 30 files of 2000 bytes: about 70 KB of archive, several 10 KiB writes
# into the pipe.
mkdir dir
i=0
while [ $i -lt 30 ]; do
  awk -v i=$i 'BEGIN { for (k = 0; k < 100; k++) printf "file %02d line %03d.....\n", i, k }' >dir/f$i.txt
  i=$((i + 1))
done

compare pipeline -- "$SH" -c "'$TAR' -cf - dir | '$TAR' -tf -"
is "$(wc -l <pipeline.out | tr -d ' ')" 31 "pipeline: tar -t lists the directory and its 30 files"
check pipeline
nothing_left pipeline
is "$(slices pipeline pipe)" 1 "pipeline: the shell's pipe slice"
is "$(($(slices pipeline fork) + $(slices pipeline vfork))) $(slices pipeline 'fork (child)')" "2 2" \
  "pipeline: two forks in the shell, and each child's side"
is "$(slices pipeline execve)" 2 "pipeline: each child execs tar"
ok "pipeline: tar -c's write slices into the pipe, on fd 1" \
  test -n "$(slice_with pipeline write 'fd:i64=1')"
ok "pipeline: tar -t's read slices from the pipe, on fd 0" \
  test -n "$(slice_with pipeline read 'fd:i64=0')"
ok "pipeline: tar -t's output lines as log records" logged pipeline "dir/f0.txt"
# tar -c's stdout is an archive, not text: none of its bytes (NULs) in a
# log record.
is "$(grep -c ' log msg=.*\\x00' pipeline.dump)" 0 "pipeline: no log record of tar -c's binary stream"
if flows pipeline; then
  is "$(nflows pipeline '^fork -> fork \(child\)  cross$')" 2 "pipeline: a flow from each fork into its child"
  ok "pipeline: flows from tar -c's writes into tar -t's reads" \
    test "$(nflows pipeline '^write -> read  cross$')" -ge 1
else
  skip "python3 not found for the flow check"
  skip "python3 not found for the flow check"
fi

finish
