#!/bin/sh
# bench/log.sh: what the log group (the program's output lines) costs a
# program that prints a lot: `git log -p`, plainly and under fxt-run with
# the default options, side by side in one run.  Not a test.
#
#   make bench-log                 (from the build tree), or
#   abs_top_builddir=BUILD abs_top_srcdir=SRC sh bench/log.sh
#
# Workload: `git log -p -n COMMITS` on the source tree when it is a git
# checkout (COMMITS: the fewest, doubling from 25, that print LOG_BYTES,
# 5 MB; all of them if the history is shorter), else on a repository made
# in the scratch directory from the source tree's files (one commit per
# directory, so that the patches print them whole).  Skipped when git is
# not installed.  Its output goes to a file in the scratch directory, or
# (the second table) through a pipe into `cat >/dev/null`.
#
# Variants: plain (no agent), traced (`fxt-run -q -f -o OUT -- git ...`,
# the default --libc: io and log among others), interleaved: each of the
# N rounds runs them in turn, after WARMUP uncounted rounds.  A figure is
# traced over plain of the same round, median [min] over the rounds; the
# goal (issue 29) is at most 1.3x.  Columns: wall seconds, start to exit
# (fxt-run's conversion included); wall and CPU time (user + system of
# every process waited for: fxt-run and git; `times`) over the plain
# run's; the archive's size.
#
# Checks: each traced run exits 0, prints what the plain run printed
# (file) or as many bytes (pipe), and its archive passes fxt-dump --check
# and holds one log record per line printed; a failure is said under the
# table and the script exits 1.
#
# Environment: N (5), WARMUP (1), LOG_BYTES (5000000), COMMITS (instead of
# the search), BENCH_DIR (scratch directory, default under TMPDIR; its file
# system is named in the header), BASE (another build tree, say of the
# commit before a change: its fxt-run runs too, in the same rounds, and
# gets a row of its own).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
: "${abs_top_srcdir:?set abs_top_srcdir to the source tree}"
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
B=$abs_top_builddir
FXT_RUN=$B/fxt-run
FXT_DUMP=$B/fxt-dump
N=${N:-5}
WARMUP=${WARMUP:-1}
LOG_BYTES=${LOG_BYTES:-5000000}
export LC_ALL=C

if ! command -v git >/dev/null 2>&1; then
  echo "bench-log: git is not installed: skipped"
  exit 0
fi
bench_variants bench-log
bench_built bench-log "$FXT_RUN" "$FXT_DUMP"
bench_counts bench-log "N, LOG_BYTES and COMMITS" "$N" "$LOG_BYTES" ${COMMITS:+"$COMMITS"}
bench_gnu_date bench-log

bench_scratch bench-log

# The repository: the source tree's, or one made of its files.
if git -C "$abs_top_srcdir" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  REPO=$abs_top_srcdir
  what="the source tree's history"
else
  REPO=$W/repo
  rm -rf "$REPO"
  git init -q "$REPO"
  (cd "$abs_top_srcdir" && find . -type f ! -path './.git/*' ! -name '*.fxt*' -size -200k |
    sort | tar -cf - -T -) | (cd "$REPO" && tar -xf -)
  for d in $(cd "$REPO" && find . -mindepth 1 -maxdepth 2 -type d ! -path './.git*' | sort -r) .; do
    git -C "$REPO" add -A -- "$d"
    git -C "$REPO" -c user.name=bench -c user.email=bench@localhost commit -q \
      -m "add $d" --allow-empty
  done
  what="a repository made of the source tree's files"
fi
# gitr ARGS: git on the repository, its output never paged nor coloured.
gitr() { git -C "$REPO" -c core.pager=cat -c color.ui=never "$@"; }
total=$(gitr rev-list --count HEAD)
if [ -z "${COMMITS:-}" ]; then
  COMMITS=25
  while [ "$COMMITS" -lt "$total" ] && [ "$(gitr log -p -n "$COMMITS" | wc -c)" -lt "$LOG_BYTES" ]; do
    COMMITS=$((COMMITS * 2))
  done
fi
[ "$COMMITS" -le "$total" ] || COMMITS=$total
gitr log -p -n "$COMMITS" >"$W/want"
bytes=$(wc -c <"$W/want")
lines=$(wc -l <"$W/want")

now_ns() { date +%s%N; }

# run VARIANT OUT: git log -p, plainly or under that fxt-run.
run() {
  case $1 in
  plain) set -- "$2" ;;
  base) set -- "$2" "$BASE/fxt-run" -q -f -o "$W/t.fxt" -- ;;
  *) set -- "$2" "$FXT_RUN" -q -f -o "$W/t.fxt" -- ;;
  esac
  r_out=$1
  shift
  if [ "$r_out" = pipe ]; then
    { "$@" git -C "$REPO" -c core.pager=cat -c color.ui=never log -p -n "$COMMITS" 2>"$W/err"
      echo $? >"$W/status"; } | wc -c >"$W/out"
    return "$(cat "$W/status")"
  else
    "$@" git -C "$REPO" -c core.pager=cat -c color.ui=never log -p -n "$COMMITS" \
      >"$W/out" 2>"$W/err"
  fi
}

