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
#   circular         the same, --mode=circular (each thread's newest 16 MiB)
#   filtered out     the same, --exclude '^fib$': every call goes through
#                    the filters and none is recorded (goal: at most 1.2x
#                    the null recorder)
#   uftrace          uftrace record --no-libcall, if installed
#   fxtrace (base)   with BASE=BUILD: another build's fxt-run and bench/fib,
#                    next to fxtrace (a change against the commit before
#                    it, in the same rounds), after it in even rounds and
#                    before it in odd ones
#
# Interleaving: every table but peak RSS (one run) is measured in rounds.
# A round runs each of its variants once, in the fixed order above, and
# each figure that compares two variants is computed within one round
# (against the uninstrumented run of the same round, or the null
# recorder's), then the median over the REPS rounds is printed.  So a machine whose speed drifts
# (another build starting on a shared machine) hits every variant of a
# round alike instead of one variant's whole set of runs.  After each
# run of fxt-run the next waits (2 s at most) for fxt-run's child that
# frees the spool's pages after the run (launcher/removed.c): it would
# otherwise run beside the next variant and take its CPU.
#
# Scheduling group: run as root where the kernel groups tasks by session
# (/proc/sys/kernel/sched_autogroup_enabled), the script runs itself again
# in a session of its own whose group is at nice -20 (setsid, then -20
# into /proc/self/autogroup), so that the machine's other sessions weigh
# as one group each against it rather than its runs getting one session's
# share (bench/README.md, "Below the program, mapped, freed later").
# BENCH_GROUP=0 keeps it where it is.
#
# Main table, per variant:
#   cpu s            CPU time of the work (fib's CLOCK_PROCESS_CPUTIME_ID
#                    around the computation, so neither start-up nor the
#                    flush)
#   ns/call          overhead per call pair: (cpu - the uninstrumented
#                    cpu of the same round) / calls
#   x null           that overhead divided by the null recorder's of the
#                    same round
#   flush ms/M       wall time from the end of the work to the exit of the
#                    process (fxt-run's: the archive is written), per
#                    million events
#   archive MiB, B/call   size of the archive, and per call pair
# Each column is the median over the rounds of that per-round figure;
# STAT=best prints the least instead (each column on its own, so a row may
# mix rounds; the least of a ratio is its most favourable round, which
# flatters whatever was measured while the others paused: median is the
# default for that reason).
#
# Whole run: the wall time, start to exit, of the null recorder's process
# and of `fxt-run ... bench/fib N` (archive written), from the main
# table's rounds; the ratio is the median of the per-round ratios.  Goal (issue 29):
# at most 1.3x.
#
# Threads: fib(N-1) on 1 and on 2 threads.  Each round runs
# uninstrumented, null recorder, fxtrace with 1 thread, then the same with
# 2 threads.  fib's cpu_ns is the CPU time of the whole process (both
# threads) and calls= is already multiplied by the thread count, so the
# overhead per call pair is comparable between the two.  2/1 and x null
# are medians of per-round ratios (so 2/1 need not be exactly the ratio of
# the two medians printed beside it).  Goal: 2/1 at most 1.05 for fxtrace
# (a second thread costs nothing per call).  With BASE, the base build's
# fxt-run runs after fxtrace in each round and gets a row of its own.
#
# Then peak RSS of a multi-GB trace (BIG_N), and last, Lua 5.4 built from
# Debian's source: the interpreter built -O2 with and without
# -finstrument-functions, running bench/lua-bench.lua plain, with the null
# recorder and under fxt-run, interleaved like the rest; CPU is user+sys
# of the process tree (/usr/bin/time), so fxtrace's includes its flush and
# fxt-run's own work.  The source is LUA_SRC (the src/ directory of
# `apt-get source lua5.4`); when LUA_SRC is unset, a lua5.4-*/src under
# BENCH_DIR or under the cache directory ${XDG_CACHE_HOME:-~/.cache}/fxt-bench
# (where `make bench-lua-setup`, bench/src-setup.sh, puts it) is used;
# LUA_SRC= (empty) skips it.
#
# Environment: FIB_N (35), BIG_N (37: ~78 M calls, a ~2 GB archive; 0 skips
# it), REPS (5 rounds), STAT (median or best, the main table only; the
# other tables print medians), BENCH_DIR (a directory in which the scratch
# directory is made, default TMPDIR or /tmp; several GB are written there,
# and the spool and archives go there, so its filesystem is printed),
# LUA_SRC, UFTRACE, CC (for Lua), BASE (a build tree to compare with),
# BENCH_GROUP.
set -eu

