#!/bin/sh
# bench/run.sh: the cost of tracing, side by side in one run.  Not a test.
#
#   make bench                     (from the build tree), or
#   abs_top_builddir=BUILD sh bench/run.sh
#
# Workload: bench/fib N (-O2 -finstrument-functions), one enter/exit hook
# pair per call; fib(35) makes 29,860,703 calls.  Variants:
#   uninstrumented   bench/fib-plain, the same code without the hooks
#   glibc stubs      bench/fib with glibc's empty __cyg_profile_func_* hooks
#   null recorder    bench/.libs/libnull-recorder.so: rdtsc + one 16-byte TLS
#                    store per hook, nothing kept (the floor for a recorder)
#   nop agent        .libs/libfxt-agent-nop.so
#   fxtrace          fxt-run (the agent), archive written and flushed
#   uftrace          uftrace record --no-libcall, if installed
# Per call = (CPU time of the work - uninstrumented) / calls: the hook pair's
# cost.  "x null" divides that by the null recorder's.  Flush = wall time
# from the end of the work to the exit of the process, per million events.
# Then: 1 vs 2 threads, and peak RSS of a multi-GB trace.
#
# Last, if LUA_SRC names the src/ directory of Debian's Lua 5.4 source
# (`apt-get source lua5.4`, which needs a deb-src line), a real program:
# the interpreter built -O2 with and without -finstrument-functions, running
# bench/lua-bench.lua plain, with the null recorder and under fxt-run.
#
# Environment: FIB_N (35), BIG_N (37: ~78 M calls, a ~2 GB archive; 0 skips
# it), REPS (5 runs of each variant), STAT (median: the run with the median
# CPU time is kept; best: the fastest), BENCH_DIR (a scratch
# directory, default under TMPDIR; several GB are written there), LUA_SRC.
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
FIB_N=${FIB_N:-35}
BIG_N=${BIG_N:-37}
REPS=${REPS:-5}
STAT=${STAT:-median}
UFTRACE=${UFTRACE:-$(command -v uftrace || true)}
W=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench.XXXXXX")}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT

FIB=$B/bench/fib
PLAIN=$B/bench/fib-plain
NULLREC=$B/bench/.libs/libnull-recorder.so
NOP=$B/.libs/libfxt-agent-nop.so
AGENT=$B/.libs/libfxt-agent.so
for f in "$FIB" "$PLAIN" "$NULLREC" "$NOP" "$AGENT" "$B/fxt-run"; do
  [ -e "$f" ] || { echo "bench: $f is missing (run make first)" >&2; exit 1; }
done

now_ns() { date +%s%N; }

# measure NAME ARCHIVE CMD...: runs CMD REPS times and keeps the run with
# the median CPU time (STAT=median) or the least (STAT=best); sets cpu_ns,
# calls, flush_ns, wall_ns, bytes from that run.  The median is the
# default: on a shared machine the best run is the one that was least
# disturbed, which flatters whatever was measured when the others paused.
measure() {
  m_name=$1 m_archive=$2; shift 2
  : >"$W/reps"
  r=0
  while [ $r -lt "$REPS" ]; do
    rm -rf "$W/out.fxt" "$W/uftrace.data"
    t0=$(now_ns)
    line=$("$@" 2>"$W/stderr" | grep '^calls=') || {
      echo "bench: $m_name failed:" >&2; cat "$W/stderr" >&2; return 1; }
    t1=$(now_ns)
    c=$(echo "$line" | sed 's/.*cpu_ns=\([0-9]*\).*/\1/')
    e=$(echo "$line" | sed 's/.*end_ns=\([0-9]*\).*/\1/')
    n=$(echo "$line" | sed 's/calls=\([0-9]*\).*/\1/')
    b=-
    if [ -n "$m_archive" ] && [ -e "$m_archive" ]; then
      b=$(du -sb "$m_archive" | cut -f1)
    fi
    echo "$c $n $((t1 - e)) $((t1 - t0)) $b" >>"$W/reps"
    r=$((r + 1))
  done
  if [ "$STAT" = best ]; then pick=1; else pick=$(((REPS + 1) / 2)); fi
  set -- $(sort -n "$W/reps" | sed -n "${pick}p")
  cpu_ns=$1 calls=$2 flush_ns=$3 wall_ns=$4 bytes=$5
  [ "$bytes" != - ] || bytes=
}