# once OUT VARIANT ROUND: appends "wall_ns cpu0 cpu1 archive_bytes" to
# $W/res/OUT.VARIANT when ROUND > 0; a failure goes to $W/res/failures.
once() {
  o_o=$1 o_v=$2 o_r=$3
  rm -f "$W"/t.fxt "$W"/t.fxt.*
  # The previous run's write-back is not this one's to pay.
  sync
  set +e
  times >"$W/times0"
  o_t0=$(now_ns)
  run "$o_v" "$o_o"
  o_st=$?
  o_t1=$(now_ns)
  times >"$W/times1"
  set -e
  o_size=0
  if [ "$o_st" -ne 0 ]; then
    echo "$o_o, $o_v, round $o_r: exit status $o_st: $(tail -n 1 "$W/err")" >>"$W/res/failures"
  elif if [ "$o_o" = pipe ]; then [ "$(cat "$W/out")" -ne "$bytes" ]; else ! cmp -s "$W/out" "$W/want"; fi; then
    echo "$o_o, $o_v, round $o_r: the output differs from git's" >>"$W/res/failures"
  elif [ "$o_v" != plain ]; then
    o_size=$(wc -c <"$W/t.fxt")
    o_logs=$("$FXT_DUMP" --stats "$W/t.fxt" | sed -n 's/^record\.log //p')
    if ! "$FXT_DUMP" --check "$W/t.fxt" >"$W/check" 2>&1; then
      echo "$o_o, $o_v, round $o_r: fxt-dump --check failed" >>"$W/res/failures"
    elif [ "${o_logs:-0}" -ne "$lines" ]; then
      echo "$o_o, $o_v, round $o_r: ${o_logs:-no} log records for $lines lines" >>"$W/res/failures"
    fi
  fi
  rm -f "$W"/t.fxt "$W"/t.fxt.* "$W/check" "$W/out"
  [ "$o_r" -gt 0 ] || return 0
  echo "$((o_t1 - o_t0)) $(cpu_s "$W/times0") $(cpu_s "$W/times1") $o_size" >>"$W/res/$o_o.$o_v"
}

# row OUT LABEL [VARIANT]: the table row of VARIANT (traced).
row() {
  awk -v label="$2" "$AWK_ORDER"'
    FILENAME ~ /\.plain$/ { plain[++np] = $1 / 1e9; pcpu[np] = $3 - $2; next }
    { k = ++nt; traced[k] = $1 / 1e9; ratio[k] = traced[k] / plain[k]
      cratio[k] = pcpu[k] > 0 ? ($3 - $2) / pcpu[k] : 0; size[k] = $4 / 1048576 }
    END {
      for (i = 1; i <= np; i++) p[i] = plain[i]
      for (i = 1; i <= nt; i++) { r[i] = ratio[i]; t[i] = traced[i]; c[i] = cratio[i]; s[i] = size[i] }
      med = median(r, nt)
      printf "%-14s %7.3f [%6.3f] %7.3f [%6.3f] %6.2f [%5.2f] %6.2f [%5.2f] %7.1f   %s\n", label,
        median(p, np), least(p, np), median(t, nt), least(t, nt), med, least(r, nt),
        median(c, nt), least(c, nt), median(s, nt), med <= 1.3 ? "ok" : "over 1.3x"
    }' "$W/res/$1.plain" "$W/res/$1.${3:-traced}"
}

fs=$(df -PT "$W" 2>/dev/null | awk 'NR == 2 { print $2 }')
echo "== output lines: git log -p, plainly and under fxt-run (default options)"
echo "   ($(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) CPUs," \
  "$(uname -r), ${fs:-unknown fs} at $W)"
echo "   $(git --version), $what: $COMMITS commits, $bytes bytes, $lines lines"
echo "   $N rounds after $WARMUP warm-up, each round $(echo $VARIANTS | sed 's/ /, /g') in turn"
[ -z "${BASE:-}" ] || echo "   base: $BASE/fxt-run"
echo
printf '%-14s %16s %16s %14s %14s %7s   %s\n' output "plain s" "traced s" "x plain" \
  "cpu x" "MiB" "goal<=1.3x"
printf '%-14s %16s %16s %14s %14s\n' "" "med [min]" "med [min]" "med [min]" "med [min]"

for o in file pipe; do
  bench_rounds "$o"
  [ -z "${BASE:-}" ] || row "$o" "$o (base)" base
  row "$o" "$o"
done

echo
echo "file: git's output to a file in the scratch directory; pipe: into"
echo "| wc -c.  x plain: traced wall / plain wall of the same round; cpu x:"
echo "CPU seconds (user + system, fxt-run's included) traced / plain, same"
echo "round; MiB: the archive."
bench_end
