#!/bin/sh
# The tools keep stack samples apart from calls (issue 24, item 8): under
# fxt-run --sample, tests/progs/sample_hotcold_hooks 3 calls hot() and
# cold() 3 times each and mix() 6 times, and its "(samples)" track has
# frames of the same functions.  fxt-report, fxt-diff, fxt-flame and
# fxt-export must show exactly those calls, with the samples apart (their
# own table, left out of the comparison, their own graph, their own
# category) and never counted as calls.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 27
HOOKS=$PROGS/sample_hotcold_hooks
REPORT=$abs_top_builddir/fxt-report
DIFF=$abs_top_builddir/fxt-diff
FLAME=$abs_top_builddir/fxt-flame
EXPORT=$abs_top_builddir/fxt-export

# The calls of a run of 3 rounds, "CALLS NAME" sorted by name.
CALLS='3 cold
3 hot
1 main
6 mix
2 ns
1 work'

trace s.fxt --sample=1000 "$HOOKS" 3
is "$rc/$(cat "$TMPD/out")" "0/$("$HOOKS" 3)" "output and exit status unchanged"
check_archive s s.fxt
# Without samples of hot the rest would prove nothing.
ok "the samples track has hot" \
  sh -c "'$CALLTREE' '$TMPD/s.fxt' | grep -A20 '^thread sample_hotcold_ (samples)' | grep -q ' hot '"

# --- fxt-report -------------------------------------------------------------
"$REPORT" -F csv s.fxt >r.csv 2>r.err
is "$(awk -F, 'NR > 1 { print $1, $NF }' r.csv | sort -k2)" "$CALLS" \
  "fxt-report: exactly the calls, each function once"
ok "fxt-report csv: says the samples were left out" grep -q 'stack samples left out' r.err
"$REPORT" -F json s.fxt >r.json
span=$(sed -n 's/.*"start_ns":\([0-9]*\),"end_ns":\([0-9]*\).*/\2 \1/p' r.json |
  awk '{ print $1 - $2 }')
work=$(awk -F, '$NF == "work" { print $2 }' r.csv)
ok "fxt-report: work's total ($work ns) within the run ($span ns)" \
  test "$work" -le "$span"
is "$(sed -n 's/.*"slices":\([0-9]*\).*/\1/p' r.json)" 16 "fxt-report json: 16 slices of calls"
"$REPORT" s.fxt >r.txt
ok "fxt-report: a table of stack samples after the calls'" \
  grep -q '^# stack samples: [0-9]* frames on 1 track, [0-9]* rows; sampled time' r.txt
is "$(sed -n '/^# stack samples/,$p' r.txt | grep -c ' hot (sample_hotcold_hooks)$')" 1 \
  "fxt-report: hot in the samples' table"
is "$(sed -n '/^# stack samples/,$p' r.txt | sed -n 2p)" \
  "       total         self   self%  function" "fxt-report: the samples' columns have no calls"
is "$(grep -c '"name":"hot"' r.json)/$(sed -n '/"samples":\[/,$p' r.json | grep -c '"calls"')" 2/0 \
  "fxt-report json: hot in rows and in samples, the samples without calls"
"$REPORT" -F csv --samples=only s.fxt >ro.csv
is "$(head -1 ro.csv)" "total_ns,self_ns,self_pct,category,name" "--samples=only: the samples' csv"
ok "--samples=only: hot among them" awk -F, '$NF == "hot" { f = 1 } END { exit !f }' ro.csv
is "$("$REPORT" --samples=no s.fxt | grep -c 'stack samples')" 0 "--samples=no: no samples' table"
"$REPORT" -F csv -b thread s.fxt >rt.csv 2>/dev/null
"$REPORT" -F csv -b thread --samples=only s.fxt >rts.csv
tid=$(awk -F, '$(NF - 1) == "hot" { print $(NF - 3) }' rt.csv)
is "$(awk -F, '$(NF - 1) == "hot" { print $1 }' rt.csv)" 3 "--by thread: hot's 3 calls"
is "$(awk -F, '$(NF - 1) == "hot" { print $(NF - 3), $NF }' rts.csv)" "$tid sample_hotcold_ (samples)" \
  "--by thread: hot's samples on the thread's tid, with the track's name"

# --- fxt-diff ---------------------------------------------------------------
"$DIFF" -F csv s.fxt s.fxt >d.csv 2>d.err
is "$(awk -F, 'NR > 1 { print $15, $NF }' d.csv | sort -k2)" "$CALLS" \
  "fxt-diff: exactly the calls of each run, each function once"
ok "fxt-diff: says the samples were left out" grep -q 'stack samples left out (in 2 of 2 runs)' d.err

# --- fxt-flame --------------------------------------------------------------
"$FLAME" --folded s.fxt >f.folded
is "$(grep -vc '^main' f.folded)" 0 "fxt-flame: only the calls' paths"
"$FLAME" -o f.svg s.fxt
is "$(grep -A3 '<title>hot$' f.svg | sed -n 's/^calls \([0-9]*\).*/\1/p')" 3 "fxt-flame: hot's 3 calls"
"$FLAME" --folded --samples s.fxt >fs.folded
ok "fxt-flame --samples: none of the calls' paths, the samples' with hot" \
  sh -c "! grep -q '^main' '$TMPD/fs.folded' && grep -q '^_start;.*;hot;mix ' '$TMPD/fs.folded'"
"$FLAME" --samples -o fs.svg s.fxt
is "$(grep -c '^calls' fs.svg)" 0 "fxt-flame --samples: no calls in the hovers"
trace plain.fxt --sample=1000 "$PROGS/sample_hotcold" 2
"$FLAME" --folded plain.fxt >p.folded 2>p.err
ok "fxt-flame on samples only: says --samples draws them" \
  grep -q 'no calls, only stack samples (fxt-run --sample): --samples draws them' p.err

# --- fxt-export -------------------------------------------------------------
"$EXPORT" --chrome --stats s.fxt >e.json 2>e.err
is "$(grep -c '"name":"hot","cat":"sample_hotcold_hooks",' e.json)" 3 "fxt-export: hot's 3 calls"
nsamp=$(grep -c '"cat":"[^"]*,fxt\.sample"' e.json)
ok "fxt-export: the samples marked fxt.sample ($nsamp)" test "$nsamp" -gt 0
is "$(sed -n 's/^slices \([0-9]*\), samples \([0-9]*\),.*/\1 \2/p' e.err)" "16 $nsamp" \
  "fxt-export --stats: 16 slices of calls, the samples apart"
"$EXPORT" --chrome --no-samples s.fxt >en.json
is "$(grep -c 'fxt\.sample\|(samples)' en.json)" 0 "fxt-export --no-samples: no samples, no samples track"
finish
