#!/bin/sh
# fxt-run --patch and the programs that walk their own stack, which
# patching's return trampoline would meet where a return address should be.
# A program printing its own backtrace (backtrace(), _Unwind_Backtrace(),
# libunwind's unw_backtrace(): tests/progs/patchme_bt) prints the frames of
# the plain run, its calls counted.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

N=5
plan $N
scratch

if ! grep -q '^#define HAVE_CAPSTONE 1' "$abs_top_builddir/config.h"; then
  for i in $(seq $N); do skip "built without Capstone"; done
  finish; exit $?
fi
if [ "$(uname -m)" != x86_64 ]; then
  for i in $(seq $N); do skip "run-time patching is for x86-64"; done
  finish; exit $?
fi

# frames FILE: the backtraces printed, their absolute addresses left out
# (the program is position-independent).
frames() { sed 's/ *\[0x[0-9a-f]*\]$//' "$1"; }

for p in patchme_bt patchme_bt_unw; do
  "$PROGS/$p" > "$TMPD/$p.plain" 2>&1
  "$FXT_RUN" -q -o "$TMPD/$p.fxt" --patch=. -- "$PROGS/$p" > "$TMPD/$p.out" 2> "$TMPD/$p.err"
  is "$?/$(frames "$TMPD/$p.out")" "0/$(frames "$TMPD/$p.plain")" \
    "$p: the backtraces of the plain run, names and offsets ($(grep -c '^[a-z_]*backtrace[(0-9)]*: [0-9]* frames$' "$TMPD/$p.plain") of them)"
done
ok "patchme_bt: backtrace() with room for 4 of 11 frames: the first 4" \
  grep -q '^backtrace(4): 4 frames$' "$TMPD/patchme_bt.out"
"$abs_top_builddir/fxt-report" --format csv "$TMPD/patchme_bt.fxt" |
  awk -F, 'NR > 1 && $(NF - 1) ~ /patchme_bt/ { n = $NF; gsub(/"/, "", n); print n, $1 }' | sort > "$TMPD/calls"
is "$(awk '$1 ~ /^(show|inner|middle|outer|collect)$/ { printf "%s=%s ", $1, $2 }' "$TMPD/calls")" \
  "collect=36 inner=12 middle=3 outer=3 show=3 " "patchme_bt: the functions it walks through are patched, every call counted"
# Not patched, the same frames too (the agent's own entry points show none
# of their frames).
"$FXT_RUN" -q -o "$TMPD/np.fxt" -- "$PROGS/patchme_bt_unw" > "$TMPD/np.out" 2>&1
is "$(frames "$TMPD/np.out")" "$(frames "$TMPD/patchme_bt_unw.plain")" "patchme_bt_unw, traced without --patch: the frames of the plain run"
finish
