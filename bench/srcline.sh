#!/bin/sh
# What source lines cost the conversion: a generated C program of N
# functions (10,000 by default), built -g -O1 -finstrument-functions,
# recorded twice (each function called once, then CALLS times: 100); each
# spool converted ROUNDS times (5) with names only and with each function's
# source location, in the same rounds (bench/srcline_bench.c): all in one
# process, then each conversion in a new one (FORK=1: a run's first
# conversion, its memory new); with the lines kept by an earlier run
# (FXT_SRCLINE_CACHE), then decoded (a first run: by a thread beside the
# conversion as fxt-run does, fxt_symcache_set_ahead(); then by the
# conversion itself, AHEAD=0, as with FXT_RUN_LATE), then decoded ahead as
# fxt-run's early thread does while the program runs (a first run of a
# program that runs long enough: FILL=1, its CPU time printed apart).
# Goal: a ratio of at most 1.10 in wall time (CPU time, which a thread
# adds to, and the conversion's own thread's CPU time are printed too);
# the first run's wall ratios are summed up at the end against it.
# BASE=BUILD: another build's figures beside this one's (the kept lines,
# and a first run's).  RT=1: the conversions at SCHED_FIFO (chrt -f 10,
# which needs CAP_SYS_NICE): on a loaded machine, what a quiet one gives
# the conversion and the thread beside it, a core each, in wall time.
# Run with `make bench-srcline [BASE=BUILD]`, or
# abs_top_builddir=BUILD sh bench/srcline.sh.
: "${abs_top_builddir:?set abs_top_builddir (make bench-srcline does)}"
N=${N:-10000}
ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-100}
CC=${CC:-cc}
D=$(mktemp -d "${TMPDIR:-/tmp}/fxt-srcline.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT

awk -v n="$N" 'BEGIN {
  print "#include <signal.h>"
  print "#include <stdio.h>"
  print "#include <stdlib.h>"
  print "volatile long sink;"
  for (i = 0; i < n; i++)
    printf "__attribute__((noinline)) long f%d(long x)\n{\n\tsink += x;\n\treturn x + %d;\n}\n", i, i
  print "int main(int argc, char **argv)\n{\n\tlong s = 0, calls = argc > 1 ? atol(argv[1]) : 1;"
  print "\tfor (long r = 0; r < calls; r++) {"
  for (i = 0; i < n; i++)
    printf "\t\ts += f%d(r);\n", i
  print "\t}\n\tprintf(\"%ld\\n\", s);\n\tfflush(stdout);\n\traise(SIGKILL);\n\treturn 0;\n}"
}' >"$D/gen.c"
$CC -g -O1 -finstrument-functions -o "$D/gen" "$D/gen.c" || exit 1

# BASE=BUILD: the same conversions by another build (bench/srcline_bench.c
# of this tree, compiled against BUILD's libraries and headers), in the
# same rounds: its ratio beside this build's.
if [ -n "${BASE:-}" ]; then
  bsrc=$(sed -n 's/^abs_top_srcdir = //p' "$BASE/Makefile")
  libs=$(sed -n 's/^\(LIBDW_LIBS\|ZLIB_LIBS\|ZSTD_LIBS\|LIBDEFLATE_LIBS\) = //p' "$BASE/Makefile" | tr '\n' ' ')
  # (Only the kept lines are converted by BASE: a build without the
  # early thread's decoding, FILL, compiles without it.)  What BASE has
  # is asked of its libraries: its source folder may be this tree, newer
  # than the build.
  bsyms=$(nm -g --defined-only "$BASE/.libs/libfxtconvert.a" "$BASE/.libs/libfxtsym.a" 2>/dev/null)
  echo "$bsyms" | grep -q ' fxt_sym_loccache_fill$' || libs="-DSRCLINE_BENCH_NO_FILL $libs"
  echo "$bsyms" | grep -q ' fxt_symcache_set_ahead$' || libs="-DSRCLINE_BENCH_NO_AHEAD $libs"
  # shellcheck disable=SC2086 # the libraries are words
  $CC -DHAVE_CONFIG_H -I"$BASE" -I"$bsrc/include" -I"$bsrc" -O2 -o "$D/base_bench" \
    "$(dirname "$0")/srcline_bench.c" "$BASE/.libs/libfxtconvert.a" "$BASE/.libs/libfxtsym.a" \
    "$BASE/.libs/libfxtcodec.a" "$BASE/.libs/libfxtcommon.a" $libs -lpthread -lm ||
    { echo "srcline.sh: cannot build the bench against $BASE" >&2; exit 1; }
fi

