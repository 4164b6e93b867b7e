#!/bin/sh
# fxt-report --percentiles / --histogram and fxt-diff --metric on archives
# of known distributions (tests/helpers/mkdist): exact nearest-rank values,
# the sketch past --exact-limit within its 1%, histogram counts, the csv
# and json columns, calls --min-duration summarised (upper bounds), a
# change in the tail only, and bad input.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
REPORT=$abs_top_builddir/fxt-report
DIFF=$abs_top_builddir/fxt-diff
MKDIST=$HELPERS/mkdist
scratch
plan 35

"$MKDIST" "$TMPD/base.fxt" || bail_out "mkdist"
"$MKDIST" --tail 30000 --seed 2 "$TMPD/new.fxt" || bail_out "mkdist"

# parse: 100 ns x 1..10000; work: 19600 calls of 1000 + i % 1000 ns (the
# residues 0..599 20 times, 600..999 19 times) and 400 of 10 us; tiny: 100
# calls of 5 us and 900 summarised of 10..900 ns, which rank first.
want='calls,total_ns,self_ns,avg_ns,min_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,max_ns,pct_kind,self_pct,open,category,name
10000,5000500000,5000500000,500050,100,500000,900000,990000,999000,1000000,eeee,99.32,0,function,parse
20000,33270200,33270200,1663,1000,1499,1915,10000,10000,10000,eeee,0.66,0,function,work
1000,909500,909500,909,10,900,900,5000,5000,5000,bbee,0.02,0,function,tiny'
is "$("$REPORT" -p -F csv --filter '^(parse|work|tiny)$' "$TMPD/base.fxt")" "$want" \
  "csv: exact nearest-rank percentiles, bounds among summarised calls"
is "$("$REPORT" -F csv "$TMPD/base.fxt" | head -n 1)" \
  "calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name" \
  "csv without --percentiles: columns unchanged"

out=$("$REPORT" -p "$TMPD/base.fxt")
is "$(printf '%s\n' "$out" | sed -n 2p | tr -s ' ')" \
  " calls total self avg min p50 p90 p99 p99.9 max self% function" "text: the columns"
is "$(printf '%s\n' "$out" | grep 'tiny' | tr -s ' ')" \
  " 1000 909.500 us 909.500 us 909 ns 10 ns <900 ns <900 ns 5.000 us 5.000 us 5.000 us 0.02% tiny (function)" \
  "text: a bound marked '<'"
is "$(printf '%s\n' "$out" | grep -c '^# < at most')" 1 "text: what '<' means"
is "$(printf '%s\n' "$out" | grep -c '^# ~')" 0 "text: nothing approximate"

if [ -n "$PYTHON3" ]; then
  is "$("$REPORT" -p -F json "$TMPD/base.fxt" | "$PYTHON3" -c '
import json, sys
d = json.load(sys.stdin)
r = {x["name"]: x for x in d["rows"]}
p = r["parse"]
print(d["pct_method"], d["pct_rel_error"], d["sketched_rows"], p["p50_ns"], p["p90_ns"],
      p["p99_ns"], p["p99_9_ns"], p["max_ns"], p["pct_kind"], r["tiny"]["pct_kind"])')" \
    "nearest-rank 0.01 0 500000 900000 990000 999000 1000000 eeee bbee" "json: the fields"
else
  skip "python3 not found"
fi

# Past --exact-limit the largest rows become sketches: within 1%.
"$REPORT" -p --exact-limit 1000 -F csv --filter '^(parse|work)$' "$TMPD/base.fxt" \
  >"$TMPD/sk.csv"
is "$(cut -d, -f11,15 "$TMPD/sk.csv" | tr '\n' ' ')" "pct_kind,name aaaa,parse aaaa,work " \
  "--exact-limit 1000: parse and work approximate"
is "$(awk -F, 'NR == 2 { e = "500000 900000 990000 999000"; split(e, x, " ")
  for (i = 1; i <= 4; i++) { d = $(5 + i) - x[i]; if (d < 0) d = -d
    if (d > x[i] / 100) print "off", i, $(5 + i) } }' "$TMPD/sk.csv")" "" \
  "sketch: parse's percentiles within 1% of the exact ones"
