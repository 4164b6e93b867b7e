#!/bin/sh
# Attaching's cost (fxt-run -p PID --patch), side by side in one run with
# fxt-run --patch at launch, the -finstrument-functions hook, perf record -p
# and bpftrace's uprobes.  The target, bench/attach-target, calls 10,000
# generated functions f_00000 ... in THREADS threads (bench/attach_target.c)
# and, each time it is asked, prints its calls so far and the CPU time its
# threads used (and main's, which runs the calls fxt-run -p injects): a
# window of WINDOW seconds gives the CPU ns per call.
#
# A round runs, in this order or the reverse (ABBA, rounds alternate):
#   attach   bench/attach-target, plain: a window (base); fxt-run -p PID
#            --patch='^f_' (FXT_RUN_DEBUG=1: the steps' times); a window
#            while attached; SIGINT (detach); a window after; perf record -p
#            PID -F 999 -- sleep 2 with a window inside; bpftrace counting
#            the calls of f_000* (100 functions) with a window inside
#   launch   fxt-run --patch='^f_' -- bench/attach-target: a window
#   hooks0   bench/attach-target-hooks (the same with -finstrument-functions,
#            the C library's empty hooks): a window
#   hooks    fxt-run bench/attach-target-hooks: a window
# and every figure is the median over REPS rounds of the per-round figure
# (a ratio is computed within its round).  perf and bpftrace are skipped,
# with the reason, when missing or not working.
#
#   make bench-attach [REPS=3] [THREADS=2] [SPIN=200] [WINDOW=0.5]
set -eu
B=${abs_top_builddir:?run through make bench-attach}
reps=${REPS:-3}
threads=${THREADS:-2}
spin=${SPIN:-200}
win=${WINDOW:-0.5}
settle=0.2
patch='^f_'
tgt=$B/bench/attach-target
hooked=$B/bench/attach-target-hooks
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-attach.XXXXXX")
res=$work/results
job= fx=
cleanup() {
  exec 3>&- 2>/dev/null || :
  for p in $fx $job; do kill "$p" 2>/dev/null || :; done
  wait 2>/dev/null || :
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

die() { echo "bench-attach: $*" >&2; exit 1; }
now() { date +%s%N; }
lines() { wc -l < "$1"; }
# until_line FILE ERE: waits (30 s at most) for a line of FILE to match.
until_line() {
  i=0
  while ! grep -Eq "$2" "$1" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 3000 ] || die "no line /$2/ in $1: $(tail -3 "$1" 2>/dev/null)"
    sleep 0.01
  done
}
# until_lines FILE N: waits for FILE to have N lines.
until_lines() {
  i=0
  while [ "$(lines "$1")" -lt "$2" ]; do
    i=$((i + 1))
    [ $i -lt 1000 ] || die "$1: no answer"
    sleep 0.01
  done
}
# start NAME CMD...: runs CMD reading from a fifo that fd 3 writes; $out
# is what it prints, $tpid the target's pid, $job the job's.
start() {
  name=$1
  shift
  rm -f "$work/in"
  mkfifo "$work/in"
  out=$work/$name.out
  : > "$out"
  "$@" < "$work/in" > "$out" 2> "$work/$name.err" &
  job=$!
  exec 3> "$work/in"
  until_lines "$out" 1
  tpid=$(awk 'NR == 1 { print $2 }' "$out")
}
stop() {
  exec 3>&-
  wait "$job" || die "$name: exit status $?: $(tail -3 "$work/$name.err")"
  job=
}
# sample: one more line from the target.
sample() {
  n=$(lines "$out")
  echo >&3
  until_lines "$out" $((n + 1))
}
# put VARIANT FIGURE VALUE: one figure of this round.
put() { echo "$round $1 $2 $3" >> "$res"; }
# span VARIANT: the figures of the target's last two lines: CPU ns per
# call, calls/s, the longest gap (ms) of a thread between them.
span() {
  tail -2 "$out" | awk -v r="$round" -v v="$1" '
    NR == 1 { t = $1; c = $2; u = $3; m = $5 }
    NR == 2 { printf "%s %s ns %.4f\n%s %s rate %.0f\n%s %s gap %.3f\n%s %s calls %d\n%s %s main %.3f\n",
                     r, v, ($3 - u) / ($2 - c), r, v, ($2 - c) / (($1 - t) / 1e9),
                     r, v, $4 / 1e6, r, v, $2 - c, r, v, ($5 - m) / 1e6 }' >> "$res"
}
window() {
  sample
  sleep "$win"
  sample
  span "$1"
}
# ms LOG STEP FIELD: a time fxt-run's debug lines gave.
ms() { sed -n "s/.*$2: .*$3 \([0-9.]*\) ms.*/\1/p" "$1" | head -1; }

