#!/bin/sh
# fxt-run --patch: exact calls of programs built without
# -finstrument-functions (tests/progs/patchme, patchme_cxx: -O2 -g).  The
# program's output and exit status stay the same; each function's calls
# are the number the program makes (recursion, threads, a signal handler,
# longjmp out of nested calls, C++ exceptions thrown, cleaned up, rethrown
# and caught through patched frames); functions that cannot be patched are
# left alone with their reason; no page is writable and executable; the
# archive is valid.  With uftrace installed, the counts equal `uftrace
# record -P.`'s for every function both patch.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 68
scratch
P=$PROGS/patchme
X=$PROGS/patchme_cxx

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

# calls ARCHIVE: "FUNCTION CALLS" of the program's functions.
calls() {
  "$abs_top_builddir/fxt-report" --format csv "$1" |
    awk -F, 'NR > 1 && $(NF - 1) ~ /^"?(patchme|patchme_pfe|patchme_cxx|patchme_cxx_slg|stripped|patchme_lib|patchme_librel|libpatchlib.so|patchme_dl|libpatchdl.so)"?$/ { n = $NF; gsub(/"/, "", n); gsub(/\(.*/, "", n); print n, $1 }' | sort
}

"$P" > "$TMPD/plain.out" 2>&1
plain_rc=$?
"$FXT_RUN" -o "$TMPD/p.fxt" --patch=. --patch-list -- "$P" > "$TMPD/p.out" 2> "$TMPD/p.err"
is "$?" "$plain_rc" "patchme: the exit status is the plain run's ($plain_rc)"
is "$(cat "$TMPD/p.out")" "$(cat "$TMPD/plain.out")" "patchme: the output is the plain run's"
ok "patchme: the archive is valid, no warning" sh -c \
  '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/p.fxt"
RULES=$abs_top_srcdir/tests/helpers/perfetto_rules.py
if [ -n "${PYTHON3:-}" ]; then
  is "$("$PYTHON3" "$RULES" "$TMPD/p.fxt")" ok "patchme: what Perfetto needs (perfetto_rules.py)"
else
  skip "no python3"
fi
calls "$TMPD/p.fxt" > "$TMPD/calls"
want() { awk -v f="$1" '$1 == f { print $2 }' "$TMPD/calls"; }
is "$(want worker)" 4 "threads: worker 4 calls"
is "$(want leaf)" 20031 "leaf: 4 x 5000 in the threads, 10 x 3 in the signal handler, 1 after the longjmps"
is "$(want on_signal)" 10 "a signal handler: 10 calls"
is "$(want dive)" 153 "longjmp out of 50 nested calls, 3 times: 3 x 51 calls, each ended"
is "$(want rip_first)" 1000 "a RIP-relative first instruction, relocated: 1000 calls (and the right sum)"
is "$(want leaves_regs)/$(grep '^regs:' "$TMPD/p.out")" "10/regs: kept (0)" \
  "every register a call may change but %rax is as the caller left it (-fipa-ra)"
is "$(grep '^altstack:' "$TMPD/p.out")/$(want alt_outer) $(want alt_inner) $(want on_alt) $(want alt_leaf)" \
  "altstack: 6/5 5 5 15" "a handler on an alternate signal stack above the frames it interrupts, 2 left by siglongjmp(): every call"
is "$(want dispatch) $(want interp)" "800 100" "a switch's jump table and computed gotos, read and found clear: every call"
is "$(grep '^coroutine:' "$TMPD/p.out")/$(want co_body) $(want co_step) $(want co_leaf)" \
  "coroutine: 4 4 2/2 8 8" "a coroutine (swapcontext), its stack below the main one, then above: every call"
is "$(want count_tail)" 60 "a tail call to itself (jmp to its entry): each call counted (10 x 6)"
is "$(want main)" 1 "main: 1 call"
ok "fib_rec: recursion, calls counted" test "$(want fib_rec)" -gt 1000
is "$(want loop_back)$(want tiny)$(want tiny_xor)" "" "the functions left alone have no calls"
ok "--patch-list: a jump back into the first bytes" grep -q '^fxt-run: skipped loop_back: a jump back into the first bytes$' "$TMPD/p.err"
ok "--patch-list: shorter than the patch" sh -c \
  'grep -q "^fxt-run: skipped tiny: shorter than the patch$" "$1" && grep -q "^fxt-run: skipped tiny_xor: shorter than the patch$" "$1"' - "$TMPD/p.err"