is "$(cut -d, -f10 "$TMPD/sk.csv" | tail -n +2 | tr '\n' ' ')" "1000000 10000 " \
  "sketch: max stays exact"
is "$("$REPORT" -p --exact-limit 1000 "$TMPD/base.fxt" | grep -c '^# ~ approximate: 2 functions')" 1 \
  "text: the approximate ones said, with the bound"
is "$("$REPORT" -p --exact-limit 1000 "$TMPD/base.fxt" | grep -c ' ~501.751 us ')" 1 \
  "text: approximate values marked '~'"

# Histograms: log2 buckets, counts worked out by awk, empty ends trimmed.
want=$(awk 'BEGIN { for (i = 1; i <= 10000; i++) { v = 100 * i; b = 0
    while (2 ^ (b + 1) <= v) b++; n[b]++ }
  for (b = 0; b < 64; b++) if (n[b]) printf "%d,%d,%d\n", 2 ^ b, 2 ^ (b + 1), n[b] }')
"$REPORT" --histogram parse -F csv "$TMPD/base.fxt" >"$TMPD/h.csv"
is "$(head -n 1 "$TMPD/h.csv")" "lo_ns,hi_ns,count,pct,cum_pct,category,name" "histogram csv: header"
is "$(tail -n +2 "$TMPD/h.csv" | cut -d, -f1-3)" "$want" "histogram csv: counts per bucket"
is "$(sed -n '2p;$p' "$TMPD/h.csv")" "64,128,1,0.01,0.01,function,parse
524288,1048576,4758,47.58,100.00,function,parse" "histogram csv: first and last bucket, percents"
is "$("$REPORT" --histogram parse --by thread -F csv "$TMPD/base.fxt" | sed -n '1p;$p')" \
  "lo_ns,hi_ns,count,pct,cum_pct,pid,tid,category,name
524288,1048576,4758,47.58,100.00,1,1,function,parse" "histogram csv --by thread: pid and tid"
# The same buckets from a sketch.
is "$("$REPORT" --histogram parse --exact-limit 100 -F csv "$TMPD/base.fxt" | cut -d, -f1-3 |
  tail -n +2)" "$want" "histogram of a sketch: the same counts"

env -u COLUMNS "$REPORT" --histogram parse "$TMPD/base.fxt" >"$TMPD/h.txt"
is "$(sed -n 1p "$TMPD/h.txt")" \
  "# $TMPD/base.fxt: parse (function): 10000 calls; per-call inclusive time in log2 buckets" \
  "histogram text: the heading"
is "$(grep -c '^\[' "$TMPD/h.txt")" 14 "histogram text: 14 buckets"
is "$(grep '^\[' "$TMPD/h.txt" | awk '{ print length($0) }' | sort -n | tail -n 1)" 80 \
  "histogram text: fits 80 columns off a terminal"
is "$(COLUMNS=120 "$REPORT" --histogram parse "$TMPD/base.fxt" | grep '^\[' |
  awk '{ print length($0) }' | sort -n | tail -n 1)" 120 "histogram text: COLUMNS=120"
is "$(grep '^\[      64 ns' "$TMPD/h.txt" | tr -s ' ')" \
  "[ 64 ns, 128 ns) 1 0.01% 0.01% #" "histogram text: a small bucket has a bar of one"
is "$("$REPORT" --histogram tiny "$TMPD/base.fxt" | sed -n 2p)" \
  "# 900 of them summarised by fxt-run --min-duration, not in the buckets: 10 ns to 900 ns" \
  "histogram text: summarised calls said apart"
if [ -n "$PYTHON3" ]; then
  is "$("$REPORT" --histogram work -F json "$TMPD/base.fxt" | "$PYTHON3" -c '
import json, sys
h = json.load(sys.stdin)["histograms"][0]
print(h["name"], h["calls"], [(b["lo_ns"], b["count"]) for b in h["buckets"]])')" \
    "work 20000 [(512, 480), (1024, 19120), (2048, 0), (4096, 0), (8192, 400)]" \
    "histogram json: inner empty buckets kept"
