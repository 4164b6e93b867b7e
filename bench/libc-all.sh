#!/bin/sh
# bench/libc-all.sh: what `fxt-run --libc=all` (every wrapped libc call
# recorded with its arguments: malloc/free, mutex lock/unlock among them)
# costs real programs, plainly and traced in the same rounds.  Not a test.
#
#   make bench-libc-all             (from the build tree), or
#   abs_top_builddir=BUILD sh bench/libc-all.sh
#
# Workloads (each skipped, with the reason, when its program is absent):
#   sqlite3   Debian's sqlite3 shell inserting ROWS (50,000) rows, one
#             INSERT statement each, in one transaction, into a new
#             database file in the scratch directory (synchronous=OFF:
#             no fsync, whose time on a shared disk would drown the rest)
#   node      node with timers (setTimeout chains and a setInterval) and a
#             worker thread (worker_threads) exchanging TICKS (5,000)
#             messages with the main thread
# Variants: plain (no agent), traced (`fxt-run -q -f --libc=all -o OUT`),
# and with BASE=BUILD another build's fxt-run (say main's), interleaved:
# each of the N rounds runs them in turn, after WARMUP uncounted rounds.
# A figure is traced over plain of the same round, median [min] over the
# rounds; the goal (issue 29) is at most 3x, for the wall time and the
# CPU time alike (the last column says which medians are over it; on a
# loaded machine the CPU's says more).  Columns: wall seconds, start
# to exit (fxt-run's conversion included); wall and CPU (user + system of
# fxt-run and the program, `times`) over the plain run's; the archive's
# size; the events it holds (fxt-dump --stats: every slice, instant,
# counter and flow event: the same program recording the same calls
# gives the same count, whichever build of fxt-run wrote it).
#
# Checks: each traced run exits 0 and prints what the plain run printed,
# its archive passes fxt-dump --check; a failure is said under the table
# and the script exits 1.
#
# Environment: N (3), WARMUP (1), ROWS (50000), TICKS (5000), LIBC (all:
# the --libc groups), BENCH_DIR (scratch directory, default under TMPDIR),
# BASE (another build tree), ONLY (sqlite3 or node: that workload alone).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
B=$abs_top_builddir
FXT_RUN=$B/fxt-run
FXT_DUMP=$B/fxt-dump
N=${N:-3}
WARMUP=${WARMUP:-1}
ROWS=${ROWS:-50000}
TICKS=${TICKS:-5000}
LIBC=${LIBC:-all}
export LC_ALL=C

bench_variants bench-libc-all
bench_built bench-libc-all "$FXT_RUN" "$FXT_DUMP"
bench_counts bench-libc-all "N, ROWS and TICKS" "$N" "$ROWS" "$TICKS"
bench_gnu_date bench-libc-all

bench_scratch bench-libc-all

