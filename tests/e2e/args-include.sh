#!/bin/sh
# fxt-run --include 'NAME@argN OP VALUE': a pattern with a test of an
# argument, as --snapshot-if's, records the calls of the functions it
# names (with what they call) only when the test holds at their entry
# (tests/progs/args_target keys: resolve(key) for the keys 7, 42, 3, 42,
# -1, each calling lookup(key)), checked exactly in the archive: an
# equality, a signed comparison with a negative int, with a plain pattern
# beside it, with --args on a function it calls and on one it does not.
# Bad tests: one line naming the column, exit 2, before the program runs
# (a test of retval, which the entry cannot make, included); --exclude
# takes none; without --patch, refused.  The archive is valid.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 13
scratch
cd "$TMPD" || exit 1
T=$PROGS/args_target

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

# slices ARCHIVE: "NAME ARGS" of each slice, in the order they start.
slices() {
  "$FXT_DUMP" "$1" | awk '/ event complete / {
      name = $0; sub(/.* name="/, "", name); sub(/".*/, "", name)
      args = ""; if (index($0, " args=")) { args = $0; sub(/.* args=/, "", args) }
      print name (args == "" ? "" : " " args) }' | tr '\n' ';'
}

"$FXT_RUN" --patch=. --include 'resolve@arg1==42' -o a.fxt -- "$T" keys >a.out 2>a.err
is "$?:$(cat a.out)" "0:done" "the program's output and exit status are its own"
is "$(grep -c warning a.err)" 0 "no warning"
is "$(slices a.fxt)" "resolve {key:i64=42};lookup;resolve {key:i64=42};lookup;" \
  "resolve@arg1==42: its two calls with 42, and the calls they make; no other"
ok "the archive is valid" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' \
  - "$FXT_DUMP" a.fxt

"$FXT_RUN" -q --patch=. --include 'resolve@arg1<0' -o n.fxt -- "$T" keys >/dev/null 2>&1
is "$(slices n.fxt)" "resolve {key:i64=-1};lookup;" "resolve@arg1<0: an int, compared signed"

"$FXT_RUN" -q --patch=. --include 'resolve@arg1==3' --include '^lookup$' -o p.fxt -- "$T" keys \
  >/dev/null 2>&1
is "$(slices p.fxt)" "lookup;lookup;resolve {key:i64=3};lookup;lookup;lookup;" \
  "beside a plain pattern: each pattern's calls"

"$FXT_RUN" -q --patch=. --include 'resolve@arg1!=7' --args='^lookup$' -o g.fxt -- "$T" keys \
  >/dev/null 2>&1
is "$(slices g.fxt)" \
  "resolve {key:i64=42};lookup {key:i64=42};resolve {key:i64=3};lookup {key:i64=3};resolve {key:i64=42};lookup {key:i64=42};resolve {key:i64=-1};lookup {key:i64=-1};" \
  "with --args: the arguments of the calls recorded, of no other"
ok "... the archive is valid" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' \
  - "$FXT_DUMP" g.fxt

# Bad tests: one line, exit 2, the program not run.
"$FXT_RUN" --patch=. --include 'resolve@arg1=42' -- "$T" keys >o.out 2>o.err
is "$?:$(cat o.out):$(cat o.err)" \
  "2::fxt-run: --include: 'resolve@arg1=42': at column 13, an operator: < <= > >= == != expected" \
  "a bad operator: its column, exit 2, before the program runs"
"$FXT_RUN" --patch=. --include 'resolve@retval<0' -- "$T" keys >o.out 2>o.err
is "$?:$(cat o.out):$(cat o.err)" \
  "2::fxt-run: --include: 'resolve@retval<0': at column 9, argN (whether a call is recorded is decided at its entry, before it returns) expected" \
  "a test of retval: refused, said why"
"$FXT_RUN" --patch=. --include 'resolve@arg1==x' -- "$T" keys >o.out 2>o.err
is "$?:$(cat o.err)" "2:fxt-run: --include: 'resolve@arg1==x': at column 15, an integer or NULL expected" \
  "not a number"
"$FXT_RUN" --patch=. --exclude 'resolve@arg1==42' -- "$T" keys >o.out 2>o.err
is "$?:$(cat o.err)" "2:fxt-run: --exclude: 'resolve@arg1==42': only --include takes a test of an argument" \
  "--exclude takes no test"
"$FXT_RUN" --include 'resolve@arg1==42' -- "$T" keys >o.out 2>o.err
is "$?:$(cat o.err)" \
  "2:fxt-run: --include 'resolve@arg1==42': the argument is read at patched entries: say what to patch with --patch (see --help)" \
  "without --patch: refused"
