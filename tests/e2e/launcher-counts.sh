#!/bin/sh
# fxt-run's summary line says what the archive holds: its events, threads,
# dropped calls and processes are the ones `fxt-dump --stats` counts in the
# archive fxt-run leaves (one definition, fxt/counts.h), for runs of many
# processes (threads, forks, execs, pipes, a process recovered from its
# spool), with drops, samples and every libc group; for each archive
# --keep-parts leaves; and for the archive `fxt-run --recover` writes.
# Its warning of slices nested too deep for Perfetto is the one
# `fxt-dump --check` gives (fxt/depth.h).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 17

# said ARCHIVE: what fxt-run's summary line of ARCHIVE said (in
# $TMPD/err), "E events, T threads, D dropped[, P processes]".
said() {
  s_line=$(grep -E "^fxt-run: wrote (child archive )?$1 \\(" "$TMPD/err" | head -n 1)
  s_num() { printf '%s\n' "$s_line" | sed -n "s/$1/\\1/p"; }
  s_p=$(s_num '^[^)]*); \([0-9]*\) process.*')
  echo "$(s_num '^[^(]*([^,]*, \([0-9]*\) events*, .*') events," \
    "$(s_num '^[^(]*([^,]*, [0-9]* events*, \([0-9]*\) threads*, .*') threads," \
    "$(s_num '^[^(]*([^,]*, [0-9]* events*, [0-9]* threads*, \([0-9]*\) dropped.*') dropped${s_p:+, $s_p processes}"
}
# holds ARCHIVE [processes]: the same numbers, counted in ARCHIVE by
# fxt-dump --stats (with its processes when asked).
holds() {
  "$FXT_DUMP" --stats "$1" >"$TMPD/stats" || return 1
  h_v() { sed -n "s/^$1 //p" "$TMPD/stats"; }
  echo "$(h_v events) events, $(h_v threads) threads, $(h_v dropped) dropped${2:+, $(h_v processes) processes}"
}
# each_agrees NAME MIN: every archive here has its own line in the summary,
# saying what it holds; at least MIN of them (each_agrees NAME MIN).
each_agrees() {
  n=0 bad=
  for a in *.fxt; do
    n=$((n + 1))
    [ "$(said "$a")" = "$(holds "$a")" ] || bad="$bad $a: said $(said "$a"), holds $(holds "$a");"
  done
  ok "$1: $n archives, each line says what it holds" test -z "$bad" -a "$n" -ge "$2"
  [ -z "$bad" ] || diag "$bad"
}
# agrees NAME ARCHIVE [processes]: the summary's numbers are ARCHIVE's.
agrees() {
  a_want=$(holds "$2" $3)
  is "$(said "$2")" "$a_want" "$1: the summary says what the archive holds ($a_want)"
}

# The workload: sh running processes one after the other and at once:
# threads named every way (in the background), threads, a fork whose child
# leaves by _exit (recovered from its spool), an exec of a process that
# has recorded (one pid, two images: its main thread is in both), a
# pipeline, and sh exec'ing a program (the same again).
workload='"$1" return >/dev/null & "$2" >/dev/null; "$3" _exit >/dev/null; "$4" l >/dev/null
echo x | cat >/dev/null; sh -c "exec \"$5\" 1000" >/dev/null; wait'
# With --keep-parts, fewer: fxt-run gives eight child archives a line each
# (a command sh runs is two: sh's fork child, which records its exec, and
# the program).
few='"$2" >/dev/null; "$3" _exit >/dev/null; "$4" l >/dev/null'
set -- "$PROGS/named_threads" "$EXAMPLES/threads" "$PROGS/fork_child" "$PROGS/exec_list" \
  "$PROGS/loop"

trace m.fxt sh -c "$workload" sh "$@"
is "$rc" 0 "many processes: exit status 0"
check_archive "many processes" m.fxt
agrees "many processes" m.fxt processes
ok "many processes: several processes, images and a recovery" grep -Eq \
  '^fxt-run: wrote m\.fxt \(.*\); [0-9]+ processes, [0-9]+ images, [0-9]+ exited without sealing their spool \(converted from it\)$' \
  "$TMPD/err"

# Drops (a small --max-size), stack samples (a thread's sample track is a
# thread of the archive), every libc group (the heap counter, sync flows).
trace d.fxt --max-size=64K --sample=2000 --libc=all sh -c "$workload; \"\$5\" 3000000" sh "$@"
is "$rc" 0 "drops, samples, all libc groups: exit status 0"
agrees "drops, samples, all libc groups" d.fxt processes
ok "drops, samples, all libc groups: calls were dropped" \
  sh -c 'test "$("$1" --stats "$2" | sed -n "s/^dropped //p")" -gt 0' sh "$FXT_DUMP" d.fxt

# --keep-parts: each archive's line says what that archive holds.
mkdir keep && cd keep || exit 1
trace k.fxt --keep-parts sh -c "$few" sh "$@"
each_agrees --keep-parts 4
cd "$TMPD" || exit 1

# One process, no merge: the converter's numbers are the archive's.
trace one.fxt --sample=2000 --libc=all "$PROGS/named_threads" return
agrees "one process" one.fxt

# Too deep for Perfetto: fxt-run's warning (the converter's count) is
# the one fxt-dump --check gives (the archive's), same numbers, same
# deepest slice.  100,000 calls deep, the outer frames are begin/end pairs
# (past the converter's FIFO) and the inner ones complete events nested
# in them; with --min-duration the calls left out are not counted.
deep_said() { sed -n 's/^fxt-run: warning: \(.* nest deeper .*\)/\1/p' "$TMPD/err"; }
deep_holds() { "$FXT_DUMP" --check "$1" 2>&1 | sed -n 's/^.*: warning: \(.* nest deeper .*\)/\1/p'; }
trace deep.fxt "$PROGS/deep_recursion" 100000
w=$(deep_said)
is "$w" "$(deep_holds deep.fxt)" "deep recursion: fxt-run's warning is fxt-dump --check's"
ok "deep recursion: 99,490 slices too deep, the deepest at depth 100,002" \
  test -n "$(printf '%s\n' "$w" | grep '^99490 slices .*(depth 100002 on ')"
trace deepmin.fxt --min-duration=20us "$PROGS/deep_recursion" 2000
is "$(deep_said)" "$(deep_holds deepmin.fxt)" "--min-duration: fxt-run's warning is fxt-dump --check's"

# fxt-run killed with its processes (its own process group): the spools
# stay; --recover converts and merges them, and says what the archive
# holds.
mkdir gone && cd gone || exit 1
kill_when_ready r.fxt sh -c "$workload"'; "$1" hang' sh "$@"
ok "killed run: spools left, no archive" sh -c 'test ! -e r.fxt && ls r.fxt.*.spool >/dev/null'
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc" 0 "--recover: exit status 0"
check_archive "--recover" r.fxt
agrees "--recover" r.fxt processes
cd "$TMPD" || exit 1

# --recover --keep-parts of the same kind of leftovers.
mkdir gone2 && cd gone2 || exit 1
kill_when_ready r.fxt sh -c '"$3" _exit >/dev/null; "$1" hang' sh "$@"
"$FXT_RUN" --recover --keep-parts . >"$TMPD/out" 2>"$TMPD/err"
each_agrees "--recover --keep-parts" 1
cd "$TMPD" || exit 1
finish
