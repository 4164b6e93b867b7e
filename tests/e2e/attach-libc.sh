#!/bin/sh
# fxt-run -p PID --libc: the libc wrappers bound into the GOTs of a process
# already running, and written back at the detach.
#  1. --libc=io on tests/progs/attach_target --serve ("io N": N writes of 8
#     bytes to /dev/null; "thread N": the same in a thread it starts): the
#     archive holds exactly the window's calls, with their arguments, those
#     of the thread started while attached and of a library it dlopen()s
#     then too; while attached, slots of the program and of the
#     C library hold the agent's wrappers; after the detach every slot is
#     as it was (but those the loader bound lazily meanwhile), none points
#     into the agent; the program's output and exit status are its own.
#  2. --libc=mem on tests/progs/attach_malloc, which has its own malloc:
#     the wrappers call that malloc (not the C library's), so its free()
#     never gets a block it did not hand out; the archive holds the
#     window's mallocs exactly.
#  3. --libc=io,proc,log, the process forks a child that writes, then execs
#     env(1), while attached: the child's calls are in the archive; the window
#     so far is sealed (the execv with its path), and the new image gets the
#     environment the program gave it, none of fxtrace's variables (it is
#     not recorded).  Its printf's line before is logged (printf's wrapper
#     calls our vprintf's, not the C library's).
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 26
if [ "$(uname -m)" != x86_64 ]; then
  skip_rest "attaching is for x86-64"
fi
if ! command -v python3 >/dev/null 2>&1; then
  skip_rest "python3 is not installed (tests/helpers/got_slots.py)"
fi
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

SLICES=$HELPERS/libc_slices
GOT="python3 $abs_top_srcdir/tests/helpers/got_slots.py"
attached() { grep -q '^fxt-run: attached to ' run.err; }

# got_of FILE: the GOT slots of the program and of its C library, now.
got_of() {
  exe=$(readlink "/proc/$target/exe")
  libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' "/proc/$target/maps")
  $GOT $target "$exe" "$libc" >"$1"
}

# io N: N writes to /dev/null in attach_target --serve, returned.
io() {
  echo "io $1" >&9
  wait_until grep -q "^done io $1\$" out
}

# 1. --libc=io: the window's writes, the GOTs as they were after.
start --serve
io 10
got_of before
rm -f run.err
"$FXT_RUN" -p $target --libc=io -o io.fxt 2>run.err 9>&- &
run=$!
wait_until attached
got_of during
io 1000
echo "thread 40" >&9
wait_until grep -q "^done thread 40\$" out
echo "dlopen $PROGS/.libs/libinject_probe.so $TMPD/probed" >&9
wait_until grep -q "^done dlopen\$" out
probe_got() { $GOT $target "$(cd "$PROGS/.libs" && pwd -P)/libinject_probe.so" >"$1"; }
probe_got probe.during
# The window ends here, whatever the load (a --duration could end it
# before the steps above on a busy machine).
kill -INT $run
wait $run
is "$?" 0 "fxt-run -p --libc=io: exit 0"
got_of after
probe_got probe.after
io 5
exec 9>&-
wait $target
is "$?:$(tr '\n' ' ' <out)" "0:ready done io 10 done io 1000 done thread 40 done dlopen done io 5 served: nothing " \
  "the program's output and exit status are its own"

"$SLICES" --slices libc.io io.fxt >io.slices
fd=$(awk '$1 == 1 && $2 == "open" && / path=\/dev\/null / { sub(/.*result=/, ""); print }' io.slices)
is "$(grep -c '^1 open .* path=/dev/null ' io.slices)" 1 "the window's open of /dev/null"
is "$(grep -c "^1 write caller=[^ ]* fd=$fd count=8 result=8$" io.slices)" 1000 \
  "its 1000 writes of 8 bytes, with their fd, count and result, exactly"
is "$(grep -v '^1 close caller=probe ' io.slices | grep -c "^1 close caller=[^ ]* fd=$fd ")" 1 \
  "... and its close"
is "$(grep -c '^2 write caller=[^ ]* fd=[0-9]* count=8 result=8$' io.slices)" 40 \
  "the 40 writes of the thread started while attached"
is "$(grep -c "^1 open caller=probe .* path=$TMPD/probed " io.slices)" 1 \
  "the open of a library dlopen()ed while attached (its GOT bound at dlopen)"
