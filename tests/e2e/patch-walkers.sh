#!/bin/sh
# fxt-run --patch and the programs that walk their own stack, which
# patching's return trampoline would meet where a return address should be.
# A program printing its own backtrace (backtrace(), _Unwind_Backtrace(),
# libunwind's unw_backtrace(): tests/progs/patchme_bt) prints the frames of
# the plain run, its calls counted, and takes them in a signal handler
# without a fault.  A module that walks its own stack by
# return address, as a runtime does (tests/progs/patchme_walk, and
# libwalkrt standing for HotSpot's libjvm; patchme_gosym for a cgo
# program), is left alone, with its reason; with a JDK installed, java runs
# as it does, libjvm left alone; with go, a cgo program.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 15
scratch

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

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
# Backtraces from a SIGPROF handler, which may come in the middle of a
# patched call's entry or return (a sampling profiler): twice, as the
# window is a few instructions wide (the agent faulted 5 times in 6).
for i in 1 2; do
  "$FXT_RUN" -q -o "$TMPD/prof$i.fxt" --max-size=1 --patch='^leaf$' -- "$PROGS/patchme_bt" prof \
    > "$TMPD/prof$i.out" 2> /dev/null
  echo "$?/$(cat "$TMPD/prof$i.out")"
done > "$TMPD/prof.out"
is "$(sort -u "$TMPD/prof.out")" "0/prof: 250 backtraces" \
  "patchme_bt prof: 250 backtraces in a SIGPROF handler across patched calls, twice: no fault"
# Not patched, the same frames too (the agent's own entry points show none
# of their frames).
"$FXT_RUN" -q -o "$TMPD/np.fxt" -- "$PROGS/patchme_bt_unw" > "$TMPD/np.out" 2>&1
is "$(frames "$TMPD/np.out")" "$(frames "$TMPD/patchme_bt_unw.plain")" "patchme_bt_unw, traced without --patch: the frames of the plain run"
# Modules that walk their own stack: left alone, and said so.
W=$PROGS/patchme_walk
"$W" > "$TMPD/w.plain" 2>&1
w_rc=$?
"$FXT_RUN" -o "$TMPD/w.fxt" --patch=. --patch-module='libwalkrt*' --patch-list -- "$W" \
  > "$TMPD/w.out" 2> "$TMPD/w.err"
is "$?/$(cat "$TMPD/w.out")" "$w_rc/$(cat "$TMPD/w.plain")" \
  "patchme_walk: it walks its own stack and the library's, the output and status of the plain run"
ok "... the program left alone: it reads the bounds of its text" \
  grep -q '^fxt-run: patched 0 of [1-9][0-9]* functions of .*patchme_walk (skipped: [0-9]* walks its own stack (it reads the bounds of its text))$' "$TMPD/w.err"
ok "... the library left alone: HotSpot's walker (AsyncGetCallTrace)" \
  grep -q '^fxt-run: patched 0 of [1-9][0-9]* functions of .*libwalkrt.so (skipped: [0-9]* walks its own stack (HotSpot))$' "$TMPD/w.err"
ok "... --patch-list names each function with the reason" \
  grep -q '^fxt-run: skipped rt_run: walks its own stack (HotSpot)$' "$TMPD/w.err"

# The Go runtime: a cgo program of Go 1.17 or later names its assembly
# functions with their ABI (runtime.morestack.abi0), which the sign
# runtime.morestack missed: patched, such a program died at its first
# stack walk ("runtime: g 1: unknown pc", exit 2).  patchme_gosym has the
# symbol; with go installed, a real cgo program too.
"$FXT_RUN" -o "$TMPD/g.fxt" --patch=. -- "$PROGS/patchme_gosym" > "$TMPD/g.out" 2> "$TMPD/g.err"
ok "runtime.morestack.abi0: left alone, the Go runtime's" \
  grep -q '^fxt-run: patched 0 of [1-9][0-9]* functions of .*patchme_gosym (skipped: [0-9]* walks its own stack (the Go runtime))$' "$TMPD/g.err"
if ! command -v go > /dev/null 2>&1; then
  skip "no go"
else
  cat > "$TMPD/cgo.go" <<'GO'
package main

// static int twice(int x) { return 2 * x; }
import "C"

import (
	"fmt"
	"os"
	"sync"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	var wg sync.WaitGroup
	res := make([]int, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); res[i] = fib(20+i) + int(C.twice(C.int(i))) }(i)
	}
	wg.Wait()
	fmt.Println(res)
	os.Exit(3)
}
GO
  if (cd "$TMPD" && GOCACHE="$TMPD/gocache" GO111MODULE=off go build -o cgo cgo.go) > "$TMPD/go.err" 2>&1; then
    "$TMPD/cgo" > "$TMPD/cgo.plain" 2>&1
    c_rc=$?
    "$FXT_RUN" -q -o "$TMPD/cgo.fxt" --patch=. -- "$TMPD/cgo" > "$TMPD/cgo.out" 2>&1
    is "$?/$(cat "$TMPD/cgo.out")" "$c_rc/$(cat "$TMPD/cgo.plain")" "a cgo program, --patch=.: as it runs plain"
  else
    skip "go build failed: $(head -1 "$TMPD/go.err")"
  fi
  rm -rf "$TMPD/gocache"
fi

# HotSpot: java -version and a small program (threads, an exception's
# stack trace, the JIT, a GC), libjvm left alone.
if ! command -v java > /dev/null 2>&1 || ! command -v javac > /dev/null 2>&1; then
  for i in 1 2 3; do skip "no java or javac"; done
else
  java -version > "$TMPD/jv.plain" 2>&1
  "$FXT_RUN" -q -o "$TMPD/jv.fxt" --patch=. --patch-module='libjvm*' -- java -version \
    > "$TMPD/jv.out" 2>&1
  is "$?/$(cat "$TMPD/jv.out")" "0/$(cat "$TMPD/jv.plain")" "java -version, --patch-module='libjvm*': as it runs plain"
  cat > "$TMPD/Walk.java" <<'JAVA'
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public class Walk {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    public static void main(String[] args) throws Exception {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < 100000; i++)
            l.add("s" + i);
        Collections.sort(l);
        Thread t = new Thread(() -> System.out.println("thread " + fib(25)));
        t.start();
        t.join();
        try {
            Object o = null;
            o.hashCode();
        } catch (NullPointerException e) {
            System.out.println("caught, " + e.getStackTrace().length + " frames");
        }
        System.gc();
        System.out.println(l.get(5) + " " + fib(30));
    }
}
JAVA
  if ! (cd "$TMPD" && javac Walk.java) > "$TMPD/javac.err" 2>&1; then
    for i in 1 2; do skip "javac failed: $(head -n 1 "$TMPD/javac.err")"; done
  else
    java -cp "$TMPD" Walk > "$TMPD/j.plain" 2>&1
    j_rc=$?
    "$FXT_RUN" -o "$TMPD/j.fxt" --patch=. --patch-module='libjvm*' -- java -cp "$TMPD" Walk \
      > "$TMPD/j.out" 2> "$TMPD/j.err"
    is "$?/$(cat "$TMPD/j.out")" "$j_rc/$(cat "$TMPD/j.plain")" \
      "a Java program, --patch-module='libjvm*': the output and status of the plain run"
    ok "... libjvm left alone: it walks its own stack (HotSpot)" \
      grep -q '^fxt-run: patched 0 of [1-9][0-9]* functions of .*libjvm.so (skipped: [0-9]* walks its own stack (HotSpot))$' "$TMPD/j.err"
  fi
fi
finish