ok "--patch-list: the patched ones" grep -q '^fxt-run: patched rip_first$' "$TMPD/p.err"
ok "the summary: patched N of M functions, the reasons counted" \
  grep -q "^fxt-run: patched [0-9]* of [0-9]* functions of .*patchme (skipped: .*2 shorter than the patch.*)$" "$TMPD/p.err"

# The monotonic clock, not the TSC: the trampolines' fast path is off, and
# so is it at the exits of the calls the full way pushed (agent/patch/rt.h,
# SHADOW_APART): the same calls, each ended on the same clock (an exit
# stamped by the TSC would end its call hours after it began).
FXT_CLOCK=monotonic "$FXT_RUN" -q -o "$TMPD/mono.fxt" --patch=. -- "$P" > /dev/null 2>&1
calls "$TMPD/mono.fxt" > "$TMPD/mono.calls"
is "$(diff "$TMPD/calls" "$TMPD/mono.calls" && echo same)" same "the monotonic clock: the same calls"
ok "the monotonic clock: no call longer than a minute, the archive valid" sh -c \
  '"$1" --format csv "$2" | awk -F, "NR > 1 && \$6 > 6e10 { exit 1 }" &&
   "$3" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - \
  "$abs_top_builddir/fxt-report" "$TMPD/mono.fxt" "$FXT_DUMP"

# A nop sled at each entry (-fpatchable-function-entry=5): used as it is.
"$FXT_RUN" -q -o "$TMPD/pfe.fxt" --patch=. -- "$PROGS/patchme_pfe" fib threads tables > "$TMPD/pfe.out" 2>&1
calls "$TMPD/pfe.fxt" > "$TMPD/pfe.calls"
is "$(awk '$1 == "leaf" || $1 == "worker" || $1 == "dispatch" || $1 == "interp" { printf "%s=%s ", $1, $2 }' "$TMPD/pfe.calls")" \
  "dispatch=800 interp=100 leaf=20000 worker=4 " "-fpatchable-function-entry=5: its nop sleds patched, every call"

# No page both writable and executable, in the patched process.
"$FXT_RUN" -q -o "$TMPD/m.fxt" --patch=. -- "$P" maps > "$TMPD/m.out" 2>&1
is "$(cat "$TMPD/m.out")" "wx: none" "no mapping is writable and executable"

# 2000 threads one after the other: what each took is given back.
"$FXT_RUN" -q -o "$TMPD/churn.fxt" --patch=. -- "$P" churn > "$TMPD/churn.out" 2>&1
mib=$(sed -n 's/^churn: \([0-9]*\) MiB$/\1/p' "$TMPD/churn.out")
ok "2000 threads, one after the other: the process stays at ${mib:-?} MiB (< 2048; 12 MiB a thread kept would be 24 GiB)" \
  test "${mib:-99999}" -lt 2048

# Calls at a thread's end, after it gave its shadow stack back (a key
# destructor that runs after the agent's): not pushed, each returns
# straight to its caller (the stub's call of the function's code is
# skipped); the program runs as without.
"$P" late > "$TMPD/late.plain" 2>&1
"$FXT_RUN" -q -o "$TMPD/late.fxt" --patch=. -- "$P" late > "$TMPD/late.out" 2>&1
is "$?/$(cat "$TMPD/late.out")" "0/$(cat "$TMPD/late.plain")" \
  "calls at a thread's end, after its shadow stack was given back: the plain run's output and status"

# A pattern: only those functions.
"$FXT_RUN" -o "$TMPD/l.fxt" --patch='^leaf$' -- "$P" threads > /dev/null 2> "$TMPD/l.err"
is "$(calls "$TMPD/l.fxt")" "leaf 20000" "--patch='^leaf\$': leaf's calls only"
ok "... and the summary says 1 of 1" grep -q '^fxt-run: patched 1 of 1 functions of ' "$TMPD/l.err"