# The workloads' inputs.
awk -v rows="$ROWS" 'BEGIN {
  print "PRAGMA synchronous=OFF;"
  print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
  print "BEGIN;"
  for (i = 1; i <= rows; i++)
    printf "INSERT INTO t VALUES(%d, %cname-%06d%c, %d.5);\n", i, 39, (i * 7919) % rows, 39, i
  print "COMMIT;"
  print "SELECT count(*), sum(c), max(b) FROM t;"
}' >"$W/insert.sql"
cat >"$W/timers.js" <<EOF
// Timers and a worker: the worker answers each of the main thread's
// messages; the main thread sends the next one from a timer or
// setImmediate, while an interval timer beats.
const { Worker } = require('worker_threads');
const ticks = $TICKS;
const w = new Worker(\`
  const { parentPort } = require('worker_threads');
  let sum = 0;
  parentPort.on('message', (n) => {
    if (n < 0) { parentPort.close(); return; }
    const a = [];
    for (let i = 0; i < 50; i++) a.push({ n, i, s: 'x' + i });
    sum += a.reduce((s, o) => s + o.i, 0);
    parentPort.postMessage(sum);
  });
\`, { eval: true });
let got = 0, last = 0, beats = 0;
const beat = setInterval(() => { beats++; }, 1);
w.on('message', (s) => {
  last = s;
  if (++got === ticks) {
    clearInterval(beat);
    w.postMessage(-1);
    console.log('ticks ' + got + ' sum ' + last);
    return;
  }
  // A timer every tenth message, the next turn of the loop otherwise:
  // timers are due a millisecond on, which would make this a sleep.
  if (got % 10 === 0) setTimeout(() => w.postMessage(got), 0);
  else setImmediate(() => w.postMessage(got));
});
w.postMessage(0);
EOF

WORKLOADS=
if [ "${ONLY:-sqlite3}" = sqlite3 ]; then
  if command -v sqlite3 >/dev/null 2>&1; then
    WORKLOADS="$WORKLOADS sqlite3"
  else
    echo "bench-libc-all: sqlite3 is not installed (apt-get install sqlite3): its workload skipped"
  fi
fi
if [ "${ONLY:-node}" = node ]; then
  if command -v node >/dev/null 2>&1; then
    WORKLOADS="$WORKLOADS node"
  else
    echo "bench-libc-all: node is not installed (apt-get install nodejs): its workload skipped"
  fi
fi
[ -n "$WORKLOADS" ] || exit 0

now_ns() { date +%s%N; }

# run WORKLOAD VARIANT: the workload, plainly or under that fxt-run.
run() {
  case $2 in
  plain) set -- "$1" ;;
  base) set -- "$1" "$BASE/fxt-run" -q -f --libc="$LIBC" -o "$W/t.fxt" -- ;;
  *) set -- "$1" "$FXT_RUN" -q -f --libc="$LIBC" -o "$W/t.fxt" -- ;;
  esac
  r_w=$1
  shift
  case $r_w in
  sqlite3)
    rm -f "$W/db.sqlite"
    "$@" sqlite3 "$W/db.sqlite" <"$W/insert.sql" >"$W/out" 2>"$W/err"
    ;;
  node) "$@" node "$W/timers.js" >"$W/out" 2>"$W/err" ;;
  esac
}

# once WORKLOAD VARIANT ROUND: appends "wall_ns cpu0 cpu1 archive_bytes
# libc_calls" to $W/res/WORKLOAD.VARIANT when ROUND > 0; a failure goes to
# $W/res/failures.
once() {
  o_w=$1 o_v=$2 o_r=$3
  rm -f "$W"/t.fxt
  # The previous run's write-back is not this one's to pay.
  sync
  set +e
  times >"$W/times0"
  o_t0=$(now_ns)
  run "$o_w" "$o_v"
  o_st=$?
  o_t1=$(now_ns)
  times >"$W/times1"
  set -e
  o_size=0 o_calls=0
  if [ "$o_st" -ne 0 ]; then
    echo "$o_w, $o_v, round $o_r: exit status $o_st: $(tail -n 1 "$W/err")" >>"$W/res/failures"
  elif [ "$o_v" = plain ]; then
    cp "$W/out" "$W/want.$o_w"
  elif ! cmp -s "$W/out" "$W/want.$o_w"; then
    echo "$o_w, $o_v, round $o_r: the output differs from the plain run's" >>"$W/res/failures"
  else
    o_size=$(wc -c <"$W/t.fxt")
    o_calls=$("$FXT_DUMP" --stats "$W/t.fxt" | sed -n 's/^events //p')
    if ! "$FXT_DUMP" --check "$W/t.fxt" >"$W/check" 2>&1; then
      echo "$o_w, $o_v, round $o_r: fxt-dump --check failed" >>"$W/res/failures"
    fi
  fi
  rm -f "$W"/t.fxt "$W/check"
  [ "$o_r" -gt 0 ] || return 0
  echo "$((o_t1 - o_t0)) $(cpu_s "$W/times0") $(cpu_s "$W/times1") $o_size ${o_calls:-0}" \
    >>"$W/res/$o_w.$o_v"
}

# row WORKLOAD LABEL VARIANT: the table row of VARIANT.
row() {
  awk -v label="$2" "$AWK_ORDER"'
    FILENAME ~ /\.plain$/ { plain[++np] = $1 / 1e9; pcpu[np] = $3 - $2; next }
    { k = ++nt; traced[k] = $1 / 1e9; ratio[k] = traced[k] / plain[k]
      cratio[k] = pcpu[k] > 0 ? ($3 - $2) / pcpu[k] : 0; size[k] = $4 / 1048576; calls[k] = $5 }
    END {
      for (i = 1; i <= np; i++) p[i] = plain[i]
      for (i = 1; i <= nt; i++) { r[i] = ratio[i]; t[i] = traced[i]; c[i] = cratio[i]; s[i] = size[i] }
      med = median(r, nt); cmed = median(c, nt)
      if (med <= 3 && cmed <= 3) goal = "ok"
      else if (med > 3 && cmed > 3) goal = "over 3x"
      else if (med > 3) goal = "wall over 3x"
      else goal = "cpu over 3x"
      printf "%-16s %7.3f [%6.3f] %7.3f [%6.3f] %6.2f [%5.2f] %6.2f [%5.2f] %7.1f %10d   %s\n",
        label, median(p, np), least(p, np), median(t, nt), least(t, nt), med, least(r, nt),
        cmed, least(c, nt), median(s, nt), median(calls, nt), goal
    }' "$W/res/$1.plain" "$W/res/$1.$3"
}

fs=$(df -PT "$W" 2>/dev/null | awk 'NR == 2 { print $2 }')
echo "== --libc=$LIBC on real programs, plainly and under fxt-run"
echo "   ($(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) CPUs," \
  "$(uname -r), ${fs:-unknown fs} at $W, load $(cut -d' ' -f1-3 /proc/loadavg))"
for w in $WORKLOADS; do
  case $w in
  sqlite3) echo "   sqlite3 $(sqlite3 --version | cut -d' ' -f1): $ROWS INSERTs in one transaction" ;;
  node) echo "   node $(node --version): $TICKS timer ticks, a worker thread" ;;
  esac
done
echo "   $N rounds after $WARMUP warm-up, each round $(echo $VARIANTS | sed 's/ /, /g') in turn"
[ -z "${BASE:-}" ] || echo "   base: $BASE/fxt-run"
echo
printf '%-16s %16s %16s %14s %14s %7s %10s   %s\n' workload "plain s" "traced s" "x plain" \
  "cpu x" "MiB" "events" "goal<=3x"
printf '%-16s %16s %16s %14s %14s\n' "" "med [min]" "med [min]" "med [min]" "med [min]"

for w in $WORKLOADS; do
  bench_rounds "$w"
  [ -z "${BASE:-}" ] || row "$w" "$w (base)" base
  row "$w" "$w" traced
done

echo
echo "x plain: traced wall / plain wall of the same round; cpu x: CPU seconds"
echo "(user + system, fxt-run's included) traced / plain, same round; MiB: the"
echo "archive; events: fxt-dump --stats, median; goal: both medians at most 3x"
echo "(else which is over)."
bench_end
