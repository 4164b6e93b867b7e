#!/bin/sh
# Tick rates.  fxt-run's archives are in nanoseconds (init
# ticks_per_second=1000000000: Tracy's import and other readers that ignore
# the rate read them right), and nest; every tool still reads an archive in
# another rate, as older fxtrace archives are (the TSC's): the same
# archive at 10^9 and at 2*10^9 ticks a second gives every tool's output
# the same.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
GEN=$abs_top_builddir/bench/gen_archive
B=$abs_top_builddir
scratch
plan 14

"$FXT_RUN" -q -o "$TMPD/run.fxt" -- "$EXAMPLES/calltree" > /dev/null 2>&1
is "$("$FXT_DUMP" "$TMPD/run.fxt" | grep '^init ')" "init ticks_per_second=1000000000" \
  "fxt-run writes its archive in ns"
is "$("$FXT_DUMP" --check "$TMPD/run.fxt" | grep -c ': ok (')" 1 "fxt-run's ns archive: --check"
if [ -n "${PYTHON3:-}" ]; then
  is "$("$PYTHON3" "$abs_top_srcdir/tests/helpers/perfetto_rules.py" "$TMPD/run.fxt")" ok \
    "fxt-run's ns archive: what Perfetto needs (perfetto_rules.py: nesting included)"
else
  skip "no python3"
fi

# One run, written in ns and in 2 ticks a ns (flows, two threads, two
# processes).
set -- --events 4000 --threads 2 --processes 2 --waits 5 --seed 7
"$GEN" "$@" -o "$TMPD/ns.fxt"
"$GEN" "$@" --ticks-per-second 2000000000 -o "$TMPD/tsc.fxt"
is "$("$FXT_DUMP" "$TMPD/tsc.fxt" | grep -c '^init ticks_per_second=2000000000')" 2 \
  "the other archive is in 2 ticks a ns (a provider each)"

same() { # WHAT COMMAND...: the output on ns.fxt and on tsc.fxt, the names aside
  what=$1; shift
  "$@" "$TMPD/ns.fxt" 2>&1 | sed 's/ns\.fxt/X/g' > "$TMPD/a"
  "$@" "$TMPD/tsc.fxt" 2>&1 | sed 's/tsc\.fxt/X/g' > "$TMPD/b"
  if [ -s "$TMPD/a" ] && cmp -s "$TMPD/a" "$TMPD/b"; then
    ok "$what: the same in both rates" true
  else
    ok "$what: the same in both rates" false
    diff "$TMPD/a" "$TMPD/b" | head -5 | sed 's/^/# /'
  fi
}
same "fxt-report" "$B/fxt-report" -F csv --by thread
same "fxt-report --percentiles" "$B/fxt-report" --percentiles
same "fxt-flame --folded" "$B/fxt-flame" --folded
same "fxt-export --chrome" "$B/fxt-export" --chrome
same "fxt-tree" "$B/fxt-tree"
same "fxt-replay" "$B/fxt-replay"
same "fxt-replay --time-order" "$B/fxt-replay" --time-order
same "fxt-waits" "$B/fxt-waits"
same "fxt-dump --check" "$FXT_DUMP" --check
is "$("$B/fxt-diff" -F csv "$TMPD/ns.fxt" "$TMPD/tsc.fxt" 2>/dev/null | awk -F, 'NR > 1 && ($4 != 0 || $2 == 0) { n++ } END { print n + 0 }')" 0 \
  "fxt-diff: no function's total changed between the two rates"