# The filters see patched functions as they see instrumented ones.
"$FXT_RUN" -q -o "$TMPD/e.fxt" --patch=. --exclude='^leaf$' -- "$P" threads > /dev/null 2>&1
is "$(calls "$TMPD/e.fxt" | grep -c '^leaf ')" 0 "--exclude='^leaf\$' with --patch: no leaf call"
"$FXT_RUN" -q -o "$TMPD/i.fxt" --patch=. --include='^worker$' --depth=1 -- "$P" threads > /dev/null 2>&1
is "$(calls "$TMPD/i.fxt")" "worker 4" "--include='^worker\$' --depth=1 with --patch: worker's 4 calls only"

# C++ exceptions through patched frames.
"$X" > "$TMPD/xplain.out" 2>&1
xrc=$?
"$FXT_RUN" -q -o "$TMPD/x.fxt" --patch=. -- "$X" > "$TMPD/x.out" 2>&1
is "$?/$(cat "$TMPD/x.out")" "$xrc/$(cat "$TMPD/xplain.out")" "C++: the output and status are the plain run's"
if [ -n "${PYTHON3:-}" ]; then
  is "$("$PYTHON3" "$RULES" "$TMPD/x.fxt")" ok "C++: what Perfetto needs (perfetto_rules.py)"
else
  skip "no python3"
fi
calls "$TMPD/x.fxt" > "$TMPD/calls"
is "$(want thrower) $(want cleanup) $(want rethrower)" "1500 600 100" \
  "C++: thrown through 11 and 4 frames, cleaned up through 6, rethrown: every call"
is "$(want catcher) $(want catcher_cleanup) $(want catcher_rethrow) $(want leaf)" "100 100 100 800" \
  "C++: the catching frames, and the calls made in handlers and destructors"
is "$(grep -c '^destructor' "$TMPD/x.out")/$(want exiter)" "4/4" \
  "C++: pthread_exit() 4 patched frames deep runs their 4 destructors"
ok "C++: the archive is valid, no warning" sh -c \
  '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/x.fxt"

# Attached (-p) to a C++ program while it throws: its unwinder was bound
# before the agent came, past the agent's entry points, and would meet a
# stub's exit and end the program (std::terminate): its functions are
# left alone, and said why.
# (It throws for 8 s: the attach, its 1 s window and the detach end well
# before, on a loaded machine too.)
"$X" loop 8 > "$TMPD/xloop.out" 2>&1 &
xpid=$!
sleep 1
"$FXT_RUN" -p $xpid --patch=. --duration 1 -o "$TMPD/xa.fxt" > /dev/null 2> "$TMPD/xa.err"
xarc=$?
wait $xpid
is "$?/$(cat "$TMPD/xloop.out")/$(grep -c 'it unwinds C++ exceptions' "$TMPD/xa.err")" "0/loop ok/1" \
  "C++ attached while it throws: it runs on, its functions left alone, and said" ||
  diag "fxt-run -p: status $xarc; $(cat "$TMPD/xa.err")"

# The unwinder linked into the program (-static-libgcc): patched, the
# same calls; with C++'s library too (-static-libstdc++), left alone.
"$FXT_RUN" -q -o "$TMPD/slg.fxt" --patch=. -- "$PROGS/patchme_cxx_slg" > "$TMPD/slg.out" 2>&1
is "$?/$(cat "$TMPD/slg.out")" "$xrc/$(cat "$TMPD/xplain.out")" "C++ -static-libgcc: the output and status are the plain run's"
calls "$TMPD/slg.fxt" > "$TMPD/calls"
is "$(want thrower) $(want catcher) $(want exiter)" "1500 100 4" "C++ -static-libgcc: every call"
"$FXT_RUN" -o "$TMPD/st.fxt" --patch=. -- "$PROGS/patchme_cxx_static" > "$TMPD/st.out" 2> "$TMPD/st.err"
is "$?/$(cat "$TMPD/st.out")" "$xrc/$(cat "$TMPD/xplain.out")" "C++ -static-libstdc++ -static-libgcc: the output and status are the plain run's"
ok "... left alone, and the summary says why" grep -q 'patched 0 of [0-9]* functions .*(skipped: [0-9]* it throws with an unwinder of its own' "$TMPD/st.err"

# Libraries loaded with the program: --patch-module.
L=$PROGS/patchme_lib
"$L" > "$TMPD/lplain.out" 2>&1
"$FXT_RUN" -o "$TMPD/lib.fxt" --patch=. --patch-module='libpatchlib*' --patch-module='libc.so*' \
  -- "$L" > "$TMPD/lib.out" 2> "$TMPD/lib.err"