else
  skip "python3 not found"
fi

# fxt-diff --metric: new's tail (2% of work's calls) is 3x longer.
"$DIFF" --metric p99 -F csv "$TMPD/base.fxt" "$TMPD/new.fxt" >"$TMPD/d.csv" 2>/dev/null
is "$(head -n 1 "$TMPD/d.csv")" \
  "verdict,metric,base_ns,new_ns,delta_ns,delta_pct,base_lo_ns,base_hi_ns,new_lo_ns,new_hi_ns,base_kind,new_kind,method,calls_base,calls_new,category,name" \
  "diff --metric csv: header"
is "$(grep ',work$' "$TMPD/d.csv")" \
  "SLOWER,p99,10000,30000,20000,200.00,10000,10000,30000,30000,e,e,order,20000,20000,function,work" \
  "diff --metric p99: work's tail flagged"
is "$(grep ',parse$' "$TMPD/d.csv" | cut -d, -f1-3,7-10)" "~,p99,990000,988000,992100,988000,992100" \
  "diff --metric p99: parse unchanged, its interval"
is "$("$DIFF" --metric p50 -F csv "$TMPD/base.fxt" "$TMPD/new.fxt" 2>/dev/null |
  grep ',work$' | cut -d, -f1-4)" "~,p50,1499,1499" "diff --metric p50: work's body unchanged"
is "$("$DIFF" --metric max -F csv "$TMPD/base.fxt" "$TMPD/new.fxt" 2>/dev/null |
  grep ',work$' | cut -d, -f1,3,4,13)" "~,10000,30000,none" "diff --metric max: shown, not tested"
if [ -n "$PYTHON3" ]; then
  is "$("$DIFF" --metric p99.9 -F json "$TMPD/base.fxt" "$TMPD/new.fxt" | "$PYTHON3" -c '
import json, sys
d = json.load(sys.stdin)
f = {x["name"]: x for x in d["functions"]}
w, m = f["work"], f["main"]
print(d["metric"], w["verdict"], w["base_ns"], w["new_ns"], w["base_kind"], w["calls_new"],
      m["base_lo_ns"], m["method"])')" "p99.9 SLOWER 10000 30000 exact 20000 None order" \
    "diff --metric json: the fields, an open interval null"
else
  skip "python3 not found"
fi
is "$("$DIFF" --metric p99 "$TMPD/base.fxt" "$TMPD/new.fxt" | grep -c '^# whole run')" 0 \
  "diff --metric: no run factors, no whole-run line"
"$DIFF" --metric p99 --fail-above 50 "$TMPD/base.fxt" "$TMPD/new.fxt" >/dev/null 2>"$TMPD/gate"
is "$?:$(cat "$TMPD/gate")" "1:fxt-diff: work's p99 is 200.0% slower (intervals apart), above 50%" \
  "diff --metric p99 --fail-above: exit 1, the function named"

# Bad input: one line (and where to look for usage), exit 2.
"$REPORT" --histogram nothere "$TMPD/base.fxt" >/dev/null 2>"$TMPD/err"
is "$?:$(cat "$TMPD/err")" "2:fxt-report: $TMPD/base.fxt: no function named 'nothere'" \
  "--histogram of no function: one line, exit 2"
"$REPORT" --histogram >/dev/null 2>"$TMPD/err"
is "$?:$(wc -l <"$TMPD/err" | tr -d ' '):$(head -n 1 "$TMPD/err")" \
  "2:2:fxt-report: option '--histogram' needs a value" "--histogram without a name: exit 2"
"$DIFF" --metric p42 "$TMPD/base.fxt" "$TMPD/new.fxt" >/dev/null 2>"$TMPD/err"
is "$?:$(head -n 1 "$TMPD/err")" \
  "2:fxt-diff: --metric: unknown metric 'p42' (total, p50, p90, p99, p99.9 or max)" \
  "diff: unknown metric, exit 2"
finish
