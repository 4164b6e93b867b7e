#!/bin/sh
# bench/forks.sh: what short processes cost under fxt-run, against the
# same work run plainly, side by side in one run.  Not a test.
#
#   make bench-forks                 (from the build tree), or
#   abs_top_builddir=BUILD sh bench/forks.sh
#
# Workloads (wall time, start to exit, fxt-run's conversion and merge
# included):
#   fork loop      bench/forkloop 500: 500 x (fork, the child _exits, the
#                  parent waits), one process forking
#   pipelines      sh running 200 x `echo $i | sed s/1/x/ | tr a-z A-Z |
#                  wc -c`: 800 short processes, each started by exec
# Variants: plain (no agent), traced (`fxt-run -f -o OUT -- ...`, the
# default --libc), interleaved: each of the N rounds runs plain then
# traced, after WARMUP uncounted rounds.  A figure is the traced wall time
# over the plain one of the same round, median [min] over the rounds; the
# goal (issue 29) is at most 1.5x for both.  Also per short process:
# (traced - plain) / processes, in microseconds, and the CPU time of the
# whole run (user + system of every process waited for: fxt-run, the
# program and its children; `times`) over the plain run's: on a loaded
# machine wall time also counts the waits for a CPU, CPU time does not.
#
# Checks: the traced run exits 0, and fxt-dump --check accepts its
# archive, which must hold one process per child (501 and 801); a failure
# is said under the table and the script exits 1.
#
# Environment: N (5), WARMUP (1), FORKS (500), PIPES (200), BENCH_DIR
# (scratch directory, default under TMPDIR; the archives are written
# there, and its file system is named in the header), BASE (another build
# tree, say of the commit before a change: its fxt-run runs too, in the
# same rounds, between plain and traced, and gets a row of its own).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
B=$abs_top_builddir
FXT_RUN=$B/fxt-run
FXT_DUMP=$B/fxt-dump
LOOP=$B/bench/forkloop
N=${N:-5}
WARMUP=${WARMUP:-1}
FORKS=${FORKS:-500}
PIPES=${PIPES:-200}
export LC_ALL=C

bench_variants bench-forks
bench_built bench-forks "$FXT_RUN" "$FXT_DUMP" "$LOOP"
bench_counts bench-forks "N, FORKS and PIPES" "$N" "$FORKS" "$PIPES"
bench_gnu_date bench-forks

bench_scratch bench-forks

# The pipelines, as one sh script (sh, not the script's shell: both
# variants run the same processes).
cat >"$W/pipes.sh" <<'PIPES_EOF'
i=0
while [ "$i" -lt "$1" ]; do
  echo "$i" | sed s/1/x/ | tr a-z A-Z | wc -c
  i=$((i + 1))
done >/dev/null
PIPES_EOF

now_ns() { date +%s%N; }