is "$?/$(cat "$TMPD/lib.out")" "0/$(cat "$TMPD/lplain.out")" "--patch-module: the output and status are the plain run's"
calls "$TMPD/lib.fxt" > "$TMPD/calls"
is "$(want lib_each) $(want back)" "3 300" "--patch-module: the library's calls, and its calls back into the program"
ok "--patch-module: the library's recursion counted" test "$(want lib_fib)" -gt 100
ok "--patch-module: a summary line for the library" grep -q '^fxt-run: patched [0-9]* of [0-9]* functions of .*libpatchlib.so' "$TMPD/lib.err"
ok "--patch-module: never the C library" sh -c '! grep -q "functions of .*libc.so" "$1"' - "$TMPD/lib.err"
# The library found by a relative rpath ("."), the loader's name for it
# ./libpatchlib.so: patched all the same (it was left out, unsaid).
mkdir "$TMPD/rel" && cp "$PROGS/.libs/libpatchlib.so" "$TMPD/rel/"
(cd "$TMPD/rel" && "$PROGS/patchme_librel") > "$TMPD/rplain.out" 2>&1
(cd "$TMPD/rel" && "$FXT_RUN" -o "$TMPD/rel.fxt" --patch=. --patch-module='libpatchlib*' \
  -- "$PROGS/patchme_librel") > "$TMPD/rel.out" 2> "$TMPD/rel.err"
is "$?/$(cat "$TMPD/rel.out")" "0/$(cat "$TMPD/rplain.out")" "--patch-module, a library found by a relative rpath: the output and status of the plain run"
calls "$TMPD/rel.fxt" > "$TMPD/calls"
is "$(want lib_each) $(want back)" "3 300" "... the library's calls, and its calls back into the program"
ok "... a summary line for the library" grep -q '^fxt-run: patched [1-9][0-9]* of [0-9]* functions of libpatchlib.so' "$TMPD/rel.err"

# Libraries loaded by dlopen(), with threads running: patched at each load
# (twice here), one of its functions being called on another thread the
# while (PATCHDL_SPIN: a thread its constructor starts).
D=$PROGS/patchme_dl
DL=$(cd "$PROGS/.libs" && pwd -P)/libpatchdl.so
"$D" "$DL" > "$TMPD/dplain.out" 2> /dev/null
PATCHDL_SPIN=1 "$FXT_RUN" -o "$TMPD/dl.fxt" --patch=. --patch-module='libpatchdl*' \
  -- "$D" "$DL" > "$TMPD/dl.out" 2> "$TMPD/dl.err"
is "$?/$(cat "$TMPD/dl.out")" "0/$(cat "$TMPD/dplain.out")" "dlopen: the output and status are the plain run's"
calls "$TMPD/dl.fxt" > "$TMPD/calls"
is "$(want dl_each) $(want dl_square) $(want dl_stop_spinner)" "4 220 2" \
  "dlopen: patched at each of two loads, called from two threads: every call"
spins=$(awk '/^spins/ { n += $2 } END { print n + 0 }' "$TMPD/dl.err")
ok "dlopen: the spinner's calls after the patch counted ($(want dl_spin) of $spins)" \
  test "$(want dl_spin)" -gt 0 -a "$(want dl_spin)" -le "$spins"
ok "dlopen: a summary line for the library" \
  grep -q '^fxt-run: patched [0-9]* of [0-9]* functions of .*libpatchdl.so' "$TMPD/dl.err"
# dlopen("./libpatchdl.so"): patched at each load too; then its file
# removed by its constructor, before it could be read: left alone, and said.
cp "$DL" "$TMPD/rel/"
(cd "$TMPD/rel" && "$FXT_RUN" -o "$TMPD/dlr.fxt" --patch=. --patch-module='libpatchdl*' \
  -- "$D" ./libpatchdl.so) > "$TMPD/dlr.out" 2> "$TMPD/dlr.err"