# shellcheck source=bench/group.sh
. "$(cd "$(dirname "$0")" && pwd)/group.sh"

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
B=$abs_top_builddir
FIB_N=${FIB_N:-35}
BIG_N=${BIG_N:-37}
REPS=${REPS:-5}
STAT=${STAT:-median}
UFTRACE=${UFTRACE:-$(command -v uftrace || true)}
case $REPS in '' | *[!0-9]* | 0) echo "bench: REPS must be a positive integer" >&2; exit 2 ;; esac
case $STAT in median | best) ;; *) echo "bench: STAT must be median or best" >&2; exit 2 ;; esac
# Only the scratch directory made here is removed, never BENCH_DIR itself
# (which may hold a fetched Lua source).
[ -z "${BENCH_DIR:-}" ] || mkdir -p "$BENCH_DIR"
W=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/fxt-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/res"

FIB=$B/bench/fib
PLAIN=$B/bench/fib-plain
NULLREC=$B/bench/.libs/libnull-recorder.so
NOP=$B/.libs/libfxt-agent-nop.so
AGENT=$B/.libs/libfxt-agent.so
for f in "$FIB" "$PLAIN" "$NULLREC" "$NOP" "$AGENT" "$B/fxt-run"; do
  [ -e "$f" ] || { echo "bench: $f is missing (run make first)" >&2; exit 1; }
done
BASE=${BASE:-}
if [ -n "$BASE" ]; then
  for f in "$BASE/fxt-run" "$BASE/bench/fib"; do
    [ -e "$f" ] || { echo "bench: BASE: $f is missing" >&2; exit 1; }
  done
fi

now_ns() { date +%s%N; }

# in_turn R LIST: LIST with fxtrace and base swapped in odd rounds R: the
# second of the two finds the pages the first freed still warm (on a VM
# whose freed memory goes back to the host, a fresh page costs several
# microseconds: bench/README.md), which a fixed order would give to one.
in_turn() {
  if [ $(($1 % 2)) = 1 ]; then
    echo "$2" | sed 's/fxtrace base/base fxtrace/'
  else
    echo "$2"
  fi
}

# Awk functions shared by the tables: median and least of a[1..k]
# (bench/stats.sh), and pick(), which is one of them as STAT says.
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
AWK_STATS=$AWK_ORDER'
function pick(a, k) { return stat == "best" ? least(a, k) : median(a, k) }
# ratio(a, i, x, y): a[i] = x / y, or deleted when y <= 0 (an overhead lost
# in the noise); ratios(a, k): the median of what is left, or "-".
function ratio(a, i, x, y) { if (y > 0) a[i] = x / y; else delete a[i] }
function ratios(a, k,   i, b, m) {
  for (i = 1; i <= k; i++) if (i in a) b[++m] = a[i]
  return m ? sprintf("%.2f", pick(b, m)) : "-"
}
'

