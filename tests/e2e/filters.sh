#!/bin/sh
# The filters (fxt-run --include, --exclude, --module, --depth; FXT_INCLUDE
# ...): exactly which calls each keeps, on programs whose calls are known
# (examples/README.md): calltree's fixed tree, threads' workers, a plug-in
# loaded with dlopen (its functions matched after it is loaded), C++ names
# (demangled) and an exception unwinding through a filtered function; and
# --min-duration, whose calls left out fxt-report still counts.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
TREE=$HELPERS/fxt_calltree
AGENT_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent.so
scratch
cd "$TMPD" || exit 1
plan 31

# flat NAME [FXT-RUN OPTION...] -- PROGRAM: the calls per function of the
# archive NAME.fxt (hooks only: --libc=none), on one line.
flat() {
  name=$1; shift
  "$FXT_RUN" -f --libc=none -o "$name.fxt" "$@" >"$name.out" 2>"$name.err" || return 1
  "$TREE" --flat "$name.fxt" | tr '\n' ' ' | sed 's/ $//'
}
CALLTREE=$EXAMPLES/calltree

# calltree: main > a x3 > b x2 > (c x2, d > c); then rec(4), 5 deep.
is "$(flat all -- "$CALLTREE")" "3 a 6 b 18 c 6 d 1 main 5 rec" "no filter: every call"
is "$(flat inc --include='^b$' -- "$CALLTREE")" "6 b 18 c 6 d" \
  "--include b: b and what it calls"
is "$(flat exc --exclude='^b$' -- "$CALLTREE")" "3 a 1 main 5 rec" \
  "--exclude b: neither b nor what it calls"
is "$(flat both --include='^a$' --exclude='^d$' -- "$CALLTREE")" "3 a 6 b 12 c" \
  "--include a --exclude d: a's subtree without d's (c under d left out)"
is "$(flat two --include='^d$' --include='^rec$' -- "$CALLTREE")" "6 c 6 d 5 rec" \
  "two --include: either one"
is "$(flat alt --include='^(d|rec)$' -- "$CALLTREE")" "6 c 6 d 5 rec" \
  "one pattern with an alternative: the same"
is "$(flat d2 --depth=2 -- "$CALLTREE")" "3 a 1 main 1 rec" "--depth 2: main, a, the first rec"
is "$(flat d3 --depth=3 -- "$CALLTREE")" "3 a 6 b 1 main 2 rec" "--depth 3: and b, two recs"
is "$(flat incd --include='^a$' --depth=2 -- "$CALLTREE")" "3 a 6 b" \
  "--include a --depth 2: depth counts from what passes"
for a in inc exc both d3; do
  "$FXT_DUMP" --check "$a.fxt" >/dev/null 2>&1 || break
done
ok "the filtered archives are valid (fxt-dump --check)" test "$a" = d3 -a $? = 0
is "$("$TREE" --stats both.fxt | grep -E '^(overlaps|unmatched|open) ' | tr '\n' ' ')" \
  "open 0 overlaps 0 unmatched 0 " "the filtered records stay nested"

# Threads: each thread's own counters.
is "$(flat thr --include='^work$' -- "$EXAMPLES/threads")" "1000 step 4 work" \
  "threads: --include work on every worker thread"

# A plug-in loaded with dlopen: its functions are matched once it is loaded.
is "$(flat plug --include='^plugin_square$' -- "$EXAMPLES/plugin")" "24 plugin_square" \
  "plugin: --include of a dlopen'd function"
is "$(flat mod --module='plugin_lib*' -- "$EXAMPLES/plugin")" "3 plugin_compute 24 plugin_square" \
  "plugin: --module plugin_lib* keeps the plug-in's functions only"
is "$(flat mod2 --module=plugin -- "$EXAMPLES/plugin")" "1 main 3 run_plugin" \
  "plugin: --module plugin keeps the program's"

# C++: demangled names; an exception thrown through an excluded function.
is "$(flat cxx --include='demo::Stack<int>' -- "$EXAMPLES/cxx_demo")" \
  "5 demo::Stack<int>::pop() 5 demo::Stack<int>::push(int)" "C++: --include on a demangled name"
