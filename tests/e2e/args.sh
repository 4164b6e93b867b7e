#!/bin/sh
# fxt-run --args/--retval: the arguments and return values of patched
# calls, named and typed by DWARF (tests/progs/args_target: every kind,
# called with known values), checked exactly in the archive: integers of
# every width and sign, bool, char, enums (a name, a number that names
# none), pointers, strings, float and double, structs by value, a 7th
# argument on the stack, a struct returned through memory, variadic.  Bad
# pointers (unmapped, a string running into an unmapped page, NULL) are
# shown as such and the program runs on.  A filter that leaves an entry
# out leaves its values out.  Without DWARF: a warning, and
# 'NAME@arg1,arg2/s' names the registers.  Bad patterns: one line, exit
# 2.  A program run by a symbolic link; one run by exec (sh -c, env, a
# script's interpreter).  C++ (this, references, a call
# that throws).  Conditions
# (--snapshot-if on a value).  Attached (fxt-run -p): the same.  The
# archive is valid.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 47
scratch
cd "$TMPD" || exit 1
T=$PROGS/args_target

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

# slice ARCHIVE NAME [N]: the arguments of NAME's N-th slice (1st).
slice() {
  "$FXT_DUMP" "$1" | awk -v n="${3:-1}" -v name="name=\"$2\"" '
    / event complete / && index($0, name) { if (++k == n) { sub(/.* args=/, ""); print; exit } }'
}

all='^(take_|ret_|lookup$)'
"$FXT_RUN" --patch=. --args="$all" --retval="$all" -o a.fxt -- "$T" >a.out 2>a.err
is "$?:$(cat a.out)" "0:done" "the program's output and exit status are its own"
is "$(grep -c warning a.err)" 0 "no warning"
ok "the archive is valid" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' \
  - "$FXT_DUMP" a.fxt
is "$(slice a.fxt take_ints)" \
  "{a:i64=-5, b:u64=250, c:i64=-300, d:u64=65000, e:i64=-70000, f:u64=1099511627776, retval:i64=-135}" \
  "integers of every width and sign"
# The program run by a symbolic link (python3, a link to python3.11): the
# agent knows it by its real name.
ln -s "$T" link
"$FXT_RUN" -q --patch=. --args="$all" --retval="$all" -o link.fxt -- ./link >link.out 2>link.err
is "$?:$(cat link.out link.err):$(slice link.fxt take_ints)" \
  "0:done:{a:i64=-5, b:u64=250, c:i64=-300, d:u64=65000, e:i64=-70000, f:u64=1099511627776, retval:i64=-135}" \
  "a program run by a symbolic link: its values all the same"
# A program run by exec, as its command line says: a shell's -c command,
# env's program, a script's interpreter.
"$FXT_RUN" -q --patch=. --args="$all" --retval="$all" -o sh.fxt -- sh -c "X=1 exec $T" >sh.out 2>sh.err
is "$?:$(cat sh.out sh.err):$(slice sh.fxt take_ints)" \
  "0:done:{a:i64=-5, b:u64=250, c:i64=-300, d:u64=65000, e:i64=-70000, f:u64=1099511627776, retval:i64=-135}" \
  "sh -c 'X=1 exec PROG': PROG's values"