# once VARIANT N THREADS: one run of fib(N) on THREADS threads as VARIANT
# (plain, stubs, null, nop, fxtrace, uftrace).  Appends one line,
# "cpu_ns calls flush_ns wall_ns bytes", to $W/res/VARIANT.N.THREADS, so
# that line R of every file is round R.  flush_ns: from fib's end of the
# work to the exit of the command; wall_ns: start to exit; bytes: the
# archive's size, or - when nothing is written.
once() {
  o_v=$1 o_n=$2 o_t=$3
  o_archive=
  rm -rf "$W/out.fxt" "$W/uftrace.data"
  case $o_v in
  plain) set -- "$PLAIN" ;;
  stubs) set -- "$FIB" ;;
  null) set -- env LD_PRELOAD="$NULLREC" "$FIB" ;;
  nop) set -- env LD_PRELOAD="$NOP" "$FIB" ;;
  fxtrace)
    o_archive=$W/out.fxt
    set -- "$B/fxt-run" -q -f --max-size 0 -o "$W/out.fxt" "$FIB"
    ;;
  base)
    o_archive=$W/out.fxt
    set -- "$BASE/fxt-run" -q -f --max-size 0 -o "$W/out.fxt" "$BASE/bench/fib"
    ;;
  circular)
    o_archive=$W/out.fxt
    set -- "$B/fxt-run" -q -f --mode=circular -o "$W/out.fxt" "$FIB"
    ;;
  filtered)
    o_archive=$W/out.fxt
    set -- "$B/fxt-run" -q -f --exclude '^fib$' -o "$W/out.fxt" "$FIB"
    ;;
  uftrace)
    o_archive=$W/uftrace.data
    set -- "$UFTRACE" record --no-libcall -d "$W/uftrace.data" "$FIB"
    ;;
  esac
  # Each run starts with no dirty page cache left by the one before (the
  # traced variants write GBs: their write-back would otherwise land on
  # whichever run comes next, and a run's figures would depend on its
  # place in the round).
  sync
  o_t0=$(now_ns)
  o_line=$("$@" "$o_n" "$o_t" 2>"$W/stderr" | grep '^calls=') || {
    echo "bench: $o_v (fib($o_n), $o_t threads) failed:" >&2; cat "$W/stderr" >&2; exit 1; }
  o_t1=$(now_ns)
  case $o_v in fxtrace | base | circular | filtered) settle ;; esac
  o_c=$(echo "$o_line" | sed 's/.*cpu_ns=\([0-9]*\).*/\1/')
  o_e=$(echo "$o_line" | sed 's/.*end_ns=\([0-9]*\).*/\1/')
  o_calls=$(echo "$o_line" | sed 's/calls=\([0-9]*\).*/\1/')
  o_b=-
  if [ -n "$o_archive" ] && [ -e "$o_archive" ]; then
    o_b=$(du -sb "$o_archive" | cut -f1)
  fi
  echo "$o_c $o_calls $((o_t1 - o_e)) $((o_t1 - o_t0)) $o_b" >>"$W/res/$o_v.$o_n.$o_t"
}

# row VARIANT LABEL: one line of the main table, from the files of the
# uninstrumented build, the null recorder and VARIANT.
row() {
  awk -v label="$2" -v var="$1" -v stat="$STAT" "$AWK_STATS"'
    FNR == 1 { f++ }
    f == 1 { base[FNR] = $1; next }
    f == 2 { nover[FNR] = ($1 - base[FNR]) / $2; next }
    {
      k = FNR
      cpu[k] = $1
      over[k] = ($1 - base[k]) / $2
      ratio(xnull, k, over[k], nover[k])
      flush[k] = $3 / 1e6 / ($2 / 1e6)
      if ($5 != "-") { bytes[k] = $5; bpc[k] = $5 / $2 } else nob = 1
    }
    END {
      traced = var == "fxtrace" || var == "uftrace" || var == "circular" || var == "filtered" || var == "base"
      x = var == "plain" ? "-" : ratios(xnull, k)
      fl = traced ? sprintf("%.1f", pick(flush, k)) : "-"
      mb = traced && !nob ? sprintf("%.0f", pick(bytes, k) / 1048576) : "-"
      b = traced && !nob ? sprintf("%.1f", pick(bpc, k)) : "-"
      printf "%-16s %9.3f %10.2f %8s %11s %9s %8s\n", label, pick(cpu, k) / 1e9,
        pick(over, k), x, fl, mb, b
    }' "$W/res/plain.$FIB_N.1" "$W/res/null.$FIB_N.1" "$W/res/$1.$FIB_N.1"
}

# ---------------------------------------------------------------- machine
# The spool and the archives are written under the scratch directory, so
# its filesystem matters (findmnt names ext4 where stat -f says ext2/ext3).
cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
fs=$(findmnt -n -o FSTYPE -T "$W" 2>/dev/null || stat -f -c %T "$W")
echo "machine: ${cpu_model:-$(uname -m)}, $(nproc) CPUs, Linux $(uname -r);" \
  "scratch $W on $fs"

# ------------------------------------------------------------- main table
variants="plain stubs null nop fxtrace circular filtered"
[ -z "$BASE" ] || variants="plain stubs null nop fxtrace base circular filtered"
[ -z "$UFTRACE" ] || variants="$variants uftrace"
echo "fxtrace bench: fib($FIB_N), $STAT of $REPS rounds (each round runs every variant once, in turn)"
printf "%-16s %9s %10s %8s %11s %9s %8s\n" variant "cpu s" "ns/call" "x null" \
  "flush ms/M" "archive" "B/call"
printf "%-16s %9s %10s %8s %11s %9s %8s\n" "" "" "(overhead)" "" "(events)" "MiB" ""
r=0
while [ $r -lt "$REPS" ]; do
  for v in $(in_turn $r "$variants"); do once "$v" "$FIB_N" 1; done
  r=$((r + 1))