is "$?/$(cat "$TMPD/dlr.out")" "0/$(cat "$TMPD/dplain.out")" "dlopen of a relative path: the output and status are the plain run's"
calls "$TMPD/dlr.fxt" > "$TMPD/calls"
is "$(want dl_each) $(want dl_square)" "4 220" "... patched at each of two loads: every call"
"$D" "$DL" 1 > "$TMPD/d1plain.out" 2> /dev/null
(cd "$TMPD/rel" && PATCHDL_UNLINK=libpatchdl.so "$FXT_RUN" -o "$TMPD/dlg.fxt" --patch=. \
  --patch-module='libpatchdl*' -- "$D" ./libpatchdl.so 1) > "$TMPD/dlg.out" 2> "$TMPD/dlg.err"
is "$?/$(cat "$TMPD/dlg.out")" "0/$(cat "$TMPD/d1plain.out")" "dlopen, its file removed as it loads: the output and status are the plain run's"
is "$(calls "$TMPD/dlg.fxt" | grep -c '^dl_')" 0 "... not patched"
ok "... and the summary says why" grep -qx 'fxt-run: patched no function of ./libpatchdl.so: its file was deleted or replaced after it was loaded' "$TMPD/dlg.err"
"$FXT_RUN" -q -o "$TMPD/dl0.fxt" --patch=. -- "$D" "$DL" > /dev/null 2>&1
is "$(calls "$TMPD/dl0.fxt" | grep -c '^dl_')" 0 "dlopen: a library --patch-module does not name is left alone"
ok "dlopen: no mapping is writable and executable" grep -qx 'wx: none' "$TMPD/dl.out"
ok "dlopen: the archive is valid, no warning" sh -c \
  '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' - "$FXT_DUMP" "$TMPD/dl.fxt"

# A program with no symbol table: nothing to patch, nothing broken.
cp "$P" "$TMPD/stripped" && strip "$TMPD/stripped"
"$FXT_RUN" -o "$TMPD/s.fxt" --patch=. -- "$TMPD/stripped" fib > "$TMPD/s.out" 2> "$TMPD/s.err"
is "$?/$(cat "$TMPD/s.out")" "0/fib_rec(20) = 6765" "stripped: runs as it does"
ok "stripped: the summary says nothing was patched" grep -q '^fxt-run: patched 0 of ' "$TMPD/s.err"

# Usage.
"$FXT_RUN" --patch-list -- "$P" fib > /dev/null 2> "$TMPD/err"
is "$?/$(cat "$TMPD/err")" "2/fxt-run: --patch-list: say what to patch with --patch (see --help)" "--patch-list alone: usage error"
"$FXT_RUN" --patch='(' -- "$P" fib > /dev/null 2> "$TMPD/err"
is "$?" 2 "--patch with a bad pattern: usage error"

# uftrace patches the same way (-P.): the same counts, function by function,
# for every part but the coroutine, which uftrace does not survive (it
# stops there, status 1).  Not want(), whose calls depend on the arguments.
# An error after the patch reports' folder was made (an archive that
# exists) leaves no folder behind in TMPDIR.
mkdir "$TMPD/tmpd" && : > "$TMPD/exists.fxt"
TMPDIR="$TMPD/tmpd" "$FXT_RUN" --patch=. -o "$TMPD/exists.fxt" -- "$P" fib > /dev/null 2>&1
is "$?:$(ls -A "$TMPD/tmpd")" "2:" "an error once the reports' folder is made: exit 2, no folder left"

PARTS="fib rip tail regs tables short threads signals longjmp altstack maps"
if [ -z "${UFTRACE:-}" ]; then
  skip "uftrace is not installed"
elif ! "$UFTRACE" record -P. -d "$TMPD/uft" "$P" $PARTS > /dev/null 2>&1; then
  skip "uftrace record -P. failed on patchme"
else
  "$UFTRACE" report -d "$TMPD/uft" -f call 2>/dev/null | awk 'NR > 2 { print $2, $1 }' |
    grep -v '^want' | sort > "$TMPD/uft.calls"
  # Not the frames siglongjmp() leaves from a handler on an alternate
  # stack: uftrace loses 2 of their 5 calls.
  calls "$TMPD/p.fxt" | grep -Ev '^(alt_outer|alt_inner|on_alt|want[^ ]*) ' > "$TMPD/ours"
  is "$(join "$TMPD/ours" "$TMPD/uft.calls" | awk '$2 != $3')" "" \
    "the same calls as uftrace -P. for the $(join "$TMPD/ours" "$TMPD/uft.calls" | wc -l) functions both patch"
fi
finish