# once WORKLOAD VARIANT ROUND PROCS: appends "wall_ns" to
# $W/res/WORKLOAD.VARIANT when ROUND > 0; a failure (or a traced archive
# without PROCS processes) goes to $W/res/failures.
once() {
  o_w=$1 o_v=$2 o_r=$3 o_n=$4
  case $o_w in
  loop) set -- "$LOOP" "$FORKS" ;;
  pipes) set -- sh "$W/pipes.sh" "$PIPES" ;;
  esac
  rm -f "$W"/t.fxt "$W"/t.fxt.*
  set +e
  times >"$W/times0"
  o_t0=$(now_ns)
  case $o_v in
  plain) "$@" >/dev/null 2>"$W/err" ;;
  base) "$BASE/fxt-run" -f -o "$W/t.fxt" -- "$@" >/dev/null 2>"$W/err" ;;
  *) "$FXT_RUN" -f -o "$W/t.fxt" -- "$@" >/dev/null 2>"$W/err" ;;
  esac
  o_st=$?
  o_t1=$(now_ns)
  times >"$W/times1"
  set -e
  if [ "$o_st" -ne 0 ]; then
    echo "$o_w, $o_v, round $o_r: exit status $o_st: $(tail -n 1 "$W/err")" >>"$W/res/failures"
  elif [ "$o_v" != plain ]; then
    o_procs=$(sed -n 's/^fxt-run: wrote .*; \([0-9][0-9]*\) process.*/\1/p' "$W/err" | tail -n 1)
    if ! "$FXT_DUMP" --check "$W/t.fxt" >"$W/check" 2>&1; then
      echo "$o_w, $o_v, round $o_r: fxt-dump --check failed" >>"$W/res/failures"
    elif [ "${o_procs:-0}" -ne "$o_n" ]; then
      echo "$o_w, $o_v, round $o_r: ${o_procs:-no} processes in the archive, $o_n expected" \
        >>"$W/res/failures"
    fi
  fi
  rm -f "$W"/t.fxt "$W"/t.fxt.* "$W/check"
  [ "$o_r" -gt 0 ] || return 0
  echo "$((o_t1 - o_t0)) $(cpu_s "$W/times0") $(cpu_s "$W/times1")" >>"$W/res/$o_w.$o_v"
}

# row WORKLOAD LABEL PROCS [VARIANT]: the table row of VARIANT (traced).
row() {
  awk -v label="$2" -v procs="$3" "$AWK_ORDER"'
    FILENAME ~ /\.plain$/ { plain[++np] = $1 / 1e9; pcpu[np] = $3 - $2; next }
    { k = ++nt; traced[k] = $1 / 1e9; ratio[k] = traced[k] / plain[k]
      per[k] = (traced[k] - plain[k]) / procs * 1e6
      cratio[k] = pcpu[k] > 0 ? ($3 - $2) / pcpu[k] : 0 }
    END {
      for (i = 1; i <= np; i++) p[i] = plain[i]
      for (i = 1; i <= nt; i++) { r[i] = ratio[i]; q[i] = per[i]; t[i] = traced[i]; c[i] = cratio[i] }
      med = median(r, nt)
      printf "%-19s %7.3f [%6.3f] %7.3f [%6.3f] %6.2f [%5.2f] %8.0f %6.2f   %s\n", label,
        median(p, np), least(p, np), median(t, nt), least(t, nt), med, least(r, nt),
        median(q, nt), median(c, nt), med <= 1.5 ? "ok" : "over 1.5x"
    }' "$W/res/$1.plain" "$W/res/$1.${4:-traced}"
}

fs=$(df -PT "$W" 2>/dev/null | awk 'NR == 2 { print $2 }')
echo "== short processes: wall time, plain and under fxt-run"
echo "   ($(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) CPUs," \
  "$(uname -r), ${fs:-unknown fs} at $W)"
echo "   $N rounds after $WARMUP warm-up, each round $(echo $VARIANTS | sed 's/ /, /g') in turn"
[ -z "${BASE:-}" ] || echo "   base: $BASE/fxt-run"
echo
printf '%-19s %16s %16s %14s %8s %6s   %s\n' workload "plain s" "traced s" "x plain" \
  "us/proc" "cpu x" "goal<=1.5x"
printf '%-19s %16s %16s %14s\n' "" "med [min]" "med [min]" "med [min]"

for spec in "loop|fork loop|$FORKS" "pipes|pipelines|$((PIPES * 4))"; do
  w=${spec%%|*}
  rest=${spec#*|}
  label=${rest%%|*}
  procs=${rest#*|}
  bench_rounds "$w" "$((procs + 1))"
  [ -z "${BASE:-}" ] || row "$w" "$label (base)" "$procs" base
  row "$w" "$label" "$procs"
done

echo
echo "x plain: traced wall / plain wall of the same round; us/proc: the"
echo "difference over the short processes ($FORKS forks; $PIPES x 4 execs); cpu x:"
echo "CPU seconds (user + system, fxt-run's included) traced / plain, same round."
bench_end
