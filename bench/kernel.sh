#!/bin/sh
# bench/kernel.sh: what `fxt-run --kernel=sched` adds to a traced run, in
# one run.  Not a test.
#
#   make bench-kernel                 (from the build tree, as root), or
#   abs_top_builddir=BUILD sh bench/kernel.sh
#
# Workloads, each run under `fxt-run -- ...` and under `fxt-run
# --kernel=sched -- ...`, interleaved: each of the REPS rounds runs both in
# turn (the order alternating), after one warm-up round not counted:
#   make -j2     the repository's examples (examples/*.c, each its own
#                program, cc -O2), from clean each run (the clean untimed)
#   pipeline     bash: 200 x `echo $i | cat | wc -c`, then sort | uniq -c |
#                sort -rn and tr | sort -u over a generated 20000-line file
# Columns: the plain traced run's wall time (median [min] over the rounds),
# the --kernel run's divided by it in the same round (median [min]: the
# goal is <= 1.10), the kernel's events per run, and the merge's share of
# the conversion: of fxt-run's time after the program's exit (FXT_RUN_DEBUG
# prints it), the part that reads the kernel's events and merges them, as
# a fraction of the rest (median [least-most]; goal <= 0.10 on every
# run).
#
# With BASE=BUILD, another build's `fxt-run --kernel=sched` (say main's)
# runs in the same rounds, its row "(base)" divided by the same plain run.
#
# Environment: REPS (5), WARMUP (1), CC (cc), NICE ("nice -n -20" as root:
# the machine is shared, so ratios within a round are what to compare),
# BASE (another build tree).
# Needs root (or tracefs access) and the workloads' tools (cc, make, bash).
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
FXT_RUN=$abs_top_builddir/fxt-run
REPS=${REPS:-5}
WARMUP=${WARMUP:-1}
CC=${CC:-cc}
export LC_ALL=C
# make's own variables would reach the workload's make.
unset MAKEFLAGS MFLAGS MAKELEVEL
if [ -z "${NICE+x}" ]; then
  NICE=
  [ "$(id -u)" = 0 ] && NICE="nice -n -20"
fi

[ -x "$FXT_RUN" ] || { echo "bench-kernel: $FXT_RUN is missing (run make first)" >&2; exit 2; }
KINDS="plain kernel"
if [ -n "${BASE:-}" ]; then
  [ -x "$BASE/fxt-run" ] || { echo "bench-kernel: $BASE/fxt-run is missing" >&2; exit 2; }
  KINDS="plain kernel base"