"$FXT_RUN" -q --patch=. --retval='^ret_bool$' -o env.fxt -- env X=1 "$T" >/dev/null 2>&1
is "$(slice env.fxt ret_bool)" "{retval:bool=true}" "env X=1 PROG: PROG's values"
printf '#!%s 3\n' "$T" >script && chmod +x script
"$FXT_RUN" -q --patch=. --args='^lookup$' --retval='^lookup$' -o sb.fxt -- ./script >/dev/null 2>&1
"$FXT_RUN" -q --patch=. --args='^lookup$' --retval='^lookup$' -o sd.fxt -- "$T" 3 >/dev/null 2>&1
is "$(slice sb.fxt lookup 2)" "$(slice sd.fxt lookup 2)" "a script ('#!PROG 3'): its interpreter's values"
is "$(slice sd.fxt lookup 2)" "{key:i64=1, retval:i64=1}" "... which are these"
# What a command line does not name is not planned for: said so.
"$FXT_RUN" --patch=. --retval='^ret_bool$' -o w2.fxt -- sh -c ": ; $T" >/dev/null 2>w2.err
grep -q "^fxt-run: warning: --retval '^ret_bool\$' matched no function of the patched modules ([a-z]*; a program run that fxt-run's command line does not name has no values)\$" w2.err
is "$?" 0 "a program the command line does not name: the warning names the programs planned for"
grep -q "^fxt-run: .*/args_target: patched without --args/--retval values: fxt-run's command line does not run it by exec (name it there)\$" w2.err
is "$?" 0 "... and the summary says which program ran without them"
is "$(slice a.fxt take_misc)" \
  "{flag:bool=true, ch:str=\"'a'\", color:str=\"GREEN\", other:str=\"42\", ptr:ptr=0x1234, retval:u64=4000000000}" \
  "bool, char, an enum by name, by number when no name is its, a pointer, unsigned"
is "$(slice a.fxt take_floats)" "{f:f64=1.5, d:f64=-2.75, i:i64=9, e:f64=10000000000, retval:f64=-5.5}" \
  "float and double among integers (their own registers), a double returned"
is "$(slice a.fxt take_str)" \
  '{s:str="GET /index.html HTTP/1.1", len:u64=24, retval:str="GET /index.html HTTP/1.1"}' \
  "a string argument, a string returned"
is "$(slice a.fxt take_structs)" \
  '{p:str="{...} (8 bytes)", v:str="{...} (16 bytes)", b:str="{...} (24 bytes)", after:i64=77, retval:i64=-1234567890123}' \
  "structs by value, in registers and in memory; the argument after them in its register"
is "$(slice a.fxt take_many)" \
  '{a1:i64=1, a2:i64=2, a3:i64=3, a4:i64=4, a5:i64=5, a6:i64=6, a7:str="(int, on the stack: not read)", retval:i64=7}' \
  "a 7th integer argument: on the stack, said so"
is "$(slice a.fxt ret_big)" '{x:i64=10, retval:str="{...} (24 bytes)"}' \
  "a struct returned through memory: its argument is still the first"
is "$(slice a.fxt take_var)" '{fmt:str="%d %s", ...:str="(variadic: not shown)", retval:i64=3}' \
  "variadic: said so"
is "$(slice a.fxt ret_bool):$(slice a.fxt ret_color)" '{x:i64=1, retval:bool=true}:{x:i64=1, retval:str="BLUE"}' \
  "a bool and an enum returned"

# Strings around the edges of their records' slots, an argument and the
# same returned: 0, 7, 8, 9, 63, 64 bytes whole, 65 cut to 64.
"$FXT_RUN" -q --patch=. --args='^take_str$' --retval='^take_str$' -o l.fxt -- "$T" lengths >/dev/null 2>&1
text=0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?+
is "$(for i in 1 2 3 4 5 6 7; do slice l.fxt take_str $i; done)" "$(for n in 0 7 8 9 63 64 65; do
  awk -v t="$text" -v n=$n 'BEGIN { s = substr(t, 1, n > 64 ? 64 : n) (n > 64 ? "…" : "")
    printf "{s:str=\"%s\", len:u64=%d, retval:str=\"%s\"}\n", s, n, s }'; done)" \
  "strings of 0, 7, 8, 9, 63, 64 bytes whole, of 65 cut to 64"
RULES=$abs_top_srcdir/tests/helpers/perfetto_rules.py
if [ -n "${PYTHON3:-}" ]; then
  is "$("$PYTHON3" "$RULES" a.fxt)" ok "what Perfetto needs (perfetto_rules.py)"
else
  skip "no python3"
fi

