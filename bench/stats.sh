# bench/stats.sh: awk and shell functions the bench scripts share
# (sourced, not run).  AWK_ORDER: median(a, k) and least(a, k) of
# a[1..k]; median sorts a in place (insertion sort: a few rounds per
# figure).  cpu_s and the opening checks (bench_*): below.
# shellcheck shell=sh disable=SC2034 # used by the scripts that source it
AWK_ORDER='
function median(a, k,   i, j, t) {
  for (i = 2; i <= k; i++)
    for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
function least(a, k,   i, m) {
  m = a[1]
  for (i = 2; i <= k; i++) if (a[i] < m) m = a[i]
  return m
}
'

# cpu_s FILE: the CPU seconds (user + system) of the children this shell
# had waited for when `times >FILE` ran in it (its second line; `times` in
# a command substitution would be the subshell's).
cpu_s() {
  awk 'NR == 2 {
    s = 0
    for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
    printf "%.3f\n", s
  }' "$1"
}

# The opening checks of the scripts that time fxt-run against a plain run;
# NAME (bench-forks, ...) begins each message, and a failed check exits 2.
# bench_variants NAME: VARIANTS, "plain traced", or with BASE (another
# build tree, whose fxt-run must exist) "plain base traced".
bench_variants() {
  VARIANTS="plain traced"
  if [ -n "${BASE:-}" ]; then
    [ -x "$BASE/fxt-run" ] || { echo "$1: $BASE/fxt-run is missing" >&2; exit 2; }
    VARIANTS="plain base traced"
  fi
}

# bench_built NAME FILE...: each FILE is built (an executable).
bench_built() {
  _n=$1
  shift
  for _f; do
    [ -x "$_f" ] || { echo "$_n: $_f is missing (run make first)" >&2; exit 2; }
  done
}

# bench_counts NAME WHAT VALUE...: each VALUE is a positive integer; WHAT
# names them in the message ("N, FORKS and PIPES").
bench_counts() {
  _n=$1
  _what=$2
  shift 2
  for _v; do
    case $_v in '' | *[!0-9]* | 0) echo "$_n: $_what must be positive integers" >&2; exit 2 ;; esac
  done
}

# bench_gnu_date NAME: date +%N gives nanoseconds (GNU date).
bench_gnu_date() {
  case $(date +%N) in '' | *[!0-9]*)
    echo "$1: date +%N does not give nanoseconds (GNU date needed)" >&2
    exit 2
    ;;
  esac
}

# bench_scratch NAME: W, the scratch directory (an absolute path):
# BENCH_DIR, kept, or a new one under TMPDIR removed at exit; W/res is
# there and empty.
bench_scratch() {
  if [ -n "${BENCH_DIR:-}" ]; then
    W=$BENCH_DIR
    mkdir -p "$W"
  else
    W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-$1.XXXXXX")
    trap 'rm -rf "$W"' EXIT
  fi
  W=$(cd "$W" && pwd)
  mkdir -p "$W/res"
  rm -f "$W"/res/*
}

# bench_rounds WORKLOAD [ARG]: WARMUP uncounted rounds (ROUND 0), then N,
# each calling the script's `once WORKLOAD VARIANT ROUND [ARG]` for every
# variant in VARIANTS in turn.
bench_rounds() {
  _r=1
  while [ "$_r" -le $((WARMUP + N)) ]; do
    _round=$((_r - WARMUP))
    [ "$_round" -gt 0 ] || _round=0
    for _v in $VARIANTS; do
      once "$1" "$_v" "$_round" ${2+"$2"}
    done
    _r=$((_r + 1))
  done
}

# bench_end: the failures the rounds wrote to $W/res/failures, under the
# table, and exit 1; else exit 0.
bench_end() {
  if [ -s "$W/res/failures" ]; then
    echo
    echo "FAILURES:"
    sed 's/^/  /' "$W/res/failures"
    exit 1
  fi
  exit 0
}