ok "the archive is valid" sh -c '"$1" --check "$2" >/dev/null' sh "$FXT_DUMP" io.fxt

in_agent() { awk '$4 == "libfxt-agent.so"' "$1" | wc -l | tr -d ' '; }
ok "while attached, slots of the program hold the agent's wrappers ($(in_agent during))" \
  test "$(awk -v exe="$exe" '$1 == exe && $4 == "libfxt-agent.so"' during | wc -l)" -ge 3
is "$(in_agent after)" 0 "after the detach, no slot points into the agent"
is "$(in_agent probe.during):$(in_agent probe.after)" "3:0" \
  "the dlopen()ed library's open, write and close: the agent's while attached, not after"
# Slot by slot (the same lines, in the same order): each holds what it held
# before, or, if it held its own module's PLT then (a lazy binding), what
# the loader bound it to since.
changed() {
  paste -d ' ' before after | awk '$3 != $7 { n = split($1, p, "/"); if ($4 != p[n]) print }'
}
is "$(changed)" "" "after the detach, every slot holds what it held before"
cut -d ' ' -f1,2 before >slots.before
cut -d ' ' -f1,2 after >slots.after
ok "... the same $(wc -l <slots.before | tr -d ' ') slots read both times" cmp -s slots.before slots.after

# 2. --libc=mem on a program with its own malloc.
rm -f in out stop
mkfifo in
"$PROGS/attach_malloc" <in >out 2>err &
target=$!
exec 9>in
wait_until ready
mem() {
  echo "mem $1" >&9
  wait_until grep -q "^done mem $1\$" out
}
mem 10
rm -f run.err
"$FXT_RUN" -p $target --libc=mem -o mem.fxt 2>run.err 9>&- &
run=$!
wait_until attached
mem 1000
kill -INT $run
wait $run
is "$?" 0 "fxt-run -p --libc=mem: exit 0"
mem 5
exec 9>&-
wait $target
is "$?:$(tr '\n' ' ' <out)" \
  "0:ready done mem 10 done mem 1000 done mem 5 blocks: some allocated, some freed, 0 foreign " \
  "its own malloc served the wrappers: its free() never got a block not its own"
is "$("$SLICES" --slices libc.mem mem.fxt | grep -c '^1 malloc .*size=8 ')" 1000 \
  "the archive holds the window's 1000 mallocs (strdup's), exactly"
is "$("$SLICES" --slices libc.mem mem.fxt | grep -vc '^1 malloc .*size=8 ')" 0 "... and nothing else"

# 3. exec while attached.
start --serve
# Its own variables (the test's environment may have some FXT_ of its own).
tr '\0' '\n' <"/proc/$target/environ" | grep -E '^(FXT_|LD_PRELOAD=)' | sort >env.before
rm -f run.err
"$FXT_RUN" -p $target --libc=io,proc,log -o x.fxt 2>run.err 9>&- &
run=$!
wait_until attached
io 3
echo "fork 20" >&9
wait_until grep -q "^done fork 20\$" out
echo "exec $(command -v env)" >&9
exec 9>&-
wait $target
is "$?" 0 "the process execs env while attached: env exits 0"
wait $run
is "$?" 0 "fxt-run: exit 0"
is "$(grep -c 'recovered from spool' run.err)" 0 "the spool was sealed before the exec (execv too)"
grep -E '^(FXT_|LD_PRELOAD=)' out | sort >env.after
ok "env's environment has no variable of fxtrace's but those the process had" \
  cmp -s env.before env.after
is "$("$SLICES" --slices libc.proc x.fxt | grep -c "^1 execv caller=main path=$(command -v env) ")" 1 \
  "the archive holds the execv"
is "$("$SLICES" --slices libc.io x.fxt | grep -c '^1 write caller=[^ ]* fd=[0-9]* count=8 result=8$')" 3 \
  "... and the window's writes before it"
is "$("$FXT_DUMP" x.fxt | grep -c ' log msg="done io 3"$')" 1 "... and the line printf wrote"
is "$("$SLICES" --slices libc.proc x.fxt | grep -c '^1 fork caller=')" 1 "the fork made while attached"
is "$("$SLICES" --slices libc.io x.fxt | grep -c '^2 write caller=[^ ]* fd=[0-9]* count=8 result=8$')" 20 \
  "... and the 20 writes of the child, in its own process"
finish
