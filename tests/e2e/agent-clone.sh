#!/bin/sh
# Children made without fork() (tests/progs/clone_kinds.c): glibc's _Fork(),
# clone() with and without CLONE_VM and CLONE_VFORK, the clone system calls
# through syscall(), and one made inline that no wrapper sees.  The parent
# calls parent_before and parent_after around its child, the child
# child_work three times.  Each process's calls are in its own process,
# once (or, for a child that shares its parent's memory and thread state,
# counted as dropped with their cause); the archive passes fxt-dump
# --check; the program prints and exits as it does untraced.  On the agent
# from before, each such child wrote into its parent's chunk (its calls
# lost, or in the parent's process), and nothing said so.
. "$abs_top_srcdir/tests/e2e/libc-proc-common.sh"

plan 90
prog=$PROGS/clone_kinds

# providers ARCHIVE: the provider ids (pids), in archive order, one line.
providers() { "$FXT_DUMP" "$1" | sed -n 's/^provider_info id=\([0-9]*\) .*/\1/p' | tr '\n' ' '; }
# pflat ARCHIVE PID: "COUNT NAME" per function of process PID, one line.
pflat() { "$CALLTREE" --pid "$2" --flat "$1" | sort | tr '\n' ';'; }

parent_calls='1 main;1 make_child;1 parent_after;1 parent_before;'

# run KIND ARCHIVE [OPTIONS]: clone_kinds KIND, plain and under fxt-run;
# $parent, $child: the pids; fxt-run's summary of another run in
# $TMPD/summary (both() runs it quiet).
run() {
  r_kind=$1 r_archive=$2; shift 2
  "$FXT_RUN" -f -o "$TMPD/s.fxt" "$@" -- "$prog" "$r_kind" >/dev/null 2>"$TMPD/summary"
  both "$r_archive" "$@" -- "$prog" "$r_kind" "$TMPD/pid"
  child=$(cat "$TMPD/pid" 2>/dev/null)
  set -- $(providers "$r_archive")
  parent=${1:-none}
}

# A child with memory of its own: its calls in its process, none in the
# parent's (with --libc=none too: the agent's fork handling does not
# depend on the proc group).
own_case() {
  k=$1 extra=$2
  run "$k" "$k.fxt" --libc=none
  same "$k"
  is "$(cat "$TMPD/out")" "clone_kinds $k: child status 3" "$k: what the program saw"
  check_archive "$k" "$k.fxt"
  is "$(providers "$k.fxt")" "$parent $child " "$k: two processes, the parent's first, then the child's"
  is "$(pflat "$k.fxt" "$parent")" "$parent_calls" "$k: the parent's calls, once, in the parent"
  is "$(pflat "$k.fxt" "$child")" "${extra}1 child_main;3 child_work;" \
    "$k: the child's calls, once, in the child"
  ok "$k: nothing dropped" grep -q ' 0 dropped); 2 processes$' "$TMPD/summary"
}

own_case fork
own_case _Fork
own_case clone '1 child_fn;'
own_case clone-vfork '1 child_fn;'
own_case syscall
own_case clone3

# clone3 through syscall() with a pointer the kernel refuses: its answer
# (EFAULT), not a fault in the wrapper that reads the flags.
"$FXT_RUN" -q -f -o "$TMPD/bad.fxt" -- "$prog" clone3-bad >"$TMPD/bad" 2>&1
is "$?:$(cat "$TMPD/bad")" "0:clone_kinds clone3-bad: -1 EFAULT" \
  "clone3 with a bad pointer: EFAULT, as untraced"

# The proc group: the parent's call is a slice named after it, with a
# flow into the child's "fork (child)" slice.
for k in _Fork:_Fork clone:clone syscall:clone clone3:clone3; do
  name=${k#*:} k=${k%%:*}
  run "$k" "p$k.fxt" --libc=proc
  is "$(slice_args "p$k.fxt" "$name")" "pid=$parent caller:str=\"make_child\", result:i64=$child" \
    "$k: the parent's $name slice, the child's pid its result"
  id=$(((2 << 60) | (parent << 30) | child))
  is "$(flow_ids "p$k.fxt" flow_end "fork (child)")" "pid=$child $id" \
    "$k: the child's \"fork (child)\" slice ends the flow from it"
done

# A child that shares its parent's memory and, with no TLS of its own,
# the thread's state: its calls (child_fn, child_main, three child_work,
# and with the proc group _exit) are counted as the thread's drops, with
# their cause; the parent's are recorded, nesting intact.  Without
# CLONE_VFORK the libc calls are left out: the two run at once, and one's
# libc call hides the other's (they share the thread's `wrap`).
for k in clone-vm:5:--libc=none clone-vm-vfork:6:--libc=default; do
  opt=${k##*:} k=${k%:*}
  n=${k#*:} k=${k%:*}
  run "$k" "$k.fxt" "$opt"
  same "$k"
  check_archive "$k" "$k.fxt"
  is "$(providers "$k.fxt")" "$parent " "$k: one process"
  is "$(pflat "$k.fxt" "$parent" | tr ';' '\n' | grep ' \(main\|make_child\|parent_[a-z]*\|child_[a-z]*\)$' | tr '\n' ';')" \
    "$parent_calls" "$k: the parent's calls, none of the child's"
  ok "$k: the child's $n calls said dropped, with their cause" \
    grep -q " $n dropped: a child made by clone() with CLONE_VM, no TLS" "$TMPD/summary"
done

# The parent goes on while such a child runs (20000 calls each, on two
# cores when the machine has them): the parent's are all recorded, in
# chunk after chunk, the child's all counted.
run clone-vm-busy busy.fxt --libc=none
same clone-vm-busy
check_archive clone-vm-busy busy.fxt
is "$(pflat busy.fxt "$parent")" "1 main;1 make_child;1 parent_after;1 parent_before;20000 parent_spin;" \
  "clone-vm-busy: the parent's calls, all of them, none of the child's"
ok "clone-vm-busy: the child's 20001 calls said dropped" \
  grep -q " 20001 dropped: a child made by clone() with CLONE_VM" "$TMPD/summary"

# Made inline, no wrapper sees it: the child notices at its exit, becomes
# a process of its own and says that its first calls went into its
# parent's buffer.
run asm asm.fxt
same asm
check_archive asm asm.fxt
is "$(providers asm.fxt)" "$parent $child " "asm: the child has an archive of its own"
ok "asm: the archive says a raw clone's calls went to its parent" \
  grep -q 'dropped: a clone system call no wrapper saw made the process' "$TMPD/summary"
is "$("$FXT_DUMP" asm.fxt | grep -c "pid=$child .*name=\"fxt: 1 records dropped\".*no wrapper saw")" 1 \
  "asm: the drop instant, in the child"

finish
