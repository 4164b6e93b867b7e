#!/bin/sh
# fxt-run --args reads strings with plain loads when it may, its own
# SIGSEGV/SIGBUS handler recovering a fault (agent/patch/probe.c); the
# program (tests/progs/args_faults) must see its signals as without it:
# sigaction() reports the default actions; a handler of its own, set by
# sigaction() or signal() after strings were read, gets its fault and
# recovers, and the agent's reads of a bad pointer afterwards never reach
# it; a fault of its own still kills it by SIGSEGV (a core when allowed),
# kill -SEGV too; threads reading strings on pages another unmaps run on,
# and those reading bad pointers while another thread sets SIGSEGV's
# action (the agent gives it back once no copy is under way); a signal
# handler's call with a string that lands while a string is read into
# the interrupted call's record (both whole, every call there).
# A program started with SIGSEGV ignored keeps the kernel's reads.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 20
scratch
cd "$TMPD" || exit 1
P=$PROGS/args_faults

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"

# run NAME MODE: the program under fxt-run --args=put, FXT_DEBUG on;
# NAME.out, NAME.err, NAME.fxt; its exit status.
run() {
  FXT_DEBUG=1 "$FXT_RUN" -q -f --patch='^put$' --args='^put$' -o "$1.fxt" -- "$P" "$2" \
    >"$1.out" 2>"$1.err"
}
# strings ARCHIVE: put()'s arguments, one a line, addresses as ADDR.
strings() {
  "$FXT_DUMP" "$1" | awk '/ event complete / && index($0, "name=\"put\"") { sub(/.* args=/, ""); print }' |
    sed 's/0x[0-9a-f]*/ADDR/'
}

run q query
is "$?:$(cat q.out)" "0:dfl dfl
done" "sigaction(SIGSEGV/SIGBUS, NULL, &old) while the agent holds them: the default action"
grep -q "strings read with plain loads" q.err
is "$?" 0 "the fast path is on (FXT_DEBUG says so)"
is "$(strings q.fxt | tr '\n' ' ')" '{s:str="query"} {s:str="(unreadable ADDR)"} ' \
  "a pointer that is not canonical (a general protection fault): unreadable"

for how in sigaction signal; do
  run "$how" "$how"
  is "$?:$(cat "$how.out")" "0:faults 1
done" "$how(): the program's SIGSEGV handler sees its own fault, and no other"
  is "$(strings "$how.fxt" | tr '\n' ' ')" \
    '{s:str="before"} {s:str="(unreadable ADDR)"} {s:str="after"} {s:str="(unreadable ADDR)"} ' \
    "$how(): strings and bad pointers shown, before and after"
done

"$P" fault >/dev/null 2>&1
plain=$?
run f fault
is "$?:$plain" "139:139" "a fault of the program's own: killed by SIGSEGV, as without"
grep -q "strings read with plain loads" f.err
is "$?" 0 "... with the fast path on"
run k kill
is "$?" 139 "kill -SEGV: killed by SIGSEGV"

# The core, when this machine writes one into the folder.  (A sanitized
# fxt-run, build-san, would turn cores off for its child and take
# SIGSEGV for itself, whatever it was given: not here.)
ASAN_OPTIONS="disable_coredump=0:handle_segv=0:handle_sigbus=0:${ASAN_OPTIONS:-}"
export ASAN_OPTIONS
core_flag() {
  rm -f core core.*
  (ulimit -c unlimited 2>/dev/null && "$@" >/dev/null 2>&1)
  set -- core core.*
  if [ -e "$1" ] || [ -e "$2" ]; then echo core; else echo none; fi
  rm -f core core.*
}
case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
core*)
  if (ulimit -c unlimited) 2>/dev/null; then
    without=$(core_flag "$P" fault)
    is "$(core_flag "$FXT_RUN" -q -f --patch='^put$' --args='^put$' -o c.fxt -- "$P" fault):$without" \
      "core:core" "... and it dumps its core, as without"
  else
    skip "no core dumps allowed here"
  fi ;;
*) skip "cores are not written into the folder here" ;;
esac

run t threads
is "$?:$(cat t.out)" "0:done" "threads reading strings while another unmaps their pages: no crash"
is "$(strings t.fxt | sort -u | awk '
  /^\{s:str="\(unreadable ADDR\)"\}$/ { next }
  /^\{s:str="[^"]*"\}$/ { s = $0; sub(/^\{s:str="/, "", s); sub(/"\}$/, "", s); sub(/…$/, "", s)
    if (index("a string in a page", s) == 1) next }
  { print }')" "" \
  "... each string read whole, in part (being written, or its page unmapped meanwhile), or unreadable"
diag "read: $(strings t.fxt | grep -c 'a string in a page'), unreadable: $(strings t.fxt | grep -c unreadable)"
run g giveback
is "$?:$(cat g.out)" "0:done" \
  "threads reading bad pointers while another sets SIGSEGV's action: its handler never runs"
is "$(strings g.fxt | sort -u | tr '\n' ' ')" '{s:str="(unreadable ADDR)"} {s:str="ok"} ' \
  "... the strings and bad pointers shown, before and after"
ok "the archive is valid" sh -c '"$1" --check "$2" | tail -n 1 | grep -q ", 0 errors, 0 warnings)$"' \
  - "$FXT_DUMP" t.fxt

run n nested
set -- $(cat n.out)
is "$?:$1:$3:$5" "0:calls:handler:done" "a timer's handler calling put() meanwhile: the program runs on"
is "$(strings n.fxt | awk -v calls="$2" -v handled="$4" '
  BEGIN { t = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?" }
  $0 == "{s:str=\"handler\"}" { h++; next }
  $0 != "{s:str=\"" substr(t, 1, n % 65) "\"}" { if (!bad++) print "call " n ": " $0 }
  { n++ }
  END { if (n != calls || h != handled) print n " calls, " h " in the handler" }')" "" \
  "... each call's string whole, in order, the handler's calls among them"

# Started with SIGSEGV ignored (a parent's choice the program inherits):
# not the default action, so the kernel reads the strings.
(trap '' SEGV; run i query)
is "$?:$(cat i.out)" "0:set dfl
done" "SIGSEGV ignored from the start: the program sees it ignored"
grep -q "strings read with plain loads" i.err
is "$?" 1 "... and the fast path is off"

finish
