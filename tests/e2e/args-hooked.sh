#!/bin/sh
# fxt-run --args/--retval on a program built with -finstrument-functions
# (tests/progs/args_hooked, at -O0 and -O2), without --patch: the
# functions they name are patched for their values (the hooks run after
# the prologue, when the argument registers are gone) and their hooks
# give way, so that each call has one slice, with its values, checked
# exactly in the archive: integers, a string, a double, recursion, a
# thread, frames a longjmp() left (no return value); the summary says
# which function could not be patched, and why; a shell the program runs
# is left alone.  With --patch too:
# still one slice a call.  --snapshot-if on a value, a filter.  A
# program built without the hooks still needs --patch: one line, exit 2.
# One a shell runs (sh -c 'exec PROG') is the same.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 27
scratch
cd "$TMPD" || exit 1

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

# slices ARCHIVE NAME: the arguments of NAME's slices, one a line, by
# thread and time.
slices() {
  "$FXT_DUMP" "$1" | awk -v name="name=\"$2\"" '
    / event complete / && index($0, name) {
      tid = $0; sub(/.* tid=/, "", tid); sub(/ .*/, "", tid)
      ts = $1; sub(/^ts=/, "", ts)
      a = $0; if (!sub(/.* args=/, "", a)) a = "{}"
      print tid, ts, a
    }' | sort -k1,1n -k2,2n | cut -d' ' -f3-
}
fns='^(parse|fact|scale|jump)$'

for O in O0 O2; do
  T=$PROGS/args_hooked_$O
  "$FXT_RUN" --args="$fns" --retval="$fns" -o $O.fxt -- "$T" >$O.out 2>$O.err
  is "$?:$(cat $O.out)" "0:done" "$O: the program's output and exit status are its own"
  is "$(grep -c warning $O.err)" 0 "$O: no warning"
  is "$(grep '^fxt-run: patched' $O.err)" "fxt-run: patched 4 of 4 functions of $T" \
    "$O: the summary says what was patched for the values"
  ok "$O: the archive is valid" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' \
    - "$FXT_DUMP" $O.fxt
  is "$(slices $O.fxt parse | tr '\n' ' ')" \
    '{buf:str="GET /a", len:i64=6, retval:i64=12} {buf:str="", len:i64=0, retval:i64=-1} {buf:str="after", len:i64=5, retval:i64=10} {buf:str="thread", len:i64=6, retval:i64=12} ' \
    "$O: parse: one slice a call, a string and an int in, an int out, on both threads"
  is "$(slices $O.fxt fact | tr '\n' ' ')" \
    '{n:i64=4, retval:i64=24} {n:i64=3, retval:i64=6} {n:i64=2, retval:i64=2} {n:i64=1, retval:i64=1} ' \
    "$O: recursion: each call its own values"
  is "$(slices $O.fxt scale)" '{x:f64=1.5, k:i64=3, retval:f64=4.5}' "$O: a double in and out"
  is "$(slices $O.fxt jump | tr '\n' ' ')" '{depth:i64=3} {depth:i64=2} {depth:i64=1} ' \
    "$O: frames a longjmp() left: their arguments, no return value"
  is "$("$FXT_DUMP" $O.fxt | grep -c 'event complete.*name="main"')" 1 "$O: main's slice, once"
done

T=$PROGS/args_hooked_O2
# With --patch as well: the patched functions' hooks give way too.
"$FXT_RUN" -q --patch=. --args='^parse$' -o p.fxt -- "$T" >/dev/null 2>&1
is "$(slices p.fxt parse | tr '\n' ' ')" \
  '{buf:str="GET /a", len:i64=6} {buf:str="", len:i64=0} {buf:str="after", len:i64=5} {buf:str="thread", len:i64=6} ' \
  "--patch too: one slice a call of parse, with its values"
is "$(slices p.fxt fact | wc -l):$(slices p.fxt main | wc -l)" "4:1" \
  "--patch too: one slice a call of the others"

# A filter: an excluded function has no slice, the others their values.
"$FXT_RUN" -q --exclude='^fact$' --args='^(parse|fact)$' -o e.fxt -- "$T" >/dev/null 2>&1
is "$(slices e.fxt fact | wc -l):$(slices e.fxt parse | head -n 1)" '0:{buf:str="GET /a", len:i64=6}' \
  "--exclude: no slice of the excluded function, the others with their values"

# --snapshot-if on a value, without --patch.
"$FXT_RUN" -q --snapshot-if='parse@retval<0' -o s.fxt -- "$T" >/dev/null 2>&1
is "$(ls s.snap*.fxt | tr '\n' ' ')" "s.snap1.fxt " "parse@retval<0: one snapshot, at the one failure"
is "$(slices s.snap1.fxt parse | tail -n 1)" "{retval:i64=-1}" "... holding the failed call, its value read"

# A program the traced one runs (a shell) is not patched, nor said to be.
"$FXT_RUN" --args='^parse$' -o c.fxt -- "$T" sh >c.out 2>c.err
is "$?:$(cat c.out):$(grep -c 'patched\|symbol table' c.err)" "0:done:1" \
  "a child's shell: not patched, and the summary names only the program"

# A function that cannot be patched: the summary says why.
"$FXT_RUN" --retval='^(parse|bare)$' -o b.fxt -- "$T" >/dev/null 2>b.err
is "$(grep '^fxt-run: patched' b.err)" \
  "fxt-run: patched 1 of 2 functions of $T (skipped: 1 no size in the symbol table)" \
  "a function that cannot be patched: the summary says so, and why"

# A shell that runs the program (sh -c): the program's hooks are enough.
"$FXT_RUN" -q --args="$fns" --retval="$fns" -o sh.fxt -- sh -c "exec $T" >sh.out 2>sh.err
is "$?:$(cat sh.out sh.err):$(slices sh.fxt parse)" "0:done:$(slices O2.fxt parse)" \
  "sh -c 'exec PROG', no --patch: PROG's values"

# Without the hooks, the values still need --patch.
"$FXT_RUN" --args='^lookup$' -- "$PROGS/args_target" >o.out 2>o.err
is "$?:$(cat o.err)" \
  "2:fxt-run: --args: values are read at patched calls, and $PROGS/args_target was not built with -finstrument-functions: say what to patch with --patch (see --help)" \
  "not built with -finstrument-functions, no --patch: one line, exit 2"
finish
