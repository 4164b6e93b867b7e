#!/bin/sh
# bench/overhead.sh: does fxt-report --subtract-overhead give back the
# untraced program's time?  (`make bench-overhead`; not a test.)
#
# For each workload, ROUNDS (5) rounds, each: the instrumented program run
# without tracing (its hooks are the C library's empty ones: what the
# program costs untraced), then under fxt-run; from the archive, the
# outermost function's total as measured and with the hooks' cost taken
# out (fxt-report --subtract-overhead).  Printed: the medians, and each
# traced figure over the untraced time of the same round (median of the
# per-round ratios).  The issue's goal: the corrected one within 10%.
#
#   fib   bench/fib N (N = FIB_N, 33): main's total, against the program's
#         own measure of its work (cpu_ns, single thread).
#   tiny  tests/progs/numbered N (N = TINY_N, 10^6): calls of a few ns
#         each, the hooks three times the work: the worst case.  main's
#         total against the untraced run's wall time less that of
#         `numbered 0` (the process's start and exit).
#   Lua   Lua 5.4 built with -finstrument-functions from LUA_SRC (the
#         source make bench-lua-setup fetches, as bench/run.sh finds it),
#         running bench/lua-bench.lua: main's total, against the untraced
#         run's wall time from start to exit (/usr/bin/time).
set -u
B=${abs_top_builddir:?run through make bench-overhead}
ROUNDS=${ROUNDS:-5}
FIB_N=${FIB_N:-33}
TINY_N=${TINY_N:-1000000}
W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-overhead.XXXXXX")
trap 'rm -rf "$W"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)

# main_total ARCHIVE [-O]: main's total in ns.
main_total() {
  "$B/fxt-report" -F csv "$@" | awk -F, '$NF == "main" { print $2; exit }'
}

# traced UNTRACED_NS FILE PROGRAM ARGS...: runs PROGRAM under fxt-run and
# appends the round's line to FILE: "untraced measured corrected pair_ns".
traced() {
  u=$1 out=$2
  shift 2
  "$B/fxt-run" -q -f --libc=none -o "$W/run.fxt" -- "$@" >/dev/null
  m=$(main_total "$W/run.fxt")
  c=$(main_total "$W/run.fxt" -O)
  p=$("$B/fxt-report" -O -F json "$W/run.fxt" | sed -n 's/.*"hook_pair_ns":\([0-9.]*\).*/\1/p')
  echo "$u $m $c ${p:-0}" >>"$out"
}

# report LABEL FILE: FILE has one line per round, "untraced measured
# corrected pair_ns" in ns.
report() {
  awk -v label="$1" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k++; u[k] = $1; m[k] = $2; c[k] = $3; p[k] = $4; rm[k] = $2 / $1; rc[k] = $3 / $1 }
    END {
      printf "%-6s untraced %8.1f ms  traced %8.1f ms (%.2fx)  corrected %8.1f ms (%.2fx, %+.0f%%)  hook cost %.1f ns a call\n",
        label, median(u, k) / 1e6, median(m, k) / 1e6, median(rm, k), median(c, k) / 1e6,
        median(rc, k), 100 * (median(rc, k) - 1), median(p, k)
    }' "$2"
}

echo "bench-overhead: $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1), $(nproc) CPUs; median of $ROUNDS rounds"

# ---------------------------------------------------------------- fib
r=0
while [ $r -lt "$ROUNDS" ]; do
  u=$("$B/bench/fib" "$FIB_N" | sed 's/.*cpu_ns=\([0-9]*\).*/\1/')
  traced "$u" "$W/fib" "$B/bench/fib" "$FIB_N"
  r=$((r + 1))
done
report "fib($FIB_N)" "$W/fib"

# ---------------------------------------------------------------- tiny
NUM=$B/tests/progs/numbered
r=0
while [ $r -lt "$ROUNDS" ]; do
  t0=$(date +%s%N)
  "$NUM" 0 >/dev/null
  t1=$(date +%s%N)
  "$NUM" "$TINY_N" >/dev/null
  t2=$(date +%s%N)
  traced $((t2 - t1 - (t1 - t0))) "$W/tiny" "$NUM" "$TINY_N"
  r=$((r + 1))
done
report tiny "$W/tiny"

# ---------------------------------------------------------------- Lua
if [ -z "${LUA_SRC+set}" ]; then
  LUA_SRC=
  for s in "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}"/fxt-bench/lua5.4-*/src; do
    [ -f "$s/lua.c" ] && LUA_SRC=$s
  done
fi
if [ -z "$LUA_SRC" ]; then
  echo "Lua    no source (make bench-lua-setup fetches it; or set LUA_SRC)"
  exit 0
fi
mkdir -p "$W/lua"
cp "$LUA_SRC"/*.c "$LUA_SRC"/*.h "$W/lua/"
[ -e "$W/lua/lua5.4-deb-multiarch.h" ] ||
  echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null)\"" >"$W/lua/lua5.4-deb-multiarch.h"
srcs=$(cd "$W/lua" && for f in *.c; do [ "$f" = luac.c ] || printf '%s ' "$f"; done)
# shellcheck disable=SC2086
(cd "$W/lua" && ${CC:-gcc} -O2 -g -fno-omit-frame-pointer -finstrument-functions -DLUA_USE_LINUX \
  -DLUA_COMPAT_5_3 -o lua-i $srcs -lm -ldl -Wl,-E) || exit 1
r=0
while [ $r -lt "$ROUNDS" ]; do
  t0=$(date +%s%N)
  "$W/lua/lua-i" "$HERE/lua-bench.lua" >/dev/null
  t1=$(date +%s%N)
  traced $((t1 - t0)) "$W/lua.res" "$W/lua/lua-i" "$HERE/lua-bench.lua"
  r=$((r + 1))
done
report Lua "$W/lua.res"