fi
for t in bash make "$CC"; do
  command -v "$t" >/dev/null 2>&1 || { echo "bench-kernel: $t not found" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-kernel.XXXXXX")
trap 'rm -rf "$W"' EXIT
if ! "$FXT_RUN" -q --kernel=sched -o "$W/probe.fxt" -- true 2>"$W/probe.err"; then
  echo "bench-kernel: $(cat "$W/probe.err")" >&2
  exit 2
fi

# The workloads.
mkdir "$W/make" "$W/pipes"
mkdir "$W/make/examples"
cp "$SRC"/examples/*.c "$SRC"/examples/*.h "$W/make/examples/"
{
  printf 'CC = %s\nCFLAGS = -O2 -g -pthread -fPIC -I. -DPLUGIN_PATH=0\n' "$CC"
  printf 'PROGS = examples/calltree examples/deep_exit examples/hotspot examples/threads examples/plugin\n'
  printf 'all: $(PROGS) examples/libplugin_lib.so\n'
  printf 'examples/%%: examples/%%.c\n\t$(CC) $(CFLAGS) -o $@ $< -ldl\n'
  printf 'examples/libplugin_lib.so: examples/plugin_lib.c\n\t$(CC) $(CFLAGS) -shared -o $@ $<\n'
  printf 'clean:\n\trm -f $(PROGS) examples/libplugin_lib.so\n'
} >"$W/make/Makefile"
awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++) printf "w%d %d\n", int(rand() * 500), int(rand() * 1000) }' >"$W/pipes/words.txt"
cat >"$W/pipes/pipes.sh" <<'EOS'
for i in $(seq 1 200); do echo "$i" | cat | wc -c; done >counts.txt
sed 's/ [0-9]*$//' words.txt | sort | uniq -c | sort -rn >top.txt
tr 'a-z' 'A-Z' <words.txt | sort -u | wc -l >distinct.txt
EOS
# The timed command of each (words), its folder, and what runs untimed
# before each run.
cmd_make="make -s -j2" dir_make=make prep_make="make -s clean"
cmd_pipeline="bash pipes.sh" dir_pipeline=pipes prep_pipeline=true

now() { date +%s.%N; }
# settle: untimed, until no instance of an fxt-run that has ended is left
# (at most 2 s): fxt-run may leave its instance's removal (60-160 ms of
# the kernel's waiting) to a process that outlives it, and the next
# run's mkdir would wait for it (the kernel's lock of the instances), a
# cost of the run before put on whichever comes next.
settle() {
  i=0
  while [ $i -lt 40 ]; do
    left=
    for d in /sys/kernel/tracing/instances/fxtrace-*; do
      [ -d "$d" ] || continue
      kill -0 "${d##*fxtrace-}" 2>/dev/null || left=1
    done
    [ -n "$left" ] || break
    sleep 0.05
    i=$((i + 1))
  done
}
# run NAME KIND ROUND: one timed run; appends "NAME KIND ROUND WALL EVENTS AFTER KPART" to $W/res.
run() {
  eval "d=\$dir_$1 prep=\$prep_$1 cmd=\$cmd_$1"
  # shellcheck disable=SC2086 # the commands are words
  (cd "$W/$d" && $prep >/dev/null)
  k=--kernel=sched fxt=$FXT_RUN
  case $2 in plain) k= ;; base) fxt=$BASE/fxt-run ;; esac
  t0=$(now)
  # shellcheck disable=SC2086 # $NICE, $k and $cmd are words or nothing
  (cd "$W/$d" && FXT_RUN_DEBUG=1 $NICE "$fxt" $k -f -o "$W/t.fxt" -- $cmd >/dev/null 2>"$W/err") ||
    { echo "bench-kernel: $1 ($2) failed:" >&2; cat "$W/err" >&2; exit 1; }
  t1=$(now)
  settle
  ev=$(sed -n 's/^fxt-run: kernel: \([0-9]*\) events.*/\1/p' "$W/err")
  sed -n 's/^fxt-run: after the exit: \([0-9.]*\) ms, of which the kernel.s events \([0-9.]*\) ms$/\1 \2/p' "$W/err" >"$W/after"
  read -r after kpart <"$W/after" || { after=0 kpart=0; }
  echo "$1 $2 $3 $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${ev:-0} $after $kpart" >>"$W/res"
}

: >"$W/res"
r=0
while [ "$r" -lt $((WARMUP + REPS)) ]; do
  for w in make pipeline; do
    if [ $((r % 2)) = 0 ]; then kinds=$KINDS
    else kinds=$(echo "$KINDS" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }'); fi
    for k in $kinds; do run "$w" "$k" "$r"; done
  done
  r=$((r + 1))
done

printf '%s, %s CPUs, kernel %s; %s rounds (+%s warm-up)%s\n' \
  "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" "$(nproc)" "$(uname -r)" \
  "$REPS" "$WARMUP" "${NICE:+, $NICE}"
[ -z "${BASE:-}" ] || echo "base: $BASE/fxt-run"
printf '%-17s %18s %20s %9s %25s\n' workload "traced s" "--kernel=sched x" events "merge/conversion [range]"
awk -v warm="$WARMUP" "$AWK_ORDER"'
  $3 < warm { next }
  $2 == "plain" { p[$1, $3] = $4; pa[$1, $3] = $6 }
  $2 != "plain" {
    r = $2 == "base" ? $1 " (base)" : $1
    k[r, $3] = $4; ev[r, $3] = $5; ka[r, $3] = $6; kp[r, $3] = $7
    if (!($1 in seen)) {
      seen[$1] = 1; order[++nw] = $1; of[$1] = $1; order[++nw] = $1 " (base)"; of[$1 " (base)"] = $1
    }
  }
  END {
    for (i = 1; i <= nw; i++) {
      w = order[i]; n = 0
      for (key in p) {
        split(key, f, SUBSEP)
        if (f[1] != of[w] || !((w, f[2]) in k)) continue
        n++; ps[n] = p[key]; pm[n] = p[key]; x[n] = k[w, f[2]] / p[key]; xm[n] = x[n]
        e[n] = ev[w, f[2]]
        rest = ka[w, f[2]] - kp[w, f[2]]; s[n] = rest > 0 ? kp[w, f[2]] / rest : 0
      }
      if (!n) continue
      ms = median(s, n) # sorts s: s[1] the least, s[n] the most
      printf "%-17s %9.3f [%6.3f] %11.3f [%6.3f] %9d %9.3f [%5.3f-%5.3f]\n", w, median(ps, n),
        least(pm, n), median(x, n), least(xm, n), median(e, n), ms, s[1], s[n]
    }
    print "goals: --kernel=sched x <= 1.10 (wall), merge/conversion <= 0.10"
  }' "$W/res"