# C++: this, a reference, a method named demangled, a call that throws.
"$FXT_RUN" -q --patch=. --args='^shop::' --retval='^shop::' -o cxx.fxt -- "$PROGS/args_cxx" >cxx.out 2>&1
is "$?:$(cat cxx.out)" "0:done" "C++: the program's output and exit status are its own"
is "$(slice cxx.fxt 'shop::Cart::add(int, double)' | sed 's/0x[0-9a-f]*/ADDR/')" \
  "{this:ptr=ADDR, qty:i64=3, price:f64=2.5, retval:i64=7}" "C++: a method's this and arguments"
is "$(slice cxx.fxt 'shop::count(shop::Cart const&, char const*)' | sed 's/0x[0-9a-f]*/ADDR/')" \
  '{c:ptr=ADDR, label:str="items", retval:i64=7}' "C++: a reference is a pointer"
is "$(slice cxx.fxt 'shop::fail(int)' 1):$(slice cxx.fxt 'shop::fail(int)' 2)" \
  "{code:i64=7}:{code:i64=0, retval:i64=0}" "C++: a call that threw has no return value"

# Bad pointers: shown as such, the program runs on.
"$FXT_RUN" -q --patch=. --args='^take_str$' -o b.fxt -- "$T" bad >b.out 2>b.err
is "$?:$(cat b.out)" "0:done" "bad pointers: the program runs on, exit 0"
x64=$(printf 'x%.0s' $(seq 64))
is "$(slice b.fxt take_str 1 | sed 's/0x[0-9a-f]*/ADDR/')" '{s:str="(unreadable ADDR)", len:u64=1}' \
  "a pointer to unmapped memory: unreadable, with its address"
is "$(slice b.fxt take_str 2)" "{s:str=\"$x64…\", len:u64=100}" \
  "a string without a NUL up to an unmapped page: what could be read, cut"
is "$(slice b.fxt take_str 3)" '{s:str="NULL", len:u64=0}' "NULL"
is "$(slice b.fxt take_str 4)" "{s:str=\"$x64…\", len:u64=4096}" "a long string: 64 bytes, cut"

# A filter that leaves the entry out: its values are not put on another frame.
"$FXT_RUN" -q --patch=. --args="$all" --retval="$all" --exclude='^take_str$' -o f.fxt -- "$T" >/dev/null 2>&1
is "$(slice f.fxt take_str):$("$FXT_DUMP" f.fxt | grep -c 'event complete.*name="main".*args=')" ":0" \
  "--exclude: the excluded call has no slice, and main got none of its values"

# The values go with their call's record when a filter is on or the clock
# is not the TSC too (apart from it then, agent/patch/rt.h).
want="$(slice a.fxt take_ints) $(slice a.fxt take_misc) $(slice a.fxt take_str)"
"$FXT_RUN" -q --patch=. --args="$all" --retval="$all" --include="$all" -o x.fxt -- "$T" >/dev/null 2>&1
is "$(slice x.fxt take_ints) $(slice x.fxt take_misc) $(slice x.fxt take_str)" "$want" \
  "a filter on: the same values"
FXT_CLOCK=monotonic "$FXT_RUN" -q --patch=. --args="$all" --retval="$all" -o c.fxt -- "$T" >/dev/null 2>&1
is "$(slice c.fxt take_ints) $(slice c.fxt take_misc) $(slice c.fxt take_str)" "$want" \
  "the monotonic clock: the same values"

# Without DWARF: a warning; the registers named by hand.
objcopy --strip-debug "$T" nodebug
"$FXT_RUN" --patch=. --args='^lookup$' --retval='^lookup$' -o n.fxt -- ./nodebug 2 >/dev/null 2>n.err
grep -q "^fxt-run: warning: --args/--retval: no DWARF for lookup (1 function)" n.err
is "$?" 0 "no DWARF: fxt-run says so"
is "$(slice n.fxt lookup 2)" "{retval:u64=4294967295}" "... the return value is rax as it is (an int -1: eax)"
"$FXT_RUN" -q --patch=. --args='^lookup$@arg1' --args='^take_str$@arg1/s,arg2' -o m.fxt -- ./nodebug >/dev/null 2>&1
is "$(slice m.fxt take_str)" '{arg1:str="GET /index.html HTTP/1.1", arg2:u64=24}' \
  "registers named by hand: arg1/s a string, arg2 raw"