done
row plain uninstrumented
row stubs "glibc stubs"
row null "null recorder"
row nop "nop agent"
row fxtrace fxtrace
[ -z "$BASE" ] || row base "fxtrace (base)"
row circular circular
row filtered "filtered out"
if [ -n "$UFTRACE" ]; then
  row uftrace uftrace
else
  echo "uftrace          (not installed)"
fi

# Whole run: wall time start to exit, same rounds.
awk -v reps="$REPS" "$AWK_STATS"'
  FNR == 1 { f++ }
  f == 1 { nw[FNR] = $4 / 1e9; next }
  { k = FNR; fw[k] = $4 / 1e9; q[k] = fw[k] / nw[k] }
  END {
    printf "whole run: fxtrace %.2f s vs null recorder %.2f s = %.2fx (goal <= 1.3x), median of %d rounds\n",
      median(fw, k), median(nw, k), median(q, k), reps
  }' "$W/res/null.$FIB_N.1" "$W/res/fxtrace.$FIB_N.1"
if [ -n "$BASE" ]; then
  awk "$AWK_STATS"'
    FNR == 1 { f++ }
    f == 1 { nw[FNR] = $4 / 1e9; next }
    f == 2 { fw[FNR] = $4 / 1e9; next }
    { k = FNR; bw[k] = $4 / 1e9; qb[k] = bw[k] / nw[k]; qf[k] = fw[k] / bw[k] }
    END {
      printf "whole run (base): %.2f s = %.2fx the null recorder; fxtrace / base %.2fx\n",
        median(bw, k), median(qb, k), median(qf, k)
    }' "$W/res/null.$FIB_N.1" "$W/res/fxtrace.$FIB_N.1" "$W/res/base.$FIB_N.1"
fi

# ---------------------------------------------------------------- threads
TN=$((FIB_N - 1))
echo
echo "threads: fib($TN) per thread, CPU ns per call pair (overhead), median of $REPS rounds;" \
  "goal: 2/1 <= 1.05"
printf "%-16s %10s %10s %8s %9s %9s\n" variant "1 thread" "2 threads" "2/1" \
  "x null 1" "x null 2"
tvars="plain null fxtrace"
[ -z "$BASE" ] || tvars="plain null fxtrace base"
r=0
while [ $r -lt "$REPS" ]; do
  for t in 1 2; do
    for v in $(in_turn $r "$tvars"); do once "$v" "$TN" "$t"; done
  done
  r=$((r + 1))
done
tfiles=
for t in 1 2; do for v in $tvars; do tfiles="$tfiles $W/res/$v.$TN.$t"; done; done
# shellcheck disable=SC2086 # the file names have no blanks (mktemp's)
awk -v stat=median -v nv="$(echo $tvars | wc -w)" "$AWK_STATS"'
  FNR == 1 { f++ }
  # Files: each variant (uninstrumented first) with 1 thread, then with 2.
  { t = f <= nv ? 1 : 2; v = (f - 1) % nv; k = FNR }
  v == 0 { base[t, k] = $1; next }
  { over[v, t, k] = ($1 - base[t, k]) / $2 }
  END {
    for (v = 1; v < nv; v++) {
      for (i = 1; i <= k; i++) {
        o1[i] = over[v, 1, i]; o2[i] = over[v, 2, i]
        ratio(q, i, o2[i], o1[i])
        ratio(x1, i, o1[i], over[1, 1, i]); ratio(x2, i, o2[i], over[1, 2, i])
      }
      printf "%-16s %10.2f %10.2f %8s %9s %9s\n",
        v == 1 ? "null recorder" : v == 2 ? "fxtrace" : "fxtrace (base)",
        median(o1, k), median(o2, k), ratios(q, k),
        v == 1 ? "-" : ratios(x1, k), v == 1 ? "-" : ratios(x2, k)
    }
  }' $tfiles

# --------------------------------------------------------------- peak RSS
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
  rm -f "$W/out.fxt"
  printf "%-16s %10s KiB\n" uninstrumented "$r0"
  printf "%-16s %10s KiB   (archive %s MiB, %.1f s)\n" fxtrace "$r1" \
    "$((sz / 1048576))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')"
fi