# row NAME: prints one line of the main table from the last measure.
row() {
  awk -v name="$1" -v cpu="$cpu_ns" -v calls="$calls" -v base="$base_cpu" \
      -v null="${null_over:-0}" -v flush="$flush_ns" -v bytes="${bytes:-}" \
      -v traced="${2:-0}" 'BEGIN {
    over = (cpu - base) / calls
    ratio = null > 0 ? sprintf("%.2f", over / null) : "-"
    if (traced) {
      fl = sprintf("%.1f", flush / 1e6 / (calls / 1e6))
      b = bytes != "" ? sprintf("%.1f", bytes / calls) : "-"
      mb = bytes != "" ? sprintf("%.0f", bytes / 1048576) : "-"
    } else { fl = "-"; b = "-"; mb = "-" }
    printf "%-16s %9.3f %10.2f %8s %11s %9s %8s\n", name, cpu / 1e9, over, ratio, fl, mb, b
  }'
}

echo "fxtrace bench: fib($FIB_N), $(nproc) CPUs, $STAT of $REPS runs; $(uname -r)"
printf "%-16s %9s %10s %8s %11s %9s %8s\n" variant "cpu s" "ns/call" "x null" \
  "flush ms/M" "archive" "B/call"
printf "%-16s %9s %10s %8s %11s %9s %8s\n" "" "" "(overhead)" "" "(events)" "MiB" ""

measure uninstrumented "" "$PLAIN" "$FIB_N"
base_cpu=$cpu_ns
row uninstrumented
measure "glibc stubs" "" "$FIB" "$FIB_N"
row "glibc stubs"
measure "null recorder" "" env LD_PRELOAD="$NULLREC" "$FIB" "$FIB_N"
null_over=$(awk -v c="$cpu_ns" -v b="$base_cpu" -v n="$calls" 'BEGIN { print (c - b) / n }')
row "null recorder"
measure "nop agent" "" env LD_PRELOAD="$NOP" "$FIB" "$FIB_N"
row "nop agent"
measure fxtrace "$W/out.fxt" "$B/fxt-run" -q -f --max-size 0 -o "$W/out.fxt" "$FIB" "$FIB_N"
row fxtrace 1
if [ -n "$UFTRACE" ]; then
  measure uftrace "$W/uftrace.data" "$UFTRACE" record --no-libcall -d "$W/uftrace.data" \
    "$FIB" "$FIB_N"
  row uftrace 1
else
  echo "uftrace          (not installed)"
fi

echo
echo "threads: fib($((FIB_N - 1))) per thread, CPU ns per call pair (overhead)"
printf "%-16s %10s %10s %8s\n" variant "1 thread" "2 threads" "2/1"
for v in null fxtrace; do
  for t in 1 2; do
    measure "$v" "" "$PLAIN" $((FIB_N - 1)) "$t"
    b=$cpu_ns
    if [ $v = null ]; then
      measure "$v" "" env LD_PRELOAD="$NULLREC" "$FIB" $((FIB_N - 1)) "$t"
    else
      measure "$v" "$W/out.fxt" "$B/fxt-run" -q -f --max-size 0 -o "$W/out.fxt" \
        "$FIB" $((FIB_N - 1)) "$t"
    fi
    eval "per_$t=\$(awk -v c=\$cpu_ns -v b=\$b -v n=\$calls 'BEGIN { printf \"%.2f\", (c - b) / n }')"
  done
  printf "%-16s %10s %10s %8s\n" "$v" "$per_1" "$per_2" \
    "$(awk -v a="$per_1" -v b="$per_2" 'BEGIN { printf "%.2f", b / a }')"