# Bad input: one line, exit 2, before the program runs.
"$FXT_RUN" --args=lookup -- "$T" >o.out 2>o.err
is "$?:$(wc -l <o.err):$(cat o.out)" "2:1:" "--args without --patch: one line, exit 2"
"$FXT_RUN" --patch=. --args='lookup@arg7' -- "$T" >o.out 2>o.err
is "$?:$(cat o.err)" "2:fxt-run: --args 'lookup@arg7': after '@', name the registers as arg1 to arg6, /s for a string ('parse@arg1,arg2/s')" \
  "a register that is none: one line, exit 2"
"$FXT_RUN" --patch=. --args='^nothing_is_called_this$' -o w.fxt -- "$T" >/dev/null 2>w.err
grep -q "^fxt-run: warning: --args '^nothing_is_called_this\$' matched no function of the patched modules" w.err
is "$?" 0 "a pattern that matches nothing: warned"

# Conditions: --snapshot-if on a value keeps what led to it.
"$FXT_RUN" -q --patch=. --snapshot-if='lookup@retval<0' -o s.fxt -- "$T" 1000 >/dev/null 2>&1
is "$(ls s.snap*.fxt | tr '\n' ' ')" "s.snap1.fxt " "retval<0: one snapshot, at the one failure"
is "$("$FXT_DUMP" s.snap1.fxt | grep -o 'name="fxt: snapshot 1: lookup (retval<0)".*rule:str="lookup@retval<0"')" \
  'name="fxt: snapshot 1: lookup (retval<0)" args={snapshot:u64=1, function:str="lookup", duration_ns:u64=0, limit_ns:u64=0, rule:str="lookup@retval<0"' \
  "... its instant says what set it off"
is "$(slice s.snap1.fxt lookup 1000)" "{retval:i64=-1}" "... and it holds the failed call, its value read"
"$FXT_RUN" -q --patch=. --snapshot-if='lookup@arg1==500' -o e.fxt -- "$T" 1000 >/dev/null 2>&1
is "$(ls e.snap*.fxt | tr '\n' ' '):$(slice e.snap1.fxt lookup 501)" "e.snap1.fxt :{key:i64=500}" \
  "arg1==500: a snapshot at the entry of that call"
"$FXT_RUN" --patch=. --snapshot-if='lookup@retval<x' -- "$T" >o.out 2>o.err
is "$?:$(cat o.err)" "2:fxt-run: --snapshot-if: 'lookup@retval<x': at column 15, an integer or NULL expected" \
  "a condition that does not parse: one line naming the column, exit 2"
"$FXT_RUN" --snapshot-if='lookup@retval<0' -- "$T" >o.out 2>o.err
is "$?:$(wc -l <o.err)" "2:1" "a condition without --patch: one line, exit 2"

# Attached: the same.
. "$abs_top_srcdir/tests/e2e/attach-common.sh"
if [ "$(uname -m)" != x86_64 ] || [ ! -x "$HELPERS/fxt_inject" ]; then
  skip "the injector is for x86-64"
  skip "the injector is for x86-64"
  finish
  exit $?
fi
start --serve
calls 10
rm -f run.err
"$FXT_RUN" -p $target --patch='^work$' --args='^work$' --retval='^work$' -o p.fxt 2>run.err 9>&- &
run=$!
wait_until grep -q '^fxt-run: attached to ' run.err
calls 3
kill -INT $run
wait $run
is "$?" 0 "attached: fxt-run exits 0"
is "$(slice p.fxt work 1 | sed 's/=[0-9][0-9]*/=N/g')" "{x:u64=N, retval:u64=N}" \
  "attached: work's argument and return value"
exec 9>&-
wait $target
finish