# -------------------------------------------------------------------- Lua
# LUA_SRC unset: look for a source fetched by bench/src-setup.sh.
if [ -z "${LUA_SRC+set}" ]; then
  LUA_SRC=
  for d in ${BENCH_DIR:+"$BENCH_DIR"} "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fxt-bench"; do
    for s in "$d"/lua5.4-*/src; do
      if [ -f "$s/lua.c" ]; then LUA_SRC=$s; fi
    done
    [ -z "$LUA_SRC" ] || break
  done
  if [ -z "$LUA_SRC" ]; then
    echo
    echo "Lua 5.4: no source (make bench-lua-setup fetches it; or set LUA_SRC)"
  fi
fi
if [ -n "$LUA_SRC" ] && [ ! -x /usr/bin/time ]; then
  echo
  echo "Lua 5.4: skipped, /usr/bin/time is missing (apt-get install time)"
  LUA_SRC=
fi
if [ -n "$LUA_SRC" ]; then
  echo
  echo "Lua 5.4 (Debian source, $LUA_SRC), bench/lua-bench.lua;" \
    "CPU s (user+sys) of the process tree, median of $REPS rounds"
  mkdir -p "$W/lua"
  cp "$LUA_SRC"/*.c "$LUA_SRC"/*.h "$W/lua/"
  # Debian's luaconf.h wants a generated header naming the multiarch triplet.
  [ -e "$W/lua/lua5.4-deb-multiarch.h" ] ||
    echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null)\"" \
      >"$W/lua/lua5.4-deb-multiarch.h"
  srcs=$(cd "$W/lua" && for f in *.c; do [ "$f" = luac.c ] || printf '%s ' "$f"; done)
  for v in plain instr; do
    fl=; [ $v = instr ] && fl=-finstrument-functions
    # $srcs and $fl: word splitting wanted (file names without spaces).
    # shellcheck disable=SC2086
    (cd "$W/lua" && ${CC:-gcc} -O2 -g -fno-omit-frame-pointer $fl -DLUA_USE_LINUX \
      -DLUA_COMPAT_5_3 -o "lua-$v" $srcs -lm -ldl -Wl,-E) || exit 1
  done
  script=$(cd "$(dirname "$0")" && pwd)/lua-bench.lua
  lua_once() { # VARIANT CMD...: appends user+sys seconds to $W/res/lua.VARIANT
    l_v=$1; shift
    rm -f "$W/lua.fxt"
    /usr/bin/time -f '%U %S' -o "$W/cpu" "$@" >/dev/null 2>"$W/stderr" || {
      echo "bench: Lua, $l_v failed:" >&2; cat "$W/stderr" >&2; exit 1; }
    awk '{ print $1 + $2 }' "$W/cpu" >>"$W/res/lua.$l_v"
  }
  r=0
  while [ $r -lt "$REPS" ]; do
    lua_once plain "$W/lua/lua-plain" "$script"
    lua_once null env LD_PRELOAD="$NULLREC" "$W/lua/lua-instr" "$script"
    lua_once fxtrace "$B/fxt-run" -f -o "$W/lua.fxt" "$W/lua/lua-instr" "$script"
    r=$((r + 1))
  done
  # Calls: the events in fxt-run's summary line of the last round.
  ev=$(sed -n 's/.*, \([0-9]*\) events,.*/\1/p' "$W/stderr")
  [ -n "$ev" ] || { echo "bench: no event count in fxt-run's summary:" >&2; cat "$W/stderr" >&2; exit 1; }
  sz=$(du -sb "$W/lua.fxt" | cut -f1)
  printf "%-16s %8s %12s %8s\n" variant "cpu s" "ns/call" "x null"
  awk -v ev="$ev" -v stat=median "$AWK_STATS"'
    FNR == 1 { f++ }
    f == 1 { p[FNR] = $1; next }
    f == 2 { n[FNR] = $1; no[FNR] = ($1 - p[FNR]) * 1e9 / ev; next }
    { k = FNR; x[k] = $1; xo[k] = ($1 - p[k]) * 1e9 / ev; ratio(q, k, xo[k], no[k]) }
    END {
      printf "%-16s %8.2f %12s %8s\n", "uninstrumented", median(p, k), "-", "-"
      printf "%-16s %8.2f %12.1f %8s\n", "null recorder", median(n, k), median(no, k), "1.00"
      printf "%-16s %8.2f %12.1f %8s\n", "fxtrace", median(x, k), median(xo, k), ratios(q, k)
    }' "$W/res/lua.plain" "$W/res/lua.null" "$W/res/lua.fxtrace"
  echo "  $ev calls; archive $((sz / 1048576)) MiB; fxtrace's CPU includes the flush and fxt-run's own work"
fi