done

if [ "$BIG_N" -gt 0 ]; then
  echo
  echo "peak RSS, fib($BIG_N) (/usr/bin/time or getrusage of the process tree)"
  rss() { # CMD...: max RSS in KiB of CMD and its children
    /usr/bin/time -f '%M' -o "$W/rss" "$@" >/dev/null 2>"$W/stderr" || {
      cat "$W/stderr" >&2; return 1; }
    tail -n 1 "$W/rss"
  }
  r0=$(rss "$PLAIN" "$BIG_N")
  rm -f "$W/out.fxt"
  t0=$(now_ns)
  r1=$(rss "$B/fxt-run" -q -f --max-size 0 -o "$W/out.fxt" "$FIB" "$BIG_N")
  t1=$(now_ns)
  sz=$(du -sb "$W/out.fxt" | cut -f1)
  printf "%-16s %10s KiB\n" uninstrumented "$r0"
  printf "%-16s %10s KiB   (archive %s MiB, %.1f s)\n" fxtrace "$r1" \
    "$((sz / 1048576))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')"
fi

if [ -n "${LUA_SRC:-}" ]; then
  echo
  echo "Lua 5.4 (Debian source, $LUA_SRC), bench/lua-bench.lua; CPU s of the process"
  mkdir -p "$W/lua"
  cp "$LUA_SRC"/*.c "$LUA_SRC"/*.h "$W/lua/"
  # Debian's luaconf.h wants a generated header naming the multiarch triplet.
  [ -e "$W/lua/lua5.4-deb-multiarch.h" ] ||
    echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null)\"" \
      >"$W/lua/lua5.4-deb-multiarch.h"
  srcs=$(cd "$W/lua" && ls *.c | grep -v '^luac\.c$')
  for v in plain instr; do
    fl=; [ $v = instr ] && fl=-finstrument-functions
    (cd "$W/lua" && ${CC:-gcc} -O2 -g -fno-omit-frame-pointer $fl -DLUA_USE_LINUX \
      -DLUA_COMPAT_5_3 -o "lua-$v" $srcs -lm -ldl -Wl,-E) || exit 1
  done
  script=$(cd "$(dirname "$0")" && pwd)/lua-bench.lua
  cpu() { # CMD...: user+sys seconds of CMD and its children, best of REPS
    best=
    i=0
    while [ $i -lt "$REPS" ]; do
      rm -f "$W/lua.fxt"
      /usr/bin/time -f '%U %S' -o "$W/cpu" "$@" >/dev/null 2>"$W/stderr" || {
        cat "$W/stderr" >&2; return 1; }
      c=$(awk '{ print $1 + $2 }' "$W/cpu")
      if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
        best=$c
      fi
      i=$((i + 1))
    done
    echo "$best"
  }
  lp=$(cpu "$W/lua/lua-plain" "$script")
  ln=$(cpu env LD_PRELOAD="$NULLREC" "$W/lua/lua-instr" "$script")
  lf=$(cpu "$B/fxt-run" -f -o "$W/lua.fxt" "$W/lua/lua-instr" "$script")
  ev=$(sed -n 's/.*, \([0-9]*\) events,.*/\1/p' "$W/stderr")
  sz=$(du -sb "$W/lua.fxt" | cut -f1)
  printf "%-16s %8s %12s\n" variant "cpu s" "ns/call"
  printf "%-16s %8s %12s\n" uninstrumented "$lp" -
  for v in "null recorder:$ln" "fxtrace:$lf"; do
    awk -v n="${v%%:*}" -v c="${v#*:}" -v p="$lp" -v e="$ev" \
      'BEGIN { printf "%-16s %8s %12.1f\n", n, c, (c - p) * 1e9 / e }'
  done
  echo "  $ev calls; archive $((sz / 1048576)) MiB; fxtrace includes the flush"
fi
