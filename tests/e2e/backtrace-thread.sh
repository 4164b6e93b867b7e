#!/bin/sh
# A program printing its own backtrace prints the frames of its plain run,
# traced or not (issue 24), in a thread too, whose start routine the agent
# runs from a trampoline of its own (agent/libc/wrap_thread.c): backtrace(),
# _Unwind_Backtrace() and libunwind's unw_backtrace() leave every frame in
# the agent's code out, and still fill the buffer with the program's
# (tests/progs/patchme_bt thread: a thread, then the main thread, each
# through a chain of 7 calls; backtrace() with room for 4 and for exactly
# its frames).  With the default options, --libc=all, and --patch=.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

N=7
plan $N
scratch

# frames FILE: the backtraces printed, their absolute addresses left out
# (the program is position-independent).
frames() { sed 's/ *\[0x[0-9a-f]*\]$//' "$1"; }

"$PROGS/patchme_bt" thread > "$TMPD/plain" 2>&1
ok "patchme_bt thread: the thread's frames end in the C library's (plain run)" \
  sh -c "sed -n '/^thread:/,/^main:/p' '$TMPD/plain' | grep -q 'libc.so.6(+0x'"
patch=yes
[ -z "$(patch_unavailable)" ] || patch=
for p in patchme_bt patchme_bt_unw; do
  "$PROGS/$p" thread > "$TMPD/$p.plain" 2>&1
  i=0
  for o in "" --libc=all --patch=.; do
    i=$((i + 1))
    if [ "$o" = --patch=. ] && [ -z "$patch" ]; then
      skip "$p thread $o: run-time patching needs Capstone on x86-64"
      continue
    fi
    # shellcheck disable=SC2086 # $o is one option or none
    "$FXT_RUN" -q -o "$TMPD/$p.$i.fxt" $o -- "$PROGS/$p" thread > "$TMPD/$p.out" 2> "$TMPD/$p.err"
    is "$?/$(frames "$TMPD/$p.out")" "0/$(frames "$TMPD/$p.plain")" \
      "$p thread, fxt-run ${o:-(default options)}: the frames of the plain run ($(grep -c ' frames$' "$TMPD/$p.plain") backtraces)"
  done
done
finish
