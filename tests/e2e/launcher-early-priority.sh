#!/bin/sh
# The priority of fxt-run's early converter (launcher/early.c): a thread
# named fxt-early, SCHED_OTHER 19 nice levels below fxt-run (19 at most)
# while the program leaves a core free, SCHED_IDLE once the traced
# processes have a thread for every core; the archive is whole either
# way.  Waits for the change (the converter looks every 50 ms once a
# spool holds 128 KiB), never for a time.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

export FXT_LIBC=none
plan 7

cpus=$(nproc)
# early_stat PID: "POLICY NICE" of fxt-run PID's thread fxt-early
# (/proc/PID/task/TID/stat fields 41 and 19), or nothing.
early_stat() {
  for t in /proc/"$1"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = fxt-early ] || continue
    sed 's/.*) //' "$t/stat" 2>/dev/null | awk '{ print $39, $17 }'
    return
  done
}
# wait_for PID WANT: until early_stat PID says WANT (20 s at most); prints
# the last it said.
wait_for() {
  w_n=0
  while w_s=$(early_stat "$1"); [ "$w_s" != "$2" ] && [ $w_n -lt 400 ]; do
    sleep 0.05
    w_n=$((w_n + 1))
  done
  echo "$w_s"
}
# run NAME THREADS: busy_threads THREADS under fxt-run in the background
# ($run: its pid), once the program said ready.
run() {
  mkdir "$TMPD/$1" && cd "$TMPD/$1" || exit 1
  "$FXT_RUN" --max-size 32M -o out.fxt "$PROGS/busy_threads" "$2" stop >out 2>err 9>&- &
  run=$!
  r_n=0
  while ! grep -q ready out 2>/dev/null && [ $r_n -lt 400 ]; do sleep 0.05; r_n=$((r_n + 1)); done
}
# end NAME: stops the program, waits for fxt-run, checks the archive.
end() {
  touch stop
  wait "$run"
  is "$?" 0 "$1: fxt-run exits 0"
  check_archive "$1" out.fxt
  cd "$TMPD" || exit 1
}

# fxt-run's own nice value, and the one below it.
run one 1
nice=$(sed 's/.*) //' "/proc/$run/stat" | awk '{ print $17 }')
below=$((nice + 19)); [ "$below" -gt 19 ] && below=19
if [ "$cpus" -lt 2 ]; then
  # One thread fills the only core: SCHED_IDLE at once.
  skip "one core: no core left free"
  skip "one core: no core left free"
else
  is "$(wait_for "$run" "0 $below")" "0 $below" \
    "a program on one thread of $cpus cores: SCHED_OTHER at nice $below (fxt-run's $nice + 19)"
  # Still so once its spool is looked at (it holds 128 KiB, and a few
  # looks of 50 ms went by; on a slow machine maybe none did yet).
  n=0
  while [ "$(find . -name '*.spool' -size +256k | wc -l)" -eq 0 ] && [ $n -lt 400 ]; do
    sleep 0.05; n=$((n + 1))
  done
  sleep 0.3
  is "$(early_stat "$run")" "0 $below" "... and once its spool is looked at"
fi
end one

# As many threads as cores: SCHED_IDLE (5) once its spool is looked at.
run all "$cpus"
is "$(wait_for "$run" "5 $below")" "5 $below" \
  "$cpus threads on $cpus cores: SCHED_IDLE"
end all
finish