"$FXT_RUN" -q -f --libc=none -o cxxall.fxt -- "$EXAMPLES/cxx_demo" >/dev/null 2>&1
is "$(flat throw --exclude='checked_div' -- "$EXAMPLES/cxx_demo")" \
  "$("$TREE" --flat cxxall.fxt | grep -v checked_div | tr '\n' ' ' | sed 's/ $//')" \
  "C++: the exception checked_div throws leaves the filters as they were"
is "$(flat thrown --include='checked_div' -- "$EXAMPLES/cxx_demo")" "4 demo::checked_div(int, int)" \
  "C++: --include of the function that throws"

# What fxt-run says.
flat none --include='^no_such_function$' -- "$CALLTREE" >/dev/null
ok "an --include that matches nothing: a warning" \
  grep -q 'warning: --include matched no function' none.err
ok "... and not the hint about -finstrument-functions" sh -c '! grep -q "finstrument-functions" none.err'
"$FXT_RUN" --include='(' -- sh -c ': >ran' >/dev/null 2>bad.err
is "$?:$(cat bad.err)" "2:fxt-run: --include: '(' is not a regular expression: Unmatched ( or \\(" \
  "a bad pattern: a usage error, before the program runs"
ok "... which did not run" test ! -e ran
"$FXT_RUN" --depth=0 -- true >/dev/null 2>&1
is "$?" 2 "--depth 0: a usage error"
"$FXT_RUN" --module= -- true >/dev/null 2>&1
is "$?" 2 "an empty --module: a usage error"

# The agent alone: FXT_INCLUDE, FXT_DEPTH.
env LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$TMPD/env.fxt" FXT_LIBC=none FXT_INCLUDE='^b$' \
  FXT_DEPTH=2 "$CALLTREE" >/dev/null 2>&1
is "$("$TREE" --flat env.fxt | tr '\n' ' ' | sed 's/ $//')" "6 b 12 c 6 d" \
  "FXT_INCLUDE and FXT_DEPTH without fxt-run"
env LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$TMPD/envbad.fxt" FXT_LIBC=none FXT_INCLUDE='(' \
  "$CALLTREE" >/dev/null 2>&1
is "$("$TREE" --flat envbad.fxt | tr '\n' ' ' | sed 's/ $//')" "3 a 6 b 18 c 6 d 1 main 5 rec" \
  "a bad FXT_INCLUDE: the agent filters nothing"
# --min-duration: short calls written as no slice, their numbers kept.
# hotspot: 400 calls each of parse (~2 us), checksum (~7 us), store (~0.5
# us); at 1.5 us only store's calls go (but one the machine held up for
# longer: a loaded machine keeps some, 30 of 400 once in CI's sanitizer
# build; unfiltered, all 400 would be).
"$FXT_RUN" -q -f --libc=none --min-duration=1500ns -o min.fxt -- "$EXAMPLES/hotspot" >/dev/null 2>&1
"$TREE" --flat min.fxt >min.flat
is "$(grep -v ' store$' min.flat | tr '\n' ' ' | sed 's/ $//')" "400 checksum 1 main 400 parse" \
  "--min-duration 1500ns: the long calls kept"
kept=$(awk '$2 == "store" { print $1 }' min.flat)
ok "... store's slices left out (${kept:-0} kept)" \
  awk '$2 == "store" && $1 > 100 { exit 1 }' min.flat
is "$("$abs_top_builddir/fxt-report" -F csv min.fxt | awk -F, '$NF == "store" { print $1 }')" 400 \
  "... and fxt-report counts its 400 calls all the same"
ok "... in a valid archive" sh -c '"$1" --check min.fxt >/dev/null' sh "$FXT_DUMP"
"$FXT_RUN" --min-duration=10parsecs -- true >/dev/null 2>bad.err
is "$?:$(cat bad.err)" "2:fxt-run: --min-duration: invalid duration '10parsecs' (a number and ns, us, ms or s: 10us)" \
  "a bad duration: a usage error"
finish
