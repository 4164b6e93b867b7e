#!/bin/sh
# fxt-run's --libc and --sample: refused before anything runs when bad (one
# line naming what is wrong, exit 2), and passed on to the agent, which
# reads FXT_LIBC and FXT_SAMPLE, in every accepted form.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 36

# env_of OPTIONS...: FXT_LIBC and FXT_SAMPLE as the traced program sees
# them ("unset" when absent), with neither inherited from make's environment.
env_of() {
  rc=0
  env -u FXT_LIBC -u FXT_SAMPLE "$FXT_RUN" -q -f -o env.fxt "$@" \
    sh -c 'printf "%s|%s\n" "${FXT_LIBC-unset}" "${FXT_SAMPLE-unset}"' >out 2>err || rc=$?
  printf '%s/%s' "$rc" "$(cat out err)"
}

# --- Accepted forms reach the program's environment, as given.
is "$(env_of)" "0/unset|unset" "neither option: neither variable"
is "$(env_of --libc=io,mem)" "0/io,mem|unset" "--libc=io,mem"
is "$(env_of --libc all)" "0/all|unset" "--libc all (separate argument)"
is "$(env_of --libc=none)" "0/none|unset" "--libc=none"
is "$(env_of --libc=default,sync)" "0/default,sync|unset" "--libc=default,sync"
is "$(env_of --libc=thread,proc,sleep,log)" "0/thread,proc,sleep,log|unset" \
  "--libc: the other groups"
is "$(env_of --libc=)" "0/|unset" "--libc= (an empty list: no group)"
is "$(env_of --sample)" "0/unset|1000" "--sample: 1000 Hz"
is "$(env_of --sample=1)" "0/unset|1" "--sample=1: the lowest rate"
is "$(env_of --sample=10000)" "0/unset|10000" "--sample=10000: the highest rate"
is "$(env_of --libc=io --sample=250)" "0/io|250" "both"
is "$(env_of --sample=250 --sample)" "0/unset|1000" "the last --sample wins"

# --- The agent takes them: with FXT_DEBUG it says when it does not.
rc=0
FXT_DEBUG=1 "$FXT_RUN" -o dbg.fxt --libc=io,mem,sync --sample=500 "$EXAMPLES/calltree" \
  >out 2>err || rc=$?
ok "agent: a traced program runs with both" test "$rc" = 0 -a -s dbg.fxt
ok "agent: it read FXT_* (its debug log is on)" grep -q '^fxtrace\[[0-9]*\]: output=' err
ok "agent: no complaint about FXT_LIBC or FXT_SAMPLE" \
  sh -c '! grep -q "FXT_LIBC=\|FXT_SAMPLE=" "$1"' sh err

# --- Bad values: one line, exit 2, the program not run.
# bad OPTION WANT-MESSAGE NAME
bad() {
  rm -f ran
  rc=0; "$FXT_RUN" -o bad.fxt "$1" sh -c 'touch ran' >out 2>err || rc=$?
  is "$rc/$(cat err)" "2/fxt-run: $2" "$3"
  ok "$3: the program did not run" test ! -e ran -a ! -e bad.fxt
}
groups="(groups: io, mem, thread, sync, proc, sleep, log; or all, none, default)"
bad --libc=io,bogus "--libc: unknown group 'bogus' $groups" "--libc: an unknown group"
bad --libc=IO "--libc: unknown group 'IO' $groups" "--libc: names are lower case"
bad --libc=io,alls "--libc: unknown group 'alls' $groups" "--libc: a prefix is no match"
rates="(1 to 10000 samples per second)"
bad --sample=0 "--sample: invalid rate '0' $rates" "--sample=0"
bad --sample=10001 "--sample: invalid rate '10001' $rates" "--sample: above 10000"
bad --sample=12x "--sample: invalid rate '12x' $rates" "--sample: not a number"

# --- The hint at -finstrument-functions, whatever the groups: the libc
# calls of an uninstrumented program are recorded, its own functions not.
# hint PROGRAM: the hint's line, as a pattern.
hint() {
  printf '^fxt-run: no instrumented calls (%s): was %s built with %s$' \
    "the program.s own functions; libc calls do not count" "$1" "-finstrument-functions?"
}
rc=0; env -u FXT_LIBC "$FXT_RUN" -f -o hint.fxt sh -c 'echo hi' >out 2>err || rc=$?
ok "uninstrumented, default groups: its libc calls recorded" \
  grep -q '^fxt-run: wrote hint.fxt ([^,]*, [1-9][0-9]* events' err
ok "uninstrumented, default groups: the hint all the same" grep -q "$(hint sh)" err
rc=0; "$FXT_RUN" -f -o hint.fxt --libc=none true >out 2>err || rc=$?
ok "uninstrumented, --libc=none: the hint" grep -q "$(hint true)" err
rc=0; "$FXT_RUN" -f -o hint.fxt --libc=all "$EXAMPLES/calltree" >out 2>err || rc=$?
ok "instrumented, --libc=all: no hint" sh -c '! grep -q "no instrumented" "$1"' sh err

# --- Documented in --help, with the default groups.
"$FXT_RUN" --help >out 2>&1
ok "--help: --libc, its groups and the default" grep -q \
  'or all, none, default (= io,thread,proc,sleep,log)' out
ok "--help: --sample[=HZ] and its default rate" \
  sh -c 'grep -q -- "--sample\[=HZ\]" "$1" && grep -q "1 to 10000; default 1000" "$1"' sh out

# --- --help is the source of man fxt-run (help2man): every FXT_* variable
# of run/settings.def (each row but fxt-run's own options) has a line under
# "Environment:", and the exit statuses theirs under "Exit status:".
vars=$(sed -n 's/^X(\([A-Z_]*\), [^,]*, [^,]*, [^,]*, [A-Z_]*, \(AGENT\|INTERNAL\|RUNENV\),.*/FXT_\1/p' \
  "$abs_top_srcdir/run/settings.def")
ok "run/settings.def: the variables found ($(echo $vars | wc -w))" test "$(echo $vars | wc -w)" -ge 15
missing=
for v in $vars; do
  sed -n '/^Environment:$/,/^$/p' out | grep -q "^  $v  " || missing="$missing $v"
done
is "$missing" "" "--help: each FXT_* variable under Environment:"
ok "--help: the exit statuses under Exit status:" sh -c \
  'sed -n "/^Exit status:$/,/^$/p" "$1" | grep -q "^  128+N  *PROGRAM was killed by signal N$"' sh out
finish
