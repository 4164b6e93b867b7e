#!/bin/sh
# Unmodified Debian programs that read and write files: sort, gzip (a
# round trip, and a missing input), find over /usr/include and git
# --version, each run plainly and under `fxt-run --libc=all`.  Their
# stdout, stderr and exit status must not change; the archives must pass
# fxt-dump --check and hold the libc calls they make, with their
# arguments, and their output lines as log records.

. "$abs_top_srcdir/tests/real/libc-real-common.sh"

SORT=$(prog sort) GZIP_=$(prog gzip) FIND=$(prog find) GIT=$(prog git)

plan 46

# 40000 distinct lines in no order: enough for sort to be sampled.
awk 'BEGIN { srand(7); for (i = 0; i < 40000; i++)
  printf "%09d line %d\n", int(rand() * 1e9), i }' >in.txt

# ------------------------------------------------------------------ sort
# coreutils sort opens its input (open, then fdopen), reads it with
# fread_unlocked and writes each output line with one fwrite_unlocked
# (--sample: sampled too; sort catches SIGPROF, as a signal that must
# remove its temporary files, so the agent's sampling must stay out of its
# way).
if [ -n "$SORT" ]; then
  compare sort --sample -- "$SORT" in.txt
  check sort
  is "$(slices sort fwrite_unlocked)" 40000 "sort: one fwrite_unlocked per output line"
  # The fd open() returned (not 3 under make check, whose driver leaves
  # fds open) is the one fdopen() gets.
  s_fd=$(slice_with sort open 'path:str="in.txt"' | sed -n 's/.*, result:i64=\([0-9][0-9]*\)}$/\1/p')
  ok "sort: the open slice with the path, its fd passed to fdopen (fd $s_fd)" \
    test -n "$s_fd" -a -n "$(slice_with sort fdopen "fd:i64=$s_fd,")"
  ok "sort: fread_unlocked slices" test "$(slices sort fread_unlocked)" -ge 1
  # Every output line is a log record, in order (stdout only: no stderr).
  sed -n 's/^ts=[0-9.]* pid=[0-9]* tid=[0-9]* log msg="\(.*\)"$/\1/p' sort.dump >sort.log
  ok "sort: its 40000 output lines as log records, in order" cmp sort.log sort.plain.out
  sampled sort sort
  nothing_left sort
else
  skip_n 10 "sort not installed"
fi

# ------------------------------------------------------------------ gzip
# gzip works on file descriptors: open/openat, read, write on fd 1.
if [ -n "$GZIP_" ]; then
  compare gzip-c -- "$GZIP_" -c in.txt
  check gzip-c
  ok "gzip -c: read slices of in.txt's fd" \
    test -n "$(slice_with gzip-c read 'count:')"
  ok "gzip -c: write slices on fd 1" test -n "$(slice_with gzip-c write 'fd:i64=1')"
  is "$(grep -c ' log msg=' gzip-c.dump)" 0 "gzip -c: its binary output is not logged"

  cp gzip-c.out in.gz
  compare gzip-dc -- "$GZIP_" -dc in.gz
  ok "gzip -dc: the round trip gives the input back" cmp gzip-dc.out in.txt
  check gzip-dc
  is "$(test "$(slices gzip-dc read)" -ge 1 && echo yes) $(test "$(slices gzip-dc write)" -ge 1 && echo yes)" \
    "yes yes" "gzip -dc: read and write slices"

  # A missing input: exit status 1, the same message; the failed open is a
  # slice with result -1 and errno ENOENT (errors pass through unchanged).
  compare gzip-missing -- "$GZIP_" -dc missing.gz
  check gzip-missing
  ok "gzip missing input: a failed open slice with errno ENOENT" \
    test -n "$(slice_with gzip-missing open 'errno:str="ENOENT"')$(slice_with gzip-missing openat 'errno:str="ENOENT"')"
else
  skip_n 18 "gzip not installed"
fi

# ------------------------------------------------------------------ find
# find walks /usr/include with fts (openat of each directory, close) and
# prints each match: the log records are its output lines.
if [ -n "$FIND" ] && [ -d /usr/include ]; then
  compare find --sample -- "$FIND" /usr/include -name '*.h'
  check find
  ok "find: openat slices with a path" test -n "$(slice_with find openat 'path:str=')"
  ok "find: close slices" test "$(slices find close)" -ge 1
  is "$(grep -c ' log msg=' find.dump)" "$(wc -l <find.plain.out | tr -d ' ')" \
    "find: one log record per output line"
  sampled find find
  compare find-missing -- "$FIND" /nonexistent-fxt-dir -name '*.h'
  check find-missing
else
  skip_n 12 "find or /usr/include missing"
fi

# ------------------------------------------------------------------- git
if [ -n "$GIT" ]; then
  compare git -- "$GIT" --version
  check git
  ok "git: its version line as a log record" logged git "$(cat git.plain.out)"
  ok "git: libc.io slices" test "$(grep -c ' cat="libc\.io" ' git.dump)" -ge 1
else
  skip_n 6 "git not installed"
fi

finish