# Recorded by the agent alone; the program kills itself at the end of
# main, before the agent would convert its spool: the spool stays, to be
# converted as fxt-run converts a killed process's.  Once with each
# function called once (what reading the lines costs against naming the
# functions alone), once with CALLS calls each (a program that runs).
# Source lines are kept across runs (FXT_SRCLINE_CACHE, here in $D/kept):
# each spool is converted with them kept by an earlier conversion (a later
# run of the program), then with them removed before each conversion (its
# first run: decoded, then kept).
RUN=
if [ "${RT:-0}" = 1 ]; then
  if chrt -f 10 true 2>/dev/null; then RUN="chrt -f 10"; else echo "srcline.sh: RT=1: chrt -f 10 not allowed, run as is" >&2; fi
fi

# wall_ratio: the median wall-time ratio srcline_bench printed in $D/out.
wall_ratio() {
  sed -n 's/^ *wall time .*ratio \([0-9.]*\) (goal.*/\1/p' "$D/out"
}

agent=$abs_top_builddir/.libs/libfxt-agent.so
echo "program: $N functions, -g -O1 -finstrument-functions ($(du -k "$D/gen" | cut -f1) KiB)"
echo "load: $(uptime | sed 's/.*load average: //')"
FXT_SRCLINE_CACHE=$D/kept
export FXT_SRCLINE_CACHE
for calls in 1 "$CALLS"; do
  mkdir "$D/c$calls" || exit 1
  # (In a subshell whose stderr is /dev/null: the shell's "Killed" too.)
  (FXT_SRCLINE_CACHE=off LD_PRELOAD=$agent FXT_OUTPUT=$D/c$calls/gen.fxt "$D/gen" "$calls" >/dev/null; :) 2>/dev/null
  spool=$(ls "$D/c$calls"/gen*.spool 2>/dev/null | head -1)
  [ -n "$spool" ] || { echo "srcline.sh: no spool left in $D/c$calls" >&2; exit 1; }
  # BASE converts a spool of its own agent's making: the spool's format
  # may differ between the two builds.
  bspool=
  if [ -n "${BASE:-}" ]; then
    mkdir "$D/b$calls" || exit 1
    (FXT_SRCLINE_CACHE=off LD_PRELOAD=$BASE/.libs/libfxt-agent.so FXT_OUTPUT=$D/b$calls/gen.fxt "$D/gen" "$calls" >/dev/null; :) 2>/dev/null
    bspool=$(ls "$D/b$calls"/gen*.spool 2>/dev/null | head -1)
    [ -n "$bspool" ] || { echo "srcline.sh: no spool left by BASE's agent in $D/b$calls" >&2; exit 1; }
  fi
  for fork in 0 1; do
    if [ "$fork" = 1 ]; then where="each conversion a new process"; else where="in one process"; fi
    for kept in yes no alone ahead; do
      fill=0 forget=$D/kept thread=1
      case $kept in
      yes) how="lines kept by an earlier run" forget= ;;
      no) how="lines decoded and kept beside the conversion (a first run under fxt-run)" ;;
      alone) how="lines decoded and kept by the conversion itself (a first run, FXT_RUN_LATE)" thread=0 ;;
      ahead) how="lines decoded ahead while the program ran (a first run under fxt-run)" fill=1 ;;
      esac
      printf '%s call(s) a function, %s, %s:\n  ' "$calls" "$where" "$how"
      AHEAD=$thread FILL=$fill FORGET=$forget FORK=$fork $RUN "$abs_top_builddir/bench/srcline_bench" "$spool" "$ROUNDS" >"$D/out" || exit 1
      cat "$D/out"
      wall_ratio >"$D/r.$calls.$fork.$kept"
      if [ -n "${BASE:-}" ] && { [ "$kept" = yes ] || [ "$kept" = no ]; }; then
        printf '  BASE (%s): ' "$BASE"
        FORGET=$forget FORK=$fork $RUN "$D/base_bench" "$bspool" "$ROUNDS" >"$D/out" || exit 1
        cat "$D/out"
        wall_ratio >"$D/b.$calls.$fork.$kept"
      fi
    done
  done
done

# The goal's figure: a first run, its lines decoded beside the conversion
# (what fxt-run does when its early thread did not get to them).
echo "load: $(uptime | sed 's/.*load average: //')${RUN:+ (conversions run with $RUN)}"
echo "first run under fxt-run (lines decoded beside the conversion), wall time with source lines / names only (goal: at most 1.10):"
for calls in 1 "$CALLS"; do
  for fork in 0 1; do
    if [ "$fork" = 1 ]; then where="each conversion a new process"; else where="in one process"; fi
    r=$(cat "$D/r.$calls.$fork.no")
    verdict=met
    awk -v r="$r" 'BEGIN { exit !(r > 1.10) }' && verdict="NOT met"
    printf '  %s call(s) a function, %s: %s (%s)' "$calls" "$where" "$r" "$verdict"
    [ -f "$D/b.$calls.$fork.no" ] && printf ', BASE %s' "$(cat "$D/b.$calls.$fork.no")"
    echo
  done
done