# The peers, if they work here.
perf_ok= perf_why="not installed (linux-perf)"
if command -v perf > /dev/null 2>&1; then
  if perf record -q -o "$work/probe.data" -F 999 -- true > "$work/probe.log" 2>&1; then
    perf_ok=1
  else
    perf_why="does not work here: $(grep -v '^$' "$work/probe.log" | head -1)"
  fi
fi
bpf_ok= bpf_why="not installed (bpftrace)"
if command -v bpftrace > /dev/null 2>&1; then
  if timeout 30 bpftrace -e "uprobe:$tgt:f_00000 { @n = count(); } BEGIN { exit(); }" \
      > "$work/probe.log" 2>&1; then
    bpf_ok=1
  else
    bpf_why="does not work here: $(grep -v '^$' "$work/probe.log" | grep -v RLIMIT | head -1)"
  fi
fi

run_attach() {
  start attach "$tgt" "$threads" "$spin"
  window base
  rm -f "$work/a.log"
  sample
  t0=$(now)
  FXT_RUN_DEBUG=1 "$B/fxt-run" -p "$tpid" --patch="$patch" -f -o "$work/a.fxt" \
    2> "$work/a.log" 3>&- &
  fx=$!
  until_line "$work/a.log" '^fxt-run: recording:'
  sample
  span attaching
  at=$(sed -n 's/^fxt-run: recording: .* at \([0-9]*\)\.\([0-9]*\)$/\1\2/p' "$work/a.log")
  put attach total $(( (at - t0) / 1000 ))
  put attach preflight "$(ms "$work/a.log" recording preflight)"
  put attach seize "$(ms "$work/a.log" fxt_attach_start 'open and seize')"
  put attach dlopen "$(ms "$work/a.log" fxt_attach_start dlopen)"
  put attach start "$(ms "$work/a.log" fxt_attach_start call)"
  put attach patching "$(ms "$work/a.log" fxt_attach_start 'started (patching) in')"
  put attach stopped "$(ms "$work/a.log" fxt_attach_start stopped)"
  btid=$(sed -n 's/^fxt-run: fxt_attach_start: .*; thread \([0-9]*\) stopped.*/\1/p' "$work/a.log")
  put attach borrowed "$([ "$btid" = "$tpid" ] && echo main || echo worker)"
  sleep "$settle"
  window attached
  kill -INT "$fx"
  until_line "$work/a.log" '^fxt-run: fxt_attach_stop:'
  sample
  span detaching
  put detach total "$(awk '/^fxt-run: fxt_attach_stop:/ { s = 0; for (i = 1; i <= NF; i++) if ($i == "ms," || $i == "ms;") s += $(i - 1); print s }' "$work/a.log")"
  put detach stop "$(ms "$work/a.log" fxt_attach_stop call)"
  put detach stopped "$(ms "$work/a.log" fxt_attach_stop stopped)"
  btid=$(sed -n 's/^fxt-run: fxt_attach_stop: .*; thread \([0-9]*\) stopped.*/\1/p' "$work/a.log")
  put detach borrowed "$([ "$btid" = "$tpid" ] && echo main || echo worker)"
  wait "$fx" || die "fxt-run -p: exit status $?: $(tail -3 "$work/a.log")"
  fx=
  put attach patched "$(sed -n 's/^fxt-run: patched \([0-9]*\) of.*/\1/p' "$work/a.log")"
  put attach events "$(sed -n 's/^fxt-run: wrote .*, \([0-9]*\) events.*/\1/p' "$work/a.log")"
  sleep "$settle"
  window after
  if [ -n "$perf_ok" ]; then
    perf record -q -p "$tpid" -F 999 -o "$work/perf.data" -- sleep 2 \
      > "$work/perf.log" 2>&1 3>&- &
    fx=$!
    sleep 0.5
    window perf
    wait "$fx" || die "perf record: $(tail -2 "$work/perf.log")"
    fx=
  fi
  if [ -n "$bpf_ok" ]; then
    t0=$(now)
    timeout 60 bpftrace -e "uprobe:$tgt:f_000* { @n = count(); } BEGIN { printf(\"go\\n\"); }" \
      > "$work/bpf.log" 2>&1 3>&- &
    fx=$!
    until_line "$work/bpf.log" '^go'
    put bpftrace attach $(( ($(now) - t0) / 1000 ))
    sleep "$settle"
    window bpftrace
    t0=$(now)
    kill -INT "$fx"
    wait "$fx" || :
    put bpftrace detach $(( ($(now) - t0) / 1000 ))
    fx=
    # "Attaching N probes": the uprobes and BEGIN
    put bpftrace probes $(( $(sed -n 's/^Attaching \([0-9]*\) probe.*/\1/p' "$work/bpf.log") - 1 ))
  fi
  stop
  rm -f "$work/a.fxt" "$work/perf.data"
}
run_launch() {
  start launch "$B/fxt-run" --patch="$patch" -f -o "$work/l.fxt" -- "$tgt" "$threads" "$spin"
  sleep "$settle"
  window launch
  stop
  rm -f "$work/l.fxt"
}
run_hooks0() {
  start hooks0 "$hooked" "$threads" "$spin"
  sleep "$settle"
  window hooks0
  stop
}
run_hooks() {
  start hooks "$B/fxt-run" -f -o "$work/h.fxt" -- "$hooked" "$threads" "$spin"
  sleep "$settle"
  window hooks
  stop
  rm -f "$work/h.fxt"
}

: > "$res"
load0=$(cut -d' ' -f1 /proc/loadavg)
round=1
while [ $round -le "$reps" ]; do
  sync
  if [ $((round % 2)) -eq 1 ]; then
    run_attach; run_launch; run_hooks0; run_hooks
  else
    run_hooks; run_hooks0; run_launch; run_attach
  fi
  round=$((round + 1))
done

printf 'machine: %s, %s CPUs, Linux %s; load average %s at the start, %s at the end\n' \
  "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)" "$(nproc)" "$(uname -r)" \
  "$load0" "$(cut -d' ' -f1 /proc/loadavg)"
printf 'target: %s threads calling %s functions (f_*), each call ~SPIN=%s rounds of work; windows of %s s; medians of %s rounds (ABBA)\n' \
  "$threads" "$(awk 'NR == 1 { print $3 }' "$work/attach.out")" "$spin" "$win" "$reps"
[ -n "$perf_ok" ] || echo "perf: skipped, $perf_why"
[ -n "$bpf_ok" ] || echo "bpftrace: skipped, $bpf_why"
awk -v nf="$(awk 'NR == 1 { print $3 }' "$work/attach.out")" '
  function med(k,    n, i, j, t, v) {
    n = 0
    for (i = 1; (i, k) in val; i++) v[++n] = val[i, k]
    if (n == 0) return ""
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j > 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function has(k) { return (1, k) in val }
  # which thread was borrowed: "main" in every round, or how often
  function who(k,    r, n) {
    for (r = 1; r <= rounds; r++) n += val[r, k] == "main"
    return n == rounds ? "main" : sprintf("main in %d of %d", n, rounds)
  }
  { val[$1, $2 " " $3] = $4; rounds = $1 > rounds ? $1 : rounds }
  END {
    for (r = 1; r <= rounds; r++) {
      b = val[r, "base ns"]; hb = val[r, "hooks0 ns"]
      val[r, "x attached"] = val[r, "attached ns"] - b
      val[r, "x launch"] = val[r, "launch ns"] - b
      val[r, "x hooks"] = val[r, "hooks ns"] - hb
      val[r, "x after"] = val[r, "after ns"] - b
      val[r, "r attached/launch"] = val[r, "x attached"] / val[r, "x launch"]
      val[r, "r attached/hooks"] = val[r, "x attached"] / val[r, "x hooks"]
      val[r, "r launch/hooks"] = val[r, "x launch"] / val[r, "x hooks"]
      val[r, "r total/200"] = val[r, "attach total"] / 1000 / 200
      if ((r, "perf ns") in val) {
        val[r, "x perf"] = val[r, "perf ns"] - b
        val[r, "r perf/attached"] = val[r, "x perf"] / val[r, "x attached"]
      }
      if ((r, "bpftrace ns") in val) {
        # the added CPU time over the probed calls (f_000*: 100 of nf)
        p = val[r, "bpftrace calls"] * val[r, "bpftrace probes"] / nf
        val[r, "x bpftrace"] = (val[r, "bpftrace ns"] - b) * val[r, "bpftrace calls"] / p
        val[r, "r bpftrace/attached"] = val[r, "x bpftrace"] / val[r, "x attached"]
      }
    }
    fmt = "%-44s %11s %22s %8s  %s\n"
    bp = has("bpftrace attach")
    printf fmt, "", "figure", "baseline", "ratio", "goal"
    printf fmt, "attach: command to recording", sprintf("%.1f ms", med("attach total") / 1000),
      bp ? sprintf("%.0f ms bpftrace", med("bpftrace attach") / 1000) : "", bp ? sprintf("%.2fx", med("attach total") / med("bpftrace attach")) : "", "<= 200 ms"
    printf fmt, "  preflight (checks, /proc)", sprintf("%.2f ms", med("attach preflight")), "", "", ""
    printf fmt, "  maps, seize a thread, scratch", sprintf("%.2f ms", med("attach seize")), "", "", ""
    printf fmt, "  injected dlopen of the agent", sprintf("%.2f ms", med("attach dlopen")), "", "", ""
    printf fmt, "  fxt_attach_start (the call)", sprintf("%.2f ms", med("attach start")), "", "", ""
    printf fmt, "  patching (the agent's thread)", sprintf("%.2f ms", med("attach patching")), "", "", ""
    printf fmt, "  functions patched", sprintf("%d", med("attach patched")), sprintf("of %d", nf), "", ""
    printf fmt, "borrowed thread stopped, attach (" who("attach borrowed") ")", sprintf("%.1f ms", med("attach stopped")), "", "", "<= 20 ms"
    printf fmt, "  its CPU time (main, attaching)", sprintf("%.1f ms", med("attaching main")), "", "", ""
    printf fmt, "  other threads: longest gap attaching", sprintf("%.1f ms", med("attaching gap")), sprintf("%.1f ms before", med("base gap")), sprintf("%.2fx", med("attaching gap") / med("base gap")), "(never stopped)"
    printf fmt, "  other threads: CPU ns a call attaching", sprintf("%.0f ns", med("attaching ns")), sprintf("%.1f ns before", med("base ns")), sprintf("%.2fx", med("attaching ns") / med("base ns")), "(int3 traps)"
    printf fmt, "call while attached, CPU ns added", sprintf("%.1f ns", med("x attached")), sprintf("%.1f ns --patch", med("x launch")), sprintf("%.2fx", med("r attached/launch")), "~ 1x (as at launch)"
    printf fmt, "  fxt-run --patch at launch / hook", sprintf("%.1f ns", med("x launch")), sprintf("%.1f ns hook", med("x hooks")), sprintf("%.2fx", med("r launch/hooks")), "<= 1.5x"
    printf fmt, "  attached / hook", sprintf("%.1f ns", med("x attached")), sprintf("%.1f ns hook", med("x hooks")), sprintf("%.2fx", med("r attached/hooks")), "<= 1.5x"
    printf fmt, "  a call untraced (plain / hook twin)", sprintf("%.1f ns", med("base ns")), sprintf("%.1f ns twin", med("hooks0 ns")), "", ""
    printf fmt, "detach: SIGINT to the process let go", sprintf("%.1f ms", med("detach total")),
      bp ? sprintf("%.0f ms bpftrace", med("bpftrace detach") / 1000) : "", bp ? sprintf("%.2gx", med("detach total") * 1000 / med("bpftrace detach")) : "", "<= 100 ms"
    printf fmt, "  fxt_attach_stop (writing back)", sprintf("%.2f ms", med("detach stop")), "", "", ""
    printf fmt, "  borrowed thread stopped (" who("detach borrowed") ")", sprintf("%.1f ms", med("detach stopped")), "", "", ""
    printf fmt, "  its CPU time (main, detaching)", sprintf("%.1f ms", med("detaching main")), "", "", ""
    printf fmt, "  other threads: longest gap detaching", sprintf("%.1f ms", med("detaching gap")), sprintf("%.1f ms before", med("base gap")), sprintf("%.2fx", med("detaching gap") / med("base gap")), ""
    printf fmt, "  other threads: CPU ns a call detaching", sprintf("%.0f ns", med("detaching ns")), sprintf("%.1f ns before", med("base ns")), sprintf("%.2fx", med("detaching ns") / med("base ns")), "(int3 traps)"
    printf fmt, "after detach, CPU ns per call", sprintf("%.1f ns", med("after ns")), sprintf("%.1f ns before", med("base ns")), sprintf("%.3fx", med("after ns") / med("base ns")), "1x (as before)"
    if (has("x perf"))
      printf fmt, "perf record -p -F 999, CPU ns per call added", sprintf("%.1f ns", med("x perf")), sprintf("%.1f ns attached", med("x attached")), sprintf("%.2fx", med("r perf/attached")), "(samples, no calls)"
    if (has("x bpftrace"))
      printf fmt, "bpftrace uprobes, CPU ns per probed call", sprintf("%.0f ns", med("x bpftrace")), sprintf("%.1f ns attached", med("x attached")), sprintf("%.1fx", med("r bpftrace/attached")), "(exact calls; " med("bpftrace probes") " functions)"
    printf "calls/s, all threads: before %.2f M, attached %.2f M, after %.2f M, launch --patch %.2f M, hook twin %.2f M (untraced %.2f M)\n",
      med("base rate") / 1e6, med("attached rate") / 1e6, med("after rate") / 1e6, med("launch rate") / 1e6, med("hooks rate") / 1e6, med("hooks0 rate") / 1e6
    printf "events recorded while attached: %d.  ns: CPU time of the calling threads per call in a window; added: over the untraced run of the round (the hook twin: over its own)\n", med("attach events")
  }' "$res"
